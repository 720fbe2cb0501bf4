//! The generated dispatch table: the [`Handler`] trait and the functions that route a method
//! name to it. The source is `generated/rust/dispatch.rs`, written by `agentwire-codegen`.

include!("../../generated/rust/dispatch.rs");

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{decline_answer, ordered_by, ordering_key};

    #[test]
    fn requests_about_a_thread_are_ordered_by_its_id() {
        assert_eq!(ordered_by("turn/start"), Some("threadId"));
        let params = json!({"threadId": "t1", "input": []});
        assert_eq!(ordering_key("turn/start", Some(&params)), Some("t1"));
        assert_eq!(ordering_key("thread/read", Some(&params)), Some("t1"));
        // Methods that declare no ordering member are not ordered, whatever their params hold.
        assert_eq!(ordered_by("thread/list"), None);
        assert_eq!(ordering_key("thread/list", Some(&params)), None);
        assert_eq!(ordering_key("no/such/method", Some(&params)), None);
        // A missing or non-string member orders nothing.
        assert_eq!(ordering_key("turn/start", None), None);
        assert_eq!(
            ordering_key("turn/start", Some(&json!({"threadId": 7}))),
            None
        );
    }

    #[test]
    fn approvals_decline_as_the_table_declares() {
        assert_eq!(
            decline_answer("item/commandExecution/requestApproval", "timed out"),
            Some(json!({"decision": "decline"}))
        );
        assert_eq!(
            decline_answer("item/fileChange/requestApproval", "timed out"),
            Some(json!({"decision": "decline"}))
        );
        // The legacy forms carry the reason.
        for method in ["execCommandApproval", "applyPatchApproval"] {
            let answer = decline_answer(method, "timed out").expect(method);
            assert!(
                answer.to_string().contains("timed out"),
                "{method}: {answer}"
            );
        }
        assert_eq!(decline_answer("thread/start", "x"), None);
    }
}
