//! The MCP-server types against the reference: the recorded MCP session and the reference
//! `tools/list` answer.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::*;

fn reference_dir() -> PathBuf {
    agentwire_reference_material::dir()
}

fn read_reference(relative: &str) -> String {
    let path = reference_dir().join(relative);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read reference file {}: {e}", path.display()))
}

/// The messages of the recorded MCP session, in order, with their direction.
fn transcript() -> Vec<(String, Value)> {
    read_reference("transcripts/codex-0.153.4-mcp-turn.jsonl")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|record| {
            let record: Value = serde_json::from_str(record).expect("transcript record is JSON");
            let dir = record["dir"].as_str().expect("record has a dir").to_owned();
            let line = record["line"].as_str().expect("record has a line");
            let message: Value = serde_json::from_str(line).expect("transcript line is JSON");
            (dir, message)
        })
        .collect()
}

/// Parses `value` as `T`, writes it back and checks that nothing changed.
fn round_trip<T: Serialize + DeserializeOwned>(what: &str, value: &Value) -> T {
    let parsed: T = serde_json::from_value(value.clone())
        .unwrap_or_else(|e| panic!("{what} does not parse: {e}\n{value:#}"));
    let written = serde_json::to_value(&parsed).expect("serializes");
    assert_eq!(&written, value, "{what} changed in a round trip");
    parsed
}

fn tools() -> Vec<Value> {
    let answer: Value =
        serde_json::from_str(&read_reference("codex-mcp-tools.json")).expect("tools/list is JSON");
    answer["result"]["tools"]
        .as_array()
        .expect("tools array")
        .clone()
}

fn reference_tool(name: &str) -> Value {
    tools()
        .into_iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no tool {name} in the reference"))
}

#[test]
fn transcript_messages_round_trip() {
    let mut tool_calls: BTreeMap<String, &'static str> = BTreeMap::new();
    let mut elicitations: BTreeSet<String> = BTreeSet::new();
    let (mut codex_calls, mut reply_calls, mut results, mut events) = (0, 0, 0, 0);
    let (mut elicitation_requests, mut elicitation_answers) = (0, 0);
    let mut event_kinds = BTreeSet::new();

    for (dir, message) in transcript() {
        let id = message.get("id").map(Value::to_string);
        match message.get("method").and_then(Value::as_str) {
            Some("tools/call") => {
                let params = &message["params"];
                let arguments = &params["arguments"];
                let name = params["name"].as_str().expect("tool name");
                let id = id.expect("tools/call is a request");
                match name {
                    CODEX_TOOL_NAME => {
                        round_trip::<CodexToolCallParam>("codex arguments", arguments);
                        codex_calls += 1;
                        tool_calls.insert(id, CODEX_TOOL_NAME);
                    }
                    CODEX_REPLY_TOOL_NAME => {
                        let reply = round_trip::<CodexReplyToolCallParam>(
                            "codex-reply arguments",
                            arguments,
                        );
                        assert!(reply.thread_id().is_some(), "codex-reply names its thread");
                        reply_calls += 1;
                        tool_calls.insert(id, CODEX_REPLY_TOOL_NAME);
                    }
                    other => panic!("unexpected tool {other}"),
                }
            }
            Some(CODEX_EVENT_METHOD) => {
                assert_eq!(dir, "server->client");
                let params = round_trip::<CodexEventNotificationParams>(
                    "codex/event params",
                    &message["params"],
                );
                let kind = message["params"]["msg"]["type"]
                    .as_str()
                    .expect("event type");
                assert!(
                    !matches!(params.msg, CodexEventMsg::Other(_)),
                    "event kind {kind} is not typed"
                );
                if let CodexEventMsg::ItemStarted { item, .. }
                | CodexEventMsg::ItemCompleted { item, .. } = &params.msg
                {
                    assert!(
                        !matches!(item, CodexTurnItem::Other(_)),
                        "item kind is not typed"
                    );
                }
                assert!(
                    tool_calls.contains_key(&params.meta.request_id.to_string()),
                    "event of an unknown tool call"
                );
                event_kinds.insert(kind.to_owned());
                events += 1;
            }
            Some(ELICITATION_CREATE_METHOD) => {
                assert_eq!(dir, "server->client");
                round_trip::<CodexApprovalElicitationParams>(
                    "elicitation/create params",
                    &message["params"],
                );
                elicitations.insert(id.expect("elicitation/create is a request"));
                elicitation_requests += 1;
            }
            Some(_) => {}
            None => {
                let Some(id) = id else { continue };
                let Some(result) = message.get("result") else {
                    continue;
                };
                if tool_calls.contains_key(&id) {
                    assert_eq!(dir, "server->client");
                    let parsed = round_trip::<CodexToolCallResult>("tools/call result", result);
                    let output = round_trip::<CodexToolCallOutput>(
                        "structuredContent",
                        &result["structuredContent"],
                    );
                    assert_eq!(parsed.structured_content.as_ref(), Some(&output));
                    assert_eq!(
                        parsed.content,
                        vec![McpContentBlock::Text {
                            text: output.content.clone()
                        }],
                        "the text block repeats the output"
                    );
                    results += 1;
                } else if elicitations.contains(&id) {
                    assert_eq!(dir, "client->server");
                    round_trip::<McpElicitationResult>("elicitation result", result);
                    elicitation_answers += 1;
                }
            }
        }
    }

    assert_eq!((codex_calls, reply_calls, results), (1, 1, 2));
    assert!(events > 0);
    assert_eq!(elicitation_requests, elicitation_answers);
    for kind in [
        "session_configured",
        "task_started",
        "agent_message",
        "token_count",
        "task_complete",
    ] {
        assert!(
            event_kinds.contains(kind),
            "the transcript has no {kind} event"
        );
    }
}

#[test]
fn unknown_events_are_kept_verbatim() {
    let params = json!({
        "_meta": { "requestId": "r-1" },
        "id": "1",
        "msg": { "type": "some_future_event", "payload": { "n": 1 } }
    });
    let parsed = round_trip::<CodexEventNotificationParams>("future event", &params);
    assert!(matches!(parsed.msg, CodexEventMsg::Other(_)));
    assert_eq!(
        parsed.meta.request_id,
        crate::RequestId::String("r-1".into())
    );

    // A known kind in a shape this version does not expect is kept too, not rejected.
    let odd = json!({ "type": "task_started", "turn_id": 7 });
    let parsed = round_trip::<CodexEventMsg>("odd task_started", &odd);
    assert!(matches!(parsed, CodexEventMsg::Other(_)));

    let item = json!({ "type": "Reasoning", "id": "r", "summary_text": [] });
    assert!(matches!(
        round_trip::<CodexTurnItem>("item", &item),
        CodexTurnItem::Other(_)
    ));

    let granular = json!({ "granular": { "rules": true } });
    let policy = round_trip::<CodexSessionApprovalPolicy>("policy", &granular);
    assert!(matches!(policy, CodexSessionApprovalPolicy::Other(_)));
    let never = round_trip::<CodexSessionApprovalPolicy>("policy", &json!("never"));
    assert_eq!(never, CodexSessionApprovalPolicy::Never);
}

#[test]
fn codex_arguments_are_strict_and_reply_accepts_conversation_id() {
    let full = json!({
        "prompt": "p",
        "model": "m",
        "cwd": "/w",
        "approval-policy": "on-request",
        "sandbox": "workspace-write",
        "config": { "model_reasoning_effort": "high", "tools.web_search": true },
        "base-instructions": "b",
        "developer-instructions": "d",
        "compact-prompt": "c"
    });
    let parsed = round_trip::<CodexToolCallParam>("all codex arguments", &full);
    assert_eq!(parsed.approval_policy, Some(CodexApprovalPolicy::OnRequest));
    assert_eq!(
        crate::SandboxMode::from(CodexSandboxMode::WorkspaceWrite),
        crate::SandboxMode::WorkspaceWrite
    );

    let minimal = round_trip::<CodexToolCallParam>("prompt only", &json!({ "prompt": "p" }));
    assert_eq!(minimal.model, None);
    assert!(
        serde_json::from_value::<CodexToolCallParam>(json!({ "prompt": "p", "modle": "m" }))
            .is_err()
    );
    assert!(serde_json::from_value::<CodexToolCallParam>(json!({ "model": "m" })).is_err());
    assert!(
        serde_json::from_value::<CodexToolCallParam>(
            json!({ "prompt": "p", "approval-policy": "untrusted" })
        )
        .is_err()
    );

    let legacy = round_trip::<CodexReplyToolCallParam>(
        "conversationId",
        &json!({ "prompt": "again", "conversationId": "t-1" }),
    );
    assert_eq!(legacy.thread_id(), Some("t-1"));
    let both = round_trip::<CodexReplyToolCallParam>(
        "both ids",
        &json!({ "prompt": "again", "threadId": "t-2", "conversationId": "t-1" }),
    );
    assert_eq!(both.thread_id(), Some("t-2"));
    let neither = round_trip::<CodexReplyToolCallParam>("no id", &json!({ "prompt": "again" }));
    assert_eq!(neither.thread_id(), None);
}

#[test]
fn error_results_round_trip() {
    let failed = json!({
        "content": [{ "type": "text", "text": "Failed to load configuration" }],
        "isError": true
    });
    let parsed = round_trip::<CodexToolCallResult>("error result", &failed);
    assert_eq!(parsed.structured_content, None);
    assert_eq!(parsed.is_error, Some(true));
    let image =
        json!({ "content": [{ "type": "image", "data": "AA==", "mimeType": "image/png" }] });
    let parsed = round_trip::<CodexToolCallResult>("image block", &image);
    assert!(matches!(parsed.content[0], McpContentBlock::Other(_)));
}

/// The transcript holds no elicitation (its call ran with `approval-policy: never`); these are
/// built to the MCP elicitation shape with the codex members.
#[test]
fn approval_elicitations_round_trip() {
    let exec = json!({
        "message": "Allow Codex to run `git status` in /w?",
        "requestedSchema": { "type": "object", "properties": {} },
        "codex_elicitation": "exec-approval",
        "codex_mcp_tool_call_id": "2",
        "codex_event_id": "e-1",
        "codex_call_id": "call-1",
        "codex_command": ["git", "status"],
        "codex_cwd": "/w",
        "codex_parsed_cmd": [{ "type": "unknown", "cmd": "git status" }]
    });
    let parsed = round_trip::<CodexApprovalElicitationParams>("exec elicitation", &exec);
    let CodexApprovalElicitationParams::ExecApproval(exec) = parsed else {
        panic!("exec-approval parses as ExecApproval")
    };
    assert_eq!(
        exec.elicitation.requested_schema,
        McpElicitationSchema::empty()
    );
    assert_eq!(exec.codex_command, ["git", "status"]);

    let patch = json!({
        "message": "Allow Codex to apply these changes?",
        "requestedSchema": { "type": "object", "properties": {} },
        "codex_elicitation": "patch-approval",
        "codex_mcp_tool_call_id": "3",
        "codex_event_id": "e-2",
        "codex_call_id": "call-2",
        "codex_reason": "fix the typo",
        "codex_changes": {
            "/w/a.txt": { "type": "add", "content": "hi\n" },
            "/w/b.txt": { "type": "update", "unified_diff": "@@ -1 +1 @@\n-a\n+b\n", "move_path": null }
        }
    });
    let parsed = round_trip::<CodexApprovalElicitationParams>("patch elicitation", &patch);
    let CodexApprovalElicitationParams::PatchApproval(patch) = parsed else {
        panic!("patch-approval parses as PatchApproval")
    };
    assert_eq!(patch.codex_grant_root, None);
    assert_eq!(patch.codex_changes.len(), 2);

    let unknown = json!({
        "message": "m",
        "requestedSchema": { "type": "object", "properties": {} },
        "codex_elicitation": "other-approval"
    });
    assert!(serde_json::from_value::<CodexApprovalElicitationParams>(unknown).is_err());

    let accept = round_trip::<McpElicitationResult>("accept", &json!({ "action": "accept" }));
    assert_eq!(
        accept.exec_decision(),
        crate::CommandExecutionApprovalDecision::Accept
    );
    let decline = round_trip::<McpElicitationResult>(
        "decline",
        &json!({ "action": "decline", "content": {} }),
    );
    assert_eq!(
        decline.patch_decision(),
        crate::FileChangeApprovalDecision::Decline
    );
    let cancel = round_trip::<McpElicitationResult>("cancel", &json!({ "action": "cancel" }));
    assert_eq!(
        cancel.exec_decision(),
        crate::CommandExecutionApprovalDecision::Cancel
    );
    assert!(serde_json::from_value::<McpElicitationResult>(json!({ "action": "maybe" })).is_err());
}

/// The root schema of `T` as `codex mcp-server` would list it, and its definitions.
fn generated_schema<T: schemars::JsonSchema>() -> Value {
    let generator = schemars::generate::SchemaSettings::draft07().into_generator();
    generator.into_root_schema_for::<T>().to_value()
}

/// Follows `$ref`s (`#/definitions/X`) and single-branch `allOf` wrappers within `root`.
fn resolve<'a>(root: &'a Value, mut schema: &'a Value) -> &'a Value {
    loop {
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            let pointer = reference.strip_prefix('#').expect("local $ref");
            schema = root
                .pointer(pointer)
                .unwrap_or_else(|| panic!("dangling $ref {reference}"));
        } else if let Some([only]) = schema
            .get("allOf")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
        {
            schema = only;
        } else {
            return schema;
        }
    }
}

/// What the comparison looks at in one (resolved) schema: `type`, `enum` (as a set),
/// `additionalProperties`, property names and `required` (as a set).
fn shape(root: &Value, schema: &Value) -> Value {
    let schema = resolve(root, schema);
    let set = |key: &str| {
        schema.get(key).and_then(Value::as_array).map(|values| {
            let mut values: Vec<String> = values.iter().map(Value::to_string).collect();
            values.sort();
            values
        })
    };
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| {
            properties
                .iter()
                .map(|(name, property)| (name.clone(), shape(root, property)))
                .collect::<serde_json::Map<_, _>>()
        });
    json!({
        "type": schema.get("type"),
        "enum": set("enum"),
        "additionalProperties": schema.get("additionalProperties"),
        "properties": properties,
        "required": set("required").unwrap_or_default(),
    })
}

fn assert_schema_matches(what: &str, generated: &Value, reference: &Value) {
    assert_eq!(
        shape(generated, generated),
        shape(reference, reference),
        "{what}: generated schema differs from the reference\ngenerated: {generated:#}"
    );
}

#[test]
fn tool_schemas_match_the_reference() {
    let codex = reference_tool(CODEX_TOOL_NAME);
    assert_schema_matches(
        "codex inputSchema",
        &generated_schema::<CodexToolCallParam>(),
        &codex["inputSchema"],
    );
    assert_schema_matches(
        "codex outputSchema",
        &generated_schema::<CodexToolCallOutput>(),
        &codex["outputSchema"],
    );

    let reply = reference_tool(CODEX_REPLY_TOOL_NAME);
    assert_schema_matches(
        "codex-reply inputSchema",
        &generated_schema::<CodexReplyToolCallParam>(),
        &reply["inputSchema"],
    );
    assert_schema_matches(
        "codex-reply outputSchema",
        &generated_schema::<CodexToolCallOutput>(),
        &reply["outputSchema"],
    );

    let names: BTreeSet<_> = tools()
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(
        names,
        BTreeSet::from([CODEX_TOOL_NAME.to_owned(), CODEX_REPLY_TOOL_NAME.to_owned()])
    );
}

#[test]
fn schema_comparison_notices_differences() {
    let generated = generated_schema::<CodexToolCallParam>();
    let reference = reference_tool(CODEX_TOOL_NAME)["inputSchema"].clone();
    let mutations: [(&str, Value); 4] = [
        ("/properties/approval-policy/enum/2", json!("untrusted")),
        ("/properties/model/type", json!(["string", "null"])),
        ("/required/1", json!("model")),
        ("/additionalProperties", json!(true)),
    ];
    for (pointer, value) in mutations {
        let mut changed = reference.clone();
        let (parent, last) = pointer.rsplit_once('/').expect("pointer has a parent");
        let target = changed.pointer_mut(parent).expect("pointer resolves");
        match target {
            Value::Array(items) => items.push(value),
            Value::Object(members) => {
                members.insert(last.to_owned(), value);
            }
            _ => panic!("cannot mutate {pointer}"),
        }
        assert_ne!(
            shape(&generated, &generated),
            shape(&changed, &changed),
            "changing {pointer} goes unnoticed"
        );
    }
}

#[test]
fn typescript_members_are_optional_not_nullable() {
    let config = ts_rs::Config::new().with_large_int("number");
    let decl = <CodexToolCallParam as ts_rs::TS>::decl(&config);
    for member in [
        "\"approval-policy\"?:",
        "\"base-instructions\"?:",
        "\"developer-instructions\"?:",
        "\"compact-prompt\"?:",
        "model?:",
        "cwd?:",
        "sandbox?:",
        "config?:",
    ] {
        assert!(decl.contains(member), "no `{member}` in {decl}");
    }
    assert!(
        decl.contains("prompt: string"),
        "prompt is required: {decl}"
    );
    assert!(!decl.contains("null"), "no member is nullable: {decl}");

    let reply = <CodexReplyToolCallParam as ts_rs::TS>::decl(&config);
    assert!(reply.contains("threadId?: string"), "{reply}");
    assert!(reply.contains("conversationId?: string"), "{reply}");
}

#[test]
fn visit_types_visits_each_root_once() {
    struct Names(Vec<String>);
    impl crate::TypeVisitor for Names {
        fn visit<T: crate::WireType>(&mut self) {
            self.0
                .push(<T as schemars::JsonSchema>::schema_name().into_owned());
        }
    }
    let mut names = Names(Vec::new());
    visit_types(&mut names);
    let unique: BTreeSet<_> = names.0.iter().cloned().collect();
    assert_eq!(
        unique.len(),
        names.0.len(),
        "a root is visited twice: {:?}",
        names.0
    );
    assert!(
        unique.contains("CodexToolCallParam") && unique.contains("CodexEventNotificationParams")
    );
}
