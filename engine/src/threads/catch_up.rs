//! Catching up with a turn that runs on another server of a shared store, for a connection that
//! resumes its thread here: what the connection reads of the thread and what it is relayed from
//! then on leave nothing out and say nothing twice.
//!
//! 1. The connection is registered, and what is relayed for the thread from then on is kept
//!    for it. If no connection here followed the thread yet, the other servers are told
//!    (`@join`), and the one running the turn answers once it publishes the turn's
//!    notifications: what it did before its answer is in the store.
//! 2. Once answered (or after [`PATIENCE`]), the thread is read again; that read answers the
//!    `thread/resume`.
//! 3. Once the answer is sent, the kept notifications and those relayed after them reach the
//!    connection, except those about items and turns the read already holds as finished. The
//!    first notification of a finished item or turn the read does not hold ends that: a turn's
//!    records are durable in the order its notifications are sent, so everything after it is
//!    new to the connection.
//!
//! A server request that another server puts to this one's followers while its only would-be
//! followers are still catching up (the server running the turn asks again as soon as it hears
//! of them) waits until the first of them follows, and is put to it then.

use std::collections::{HashMap, HashSet};
use std::sync::mpsc;
use std::time::Duration;

use agentwire_protocol::method::MethodInfo;
use agentwire_protocol::{Turn, TurnStatus};
use agentwire_runtime::{ConnectionId, Peer};
use serde::Deserialize;
use serde_json::value::RawValue;

/// How long a resume waits for the server running the turn to answer `@join`: an answer takes
/// two trips through the database; none comes when the turn ended meanwhile.
pub(crate) const PATIENCE: Duration = Duration::from_secs(1);

/// The most notifications kept for one connection while it catches up; later ones are dropped
/// (logged), and the connection reads them in full once their items complete.
const MAX_KEPT: usize = 16_384;

/// The latest turns whose items and ends a catching-up connection is spared.
const KNOWN_TURNS: usize = 4;

/// The most requests of other servers waiting for a thread's connections to catch up; more
/// are refused.
const MAX_DEFERRED: usize = 64;

/// A request of another server to the followers here: its ask, method and encoded params.
pub(crate) type Deferred = (String, &'static MethodInfo, Box<RawValue>);

/// The connections catching up, per thread.
#[derive(Debug, Default)]
pub(crate) struct CatchUps {
    by_thread: HashMap<String, Vec<CatchUp>>,
    /// Per thread, requests of other servers waiting until a connection catching up follows.
    deferred: HashMap<String, Vec<Deferred>>,
}

/// One connection catching up with one thread.
#[derive(Debug)]
struct CatchUp {
    peer: Peer,
    /// Signalled when the server running the turn answers `@join` ask `.0`.
    asked: Option<(String, mpsc::SyncSender<()>)>,
    stage: Stage,
}

#[derive(Debug)]
enum Stage {
    /// The thread is being read again: what is relayed is kept.
    Keeping {
        kept: Vec<(&'static MethodInfo, Vec<u8>)>,
        dropped: usize,
    },
    /// The connection has its answer and follows the thread; relayed notifications that the
    /// read already holds are left out.
    Sparing(Known),
}

/// What a catching-up connection read of a thread: the latest turns, with their items, and
/// those of them that were finished.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Known {
    turns: HashSet<String>,
    finished: HashSet<String>,
    items: HashSet<String>,
}

impl Known {
    /// What a read of `turns` holds.
    pub(crate) fn of(turns: &[Turn]) -> Self {
        let mut known = Self::default();
        for turn in turns.iter().rev().take(KNOWN_TURNS) {
            known.turns.insert(turn.id.clone());
            if turn.status != TurnStatus::InProgress {
                known.finished.insert(turn.id.clone());
            }
            known
                .items
                .extend(turn.items.iter().map(|item| item.kind.id().to_owned()));
        }
        known
    }

    /// What to do with the relayed notification `method` (encoded as `message`).
    fn verdict(&self, method: &str, message: &[u8]) -> Verdict {
        let Ok(Envelope { params }) = serde_json::from_slice::<Envelope>(message) else {
            return Verdict::Pass;
        };
        let item = params.item.map(|item| item.id).or(params.item_id);
        let turn = params.turn.map(|turn| turn.id);
        let held_item = item.as_ref().is_some_and(|id| self.items.contains(id));
        let of = |turns: &HashSet<String>| turn.as_ref().is_some_and(|id| turns.contains(id));
        match method {
            "item/completed" if held_item => Verdict::Spare,
            "item/completed" => Verdict::PassAndEnd,
            "turn/started" if of(&self.turns) => Verdict::Spare,
            "turn/started" => Verdict::PassAndEnd,
            "turn/completed" if of(&self.finished) => Verdict::SpareAndEnd,
            "turn/completed" => Verdict::PassAndEnd,
            _ if held_item => Verdict::Spare,
            _ => Verdict::Pass,
        }
    }
}

/// What a catching-up connection gets of one relayed notification.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
enum Verdict {
    /// Sent.
    Pass,
    /// Left out: the read holds it.
    Spare,
    /// Sent; it is the first the read does not hold, so the connection is caught up.
    PassAndEnd,
    /// Left out; the read holds nothing after it, so the connection is caught up.
    SpareAndEnd,
}

/// The ids a notification names, wherever the protocol puts them.
#[derive(Deserialize)]
struct Envelope {
    params: Refs,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Refs {
    #[serde(default)]
    item_id: Option<String>,
    #[serde(default)]
    item: Option<Id>,
    #[serde(default)]
    turn: Option<Id>,
}

#[derive(Deserialize)]
struct Id {
    id: String,
}

impl CatchUps {
    /// Registers `peer` as catching up with `thread_id`; if `ask` is given (a `@join` about to
    /// be published), the returned receiver hears its answer.
    pub(crate) fn register(
        &mut self,
        thread_id: &str,
        peer: &Peer,
        ask: Option<String>,
    ) -> Option<mpsc::Receiver<()>> {
        let (asked, answered) = match ask {
            Some(ask) => {
                let (sender, receiver) = mpsc::sync_channel(1);
                (Some((ask, sender)), Some(receiver))
            }
            None => (None, None),
        };
        let catching_up = self.by_thread.entry(thread_id.to_owned()).or_default();
        catching_up.retain(|c| c.peer.connection_id() != peer.connection_id());
        catching_up.push(CatchUp {
            peer: peer.clone(),
            asked,
            stage: Stage::Keeping {
                kept: Vec::new(),
                dropped: 0,
            },
        });
        answered
    }

    /// Ask `ask` about `thread_id` was answered: whether it was a `@join` of a connection here.
    pub(crate) fn answered(&mut self, thread_id: &str, ask: &str) -> bool {
        let Some(catching_up) = self.by_thread.get_mut(thread_id) else {
            return false;
        };
        let Some(asked) = catching_up
            .iter_mut()
            .find(|c| c.asked.as_ref().is_some_and(|(id, _)| id == ask))
        else {
            return false;
        };
        if let Some((_, answered)) = asked.asked.take() {
            let _ = answered.try_send(());
        }
        true
    }

    /// The connection of `peer` has its answer, having read `known`: the notifications kept
    /// for it that it is to get, in order. `None` if it is not catching up with `thread_id`.
    pub(crate) fn caught_up(
        &mut self,
        thread_id: &str,
        peer: &Peer,
        known: Known,
    ) -> Option<Vec<(&'static MethodInfo, Vec<u8>)>> {
        let catching_up = self.by_thread.get_mut(thread_id)?;
        let at = catching_up
            .iter()
            .position(|c| c.peer.connection_id() == peer.connection_id())?;
        let Stage::Keeping { kept, dropped } =
            std::mem::replace(&mut catching_up[at].stage, Stage::Sparing(Known::default()))
        else {
            return Some(Vec::new());
        };
        if dropped > 0 {
            tracing::warn!(
                thread_id,
                dropped,
                "a resuming connection missed notifications while catching up"
            );
        }
        let mut sent = Vec::with_capacity(kept.len());
        let mut known = Some(known);
        for (method, message) in kept {
            match known.as_ref().map(|k| k.verdict(method.name, &message)) {
                None | Some(Verdict::Pass) => sent.push((method, message)),
                Some(Verdict::Spare) => {}
                Some(Verdict::PassAndEnd) => {
                    sent.push((method, message));
                    known = None;
                }
                Some(Verdict::SpareAndEnd) => known = None,
            }
        }
        match known {
            Some(known) => catching_up[at].stage = Stage::Sparing(known),
            None => {
                self.forget(thread_id, peer.connection_id());
            }
        }
        Some(sent)
    }

    /// Takes the relayed notification `method` of `thread_id`: kept for the connections still
    /// reading the thread, or weighed for those being spared. The connections not to send it
    /// to (the ones it was kept for, or that are spared it). A connection that closed stays
    /// until it is forgotten (`Subscribers::closed`), which also says whether this server still
    /// follows the thread.
    pub(crate) fn take(
        &mut self,
        thread_id: &str,
        method: &'static MethodInfo,
        message: &[u8],
    ) -> Vec<ConnectionId> {
        let Some(catching_up) = self.by_thread.get_mut(thread_id) else {
            return Vec::new();
        };
        let mut skip = Vec::new();
        catching_up.retain_mut(|c| match &mut c.stage {
            Stage::Keeping { kept, dropped } => {
                if kept.len() < MAX_KEPT {
                    kept.push((method, message.to_vec()));
                } else {
                    *dropped += 1;
                }
                skip.push(c.peer.connection_id());
                true
            }
            Stage::Sparing(known) => match known.verdict(method.name, message) {
                Verdict::Pass => true,
                Verdict::Spare => {
                    skip.push(c.peer.connection_id());
                    true
                }
                Verdict::PassAndEnd => false,
                Verdict::SpareAndEnd => {
                    skip.push(c.peer.connection_id());
                    false
                }
            },
        });
        if catching_up.is_empty() {
            self.by_thread.remove(thread_id);
        }
        skip
    }

    /// Forgets the connection `connection` catching up with `thread_id`: whether any other
    /// connection still is.
    pub(crate) fn forget(&mut self, thread_id: &str, connection: ConnectionId) -> bool {
        let Some(catching_up) = self.by_thread.get_mut(thread_id) else {
            return false;
        };
        catching_up.retain(|c| c.peer.connection_id() != connection);
        if catching_up.is_empty() {
            self.by_thread.remove(thread_id);
            return false;
        }
        true
    }

    /// The threads some connection is catching up with.
    pub(crate) fn threads(&self) -> impl Iterator<Item = &str> {
        self.by_thread.keys().map(String::as_str)
    }

    /// Whether the connection `connection` is catching up with `thread_id`.
    pub(crate) fn holds(&self, thread_id: &str, connection: ConnectionId) -> bool {
        self.by_thread
            .get(thread_id)
            .is_some_and(|c| c.iter().any(|c| c.peer.connection_id() == connection))
    }

    /// Forgets every connection catching up with `thread_id` (the thread is gone): the
    /// requests that waited for them, to be refused.
    pub(crate) fn forget_thread(&mut self, thread_id: &str) -> Vec<Deferred> {
        self.by_thread.remove(thread_id);
        self.deferred.remove(thread_id).unwrap_or_default()
    }

    /// Keeps `request` of another server until a connection catching up with `thread_id`
    /// follows it; handed back when none is catching up, or too many requests wait already.
    pub(crate) fn defer(&mut self, thread_id: &str, request: Deferred) -> Result<(), Deferred> {
        if !self.by_thread.contains_key(thread_id) {
            return Err(request);
        }
        let waiting = self.deferred.entry(thread_id.to_owned()).or_default();
        if waiting.len() >= MAX_DEFERRED || waiting.iter().any(|(ask, ..)| *ask == request.0) {
            return Err(request);
        }
        waiting.push(request);
        Ok(())
    }

    /// Ask `ask` of another server about `thread_id` has its answer: it waits no more.
    pub(crate) fn withdraw(&mut self, thread_id: &str, ask: &str) {
        if let Some(waiting) = self.deferred.get_mut(thread_id) {
            waiting.retain(|(id, ..)| id != ask);
            if waiting.is_empty() {
                self.deferred.remove(thread_id);
            }
        }
    }

    /// The requests about `thread_id` that waited for a connection to follow it, now that one
    /// does (`following`), or that none is left catching up with it (to be refused).
    pub(crate) fn settle(&mut self, thread_id: &str, following: bool) -> Vec<Deferred> {
        if following || !self.by_thread.contains_key(thread_id) {
            return self.deferred.remove(thread_id).unwrap_or_default();
        }
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn turn(id: &str, status: TurnStatus, items: &[&str]) -> Turn {
        let items = items
            .iter()
            .map(|id| {
                serde_json::from_value(json!({
                    "type": "agentMessage", "id": id, "text": "", "phase": null,
                    "memoryCitation": null
                }))
                .expect("an agent message item")
            })
            .collect();
        let mut turn: Turn = serde_json::from_value(json!({
            "id": id, "items": [], "status": "inProgress", "error": null,
            "startedAt": null, "completedAt": null, "durationMs": null
        }))
        .expect("a turn");
        turn.items = items;
        turn.status = status;
        turn
    }

    fn message(method: &str, params: serde_json::Value) -> Vec<u8> {
        json!({"jsonrpc": "2.0", "method": method, "params": params})
            .to_string()
            .into_bytes()
    }

    #[test]
    fn what_the_read_holds_is_spared_and_the_first_new_record_ends_it() {
        let known = Known::of(&[
            turn("old", TurnStatus::Completed, &["o1"]),
            turn("t", TurnStatus::InProgress, &["a", "b"]),
        ]);
        let verdict = |method: &str, params| known.verdict(method, &message(method, params));
        assert_eq!(
            verdict("item/started", json!({"item": {"id": "b"}})),
            Verdict::Spare
        );
        assert_eq!(
            verdict(
                "item/agentMessage/delta",
                json!({"itemId": "b", "delta": "x"})
            ),
            Verdict::Spare
        );
        assert_eq!(
            verdict("item/completed", json!({"item": {"id": "b"}})),
            Verdict::Spare
        );
        assert_eq!(
            verdict(
                "item/agentMessage/delta",
                json!({"itemId": "c", "delta": "x"})
            ),
            Verdict::Pass
        );
        assert_eq!(
            verdict("item/started", json!({"item": {"id": "c"}})),
            Verdict::Pass
        );
        assert_eq!(
            verdict("item/completed", json!({"item": {"id": "c"}})),
            Verdict::PassAndEnd
        );
        assert_eq!(
            verdict("turn/completed", json!({"turn": {"id": "t"}})),
            Verdict::PassAndEnd,
            "the read has t running"
        );
        assert_eq!(
            verdict("turn/completed", json!({"turn": {"id": "old"}})),
            Verdict::SpareAndEnd
        );
        assert_eq!(
            verdict("turn/started", json!({"turn": {"id": "t"}})),
            Verdict::Spare
        );
        assert_eq!(
            verdict("turn/started", json!({"turn": {"id": "next"}})),
            Verdict::PassAndEnd
        );
        assert_eq!(
            verdict("thread/status/changed", json!({"threadId": "x"})),
            Verdict::Pass
        );
        assert_eq!(known.verdict("item/completed", b"not json"), Verdict::Pass);
    }

    #[test]
    fn a_request_waits_for_a_connection_catching_up_and_is_refused_once_none_is() {
        let hub = std::sync::Arc::new(agentwire_runtime::Hub::new(Duration::from_secs(1)));
        let (first, second) = (
            agentwire_support::test_peer::discarding(&hub),
            agentwire_support::test_peer::discarding(&hub),
        );
        let method = agentwire_protocol::methods::find("item/commandExecution/requestApproval")
            .expect("a server request");
        let request = |ask: &str| -> Deferred {
            let params = RawValue::from_string("{}".to_owned()).expect("json");
            (ask.to_owned(), method, params)
        };
        let asks = |deferred: Vec<Deferred>| -> Vec<String> {
            deferred.into_iter().map(|(ask, ..)| ask).collect()
        };
        let mut catch_ups = CatchUps::default();
        assert!(
            catch_ups.defer("t", request("a")).is_err(),
            "nobody catches up"
        );
        catch_ups.register("t", &first, None);
        catch_ups.register("t", &second, None);
        assert!(catch_ups.defer("t", request("a")).is_ok());
        assert!(catch_ups.defer("t", request("a")).is_err(), "once");
        assert!(catch_ups.defer("t", request("b")).is_ok());
        assert!(catch_ups.defer("other", request("c")).is_err());
        catch_ups.withdraw("t", "b");
        assert!(catch_ups.settle("t", false).is_empty(), "still catching up");
        assert!(catch_ups.forget("t", first.connection_id()));
        assert!(catch_ups.settle("t", false).is_empty(), "one still is");
        assert_eq!(
            asks(catch_ups.settle("t", true)),
            ["a"],
            "put once one follows"
        );
        assert!(catch_ups.defer("t", request("d")).is_ok());
        assert!(!catch_ups.forget("t", second.connection_id()));
        assert_eq!(
            asks(catch_ups.settle("t", false)),
            ["d"],
            "refused: none is left"
        );
        assert!(catch_ups.settle("t", true).is_empty());
        for n in 0..=MAX_DEFERRED {
            catch_ups.register("u", &first, None);
            let deferred = catch_ups.defer("u", request(&format!("u{n}")));
            assert_eq!(deferred.is_ok(), n < MAX_DEFERRED, "bounded at {n}");
        }
        assert_eq!(asks(catch_ups.forget_thread("u")).len(), MAX_DEFERRED);
    }

    #[test]
    fn only_the_latest_turns_are_remembered() {
        let turns: Vec<Turn> = (0..10)
            .map(|n| turn(&format!("t{n}"), TurnStatus::Completed, &[&format!("i{n}")]))
            .collect();
        let known = Known::of(&turns);
        assert_eq!(known.turns.len(), KNOWN_TURNS);
        assert!(known.items.contains("i9") && !known.items.contains("i0"));
    }
}
