//! Wire shapes of the item types.

use serde_json::{Value, json};

use super::*;

/// Deserializes `value` into `T`, serializes it back and asserts nothing changed.
fn round_trip<T: Serialize + serde::de::DeserializeOwned>(value: &Value) -> T {
    let parsed: T = serde_json::from_value(value.clone()).expect("deserialize");
    let back = serde_json::to_value(&parsed).expect("serialize");
    assert_eq!(&back, value);
    parsed
}

#[test]
fn item_started_user_message_round_trips() {
    let value = json!({
        "item": {
            "type": "userMessage",
            "id": "01a22805-92f5-7093-85ba-02bf52816b69",
            "clientId": null,
            "content": [{"type": "text", "text": "Say hello.", "text_elements": []}],
            "startedAtMs": 1795967783670_i64,
            "completedAtMs": null
        },
        "threadId": "01a22805-92a4-7883-962f-a9117c3e60a2",
        "turnId": "01a22805-92bf-7720-83d6-e7310d217d47",
        "startedAtMs": 1795967783670_i64
    });
    let n: ItemStartedNotification = round_trip(&value);
    assert_eq!(n.item.started_at_ms, Some(1795967783670));
    assert_eq!(n.item.completed_at_ms, None);
    let ThreadItemKind::UserMessage {
        id,
        content,
        client_id,
    } = n.item.kind
    else {
        panic!("expected a userMessage item");
    };
    assert_eq!(id, "01a22805-92f5-7093-85ba-02bf52816b69");
    assert_eq!(client_id, None);
    assert_eq!(
        content,
        vec![UserInput::Text {
            text: "Say hello.".into(),
            text_elements: vec![]
        }]
    );
}

#[test]
fn item_completed_agent_message_round_trips() {
    let value = json!({
        "item": {
            "type": "agentMessage",
            "moderation": null,
            "id": "msg_1",
            "text": "Hello from mock (1).",
            "phase": null,
            "memoryCitation": null,
            "delivery": null,
            "questions": null,
            "startedAtMs": 1795967783706_i64,
            "completedAtMs": 1795967783707_i64
        },
        "threadId": "01a22805-92a4-7883-962f-a9117c3e60a2",
        "turnId": "01a22805-92bf-7720-83d6-e7310d217d47",
        "contentTokenCount": null,
        "completedAtMs": 1795967783707_i64
    });
    let n: ItemCompletedNotification = round_trip(&value);
    assert_eq!(n.completed_at_ms, 1795967783707);
    assert!(matches!(
        n.item.kind,
        ThreadItemKind::AgentMessage { ref text, phase: None, .. } if text == "Hello from mock (1)."
    ));
}

#[test]
fn agent_message_delta_round_trips() {
    let value = json!({
        "threadId": "01a22805-92a4-7883-962f-a9117c3e60a2",
        "turnId": "01a22805-92bf-7720-83d6-e7310d217d47",
        "itemId": "msg_1",
        "delta": "Hello "
    });
    let n: AgentMessageDeltaNotification = round_trip(&value);
    assert_eq!(n.delta, "Hello ");
}

#[test]
fn command_execution_item_round_trips() {
    let value = json!({
        "type": "commandExecution",
        "id": "call_7",
        "command": "bash -lc 'cat src/lib.rs | rg fn'",
        "cwd": "/home/user/work",
        "status": "completed",
        "source": "agent",
        "commandActions": [
            {"type": "read", "command": "cat src/lib.rs", "name": "lib.rs", "path": "src/lib.rs"},
            {"type": "search", "command": "rg fn", "query": "fn", "path": null}
        ],
        "aggregatedOutput": "pub fn main() {}\n",
        "exitCode": 0,
        "durationMs": 12,
        "processId": null,
        "pluginId": null,
        "scriptPath": null,
        "startedAtMs": 1795967783800_i64,
        "completedAtMs": 1795967783812_i64
    });
    let item: ThreadItem = round_trip(&value);
    assert!(matches!(
        item.kind,
        ThreadItemKind::CommandExecution {
            status: CommandExecutionStatus::Completed,
            exit_code: Some(0),
            ..
        }
    ));

    // `source` may be left out; it then means the agent ran the command.
    let mut without_source = value.clone();
    without_source
        .as_object_mut()
        .expect("object")
        .remove("source");
    let item: ThreadItem = serde_json::from_value(without_source).expect("deserialize");
    assert!(matches!(
        item.kind,
        ThreadItemKind::CommandExecution {
            source: CommandExecutionSource::Agent,
            ..
        }
    ));
}

#[test]
fn file_change_item_round_trips() {
    let value = json!({
        "type": "fileChange",
        "id": "call_9",
        "status": "inProgress",
        "changes": [
            {"path": "a.txt", "kind": {"type": "add"}, "diff": "hello\n"},
            {
                "path": "b.txt",
                "kind": {"type": "update", "move_path": "c.txt"},
                "diff": "@@ -1 +1 @@\n-old\n+new\n"
            }
        ],
        "startedAtMs": 1795967783900_i64,
        "completedAtMs": null
    });
    round_trip::<ThreadItem>(&value);
}

#[test]
fn tool_output_image_leaves_out_unset_detail() {
    let value = json!({"type": "input_image", "image_url": "data:image/png;base64,AAAA"});
    let part: FunctionCallOutputContentItem = round_trip(&value);
    assert!(matches!(
        part,
        FunctionCallOutputContentItem::InputImage { detail: None, .. }
    ));
    assert!(
        serde_json::to_value(&part)
            .expect("serialize")
            .get("detail")
            .is_none()
    );

    let body: FunctionCallOutputBody = round_trip(&json!([
        {"type": "input_text", "text": "done"},
        {"type": "input_image", "file_id": "file_1", "detail": "high"}
    ]));
    assert!(matches!(body, FunctionCallOutputBody::List(ref parts) if parts.len() == 2));
    round_trip::<FunctionCallOutputBody>(&json!("plain text output"));
}

#[test]
fn image_generation_leaves_out_unset_input_images() {
    let value = json!({
        "type": "imageGeneration",
        "id": "ig_1",
        "status": "completed",
        "fileId": "file_42",
        "revisedPrompt": "a red fox",
        "savedPath": null,
        "generationId": null,
        "transparentBackground": null,
        "failure": null,
        "startedAtMs": null,
        "completedAtMs": null
    });
    let item: ThreadItem = round_trip(&value);
    assert!(matches!(
        item.kind,
        ThreadItemKind::ImageGeneration {
            image: GeneratedImage::File { .. },
            input_images: None,
            ..
        }
    ));
    assert!(
        serde_json::to_value(&item)
            .expect("serialize")
            .get("inputImages")
            .is_none()
    );
}
