//! Streaming of `plan` items (model tools, 0.6.0): the text of a plan item as it is written.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Params of `item/plan/delta` (experimental): more text of a `plan` item. The deltas are a
/// preview as the plan is produced; the completed item holds the plan's final text, which
/// the deltas joined need not equal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct PlanDeltaNotification {
    /// Thread the plan item belongs to.
    pub thread_id: String,
    /// Turn the plan item belongs to.
    pub turn_id: String,
    /// Id of the `plan` item being extended.
    pub item_id: String,
    /// Text to append to the plan's preview.
    pub delta: String,
}
