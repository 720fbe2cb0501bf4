//! Example messages for the method pages, taken from recorded transcripts (JSON Lines of
//! `{"session", "dir", "line"}`, the format of `app-server --record`):
//! `codegen/docs/exchanges.jsonl` (every method the end-to-end walk of `tests/e2e/served.rs`
//! sends, recorded by `scripts/record-docs-examples.sh`) first, then
//! `codegen/openrpc/exchanges.jsonl` (the OpenRPC document's examples).

use std::collections::BTreeMap;

use serde_json::Value;

/// The first recorded exchange of one method: the messages, pretty-printed.
#[derive(Debug, Clone, Default)]
pub struct Recorded {
    /// The request or notification.
    pub message: String,
    /// The answer to a request, when one was recorded.
    pub answer: String,
    /// The notifications the request started, in the order of their first appearance: those
    /// the server sent after it and before the client's next request in that session.
    pub notifications: Vec<String>,
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

/// The first exchange of each method in `transcripts`, the earlier transcripts first.
pub fn recorded_all(transcripts: &[&str]) -> BTreeMap<String, Recorded> {
    let mut found = BTreeMap::new();
    for transcript in transcripts {
        for (method, example) in recorded(transcript) {
            found.entry(method).or_insert(example);
        }
    }
    found
}

/// The first exchange of each method in `transcript`. Lines that are not records or whose
/// message is not JSON are skipped: examples are illustrations, the OpenRPC generator is where
/// the transcript is checked strictly.
pub fn recorded(transcript: &str) -> BTreeMap<String, Recorded> {
    let mut found: BTreeMap<String, Recorded> = BTreeMap::new();
    // Per session: the method of the latest example request, whose notifications are collected.
    let mut started: BTreeMap<String, Option<String>> = BTreeMap::new();
    // (session, direction of the request, id) -> method
    let mut pending: BTreeMap<(String, String, String), String> = BTreeMap::new();
    for line in transcript.lines() {
        let Ok(record) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let session = record
            .get("session")
            .map(Value::to_string)
            .unwrap_or_default();
        let dir = record
            .get("dir")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let Some(message) = record
            .get("line")
            .and_then(Value::as_str)
            .and_then(|text| serde_json::from_str::<Value>(text).ok())
        else {
            continue;
        };
        let id = message.get("id").map(Value::to_string);
        match (message.get("method").and_then(Value::as_str), id) {
            (Some(method), id) => {
                let from_server = dir == "server->client";
                if from_server && id.is_none() {
                    // A notification: part of what the session's latest example request started.
                    if let Some(Some(request)) = started.get(&session)
                        && let Some(entry) = found.get_mut(request)
                        && !entry.notifications.iter().any(|n| n == method)
                    {
                        entry.notifications.push(method.to_owned());
                    }
                } else if !from_server && id.is_some() {
                    let first = !found.contains_key(method);
                    started.insert(session.clone(), first.then(|| method.to_owned()));
                }
                if found.contains_key(method) {
                    continue;
                }
                found.insert(
                    method.to_owned(),
                    Recorded {
                        message: pretty(&message),
                        ..Recorded::default()
                    },
                );
                if let Some(id) = id {
                    pending.insert((session, dir.to_owned(), id), method.to_owned());
                }
            }
            (None, Some(id)) => {
                let request_dir = match dir {
                    "server->client" => "client->server",
                    _ => "server->client",
                };
                if let Some(method) = pending.remove(&(session, request_dir.to_owned(), id))
                    && let Some(entry) = found.get_mut(&method)
                {
                    entry.answer = pretty(&message);
                }
            }
            (None, None) => {}
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_paired_with_their_answers_and_notifications_kept() {
        let transcript = concat!(
            r#"{"session":"s","dir":"client->server","line":"{\"id\":1,\"method\":\"a/b\",\"params\":{}}"}"#,
            "\n",
            r#"{"session":"s","dir":"server->client","line":"{\"method\":\"n/x\",\"params\":{\"k\":1}}"}"#,
            "\n",
            r#"{"session":"s","dir":"server->client","line":"{\"id\":1,\"result\":{\"ok\":true}}"}"#,
            "\nnot json\n",
        );
        let found = recorded(transcript);
        assert!(found["a/b"].answer.contains("\"ok\": true"));
        assert!(found["n/x"].message.contains("\"k\": 1"));
        assert!(found["n/x"].answer.is_empty());
        assert_eq!(found["a/b"].notifications, ["n/x"]);
    }

    #[test]
    fn notifications_belong_to_the_request_before_them_in_their_session() {
        let line = |session: &str, dir: &str, message: &str| {
            serde_json::json!({"session": session, "dir": dir, "line": message}).to_string()
        };
        let transcript = [
            line("s", "client->server", r#"{"id":1,"method":"turn/start"}"#),
            line("s", "server->client", r#"{"id":1,"result":{}}"#),
            line("t", "client->server", r#"{"id":1,"method":"thread/list"}"#),
            line("s", "server->client", r#"{"method":"turn/started"}"#),
            line(
                "s",
                "server->client",
                r#"{"method":"item/agentMessage/delta"}"#,
            ),
            line(
                "s",
                "server->client",
                r#"{"method":"item/agentMessage/delta"}"#,
            ),
            line("s", "server->client", r#"{"method":"turn/completed"}"#),
            line("s", "client->server", r#"{"id":2,"method":"turn/start"}"#),
            line("s", "server->client", r#"{"method":"turn/started"}"#),
            line("s", "server->client", r#"{"method":"thread/closed"}"#),
        ]
        .join("\n");
        let found = recorded_all(&[
            &transcript,
            &line("u", "client->server", r#"{"id":9,"method":"x/y"}"#),
        ]);
        assert_eq!(
            found["turn/start"].notifications,
            ["turn/started", "item/agentMessage/delta", "turn/completed"],
            "the second turn/start is not an example: what follows it is not the first's"
        );
        assert!(found["thread/list"].notifications.is_empty());
        assert!(
            found.contains_key("x/y"),
            "a later transcript fills what the first lacks"
        );
    }
}
