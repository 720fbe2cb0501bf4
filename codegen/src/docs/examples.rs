//! Example messages for the method pages, taken from a recorded transcript (JSON Lines of
//! `{"session", "dir", "line"}`, the format of `codegen/openrpc/exchanges.jsonl`).

use std::collections::BTreeMap;

use serde_json::Value;

/// The first recorded exchange of one method: the messages, pretty-printed.
#[derive(Debug, Clone, Default)]
pub struct Recorded {
    /// The request or notification.
    pub message: String,
    /// The answer to a request, when one was recorded.
    pub answer: String,
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

/// The first exchange of each method in `transcript`. Lines that are not records or whose
/// message is not JSON are skipped: examples are illustrations, the OpenRPC generator is where
/// the transcript is checked strictly.
pub fn recorded(transcript: &str) -> BTreeMap<String, Recorded> {
    let mut found: BTreeMap<String, Recorded> = BTreeMap::new();
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
                if found.contains_key(method) {
                    continue;
                }
                found.insert(
                    method.to_owned(),
                    Recorded {
                        message: pretty(&message),
                        answer: String::new(),
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
    }
}
