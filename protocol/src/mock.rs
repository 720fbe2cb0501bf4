//! `mock/experimentalMethod`: an experimental method that does nothing but echo, for clients to
//! test their handling of the `experimentalApi` capability against a real server.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Params of `mock/experimentalMethod`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct MockExperimentalMethodParams {
    /// Any text, sent back as `echoed`.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub value: Option<String>,
}

/// Result of `mock/experimentalMethod`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct MockExperimentalMethodResponse {
    /// The `value` of the params, as sent.
    #[serde(default)]
    pub echoed: Option<String>,
}
