//! The payloads of the relay between workers (see [`super::relay`]): a header line, then a
//! fragment of a message. Everything decoded here comes from outside and is checked: what does
//! not parse, or is not what its header says, is refused with the reason.

use agentwire_protocol::method::{Direction, Method};
use agentwire_protocol::methods::{TurnInterrupt, TurnSteer};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::boundary::Relayed;

/// Bytes of the encoded message per payload, leaving room for the header under the 8000-byte
/// limit.
pub(super) const FRAGMENT: usize = 7000;

/// The most payloads one notification may take (about 14 MB); a longer one is not relayed.
pub(super) const MAX_PARTS: usize = 2048;

/// The header's method of a worker saying it has followers of the thread now.
pub(super) const FOLLOW: &str = "@follow";

/// The header's method of a worker saying it has no more followers of the thread.
pub(super) const UNFOLLOW: &str = "@unfollow";

/// The header's method of a worker saying it has followers of the thread now, one of whom is
/// catching up with a turn running elsewhere: the worker running it answers the ask named in the
/// body once it publishes that turn's notifications (see [`Relayed::Join`]).
pub(super) const JOIN: &str = "@join";

/// The header's method of a worker that (re)joined the relay (its thread id is `-`).
pub(super) const JOINED: &str = "@joined";

/// The header's method of a worker that is about to say again everything it follows, because
/// some of what it said may have been lost: what it does not say again before [`SYNCED`] it
/// follows no more (its thread id is `-`; see [`Relayed::Resyncing`]).
pub(super) const RESYNC: &str = "@resync";

/// The header's method of a worker that has said again everything it follows since its
/// [`RESYNC`] (its thread id is `-`; see [`Relayed::Resynced`]).
pub(super) const SYNCED: &str = "@synced";

/// Whether payloads of `method` say what their worker follows: losing one leaves the others
/// with a wrong picture until the worker says all of it again.
pub(super) fn says_what_is_followed(method: &str) -> bool {
    matches!(method, FOLLOW | UNFOLLOW | JOIN | RESYNC | SYNCED)
}

/// The header's method of a worker's answer to an ask (see [`Relayed::Answer`]).
pub(super) const ANSWER: &str = "@answer";

/// The header's method that withdraws an ask (see [`Relayed::Withdraw`]).
pub(super) const WITHDRAW: &str = "@withdraw";

/// The least `seq` that is a time: a header's `seq` from it up is the time its notification
/// was queued by the publishing worker, in microseconds since the Unix epoch (this one is
/// 2001-09-09), kept increasing by the publisher (see [`super::relay`]).
///
/// The relay lag is so measured without changing the header's shape: a worker of the version
/// before, whose `seq` counted from 1, reads a time as any other number (it only compares the
/// `seq` of one notification's fragments), and a time is never a count it could have reached,
/// so its own payloads are told apart here and have no lag measured. The header has no version
/// field and its thread id runs to the end of the line, so a field could not be added without
/// an older worker misreading the thread; workers of both versions on one database (a rolling
/// upgrade) keep relaying to each other.
pub(super) const STAMPED: u64 = 1_000_000_000_000_000;

/// Now, in microseconds since the Unix epoch (0 if the clock is set before it).
pub(super) fn now_micros() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| {
            u64::try_from(since.as_micros()).unwrap_or(u64::MAX)
        })
}

/// The relay lag of a notification whose header's `seq` is `seq`, handed to followers at `now`
/// (microseconds since the Unix epoch): the time from the publishing worker queueing it to
/// this worker handing it over, on two hosts' clocks. A lag that clock skew makes negative is
/// zero. `None` when `seq` is a count, not a time (see [`STAMPED`]).
pub(super) fn lag(seq: u64, now: u64) -> Option<std::time::Duration> {
    (seq >= STAMPED).then(|| std::time::Duration::from_micros(now.saturating_sub(seq)))
}

/// `text` cut into fragments of at most [`FRAGMENT`] bytes, on character boundaries.
pub(super) fn fragments(text: &str) -> Vec<&str> {
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
pub(super) struct Header<'a> {
    pub(super) origin: &'a str,
    pub(super) seq: u64,
    pub(super) part: usize,
    pub(super) parts: usize,
    pub(super) method: &'a str,
    pub(super) thread_id: &'a str,
}

/// Splits `payload` into its header and fragment; `None` when it is not a relay payload.
pub(super) fn parse(payload: &str) -> Option<(Header<'_>, &str)> {
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

/// What the payload whose header is `header` and whose message is `message` says.
pub(super) fn decode(header: &Header<'_>, message: &[u8]) -> Result<Relayed, String> {
    let origin = header.origin.to_owned();
    match header.method {
        FOLLOW | UNFOLLOW => {
            let following = header.method == FOLLOW;
            return Ok(Relayed::Following { origin, following });
        }
        JOINED => return Ok(Relayed::Joined),
        RESYNC => return Ok(Relayed::Resyncing { origin }),
        SYNCED => return Ok(Relayed::Resynced { origin }),
        JOIN => {
            let body: AskRef = json(message)?;
            return Ok(Relayed::Join {
                origin,
                ask: body.ask,
            });
        }
        ANSWER => {
            let body: AnswerBody = json(message)?;
            let answer = match (body.result, body.error) {
                (Some(result), None) => Ok(result),
                (None, Some(error)) => Err(error),
                _ => return Err("an answer has a result or an error".to_owned()),
            };
            return Ok(Relayed::Answer {
                ask: body.ask,
                answer,
            });
        }
        WITHDRAW => {
            let body: AskRef = json(message)?;
            return Ok(Relayed::Withdraw { ask: body.ask });
        }
        _ => {}
    }
    if header.method == TurnSteer::NAME {
        let body: AskBody = json(message)?;
        return Ok(Relayed::Steer {
            ask: body.ask,
            params: body.params,
        });
    }
    if header.method == TurnInterrupt::NAME {
        let body: Interrupt = json(message)?;
        return Ok(Relayed::Interrupt {
            turn_id: body.turn_id,
        });
    }
    let Some(method) = agentwire_protocol::methods::find(header.method) else {
        return Err("not a method".to_owned());
    };
    match method.direction {
        Direction::ServerNotification if encodes(message, method.name) => {
            Ok(Relayed::Notification {
                method,
                message: message.to_vec(),
            })
        }
        Direction::ServerNotification => Err("not the notification's JSON-RPC message".to_owned()),
        Direction::ServerRequest => {
            let body: AskBody = json(message)?;
            Ok(Relayed::Ask {
                ask: body.ask,
                method,
                params: body.params,
            })
        }
        _ => Err("neither a server notification nor a server request".to_owned()),
    }
}

/// `message` as the JSON of `T`.
fn json<'de, T: Deserialize<'de>>(message: &'de [u8]) -> Result<T, String> {
    serde_json::from_slice(message).map_err(|e| e.to_string())
}

/// What a relayed interrupt carries (its thread is in the header).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct Interrupt {
    turn_id: String,
}

impl Interrupt {
    /// The interrupt of turn `turn_id`.
    pub(super) fn new(turn_id: &str) -> Self {
        Self {
            turn_id: turn_id.to_owned(),
        }
    }
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

/// An ask, as published: its id and the request's params.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AskBody {
    ask: String,
    params: Box<RawValue>,
}

/// The message of ask `ask` with the encoded `params`.
pub(super) fn ask_body(ask: &str, params: Vec<u8>) -> Result<Vec<u8>, String> {
    let params = String::from_utf8(params).map_err(|e| e.to_string())?;
    let params = RawValue::from_string(params).map_err(|e| e.to_string())?;
    #[derive(Serialize)]
    struct Out<'a> {
        ask: &'a str,
        params: &'a RawValue,
    }
    serde_json::to_vec(&Out {
        ask,
        params: &params,
    })
    .map_err(|e| e.to_string())
}

/// A worker's answer to an ask: `result` or `error`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct AnswerBody {
    ask: String,
    /// Present (`Some`) even when the result is `null`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    result: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

impl AnswerBody {
    /// The answer `answer` to ask `ask`.
    pub(super) fn new(ask: &str, answer: Result<serde_json::Value, String>) -> Self {
        let (result, error) = match answer {
            Ok(result) => (Some(result), None),
            Err(error) => (None, Some(error)),
        };
        Self {
            ask: ask.to_owned(),
            result,
            error,
        }
    }
}

/// A field that is there, whatever its value: a `null` result is a result.
fn present<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<serde_json::Value>, D::Error> {
    serde_json::Value::deserialize(deserializer).map(Some)
}

/// Names an ask.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct AskRef {
    ask: String,
}

impl AskRef {
    /// Names ask `ask`.
    pub(super) fn new(ask: &str) -> Self {
        Self {
            ask: ask.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamped_seq_gives_the_lag_and_a_count_none() {
        let now = now_micros();
        assert!(now > STAMPED, "the clock is past 2001");
        assert_eq!(
            lag(now - 2500, now),
            Some(std::time::Duration::from_micros(2500))
        );
        assert_eq!(
            lag(now + 10, now),
            Some(std::time::Duration::ZERO),
            "a clock ahead of ours gives zero, not a negative lag"
        );
        assert_eq!(lag(7, now), None, "a count from an older worker");
        let stamped = format!("ab {now} 0 1 item/started t\n{{}}");
        let (header, _) = parse(&stamped).expect("a stamped header parses as any other");
        assert_eq!(header.seq, now);
    }

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
        let message = br#"{"method":"item/started","params":{"threadId":"t"}}"#;
        assert!(matches!(
            decode(&header("item/started"), message),
            Ok(Relayed::Notification { method, .. }) if method.name == "item/started"
        ));
        assert!(encodes(message, "item/started"));
        assert!(!encodes(message, "turn/started"), "another method");
        assert!(!encodes(b"{\"method\":\"item/started\"", "item/started"));
        assert!(!encodes(br#"{"method":"item/started"}"#, "item/started"));
    }

    #[test]
    fn what_a_worker_follows_decodes_with_its_origin() {
        for (method, following) in [(FOLLOW, true), (UNFOLLOW, false)] {
            assert!(matches!(
                decode(&header(method), b""),
                Ok(Relayed::Following { origin, following: f }) if origin == "o" && f == following
            ));
        }
        assert!(matches!(
            decode(&header(RESYNC), b""),
            Ok(Relayed::Resyncing { origin }) if origin == "o"
        ));
        assert!(matches!(
            decode(&header(SYNCED), b""),
            Ok(Relayed::Resynced { origin }) if origin == "o"
        ));
        for method in [FOLLOW, UNFOLLOW, JOIN, RESYNC, SYNCED] {
            assert!(says_what_is_followed(method), "{method}");
        }
        for method in [JOINED, ANSWER, WITHDRAW, "item/started", "turn/interrupt"] {
            assert!(!says_what_is_followed(method), "{method}");
        }
    }

    fn header(method: &str) -> Header<'_> {
        Header {
            origin: "o",
            seq: 1,
            part: 0,
            parts: 1,
            method,
            thread_id: "t",
        }
    }

    #[test]
    fn asks_answers_and_withdrawals_decode_and_malformed_ones_are_refused() {
        let asked = ask_body("k", br#"{"threadId":"t"}"#.to_vec()).expect("encodes");
        let method = "item/commandExecution/requestApproval";
        match decode(&header(method), &asked) {
            Ok(Relayed::Ask {
                ask,
                method: info,
                params,
            }) => {
                assert_eq!(ask, "k");
                assert_eq!(info.name, method);
                assert_eq!(params.get(), r#"{"threadId":"t"}"#);
            }
            other => panic!("{other:?}"),
        }
        assert!(ask_body("k", b"not json".to_vec()).is_err());
        let answer = serde_json::to_vec(&AnswerBody::new(
            "k",
            Ok(serde_json::json!({"decision": "accept"})),
        ))
        .expect("encodes");
        assert!(matches!(
            decode(&header(ANSWER), &answer),
            Ok(Relayed::Answer { ask, answer: Ok(_) }) if ask == "k"
        ));
        let null = serde_json::to_vec(&AnswerBody::new("k", Ok(serde_json::Value::Null)))
            .expect("encodes");
        assert!(
            matches!(
                decode(&header(ANSWER), &null),
                Ok(Relayed::Answer {
                    answer: Ok(serde_json::Value::Null),
                    ..
                })
            ),
            "a null result is a result"
        );
        let failed =
            serde_json::to_vec(&AnswerBody::new("k", Err("timed out".into()))).expect("encodes");
        assert!(matches!(
            decode(&header(ANSWER), &failed),
            Ok(Relayed::Answer { answer: Err(why), .. }) if why == "timed out"
        ));
        let withdraw = serde_json::to_vec(&AskRef::new("k")).expect("encodes");
        assert!(matches!(
            decode(&header(JOIN), &withdraw),
            Ok(Relayed::Join { origin, ask }) if origin == "o" && ask == "k"
        ));
        assert!(matches!(
            decode(&header(WITHDRAW), &withdraw),
            Ok(Relayed::Withdraw { ask }) if ask == "k"
        ));
        for (method, body) in [
            (ANSWER, &br#"{"ask":"k"}"#[..]),
            (ANSWER, br#"{"ask":"k","result":1,"error":"x"}"#),
            (WITHDRAW, br#"{"ask":"k","extra":1}"#),
            (JOIN, b""),
            (JOIN, br#"{"ask":7}"#),
            (method, br#"{"ask":"k"}"#),
            ("turn/start", br#"{"ask":"k","params":{}}"#),
            ("no/such", b"{}"),
            ("item/started", br#"{"method":"turn/started","params":{}}"#),
        ] {
            assert!(decode(&header(method), body).is_err(), "{method} {body:?}");
        }
    }
}
