//! Reasoning items: the streamed text and summary parts of the model's reasoning.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Params of `item/reasoning/summaryTextDelta`: more text of one reasoning summary section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ReasoningSummaryTextDeltaNotification {
    /// Thread the reasoning belongs to.
    pub thread_id: String,
    /// Turn the reasoning belongs to.
    pub turn_id: String,
    /// Id of the `reasoning` item being extended.
    pub item_id: String,
    /// Index into the item's `summary` array of the section this text extends (0-based).
    pub summary_index: i64,
    /// Text to append to that section.
    pub delta: String,
}

/// Params of `item/reasoning/summaryPartAdded`: a new section of a reasoning summary begins;
/// its text follows as `item/reasoning/summaryTextDelta`s with the same `summaryIndex`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ReasoningSummaryPartAddedNotification {
    /// Thread the reasoning belongs to.
    pub thread_id: String,
    /// Turn the reasoning belongs to.
    pub turn_id: String,
    /// Id of the `reasoning` item the section belongs to.
    pub item_id: String,
    /// Index into the item's `summary` array of the new section (0-based).
    pub summary_index: i64,
}

/// Params of `item/reasoning/textDelta`: more raw reasoning text from the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ReasoningTextDeltaNotification {
    /// Thread the reasoning belongs to.
    pub thread_id: String,
    /// Turn the reasoning belongs to.
    pub turn_id: String,
    /// Id of the `reasoning` item being extended.
    pub item_id: String,
    /// Index into the item's `content` array of the part this text extends (0-based).
    pub content_index: i64,
    /// Text to append to that part.
    pub delta: String,
}
