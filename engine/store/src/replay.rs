//! Reading a rollout back (its format is in [`crate::record`]): records applied in order
//! rebuild the thread's summary and turns.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::sync::Arc;

use agentwire_protocol::Turn;

use crate::meta::{InjectedItems, ThreadMeta, ThreadSummary, TokenTotals};
use crate::organised::Organised;
use crate::record::{ROLLOUT_VERSION, RolloutError, RolloutRecord, item_id, started_turn};

/// A rollout read back.
#[derive(Debug, Clone)]
pub struct Replayed {
    /// The thread's summary as the records leave it.
    pub summary: ThreadSummary,
    /// Turns in order; a turn the file leaves `inProgress` stays so here.
    pub turns: Vec<Turn>,
    /// Length of the file up to the end of its last complete, newline-terminated line.
    pub sound_len: u64,
    /// Whether the file ends in a partial line (a torn write).
    pub torn: bool,
}

/// Reads a rollout from `reader`; `path` names it in errors and warnings. Lines that do not
/// parse are skipped with a warning (a torn last line is the expected case); only a missing or
/// unreadable first record is an error.
pub fn replay(reader: impl Read, path: &Path) -> Result<Replayed, RolloutError> {
    let io = |source| RolloutError::Io {
        path: path.to_owned(),
        source,
    };
    let mut reader = BufReader::new(reader);
    let mut line = Vec::new();
    let mut replay: Option<Builder> = None;
    let mut offset = 0u64;
    let mut sound_len = 0u64;
    let mut torn = false;
    let mut number = 0usize;
    loop {
        line.clear();
        let read = reader.read_until(b'\n', &mut line).map_err(io)?;
        if read == 0 {
            break;
        }
        number += 1;
        offset += read as u64;
        let complete = line.last() == Some(&b'\n');
        let text = line.trim_ascii();
        if complete {
            sound_len = offset;
        }
        if text.is_empty() {
            continue;
        }
        let record = match serde_json::from_slice::<RolloutRecord>(text) {
            Ok(record) => record,
            Err(error) if !complete => {
                tracing::warn!(path = %path.display(), line = number, %error, "torn last rollout line skipped");
                torn = true;
                continue;
            }
            Err(error) => {
                tracing::warn!(path = %path.display(), line = number, %error, "unreadable rollout line skipped");
                continue;
            }
        };
        if !complete {
            // A whole record without its newline: keep it, and count it as sound so that an
            // append adds the missing newline first.
            sound_len = offset;
        }
        match (&mut replay, record) {
            (None, RolloutRecord::Thread { version, meta }) => {
                if version > ROLLOUT_VERSION {
                    return Err(RolloutError::TooNew {
                        path: path.to_owned(),
                        version,
                    });
                }
                replay = Some(Builder::new(meta));
            }
            (None, _) => {
                return Err(RolloutError::NoHeader {
                    path: path.to_owned(),
                });
            }
            (Some(builder), record) => builder.apply(record, path),
        }
    }
    let builder = replay.ok_or_else(|| RolloutError::NoHeader {
        path: path.to_owned(),
    })?;
    Ok(Replayed {
        summary: builder.summary,
        turns: builder.turns,
        sound_len,
        torn,
    })
}

/// Rebuilds a thread record by record.
struct Builder {
    summary: ThreadSummary,
    turns: Vec<Turn>,
    /// Per turn (same order as `turns`), where each item id sits in its `items`: a replayed
    /// item replaces an earlier record of itself in constant time, so reading a turn of n items
    /// costs O(n), not O(n²).
    positions: Vec<HashMap<String, usize>>,
}

impl Builder {
    fn new(meta: ThreadMeta) -> Self {
        Self {
            summary: ThreadSummary::new(meta, false),
            turns: Vec::new(),
            positions: Vec::new(),
        }
    }

    fn apply(&mut self, record: RolloutRecord, path: &Path) {
        if let Some(at) = record.at() {
            self.summary.updated_at = self.summary.updated_at.max(at);
        }
        match record {
            RolloutRecord::Thread { .. } => {
                tracing::warn!(path = %path.display(), "second thread record skipped");
            }
            RolloutRecord::Settings { settings, .. } => self.summary.meta.settings = settings,
            RolloutRecord::Name { name, .. } => self.summary.name = name,
            RolloutRecord::Goal { goal, .. } => self.summary.goal = goal,
            RolloutRecord::ReadMark { through } => self.summary.read_mark = Some(through),
            record @ (RolloutRecord::AttachmentAdded { .. }
            | RolloutRecord::AttachmentRemoved { .. }
            | RolloutRecord::Queue { .. }
            | RolloutRecord::Section { .. }) => {
                apply_organised(&mut self.summary.organised, &record);
            }
            record @ RolloutRecord::Injected { .. } => {
                apply_injected(&mut self.summary, &record);
            }
            record @ RolloutRecord::EnvironmentContext { .. } => {
                apply_environment_context(&mut self.summary, &record);
            }
            RolloutRecord::MemoryMode { mode, .. } => self.summary.memory_mode = Some(mode),
            RolloutRecord::TurnStarted {
                turn_id,
                root_turn_id,
                started_at,
                ..
            } => {
                self.turns
                    .push(started_turn(turn_id, root_turn_id, started_at));
                self.positions.push(HashMap::new());
            }
            RolloutRecord::ItemCompleted { turn_id, item, .. } => {
                self.summary.note_item(&item.kind);
                let at = self.turns.iter().rposition(|t| t.id == turn_id);
                match at {
                    Some(at) => {
                        let (turn, positions) = (&mut self.turns[at], &mut self.positions[at]);
                        let id = item_id(&item.kind).to_owned();
                        match positions.get(&id) {
                            Some(&position) => turn.items[position] = item,
                            None => {
                                positions.insert(id, turn.items.len());
                                turn.items.push(item);
                            }
                        }
                    }
                    None => {
                        tracing::warn!(path = %path.display(), turn_id, "item of an unknown turn skipped");
                    }
                }
            }
            RolloutRecord::TurnCompleted {
                turn_id,
                status,
                error,
                completed_at,
                duration_ms,
                ..
            } => match self.turn(&turn_id) {
                Some(turn) => {
                    turn.status = status;
                    turn.error = error;
                    turn.completed_at = completed_at;
                    turn.duration_ms = duration_ms;
                }
                None => {
                    tracing::warn!(path = %path.display(), turn_id, "end of an unknown turn skipped");
                }
            },
            RolloutRecord::TokenUsage { turn_id, usage, .. } => {
                self.summary.token_usage = Some(TokenTotals { turn_id, usage });
            }
            RolloutRecord::GitInfo { git_info, .. } => self.summary.meta.git_info = git_info,
            RolloutRecord::Revert { before_turn_id, .. } => {
                match self.turns.iter().rposition(|t| t.id == before_turn_id) {
                    Some(at) => {
                        self.turns.truncate(at);
                        self.positions.truncate(at);
                    }
                    None => {
                        tracing::warn!(path = %path.display(), before_turn_id, "revert to an unknown turn skipped");
                    }
                }
            }
            RolloutRecord::Unknown => {}
        }
    }

    fn turn(&mut self, id: &str) -> Option<&mut Turn> {
        self.turns.iter_mut().rev().find(|t| t.id == id)
    }
}

/// Makes `organised` say what `record` says (for the records of [`crate::organised`]).
pub fn apply_organised(organised: &mut Organised, record: &RolloutRecord) {
    match record {
        RolloutRecord::AttachmentAdded { attachment } => {
            organised.attachments.retain(|a| {
                a.attachment_type != attachment.attachment_type
                    || a.identity_key != attachment.identity_key
            });
            organised.attachments.push(attachment.clone());
        }
        RolloutRecord::AttachmentRemoved {
            attachment_type,
            identity_key,
        } => organised
            .attachments
            .retain(|a| a.attachment_type != *attachment_type || a.identity_key != *identity_key),
        RolloutRecord::Queue { queue } => organised.queue = queue.clone(),
        RolloutRecord::Section { section } => organised.section = section.clone(),
        _ => {}
    }
}

/// Adds the items an `injected` record holds to what the model is told.
pub fn apply_injected(summary: &mut ThreadSummary, record: &RolloutRecord) {
    if let RolloutRecord::Injected {
        after_turn_id,
        items,
        ..
    } = record
    {
        Arc::make_mut(&mut summary.injected).push(InjectedItems {
            after_turn_id: after_turn_id.clone(),
            items: items.clone(),
        });
    }
}

/// Keeps the block an `environmentContext` record holds, before its turn.
pub fn apply_environment_context(summary: &mut ThreadSummary, record: &RolloutRecord) {
    if let RolloutRecord::EnvironmentContext { turn_id, text, .. } = record {
        Arc::make_mut(&mut summary.environment_blocks).push((turn_id.clone(), text.clone()));
    }
}

#[cfg(test)]
mod tests {
    use agentwire_protocol::{ThreadAttachment, TurnStatus};
    use serde_json::json;

    use super::*;
    use crate::organised::SectionMark;

    fn header() -> serde_json::Value {
        json!({"type": "thread", "version": 1, "meta": {
            "id": "t1", "sessionId": "t1", "createdAt": 100, "cliVersion": "0.1.0",
            "source": "vscode",
            "settings": {
                "model": "m", "modelProvider": "p", "cwd": "/w",
                "approvalPolicy": "never", "approvalsReviewer": "user",
                "sandbox": {"type": "readOnly"}
            }
        }})
    }

    fn user_item(id: &str, text: &str) -> serde_json::Value {
        json!({"type": "userMessage", "id": id, "content": [{"type": "text", "text": text}]})
    }

    fn lines(values: &[serde_json::Value]) -> String {
        values.iter().map(|v| format!("{v}\n")).collect()
    }

    fn read(text: &str) -> Replayed {
        replay(text.as_bytes(), Path::new("test.jsonl")).expect("rollout reads")
    }

    #[test]
    fn rebuilds_turns_items_name_and_preview() {
        let text = lines(&[
            header(),
            json!({"type": "name", "at": 101, "name": "first"}),
            json!({"type": "turnStarted", "at": 102, "turnId": "a", "startedAt": 102}),
            json!({"type": "itemCompleted", "at": 103, "turnId": "a", "item": user_item("i1", "hello")}),
            json!({"type": "itemCompleted", "at": 104, "turnId": "a",
                   "item": {"type": "agentMessage", "id": "i2", "text": "hi"}}),
            json!({"type": "turnCompleted", "at": 105, "turnId": "a", "status": "completed",
                   "completedAt": 105, "durationMs": 3000}),
            json!({"type": "turnStarted", "at": 106, "turnId": "b"}),
        ]);
        let replayed = read(&text);
        assert_eq!(replayed.summary.name.as_deref(), Some("first"));
        assert_eq!(replayed.summary.preview, "hello");
        assert_eq!(replayed.summary.updated_at, 106);
        assert_eq!(replayed.turns.len(), 2);
        assert_eq!(replayed.turns[0].items.len(), 2);
        assert_eq!(replayed.turns[0].status, TurnStatus::Completed);
        assert_eq!(replayed.turns[0].duration_ms, Some(3000));
        assert_eq!(replayed.turns[1].status, TurnStatus::InProgress);
        assert!(!replayed.torn);
        assert_eq!(replayed.sound_len, text.len() as u64);
    }

    #[test]
    fn torn_last_line_is_skipped() {
        let sound = lines(&[
            header(),
            json!({"type": "turnStarted", "at": 102, "turnId": "a"}),
        ]);
        let text = format!("{sound}{{\"type\":\"itemCompleted\",\"at\":10");
        let replayed = read(&text);
        assert!(replayed.torn);
        assert_eq!(replayed.sound_len, sound.len() as u64);
        assert_eq!(replayed.turns.len(), 1);
        assert!(replayed.turns[0].items.is_empty());
    }

    #[test]
    fn whole_last_record_without_newline_is_kept() {
        let text = format!(
            "{}{}",
            lines(&[header()]),
            json!({"type": "name", "at": 1, "name": "n"})
        );
        let replayed = read(&text);
        assert!(!replayed.torn);
        assert_eq!(replayed.summary.name.as_deref(), Some("n"));
        assert_eq!(replayed.sound_len, text.len() as u64);
    }

    #[test]
    fn unknown_and_broken_middle_lines_are_skipped() {
        let text = lines(&[
            header(),
            json!({"type": "somethingNew", "at": 5, "x": 1}),
            json!("not a record"),
            json!({"type": "name", "at": 7, "name": "kept"}),
        ]);
        assert_eq!(read(&text).summary.name.as_deref(), Some("kept"));
    }

    #[test]
    fn missing_header_newer_version_and_empty_files_are_errors() {
        let no_header = lines(&[json!({"type": "name", "at": 1, "name": "n"})]);
        assert!(matches!(
            replay(no_header.as_bytes(), Path::new("x")),
            Err(RolloutError::NoHeader { .. })
        ));
        let mut newer = header();
        newer["version"] = json!(ROLLOUT_VERSION + 1);
        assert!(matches!(
            replay(lines(&[newer]).as_bytes(), Path::new("x")),
            Err(RolloutError::TooNew { .. })
        ));
        assert!(matches!(
            replay(&b""[..], Path::new("x")),
            Err(RolloutError::NoHeader { .. })
        ));
        assert!(matches!(
            replay(&b"{\"type\":\"thr"[..], Path::new("x")),
            Err(RolloutError::NoHeader { .. })
        ));
    }

    #[test]
    fn a_repeated_item_replaces_the_earlier_one() {
        let text = lines(&[
            header(),
            json!({"type": "turnStarted", "at": 1, "turnId": "a"}),
            json!({"type": "itemCompleted", "at": 2, "turnId": "a",
                   "item": {"type": "agentMessage", "id": "m", "text": "draft"}}),
            json!({"type": "itemCompleted", "at": 3, "turnId": "a",
                   "item": {"type": "agentMessage", "id": "m", "text": "final"}}),
        ]);
        let turns = read(&text).turns;
        assert_eq!(turns[0].items.len(), 1);
        let value = serde_json::to_value(&turns[0].items[0]).expect("item serializes");
        assert_eq!(value["text"], "final");
    }

    #[test]
    fn revert_and_git_info_records_replay() {
        let text = lines(&[
            header(),
            json!({"type": "turnStarted", "at": 1, "turnId": "a"}),
            json!({"type": "turnStarted", "at": 2, "turnId": "b"}),
            json!({"type": "itemCompleted", "at": 3, "turnId": "b", "item": user_item("u", "q")}),
            json!({"type": "turnStarted", "at": 4, "turnId": "c"}),
            json!({"type": "revert", "at": 5, "beforeTurnId": "b"}),
            json!({"type": "revert", "at": 6, "beforeTurnId": "nowhere"}),
            json!({"type": "turnStarted", "at": 7, "turnId": "d"}),
            json!({"type": "gitInfo", "at": 8, "gitInfo": {"sha": "abc", "branch": null, "originUrl": null}}),
        ]);
        let replayed = read(&text);
        let ids: Vec<&str> = replayed.turns.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["a", "d"]);
        let git = replayed.summary.meta.git_info.expect("git info");
        assert_eq!(git.sha.as_deref(), Some("abc"));
    }

    #[test]
    fn records_round_trip_through_turns() {
        let text = lines(&[
            header(),
            json!({"type": "turnStarted", "at": 1, "turnId": "a", "rootTurnId": "a", "startedAt": 1}),
            json!({"type": "itemCompleted", "at": 2, "turnId": "a", "item": user_item("u", "q")}),
            json!({"type": "turnCompleted", "at": 3, "turnId": "a", "status": "failed",
                   "error": {"message": "boom"}, "completedAt": 3, "durationMs": 5}),
        ]);
        let original = read(&text);
        let mut again = lines(&[header()]);
        for turn in &original.turns {
            for record in RolloutRecord::for_turn(turn, 9) {
                again.push_str(&serde_json::to_string(&record).expect("record serializes"));
                again.push('\n');
            }
        }
        assert_eq!(read(&again).turns, original.turns);
    }

    fn attachment(kind: &str, key: &str, id: &str) -> ThreadAttachment {
        ThreadAttachment::builder()
            .attachment_type(kind)
            .identity_key(key)
            .id(id)
            .created_at(1)
            .payload(serde_json::json!({"n": id}))
            .build()
    }

    #[test]
    fn records_replay_to_the_attachments_queue_and_section_they_name() {
        let mut organised = Organised::default();
        for record in [
            RolloutRecord::AttachmentAdded {
                attachment: attachment("pr", "1", "a"),
            },
            RolloutRecord::AttachmentAdded {
                attachment: attachment("issue", "1", "b"),
            },
            RolloutRecord::AttachmentRemoved {
                attachment_type: "pr".into(),
                identity_key: "1".into(),
            },
            RolloutRecord::Section {
                section: Some(SectionMark {
                    section_id: "s".into(),
                    entered_at: 7,
                }),
            },
        ] {
            apply_organised(&mut organised, &record);
        }
        assert_eq!(organised.attachments, vec![attachment("issue", "1", "b")]);
        assert_eq!(
            organised.section.as_ref().map(|s| s.section_id.as_str()),
            Some("s")
        );
        apply_organised(&mut organised, &RolloutRecord::Section { section: None });
        assert_eq!(organised.section, None);
    }

    #[test]
    fn the_records_read_back_from_their_lines() {
        let line = r#"{"type":"section","section":{"sectionId":"s","enteredAt":3}}"#;
        let record: RolloutRecord = serde_json::from_str(line).expect("reads");
        assert_eq!(
            record,
            RolloutRecord::Section {
                section: Some(SectionMark {
                    section_id: "s".into(),
                    entered_at: 3
                })
            }
        );
        assert_eq!(serde_json::to_string(&record).expect("writes"), line);
        let removed = RolloutRecord::AttachmentRemoved {
            attachment_type: "pr".into(),
            identity_key: "k".into(),
        };
        assert_eq!(
            serde_json::to_string(&removed).expect("writes"),
            r#"{"type":"attachmentRemoved","attachmentType":"pr","identityKey":"k"}"#
        );
        assert_eq!(record.at(), None);
    }
}
