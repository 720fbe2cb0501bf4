//! Notifications a client shows while turns run, beyond the items themselves: the provider's
//! rate limits after a model call (`account/rateLimits/updated`), a model answered by another
//! model than the one asked for (`model/rerouted`), a file change whose change set was revised
//! before it completed (`item/fileChange/patchUpdated`), and the use of something deprecated
//! (`deprecationNotice`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::account::RateLimitSnapshot;
use crate::item::FileUpdateChange;

/// Params of `account/rateLimits/updated`: what the model provider said of its rate limits on
/// the latest model call. Members it did not report are `null`; a client merges the rest into
/// what `account/rateLimits/read` last told it (a `null` does not clear an earlier value).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct AccountRateLimitsUpdatedNotification {
    /// The provider's limits as of that call.
    pub rate_limits: RateLimitSnapshot,
}

/// Params of `deprecationNotice`: the client (or its user's configuration) relies on something
/// that is deprecated and will go away.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct DeprecationNoticeNotification {
    /// One line naming what is deprecated.
    pub summary: String,
    /// What to do instead, or why; `null` when there is nothing more to say.
    #[serde(default)]
    pub details: Option<String>,
}

/// Params of `item/fileChange/patchUpdated`: the change set of a `fileChange` item that has
/// started but not completed was revised; `changes` replaces the one the client holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct FileChangePatchUpdatedNotification {
    /// The thread of the turn.
    pub thread_id: String,
    /// The turn the item belongs to.
    pub turn_id: String,
    /// The `fileChange` item.
    pub item_id: String,
    /// The whole change set as it stands now, one entry per file.
    pub changes: Vec<FileUpdateChange>,
}

/// Params of `model/rerouted`: a model call of the turn was answered by another model than the
/// one the turn asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ModelReroutedNotification {
    /// The thread of the turn.
    pub thread_id: String,
    /// The turn whose model call was rerouted.
    pub turn_id: String,
    /// The model the call asked for.
    pub from_model: String,
    /// The model that answered, as the provider named it.
    pub to_model: String,
    /// Why the call went to another model.
    pub reason: ModelRerouteReason,
}

/// Why a model call was answered by another model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum ModelRerouteReason {
    /// OpenAI's service moved the call to a safer model because of suspected high-risk cyber
    /// activity (sent by OpenAI's own service only).
    HighRiskCyberActivity,
    /// The model server answered with a model other than the one named in the request (an
    /// OpenAI-compatible server that serves a different model, or maps the name to another
    /// one), and the provider said nothing more about why.
    ProviderSubstitutedModel,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rerouted_round_trips_with_camel_case_reason() {
        let n = ModelReroutedNotification::builder()
            .thread_id("t")
            .turn_id("u")
            .from_model("a")
            .to_model("b")
            .reason(ModelRerouteReason::ProviderSubstitutedModel)
            .build();
        let value = serde_json::to_value(&n).expect("serialize");
        assert_eq!(
            value,
            json!({"threadId": "t", "turnId": "u", "fromModel": "a", "toModel": "b",
                   "reason": "providerSubstitutedModel"})
        );
        let back: ModelReroutedNotification = serde_json::from_value(value).expect("parse");
        assert_eq!(back, n);
    }

    #[test]
    fn deprecation_details_are_sent_as_null_when_absent() {
        let n = DeprecationNoticeNotification::builder()
            .summary("s")
            .build();
        assert_eq!(
            serde_json::to_value(&n).expect("serialize"),
            json!({"summary": "s", "details": null})
        );
    }
}
