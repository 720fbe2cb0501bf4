//! Rollout maintenance: `rollout/compress` asks the server to gzip the rollouts of threads
//! nobody has touched for a while. The answer only says the pass was started; which files it
//! compressed is not reported, and a compressed rollout reads exactly as before.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Result of `rollout/compress`: an empty object once a background compression pass was
/// started (or one was already running). It does not wait for the pass, and a pass may find
/// nothing to do.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct RolloutCompressResponse {}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_answer_is_an_empty_object() {
        let answer = RolloutCompressResponse::builder().build();
        assert_eq!(serde_json::to_value(&answer).expect("serialize"), json!({}));
        let back: RolloutCompressResponse =
            serde_json::from_value(json!({})).expect("an empty object reads");
        assert_eq!(back, answer);
    }
}
