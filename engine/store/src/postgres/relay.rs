//! Live notifications between the workers of one database, over `LISTEN`/`NOTIFY`.
//!
//! Every notification a turn here sends the followers of its thread is published on the
//! channel [`CHANNEL`]; every worker listens on it and hands what the others published to its
//! own followers of that thread. A client may so follow a turn from any worker, whichever one
//! runs it, and interrupt or steer it from there: `turn/interrupt` on a worker that does not run
//! the turn is published the same way (`{"turnId": …}` under the method `turn/interrupt`), and
//! the worker running it stops it; `turn/steer` goes as an ask (below) that the worker running
//! the turn answers. A server request of the turn (an approval, user input, a client
//! tool call) is published as an ask (`{"ask": …, "params": …}` under the request's method);
//! each worker with followers puts it to them and publishes the first answer (`@answer`), and
//! the ask is withdrawn everywhere once one counts (`@withdraw`; see
//! the engine's `threads::asks`). The payload formats are in [`super::relay_wire`].
//!
//! A `NOTIFY` payload is text shorter than 8000 bytes, so one notification is published as one
//! or more payloads, each a header line and a fragment of the encoded message:
//!
//! ```text
//! {origin} {seq} {part} {parts} {method} {thread id}\n{fragment}
//! ```
//!
//! `origin` names the publishing worker (a listener skips its own), `seq` numbers its
//! notifications (increasing; since the relay lag is measured, it is the time the notification
//! was queued, see [`super::relay_wire::STAMPED`]), `part` counts from 0 to `parts - 1`. The payloads of one worker arrive in the
//! order it sent them (each batch is one transaction, and batches are sent one after another on
//! one connection), so a listener joins the fragments of one origin as they come. Nothing here is
//! trusted: a payload that does not parse, a fragment out of turn, a method that is not a
//! server notification or a message that is not its JSON-RPC form is dropped and logged.
//!
//! A turn's notifications are published only while another worker has followers of its
//! thread: a worker says when its first follower of a thread comes (`@follow`) and its last one
//! goes (`@unfollow`), and says again what it follows whenever a worker (re)joins (`@joined`,
//! sent by each listener once it listens), so one that missed it learns it.
//!
//! A worker that dies says no `@unfollow`. Each listener remembers which database session every
//! worker's payloads come from (its publisher's) and, every [`SWEEP`], asks PostgreSQL which
//! of those sessions still exist (by process id and start, so that a process id the system
//! has given to a new session since does not keep the old one alive): a worker whose session
//! ended follows nothing any more ([`Relayed::Gone`]), so its threads stop being published for
//! it. When the ended session is this worker's own publisher's, or its publisher turns up on a
//! new session, this worker says again what it follows (as it does whenever its listener
//! connects), so that a worker that lives on is not forgotten for good.
//!
//! A worker whose `@follow` or `@unfollow` may have been lost (its queue was full, or the
//! database refused the batch) says everything it follows again, between `@resync` and
//! `@synced`: the others keep publishing what it followed until `@synced`, and then drop the
//! threads it did not say again ([`Relayed::Resyncing`], [`Relayed::Resynced`]). So a thread
//! it stopped following while cut off is not published for it for good, and nothing it still
//! follows stops being published meanwhile. It does the same when its publisher has moved to
//! a new session, through which a lost word may have gone unsaid.
//!
//! Publishing never blocks a turn: notifications queue for the publisher thread, which sends
//! up to [`BATCH`] payloads per round trip. When the queue is full or the database is gone they
//! are dropped (and counted in the log); a follower elsewhere then reads the turn in full once it
//! ends, as it would without the relay.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use agentwire_protocol::method::Method;
use agentwire_protocol::methods::{TurnInterrupt, TurnSteer};
use postgres::Client;
use postgres::fallible_iterator::FallibleIterator;

use super::db::connect;
use super::relay_wire::{self as wire, Header, MAX_PARTS, fragments, parse};
use crate::boundary::{Deliver, Relay, Relayed};

/// The channel every worker of a database publishes and listens on.
pub(super) const CHANNEL: &str = "agentwire_events";

/// Notifications waiting for the publisher; more are dropped.
const QUEUE: usize = 16 * 1024;

/// Payloads sent per round trip.
const BATCH: usize = 512;

/// How often the listener looks up from waiting, to notice that the store closed.
const POLL: Duration = Duration::from_millis(250);

/// The most origins whose notifications may be half joined at once (one per worker).
const MAX_JOINING: usize = 256;

/// How long the listener waits before connecting again after losing its connection.
const RECONNECT: Duration = Duration::from_secs(1);

/// How often the listener checks that the workers it heard from are still connected.
const SWEEP: Duration = Duration::from_secs(5);

/// The most workers whose sessions are watched; payloads of others are still handled.
const MAX_WATCHED: usize = 1024;

/// One notification to publish.
struct Outgoing {
    thread_id: String,
    method: &'static str,
    message: Vec<u8>,
    /// When it was queued, in microseconds since the Unix epoch: its payloads' `seq` (see
    /// [`wire::STAMPED`]).
    queued: u64,
}

impl Outgoing {
    /// The message `method` of `thread_id`, queued now.
    fn new(thread_id: &str, method: &'static str, message: Vec<u8>) -> Self {
        Self {
            thread_id: thread_id.to_owned(),
            method,
            message,
            queued: wire::now_micros(),
        }
    }

    /// The control message `method` about no thread in particular (thread id `-`, no body).
    fn marker(method: &'static str) -> Self {
        Self::new("-", method, Vec::new())
    }
}

/// This worker's side of the relay: the publisher's queue, and the listener's stop flag.
#[derive(Debug)]
pub(super) struct PgRelay {
    queue: mpsc::SyncSender<Outgoing>,
    dropped: AtomicU64,
    /// Set when something this worker said about what it follows was dropped: the listener
    /// then has it all said again ([`Listener::resync`]).
    lost: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
}

impl PgRelay {
    /// Starts the publisher and the listener threads of this worker, each on a connection of
    /// its own made from `config`; relayed notifications are handed to `deliver`.
    pub(super) fn start(config: &postgres::Config, deliver: Deliver) -> Result<Self, String> {
        let origin = uuid::Uuid::now_v7().simple().to_string();
        let stop = Arc::new(AtomicBool::new(false));
        let lost = Arc::new(AtomicBool::new(false));
        let (queue, outgoing) = mpsc::sync_channel(QUEUE);
        let publisher = Publisher {
            config: config.clone(),
            origin: origin.clone(),
            client: None,
            seq: 0,
            lost: Arc::clone(&lost),
        };
        std::thread::Builder::new()
            .name("agentwire-pg-publish".to_owned())
            .spawn(move || publisher.run(&outgoing))
            .map_err(|e| format!("cannot start the relay publisher: {e}"))?;
        let listener = Listener {
            config: config.clone(),
            origin,
            queue: queue.clone(),
            deliver,
            joining: HashMap::new(),
            sessions: HashMap::new(),
            swept: Instant::now(),
            lost: Arc::clone(&lost),
            resynced: None,
            stop: Arc::clone(&stop),
        };
        std::thread::Builder::new()
            .name("agentwire-pg-listen".to_owned())
            .spawn(move || listener.run())
            .map_err(|e| format!("cannot start the relay listener: {e}"))?;
        Ok(Self {
            queue,
            dropped: AtomicU64::new(0),
            lost,
            stop,
        })
    }
}

impl Relay for PgRelay {
    fn publish(&self, thread_id: &str, method: &'static str, message: Vec<u8>) {
        self.queue(Outgoing::new(thread_id, method, message));
    }

    fn interrupt(&self, thread_id: &str, turn_id: &str) {
        self.control(
            thread_id,
            TurnInterrupt::NAME,
            &wire::Interrupt::new(turn_id),
        );
    }

    fn follow(&self, thread_id: &str, following: bool) {
        let method = if following {
            wire::FOLLOW
        } else {
            wire::UNFOLLOW
        };
        self.queue(Outgoing::new(thread_id, method, Vec::new()));
    }

    fn join(&self, thread_id: &str, ask: &str) {
        self.control(thread_id, wire::JOIN, &wire::AskRef::new(ask));
    }

    fn ask(&self, thread_id: &str, ask: &str, method: &'static str, params: Vec<u8>) {
        match wire::ask_body(ask, params) {
            Ok(message) => self.queue(Outgoing::new(thread_id, method, message)),
            Err(why) => tracing::warn!(method, why, "ask not relayed"),
        }
    }

    fn answer(&self, thread_id: &str, ask: &str, answer: Result<serde_json::Value, String>) {
        self.control(thread_id, wire::ANSWER, &wire::AnswerBody::new(ask, answer));
    }

    fn withdraw(&self, thread_id: &str, ask: &str) {
        self.control(thread_id, wire::WITHDRAW, &wire::AskRef::new(ask));
    }

    fn steer(&self, thread_id: &str, ask: &str, params: Vec<u8>) {
        self.ask(thread_id, ask, TurnSteer::NAME, params);
    }
}

impl PgRelay {
    /// Queues the control message `method` of `thread_id` with `body` as its JSON.
    fn control(&self, thread_id: &str, method: &'static str, body: &impl serde::Serialize) {
        match serde_json::to_vec(body) {
            Ok(message) => self.queue(Outgoing::new(thread_id, method, message)),
            Err(error) => tracing::warn!(method, %error, "not relayed"),
        }
    }

    /// Queues `outgoing` for the publisher, or drops it (counted) when the queue is full.
    fn queue(&self, outgoing: Outgoing) {
        let method = outgoing.method;
        if !enqueue(&self.queue, outgoing) {
            if wire::says_what_is_followed(method) {
                self.lost.store(true, Ordering::Relaxed);
            }
            let dropped = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
            if dropped.is_power_of_two() {
                tracing::warn!(
                    dropped,
                    "relay behind: notifications for other workers dropped"
                );
            }
        }
    }
}

/// Queues `outgoing` for the publisher; `false` when the queue is full (it is dropped).
fn enqueue(queue: &mpsc::SyncSender<Outgoing>, outgoing: Outgoing) -> bool {
    !matches!(queue.try_send(outgoing), Err(mpsc::TrySendError::Full(_)))
}

impl Drop for PgRelay {
    fn drop(&mut self) {
        // The publisher stops once the queue is gone; the listener at its next look-up.
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The publisher thread: sends the queued notifications in batches.
struct Publisher {
    config: postgres::Config,
    origin: String,
    client: Option<Client>,
    seq: u64,
    /// See [`PgRelay::lost`].
    lost: Arc<AtomicBool>,
}

impl Publisher {
    fn run(mut self, outgoing: &mpsc::Receiver<Outgoing>) {
        while let Ok(first) = outgoing.recv() {
            let mut payloads = Vec::new();
            let mut says_what_is_followed = wire::says_what_is_followed(first.method);
            self.encode(first, &mut payloads);
            while payloads.len() < BATCH {
                match outgoing.try_recv() {
                    Ok(next) => {
                        says_what_is_followed |= wire::says_what_is_followed(next.method);
                        self.encode(next, &mut payloads);
                    }
                    Err(_) => break,
                }
            }
            if !self.send(&payloads) && says_what_is_followed {
                self.lost.store(true, Ordering::Relaxed);
            }
        }
    }

    /// Appends the payloads of `outgoing` to `payloads`.
    fn encode(&mut self, outgoing: Outgoing, payloads: &mut Vec<String>) {
        let Ok(text) = String::from_utf8(outgoing.message) else {
            tracing::warn!(
                method = outgoing.method,
                "not relayed: the message is not UTF-8"
            );
            return;
        };
        let fragments = fragments(&text);
        if fragments.len() > MAX_PARTS {
            tracing::warn!(
                method = outgoing.method,
                bytes = text.len(),
                "not relayed: the notification is too long"
            );
            return;
        }
        // The time it was queued, unless that would not number it after the last one (the
        // clock went back, or two in one microsecond).
        self.seq = self.seq.saturating_add(1).max(outgoing.queued);
        let parts = fragments.len();
        for (part, fragment) in fragments.into_iter().enumerate() {
            payloads.push(format!(
                "{} {} {part} {parts} {} {}\n{fragment}",
                self.origin, self.seq, outgoing.method, outgoing.thread_id
            ));
        }
    }

    /// Sends `payloads` in one transaction, in order; whether they were sent. A session found
    /// ended (the database restarted, or the session was terminated) is replaced and the send
    /// tried once more; any other failure drops them (logged).
    fn send(&mut self, payloads: &[String]) -> bool {
        for attempt in 0..2 {
            let client = match self.connected() {
                Ok(client) => client,
                Err(error) => {
                    tracing::warn!(%error, dropped = payloads.len(), "relay cannot connect");
                    return false;
                }
            };
            let sent = client.execute(
                "SELECT pg_notify($1, payload) FROM unnest($2::text[]) AS payload",
                &[&CHANNEL, &payloads],
            );
            match sent {
                Ok(_) => return true,
                Err(error) if attempt == 0 && client.is_closed() => {
                    tracing::info!(%error, "relay session ended; publishing through a new one");
                }
                Err(error) => {
                    tracing::warn!(%error, dropped = payloads.len(), "relay could not publish");
                    return false;
                }
            }
        }
        false
    }

    /// The publishing session, made anew when there is none or it ended.
    fn connected(&mut self) -> Result<&mut Client, String> {
        let client = match self.client.take() {
            Some(client) if !client.is_closed() => client,
            _ => connect(&self.config)?,
        };
        Ok(self.client.insert(client))
    }
}

/// The database session a worker publishes from.
#[derive(Debug, PartialEq)]
struct Session {
    /// Its backend process id, as `NOTIFY` names the sender.
    pid: i32,
    /// When it started (`pg_stat_activity.backend_start`), once a sweep found it: a process id
    /// the system has given to a new session since is told apart by it.
    started: Option<String>,
}

impl Session {
    fn new(pid: i32) -> Self {
        Self { pid, started: None }
    }
}

/// The origins of `sessions` whose session has ended, taken out of it, given the sessions that
/// exist now (`alive`: backend process id → start, if shown). A session's start is learnt the
/// first time it is found; a process id found again with another start belongs to a new
/// session, and the one watched has ended.
fn ended(
    sessions: &mut HashMap<String, Session>,
    alive: &HashMap<i32, Option<String>>,
) -> Vec<String> {
    let mut ended = Vec::new();
    for (origin, session) in sessions.iter_mut() {
        match (alive.get(&session.pid), &session.started) {
            (None, _) => ended.push(origin.clone()),
            (Some(Some(now)), Some(started)) if now != started => ended.push(origin.clone()),
            (Some(Some(now)), None) => session.started = Some(now.clone()),
            (Some(_), _) => {}
        }
    }
    for origin in &ended {
        sessions.remove(origin);
    }
    ended
}

/// A notification whose fragments are still arriving.
struct Joining {
    seq: u64,
    next: usize,
    text: String,
}

/// The listener thread: hands what other workers publish to this worker's followers.
struct Listener {
    config: postgres::Config,
    origin: String,
    /// The publisher's queue, to say that this worker (re)joined.
    queue: mpsc::SyncSender<Outgoing>,
    deliver: Deliver,
    /// Per origin, the notification being joined.
    joining: HashMap<String, Joining>,
    /// Per origin (this worker's own included), the database session its last payload came
    /// from: its publisher's.
    sessions: HashMap<String, Session>,
    /// When [`Listener::sweep`] last ran.
    swept: Instant,
    /// See [`PgRelay::lost`].
    lost: Arc<AtomicBool>,
    /// When [`Listener::resync`] last ran: a loss is acted on at most once per [`RECONNECT`],
    /// so that a publisher that cannot connect is not asked to say it all again and again.
    resynced: Option<Instant>,
    stop: Arc<AtomicBool>,
}

impl Listener {
    fn run(mut self) {
        while !self.stop.load(Ordering::Relaxed) {
            let mut client = match connect(&self.config) {
                Ok(client) => client,
                Err(error) => {
                    tracing::warn!(%error, "relay listener cannot connect; retrying");
                    std::thread::sleep(RECONNECT);
                    continue;
                }
            };
            if let Err(error) = client.batch_execute(&format!("LISTEN {CHANNEL}")) {
                tracing::warn!(%error, "relay listener cannot listen; retrying");
                std::thread::sleep(RECONNECT);
                continue;
            }
            self.joining.clear();
            // Listening now: whoever follows what is said again, for what was missed.
            if !enqueue(&self.queue, Outgoing::marker(wire::JOINED)) {
                tracing::warn!("relay behind: could not say that this worker joined");
            }
            // And this worker says again what it follows, which the others may have missed or
            // forgotten (its session seen ended) while it was cut off.
            self.follow_again();
            self.listen(&mut client);
        }
    }

    /// Handles notifications until the connection breaks or the store closes.
    fn listen(&mut self, client: &mut Client) {
        while !self.stop.load(Ordering::Relaxed) {
            let rested = self.resynced.is_none_or(|at| at.elapsed() >= RECONNECT);
            if rested && self.lost.swap(false, Ordering::Relaxed) {
                tracing::info!(
                    "relay: what this worker follows may not have been heard; saying all of it again"
                );
                self.resync();
            }
            let next = client.notifications().timeout_iter(POLL).next();
            match next {
                Ok(Some(notification)) if notification.channel() == CHANNEL => {
                    self.receive(notification.payload(), notification.process_id());
                }
                Ok(Some(_)) => {}
                Ok(None) if client.is_closed() => break,
                Ok(None) => {}
                Err(error) => {
                    tracing::warn!(%error, "relay listener lost its connection; reconnecting");
                    break;
                }
            }
            if self.swept.elapsed() >= SWEEP {
                self.sweep(client);
            }
        }
    }

    /// Forgets the workers whose publishing session has ended: they follow nothing any more.
    /// When the session is this worker's own publisher's, it says again what it follows (the
    /// others forget it too), which the publisher sends through a new session.
    fn sweep(&mut self, client: &mut Client) {
        self.swept = Instant::now();
        if self.sessions.is_empty() {
            return;
        }
        let pids: Vec<i32> = self.sessions.values().map(|session| session.pid).collect();
        let rows = client.query(
            "SELECT pid, backend_start::text FROM pg_stat_activity WHERE pid = ANY($1)",
            &[&pids],
        );
        // The start is hidden (NULL) from a role that may not see another's sessions in full.
        let alive: HashMap<i32, Option<String>> = match rows {
            Ok(rows) => rows
                .iter()
                .filter_map(|row| Some((row.try_get(0).ok()?, row.try_get(1).ok()?)))
                .collect(),
            Err(error) => {
                tracing::warn!(%error, "relay: cannot tell which workers are connected");
                return;
            }
        };
        for origin in ended(&mut self.sessions, &alive) {
            self.joining.remove(&origin);
            if origin == self.origin {
                tracing::info!("relay: this worker's publishing session ended; following again");
                self.resync();
            } else {
                tracing::info!(
                    origin,
                    "relay: a worker's session ended; it follows nothing now"
                );
                (self.deliver)("-", Relayed::Gone { origin });
            }
        }
    }

    /// Notes that `origin` publishes from the session of backend `pid`. When this worker's own
    /// publisher is found on a new session, the others may have seen the old one end and
    /// forgotten what this worker follows, before its own sweep could: it says it again.
    fn watch(&mut self, origin: &str, pid: i32) {
        let moved = match self.sessions.get_mut(origin) {
            Some(known) if known.pid == pid => false,
            Some(known) => {
                *known = Session::new(pid);
                true
            }
            None => {
                if self.sessions.len() < MAX_WATCHED {
                    self.sessions.insert(origin.to_owned(), Session::new(pid));
                }
                false
            }
        };
        if moved && origin == self.origin {
            tracing::info!("relay: this worker publishes through a new session; following again");
            self.resync();
        }
    }

    /// Has this worker say again everything it follows, between `@resync` and `@synced`, so
    /// that the others also drop what it stopped following while what it said was lost. What
    /// cannot be queued now is tried again (see [`PgRelay::lost`]).
    fn resync(&mut self) {
        self.resynced = Some(Instant::now());
        if !enqueue(&self.queue, Outgoing::marker(wire::RESYNC)) {
            self.lost.store(true, Ordering::Relaxed);
            return;
        }
        self.follow_again();
        if !enqueue(&self.queue, Outgoing::marker(wire::SYNCED)) {
            self.lost.store(true, Ordering::Relaxed);
        }
    }

    /// Has this worker say again which threads it follows (the others may have forgotten it),
    /// as its answer to a worker that joined would.
    fn follow_again(&self) {
        (self.deliver)("-", Relayed::Joined);
    }

    /// Handles one payload, sent from the session of backend `pid`.
    fn receive(&mut self, payload: &str, pid: i32) {
        let Some((header, fragment)) = parse(payload) else {
            tracing::warn!(
                bytes = payload.len(),
                "relay payload dropped: not understood"
            );
            return;
        };
        self.watch(header.origin, pid);
        if header.origin == self.origin {
            return;
        }
        if header.parts == 1 {
            self.hand_over(&header, fragment.as_bytes());
            return;
        }
        let joined = self.join(&header, fragment);
        if let Some(text) = joined {
            self.hand_over(&header, text.as_bytes());
        }
    }

    /// Adds `fragment` to the notification of `header`'s origin; the whole text once its last
    /// fragment is in.
    fn join(&mut self, header: &Header<'_>, fragment: &str) -> Option<String> {
        if header.part == 0 {
            if self.joining.len() >= MAX_JOINING {
                tracing::warn!("relay: too many notifications half joined; dropping them");
                self.joining.clear();
            }
            self.joining.insert(
                header.origin.to_owned(),
                Joining {
                    seq: header.seq,
                    next: 0,
                    text: String::new(),
                },
            );
        }
        let Some(joining) = self.joining.get_mut(header.origin) else {
            tracing::warn!(header.seq, "relay fragment dropped: its start was missed");
            return None;
        };
        if joining.seq != header.seq || joining.next != header.part {
            tracing::warn!(
                header.seq,
                header.part,
                "relay fragment dropped: out of turn"
            );
            self.joining.remove(header.origin);
            return None;
        }
        joining.text.push_str(fragment);
        joining.next += 1;
        if joining.next < header.parts {
            return None;
        }
        self.joining.remove(header.origin).map(|done| done.text)
    }

    /// Hands `message` over, if it is what its header says (see [`wire::decode`]). A
    /// notification's relay lag is recorded once its followers have it.
    fn hand_over(&self, header: &Header<'_>, message: &[u8]) {
        match wire::decode(header, message) {
            Ok(relayed) => {
                let notification = matches!(relayed, Relayed::Notification { .. });
                (self.deliver)(header.thread_id, relayed);
                if notification && let Some(lag) = wire::lag(header.seq, wire::now_micros()) {
                    agentwire_runtime::telemetry::relay_delivered(lag);
                }
            }
            Err(why) => tracing::warn!(method = header.method, why, "relay payload dropped"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watched(sessions: &[(&str, i32, Option<&str>)]) -> HashMap<String, Session> {
        sessions
            .iter()
            .map(|(origin, pid, started)| {
                let session = Session {
                    pid: *pid,
                    started: started.map(str::to_owned),
                };
                ((*origin).to_owned(), session)
            })
            .collect()
    }

    #[test]
    fn only_a_dropped_word_on_what_is_followed_counts_as_lost() {
        let (queue, _outgoing) = mpsc::sync_channel(1);
        let relay = PgRelay {
            queue,
            dropped: AtomicU64::new(0),
            lost: Arc::new(AtomicBool::new(false)),
            stop: Arc::new(AtomicBool::new(false)),
        };
        relay.publish("t", "item/started", b"{}".to_vec());
        relay.publish("t", "item/started", b"{}".to_vec());
        assert_eq!(
            relay.dropped.load(Ordering::Relaxed),
            1,
            "the queue was full"
        );
        assert!(
            !relay.lost.load(Ordering::Relaxed),
            "a dropped notification says nothing about what is followed"
        );
        relay.follow("t", false);
        assert!(relay.lost.load(Ordering::Relaxed), "a dropped @unfollow is");
    }

    #[test]
    fn a_batch_the_publisher_cannot_send_is_lost_if_it_said_what_is_followed() {
        // Nothing listens on port 1 of the loopback: every connection is refused at once.
        let config: postgres::Config = "host=127.0.0.1 port=1 user=nobody connect_timeout=5"
            .parse()
            .expect("a config");
        for (method, lost) in [("item/started", false), (wire::FOLLOW, true)] {
            let flag = Arc::new(AtomicBool::new(false));
            let publisher = Publisher {
                config: config.clone(),
                origin: "o".to_owned(),
                client: None,
                seq: 0,
                lost: Arc::clone(&flag),
            };
            let (queue, outgoing) = mpsc::sync_channel(4);
            queue
                .send(Outgoing::new("t", method, Vec::new()))
                .expect("queued");
            drop(queue);
            publisher.run(&outgoing);
            assert_eq!(flag.load(Ordering::Relaxed), lost, "{method}");
        }
    }

    #[test]
    fn a_session_ends_when_its_process_is_gone_or_serves_a_newer_session() {
        let mut sessions = watched(&[
            ("gone", 1, Some("t1")),
            ("reused", 2, Some("t2")),
            ("same", 3, Some("t3")),
            ("new", 4, None),
            ("hidden", 5, Some("t5")),
        ]);
        let alive = HashMap::from([
            (2, Some("later".to_owned())),
            (3, Some("t3".to_owned())),
            (4, Some("t4".to_owned())),
            (5, None),
        ]);
        let mut gone = ended(&mut sessions, &alive);
        gone.sort();
        assert_eq!(gone, ["gone", "reused"]);
        assert_eq!(
            sessions,
            watched(&[
                ("same", 3, Some("t3")),
                ("new", 4, Some("t4")),
                ("hidden", 5, Some("t5")),
            ]),
            "the new session's start is learnt; a hidden start ends nothing"
        );
        let alive = HashMap::from([(3, Some("t3".to_owned())), (4, Some("other".to_owned()))]);
        let mut gone = ended(&mut sessions, &alive);
        gone.sort();
        assert_eq!(gone, ["hidden", "new"], "gone, and a new start for 4");
        assert_eq!(sessions, watched(&[("same", 3, Some("t3"))]));
    }
}
