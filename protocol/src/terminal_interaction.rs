//! Unified exec sessions (0.7.0): a command the agent started with `exec_command` may keep
//! running after the tool call returns, as a session of the thread the model talks to with
//! `write_stdin`. Each time the model writes to a session, clients hear of it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Params of `item/commandExecution/terminalInteraction`: the model wrote `stdin` to the
/// still-running command of a `commandExecution` item (its session `processId`). The output
/// that follows streams as `item/commandExecution/outputDelta` of the same item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct TerminalInteractionNotification {
    /// Thread the command runs in.
    pub thread_id: String,
    /// Turn that started the command (which may have ended since).
    pub turn_id: String,
    /// Id of the `commandExecution` item of the command.
    pub item_id: String,
    /// The session's id, as the item's `processId` carries it.
    pub process_id: String,
    /// The text written to the command's standard input, exactly.
    pub stdin: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_member_is_a_required_camel_case_string() {
        let value = json!({
            "threadId": "th_1", "turnId": "tu_1", "itemId": "it_1",
            "processId": "7", "stdin": "hello\n"
        });
        let params: TerminalInteractionNotification =
            serde_json::from_value(value.clone()).expect("reads");
        assert_eq!(params.process_id, "7");
        assert_eq!(serde_json::to_value(&params).expect("writes"), value);
        let missing =
            json!({"threadId": "th_1", "turnId": "tu_1", "itemId": "it_1", "processId": "7"});
        assert!(serde_json::from_value::<TerminalInteractionNotification>(missing).is_err());
    }
}
