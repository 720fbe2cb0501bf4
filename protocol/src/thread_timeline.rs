//! Reading a thread's history in the order it was stored and adding to what the model sees:
//! `thread/items/read` (chosen items of one turn), `thread/timeline/list` (turn boundaries and
//! items, paged), `thread/inject_items` (items added to the model's view of the thread without
//! a turn).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::{ThreadItem, ThreadItemEntry, TurnError, TurnStatus};

/// Params of `thread/items/read`: some items of one turn, by id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadItemsReadParams {
    /// The ids of the items to read: 1 to 100 of them, every one an item of the turn.
    pub item_ids: Vec<String>,
    /// The thread.
    pub thread_id: String,
    /// The turn the items belong to.
    pub turn_id: String,
}

/// Result of `thread/items/read`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ThreadItemsReadResponse {
    /// The items asked for, each once, in the order they are stored in the turn (not the order
    /// asked).
    #[builder(default)]
    pub data: Vec<ThreadItemEntry>,
}

/// Params of `thread/timeline/list`: a thread's history as one sequence of turn starts, items
/// and turn ends, oldest first, one page at a time.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadTimelineListParams {
    /// Where to continue: the `nextCursor` of an earlier page of the same thread.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub cursor: Option<String>,
    /// Most entries in the page; absent means the server's default page size.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub limit: Option<u32>,
    /// The thread.
    pub thread_id: String,
}

/// Result of `thread/timeline/list`: one page of entries.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadTimelineListResponse {
    /// The realtime voice session that was open where the page starts; `null` when none was
    /// (always, on a server without realtime voice).
    #[serde(default)]
    pub active_realtime_session_at_page_start: Option<String>,
    /// The entries of this page, in stored order.
    #[builder(default)]
    pub data: Vec<ThreadTimelineEntry>,
    /// Send as `cursor` to fetch the following page; `null` when this was the last one.
    #[serde(default)]
    pub next_cursor: Option<String>,
}

/// One entry of a thread's timeline (`type` on the wire). `position` orders the entries of a
/// thread and never changes once given; positions need not be consecutive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[allow(
    clippy::large_enum_variant,
    reason = "a plain wire type built once per entry of a page; boxing the item would change the public API"
)]
#[non_exhaustive]
pub enum ThreadTimelineEntry {
    /// An item of a turn, in its final (or latest recorded) state.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Item {
        /// The item.
        item: ThreadItem,
        /// Its place in the thread's timeline.
        position: u64,
        /// The turn it belongs to.
        turn_id: String,
    },
    /// Something that happened in a realtime voice session of the thread.
    #[non_exhaustive]
    Realtime {
        /// What happened.
        item: ThreadRealtimeItem,
        /// Its place in the thread's timeline.
        position: u64,
    },
    /// A turn began (members in snake_case on the wire).
    #[non_exhaustive]
    TurnStarted {
        /// Its place in the thread's timeline.
        position: u64,
        /// When the turn began (Unix seconds); `null` when not recorded.
        #[serde(default)]
        started_at: Option<i64>,
        /// The turn.
        turn_id: String,
    },
    /// A turn ended (members in snake_case on the wire).
    #[non_exhaustive]
    TurnCompleted {
        /// When it ended (Unix seconds); `null` when not recorded.
        #[serde(default)]
        completed_at: Option<i64>,
        /// How long it ran, in milliseconds; `null` when not recorded.
        #[serde(default)]
        duration_ms: Option<i64>,
        /// Why it failed; `null` unless `status` is `failed`.
        #[serde(default)]
        error: Option<TurnError>,
        /// Its place in the thread's timeline.
        position: u64,
        /// When it began (Unix seconds); `null` when not recorded.
        #[serde(default)]
        started_at: Option<i64>,
        /// How it ended.
        status: TurnStatus,
        /// The turn.
        turn_id: String,
    },
}

impl ThreadTimelineEntry {
    /// Item `item` of turn `turn_id` at `position`.
    pub fn item(position: u64, turn_id: impl Into<String>, item: ThreadItem) -> Self {
        Self::Item {
            item,
            position,
            turn_id: turn_id.into(),
        }
    }

    /// Realtime event `item` at `position`.
    pub fn realtime(position: u64, item: ThreadRealtimeItem) -> Self {
        Self::Realtime { item, position }
    }

    /// Turn `turn_id` began (at `started_at`, Unix seconds), at `position`.
    pub fn turn_started(
        position: u64,
        turn_id: impl Into<String>,
        started_at: Option<i64>,
    ) -> Self {
        Self::TurnStarted {
            position,
            started_at,
            turn_id: turn_id.into(),
        }
    }

    /// Turn `turn_id` ended with `status`, at `position`; the times and error are left
    /// `null` (see [`ThreadTimelineEntry::with_times`]).
    pub fn turn_completed(position: u64, turn_id: impl Into<String>, status: TurnStatus) -> Self {
        Self::TurnCompleted {
            completed_at: None,
            duration_ms: None,
            error: None,
            position,
            started_at: None,
            status,
            turn_id: turn_id.into(),
        }
    }

    /// A `turnCompleted` entry with its times and error set; other entries unchanged.
    #[must_use]
    pub fn with_times(
        mut self,
        started: Option<i64>,
        completed: Option<i64>,
        duration: Option<i64>,
        failure: Option<TurnError>,
    ) -> Self {
        if let Self::TurnCompleted {
            completed_at,
            duration_ms,
            error,
            started_at,
            ..
        } = &mut self
        {
            *started_at = started;
            *completed_at = completed;
            *duration_ms = duration;
            *error = failure;
        }
        self
    }

    /// The entry's place in the timeline.
    pub fn position(&self) -> u64 {
        match self {
            Self::Item { position, .. }
            | Self::Realtime { position, .. }
            | Self::TurnStarted { position, .. }
            | Self::TurnCompleted { position, .. } => *position,
        }
    }
}

/// Something that happened in a realtime voice session of a thread, with what every such
/// event carries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadRealtimeItem {
    /// What happened.
    #[serde(flatten)]
    pub kind: ThreadRealtimeItemKind,
    /// The event's id.
    pub id: String,
    /// When it was observed, in Unix milliseconds; `null` when not recorded.
    #[serde(default)]
    pub observed_at_ms: Option<i64>,
    /// The realtime session it belongs to.
    pub realtime_session_id: String,
}

/// The kind-specific part of a [`ThreadRealtimeItem`] (`type` on the wire; its members are in
/// snake_case).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[non_exhaustive]
pub enum ThreadRealtimeItemKind {
    /// The session opened.
    RealtimeSessionStarted,
    /// A frame of the conversation.
    #[non_exhaustive]
    Frame {
        /// What the frame carries, one payload per channel.
        channels: ThreadRealtimeFrameChannels,
    },
    /// A piece of what was said.
    #[non_exhaustive]
    TranscriptSegment {
        /// Who said it.
        role: ThreadRealtimeTranscriptRole,
        /// The words.
        text: String,
    },
    /// An item of an ordinary turn was brought into the voice conversation.
    #[non_exhaustive]
    BemItemPromoted {
        /// The item.
        item_id: String,
        /// How it is shown in the conversation.
        presentation: ThreadRealtimeBemItemPresentation,
        /// The turn it belongs to.
        turn_id: String,
    },
    /// The session closed.
    #[non_exhaustive]
    RealtimeSessionClosed {
        /// How it ended.
        outcome: ThreadRealtimeSessionOutcome,
    },
    /// What the user said was handed to an ordinary turn.
    #[non_exhaustive]
    TurnInputAccepted {
        /// The hand-over's id.
        handoff_id: String,
        /// The text handed over.
        input: String,
        /// The item the text became.
        input_item_id: String,
        /// Whether it started a turn or steered one.
        mode: ThreadRealtimeHandoffMode,
        /// The session events it was made of.
        source_event_ids: Vec<String>,
        /// The turn it went to.
        turn_id: String,
    },
    /// What the user said last was kept when the session ended.
    #[non_exhaustive]
    SessionEndInputSaved {
        /// The text kept.
        input: String,
        /// The item the text became.
        input_item_id: String,
        /// The session events it was made of.
        source_event_ids: Vec<String>,
    },
}

impl ThreadRealtimeItemKind {
    /// A frame carrying `channels`.
    pub fn frame(channels: ThreadRealtimeFrameChannels) -> Self {
        Self::Frame { channels }
    }

    /// `role` said `text`.
    pub fn transcript_segment(role: ThreadRealtimeTranscriptRole, text: impl Into<String>) -> Self {
        Self::TranscriptSegment {
            role,
            text: text.into(),
        }
    }

    /// Item `item_id` of turn `turn_id` was brought into the conversation as `presentation`.
    pub fn bem_item_promoted(
        turn_id: impl Into<String>,
        item_id: impl Into<String>,
        presentation: ThreadRealtimeBemItemPresentation,
    ) -> Self {
        Self::BemItemPromoted {
            item_id: item_id.into(),
            presentation,
            turn_id: turn_id.into(),
        }
    }

    /// The session closed with `outcome`.
    pub fn realtime_session_closed(outcome: ThreadRealtimeSessionOutcome) -> Self {
        Self::RealtimeSessionClosed { outcome }
    }

    /// Speech `input` (from events `source_event_ids`) became item `input_item_id` of turn
    /// `turn_id`, starting or steering it as `mode` says.
    pub fn turn_input_accepted(
        handoff_id: impl Into<String>,
        turn_id: impl Into<String>,
        mode: ThreadRealtimeHandoffMode,
        input: impl Into<String>,
        input_item_id: impl Into<String>,
        source_event_ids: Vec<String>,
    ) -> Self {
        Self::TurnInputAccepted {
            handoff_id: handoff_id.into(),
            input: input.into(),
            input_item_id: input_item_id.into(),
            mode,
            source_event_ids,
            turn_id: turn_id.into(),
        }
    }

    /// Speech `input` (from events `source_event_ids`) was kept as item `input_item_id` when
    /// the session ended.
    pub fn session_end_input_saved(
        input: impl Into<String>,
        input_item_id: impl Into<String>,
        source_event_ids: Vec<String>,
    ) -> Self {
        Self::SessionEndInputSaved {
            input: input.into(),
            input_item_id: input_item_id.into(),
            source_event_ids,
        }
    }
}

/// The payloads of one realtime frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ThreadRealtimeFrameChannels {
    /// The transcript of the frame's speech.
    pub voice_transcript: ThreadRealtimeVoiceTranscript,
}

/// Transcribed speech.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadRealtimeVoiceTranscript {
    /// Who spoke.
    pub role: ThreadRealtimeTranscriptRole,
    /// What was said.
    pub text: String,
}

/// Who spoke in a realtime session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum ThreadRealtimeTranscriptRole {
    /// The user.
    User,
    /// The model.
    Assistant,
}

/// How an item of an ordinary turn appears in a voice conversation (`type` on the wire).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[non_exhaustive]
pub enum ThreadRealtimeBemItemPresentation {
    /// The whole item.
    WholeItem,
    /// Its Markdown, inline.
    InlineMarkdown,
    /// One of its visualizations, inline.
    #[non_exhaustive]
    InlineVisualization {
        /// Which visualization.
        index: u32,
    },
}

impl ThreadRealtimeBemItemPresentation {
    /// Visualization number `index` of the item, inline.
    pub fn inline_visualization(index: u32) -> Self {
        Self::InlineVisualization { index }
    }
}

/// How a realtime session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum ThreadRealtimeSessionOutcome {
    /// It was closed.
    Ended,
    /// It broke off.
    Failed,
}

/// What speech handed to a turn did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum ThreadRealtimeHandoffMode {
    /// It started a turn.
    Start,
    /// It steered the running turn.
    Steer,
}

/// Params of `thread/inject_items`: items in the shape of the OpenAI Responses API (`message`,
/// `function_call`, `function_call_output`, …) added to what the model sees of the thread,
/// after what it has seen so far, without starting a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadInjectItemsParams {
    /// The items, in order; at least one.
    #[ts(type = "Array<unknown>")]
    pub items: Vec<serde_json::Value>,
    /// The thread.
    pub thread_id: String,
}

/// Result of `thread/inject_items`: an empty object once the items are stored.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ThreadInjectItemsResponse {}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn turn_boundaries_use_snake_case_members_and_items_camel_case() {
        let started = ThreadTimelineEntry::turn_started(0, "t", Some(5));
        assert_eq!(
            serde_json::to_value(&started).expect("serializes"),
            json!({"type": "turnStarted", "position": 0, "turn_id": "t", "started_at": 5})
        );
        let ended = ThreadTimelineEntry::turn_completed(3, "t", TurnStatus::Completed).with_times(
            Some(5),
            Some(6),
            Some(900),
            None,
        );
        assert_eq!(
            serde_json::to_value(&ended).expect("serializes"),
            json!({"type": "turnCompleted", "position": 3, "turn_id": "t", "status": "completed",
                   "started_at": 5, "completed_at": 6, "duration_ms": 900, "error": null})
        );
        let item: ThreadItem =
            serde_json::from_value(json!({"type": "agentMessage", "id": "m", "text": "hi"}))
                .expect("item parses");
        let entry = ThreadTimelineEntry::item(2, "t", item);
        let value = serde_json::to_value(&entry).expect("serializes");
        assert_eq!(value["type"], "item");
        assert_eq!(value["turnId"], "t");
        assert_eq!(value["item"]["text"], "hi");
        assert_eq!(entry.position(), 2);
    }

    #[test]
    fn realtime_items_carry_their_common_members_beside_the_kind() {
        let value = json!({"type": "transcriptSegment", "id": "e1", "realtimeSessionId": "s",
                           "observedAtMs": 12, "role": "user", "text": "hello"});
        let item: ThreadRealtimeItem = serde_json::from_value(value.clone()).expect("parses");
        assert_eq!(item.realtime_session_id, "s");
        assert_eq!(serde_json::to_value(&item).expect("serializes"), value);
        let promoted = json!({"type": "bemItemPromoted", "id": "e2", "realtimeSessionId": "s",
                              "observedAtMs": null, "item_id": "i", "turn_id": "t",
                              "presentation": {"type": "inlineVisualization", "index": 2}});
        let item: ThreadRealtimeItem = serde_json::from_value(promoted.clone()).expect("parses");
        assert_eq!(serde_json::to_value(&item).expect("serializes"), promoted);
    }

    #[test]
    fn inject_params_keep_the_items_as_sent() {
        let value = json!({"threadId": "t", "items": [{"type": "message", "role": "user",
                           "content": [{"type": "input_text", "text": "hi"}]}]});
        let params: ThreadInjectItemsParams =
            serde_json::from_value(value.clone()).expect("parses");
        assert_eq!(serde_json::to_value(&params).expect("serializes"), value);
    }
}
