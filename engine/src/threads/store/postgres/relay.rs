//! Live notifications between the workers of one database, over `LISTEN`/`NOTIFY`.
//!
//! Every notification a turn here sends the followers of its thread is published on the
//! channel [`CHANNEL`]; every worker listens on it and hands what the others published to its
//! own followers of that thread. A client may so follow a turn from any worker, whichever one
//! runs it, and interrupt it from there: `turn/interrupt` on a worker that does not run the
//! turn is published the same way (`{"turnId": …}` under the method `turn/interrupt`), and the
//! worker running it stops it.
//!
//! A `NOTIFY` payload is text shorter than 8000 bytes, so one notification is published as one
//! or more payloads, each a header line and a fragment of the encoded message:
//!
//! ```text
//! {origin} {seq} {part} {parts} {method} {thread id}\n{fragment}
//! ```
//!
//! `origin` names the publishing worker (a listener skips its own), `seq` numbers its
//! notifications, `part` counts from 0 to `parts - 1`. The payloads of one worker arrive in the
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
//! Publishing never blocks a turn: notifications queue for the publisher thread, which sends
//! up to [`BATCH`] payloads per round trip. When the queue is full or the database is gone they
//! are dropped (and counted in the log); a follower elsewhere then reads the turn in full once it
//! ends, as it would without the relay.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use agentwire_protocol::method::{Direction, Method, MethodInfo};
use postgres::fallible_iterator::FallibleIterator;
use postgres::{Client, NoTls};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use agentwire_protocol::methods::TurnInterrupt;

use crate::threads::store::{Deliver, Relay, Relayed};

/// The channel every worker of a database publishes and listens on.
pub(super) const CHANNEL: &str = "agentwire_events";

/// Bytes of the encoded message per payload, leaving room for the header under the 8000-byte
/// limit.
const FRAGMENT: usize = 7000;

/// The most payloads one notification may take (about 14 MB); a longer one is not relayed.
const MAX_PARTS: usize = 2048;

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

/// The header's method of a worker saying it has followers of the thread now.
const FOLLOW: &str = "@follow";

/// The header's method of a worker saying it has no more followers of the thread.
const UNFOLLOW: &str = "@unfollow";

/// The header's method of a worker that (re)joined the relay (its thread id is `-`).
const JOINED: &str = "@joined";

/// One notification to publish.
struct Outgoing {
    thread_id: String,
    method: &'static str,
    message: Vec<u8>,
}

/// This worker's side of the relay: the publisher's queue, and the listener's stop flag.
#[derive(Debug)]
pub(super) struct PgRelay {
    queue: mpsc::SyncSender<Outgoing>,
    dropped: AtomicU64,
    stop: Arc<AtomicBool>,
}

impl PgRelay {
    /// Starts the publisher and the listener threads of this worker, each on a connection of
    /// its own made from `config`; relayed notifications are handed to `deliver`.
    pub(super) fn start(config: &postgres::Config, deliver: Deliver) -> Result<Self, String> {
        let origin = uuid::Uuid::now_v7().simple().to_string();
        let stop = Arc::new(AtomicBool::new(false));
        let (queue, outgoing) = mpsc::sync_channel(QUEUE);
        let publisher = Publisher {
            config: config.clone(),
            origin: origin.clone(),
            client: None,
            seq: 0,
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
            stop: Arc::clone(&stop),
        };
        std::thread::Builder::new()
            .name("agentwire-pg-listen".to_owned())
            .spawn(move || listener.run())
            .map_err(|e| format!("cannot start the relay listener: {e}"))?;
        Ok(Self {
            queue,
            dropped: AtomicU64::new(0),
            stop,
        })
    }
}

impl Relay for PgRelay {
    fn publish(&self, thread_id: &str, method: &'static str, message: Vec<u8>) {
        self.queue(Outgoing {
            thread_id: thread_id.to_owned(),
            method,
            message,
        });
    }

    fn interrupt(&self, thread_id: &str, turn_id: &str) {
        let request = Interrupt {
            turn_id: turn_id.to_owned(),
        };
        self.queue(Outgoing {
            thread_id: thread_id.to_owned(),
            method: TurnInterrupt::NAME,
            message: serde_json::to_vec(&request).unwrap_or_default(),
        });
    }

    fn follow(&self, thread_id: &str, following: bool) {
        self.queue(Outgoing {
            thread_id: thread_id.to_owned(),
            method: if following { FOLLOW } else { UNFOLLOW },
            message: Vec::new(),
        });
    }
}

impl PgRelay {
    /// Queues `outgoing` for the publisher, or drops it (counted) when the queue is full.
    fn queue(&self, outgoing: Outgoing) {
        if !enqueue(&self.queue, outgoing) {
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
}

impl Publisher {
    fn run(mut self, outgoing: &mpsc::Receiver<Outgoing>) {
        while let Ok(first) = outgoing.recv() {
            let mut payloads = Vec::new();
            self.encode(first, &mut payloads);
            while payloads.len() < BATCH {
                match outgoing.try_recv() {
                    Ok(next) => self.encode(next, &mut payloads),
                    Err(_) => break,
                }
            }
            self.send(&payloads);
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
        self.seq += 1;
        let parts = fragments.len();
        for (part, fragment) in fragments.into_iter().enumerate() {
            payloads.push(format!(
                "{} {} {part} {parts} {} {}\n{fragment}",
                self.origin, self.seq, outgoing.method, outgoing.thread_id
            ));
        }
    }

    /// Sends `payloads` in one transaction, in order; a failure drops them (logged).
    fn send(&mut self, payloads: &[String]) {
        if self.client.as_ref().is_none_or(Client::is_closed) {
            match self.config.connect(NoTls) {
                Ok(client) => self.client = Some(client),
                Err(error) => {
                    tracing::warn!(%error, dropped = payloads.len(), "relay cannot connect");
                    return;
                }
            }
        }
        let Some(client) = self.client.as_mut() else {
            return;
        };
        let sent = client.execute(
            "SELECT pg_notify($1, payload) FROM unnest($2::text[]) AS payload",
            &[&CHANNEL, &payloads],
        );
        if let Err(error) = sent {
            tracing::warn!(%error, dropped = payloads.len(), "relay could not publish");
        }
    }
}

/// `text` cut into fragments of at most [`FRAGMENT`] bytes, on character boundaries.
fn fragments(text: &str) -> Vec<&str> {
    let mut fragments = Vec::with_capacity(text.len() / FRAGMENT + 1);
    let mut rest = text;
    loop {
        if rest.len() <= FRAGMENT {
            fragments.push(rest);
            return fragments;
        }
        let mut end = FRAGMENT;
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        let (head, tail) = rest.split_at(end);
        fragments.push(head);
        rest = tail;
    }
}

/// One payload's header, as parsed.
#[derive(Debug, PartialEq)]
struct Header<'a> {
    origin: &'a str,
    seq: u64,
    part: usize,
    parts: usize,
    method: &'a str,
    thread_id: &'a str,
}

/// Splits `payload` into its header and fragment; `None` when it is not a relay payload.
fn parse(payload: &str) -> Option<(Header<'_>, &str)> {
    let (header, fragment) = payload.split_once('\n')?;
    let mut fields = header.splitn(6, ' ');
    let header = Header {
        origin: fields.next()?,
        seq: fields.next()?.parse().ok()?,
        part: fields.next()?.parse().ok()?,
        parts: fields.next()?.parse().ok()?,
        method: fields.next()?,
        thread_id: fields.next()?,
    };
    let sound = header.part < header.parts && header.parts <= MAX_PARTS;
    sound.then_some((header, fragment))
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
    stop: Arc<AtomicBool>,
}

impl Listener {
    fn run(mut self) {
        while !self.stop.load(Ordering::Relaxed) {
            let mut client = match self.config.connect(NoTls) {
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
            let joined = Outgoing {
                thread_id: "-".to_owned(),
                method: JOINED,
                message: Vec::new(),
            };
            if !enqueue(&self.queue, joined) {
                tracing::warn!("relay behind: could not say that this worker joined");
            }
            self.listen(&mut client);
        }
    }

    /// Handles notifications until the connection breaks or the store closes.
    fn listen(&mut self, client: &mut Client) {
        while !self.stop.load(Ordering::Relaxed) {
            let next = client.notifications().timeout_iter(POLL).next();
            match next {
                Ok(Some(notification)) if notification.channel() == CHANNEL => {
                    self.receive(notification.payload());
                }
                Ok(Some(_)) => {}
                Ok(None) if client.is_closed() => break,
                Ok(None) => {}
                Err(error) => {
                    tracing::warn!(%error, "relay listener lost its connection; reconnecting");
                    break;
                }
            }
        }
    }

    /// Handles one payload.
    fn receive(&mut self, payload: &str) {
        let Some((header, fragment)) = parse(payload) else {
            tracing::warn!(
                bytes = payload.len(),
                "relay payload dropped: not understood"
            );
            return;
        };
        if header.origin == self.origin {
            return;
        }
        if header.parts == 1 {
            self.hand_over(&header, fragment.as_bytes().to_vec());
            return;
        }
        let joined = self.join(&header, fragment);
        if let Some(text) = joined {
            self.hand_over(&header, text.into_bytes());
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

    /// Hands `message` over, if it is what its header says: the JSON-RPC form of a server
    /// notification for the followers here, or an interrupt.
    fn hand_over(&self, header: &Header<'_>, message: Vec<u8>) {
        let origin = header.origin.to_owned();
        match header.method {
            FOLLOW | UNFOLLOW => {
                let following = header.method == FOLLOW;
                (self.deliver)(header.thread_id, Relayed::Following { origin, following });
                return;
            }
            JOINED => {
                (self.deliver)(header.thread_id, Relayed::Joined);
                return;
            }
            _ => {}
        }
        if header.method == TurnInterrupt::NAME {
            match serde_json::from_slice::<Interrupt>(&message) {
                Ok(Interrupt { turn_id }) => {
                    (self.deliver)(header.thread_id, Relayed::Interrupt { turn_id });
                }
                Err(error) => tracing::warn!(%error, "relayed interrupt dropped: not understood"),
            }
            return;
        }
        let Some(method) = notification(header.method) else {
            tracing::warn!(
                method = header.method,
                "relay payload dropped: not a server notification"
            );
            return;
        };
        if !encodes(&message, method.name) {
            tracing::warn!(
                method = method.name,
                "relay payload dropped: not the notification's JSON-RPC message"
            );
            return;
        }
        (self.deliver)(header.thread_id, Relayed::Notification { method, message });
    }
}

/// What a relayed interrupt carries (its thread is in the header).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Interrupt {
    turn_id: String,
}

/// The server notification called `name`.
fn notification(name: &str) -> Option<&'static MethodInfo> {
    agentwire_protocol::methods::find(name)
        .filter(|method| method.direction == Direction::ServerNotification)
}

/// The shape every relayed message must have: a notification of one method.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    method: &'a str,
    /// Checked to be present and JSON; passed on as it is.
    #[serde(borrow, rename = "params")]
    _params: &'a RawValue,
}

/// Whether `message` is a JSON-RPC notification of `method`.
fn encodes(message: &[u8], method: &str) -> bool {
    serde_json::from_slice::<Envelope<'_>>(message).is_ok_and(|envelope| envelope.method == method)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_messages_are_cut_on_character_boundaries_and_join_back() {
        let text = format!("{}{}", "é".repeat(FRAGMENT), "x".repeat(10));
        let parts = fragments(&text);
        assert!(parts.len() > 1, "{}", parts.len());
        assert!(parts.iter().all(|part| part.len() <= FRAGMENT));
        assert_eq!(parts.concat(), text);
        assert_eq!(fragments("short"), ["short"]);
        assert_eq!(fragments(""), [""]);
    }

    #[test]
    fn payloads_parse_and_malformed_ones_are_refused() {
        let (header, fragment) = parse("ab 7 0 2 item/started thread one\n{\"x\"").expect("parses");
        assert_eq!(
            header,
            Header {
                origin: "ab",
                seq: 7,
                part: 0,
                parts: 2,
                method: "item/started",
                thread_id: "thread one",
            }
        );
        assert_eq!(fragment, "{\"x\"");
        for bad in [
            "no newline",
            "ab x 0 1 m t\n",
            "ab 1 2 2 m t\n",
            "ab 1 0 999999 m t\n",
            "ab 1 0 1 m\n",
        ] {
            assert!(parse(bad).is_none(), "{bad:?}");
        }
    }

    #[test]
    fn only_server_notifications_in_their_json_rpc_form_are_handed_over() {
        assert!(notification("item/started").is_some());
        assert!(notification("turn/start").is_none(), "a client request");
        assert!(notification("no/such").is_none());
        let message = br#"{"method":"item/started","params":{"threadId":"t"}}"#;
        assert!(encodes(message, "item/started"));
        assert!(!encodes(message, "turn/started"), "another method");
        assert!(!encodes(b"{\"method\":\"item/started\"", "item/started"));
        assert!(!encodes(br#"{"method":"item/started"}"#, "item/started"));
    }
}
