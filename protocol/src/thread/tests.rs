//! Wire shapes of the thread types.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::*;

/// Deserializes `value` into `T`, serializes it back and checks nothing changed.
fn round_trip<T: Serialize + DeserializeOwned>(value: Value) -> T {
    let parsed: T = serde_json::from_value(value.clone()).expect("value deserializes");
    let back = serde_json::to_value(&parsed).expect("value serializes");
    assert_eq!(back, value);
    parsed
}

/// The thread of the `thread/start` answer in the 0.171.0 turn transcript, restricted to
/// the members this crate declares.
fn transcript_thread() -> Value {
    json!({
        "id": "01a22805-92a4-7883-962f-a9117c3e60a2",
        "sessionId": "01a22805-92a4-7883-962f-a9117c3e60a2",
        "forkedFromId": null,
        "parentThreadId": null,
        "preview": "",
        "ephemeral": false,
        "section": null,
        "sectionEnteredAt": null,
        "projectId": null,
        "historyMode": "paginated",
        "modelProvider": "mock",
        "model": "mock-model",
        "reasoningEffort": null,
        "createdAt": 1795967783,
        "updatedAt": 1795967783,
        "recencyAt": 1795967783,
        "status": {"type": "idle"},
        "path": "/home/user/.codex/sessions/2026/11/29/rollout-2026-11-29T15-56-23-01a22805-92a4-7883-962f-a9117c3e60a2.jsonl",
        "cwd": "/home/user/work",
        "cliVersion": "0.171.0",
        "originator": "turn_probe",
        "source": "vscode",
        "threadSource": null,
        "agentNickname": null,
        "agentRole": null,
        "gitInfo": null,
        "name": null,
        "environments": [{"environmentId": "local", "cwd": "/home/user/work",
                          "runtimeWorkspaceRoots": ["/home/user/work"]}],
        "canAcceptDirectInput": true,
        "attachedToThreadId": null,
        "turns": []
    })
}

#[test]
fn thread_start_response_from_transcript_round_trips() {
    let response: ThreadStartResponse = round_trip(json!({
        "thread": transcript_thread(),
        "model": "mock-model",
        "modelProvider": "mock",
        "serviceTier": null,
        "disabledPluginIds": [],
        "cwd": "/home/user/work",
        "instructionSources": [],
        "approvalPolicy": "never",
        "approvalsReviewer": "user",
        "sandbox": {"type": "readOnly", "networkAccess": false},
        "reasoningEffort": null
    }));
    assert_eq!(response.thread.status, ThreadStatus::Idle);
    assert_eq!(response.thread.source, SessionSource::Vscode);
    assert_eq!(response.thread.history_mode, ThreadHistoryMode::Paginated);
    assert_eq!(response.approval_policy, AskForApproval::Never);
    assert_eq!(
        response.sandbox,
        SandboxPolicy::ReadOnly {
            network_access: false
        }
    );
}

#[test]
fn thread_defaults_fill_members_older_servers_leave_out() {
    let mut value = transcript_thread();
    let object = value.as_object_mut().expect("thread is an object");
    for key in [
        "historyMode",
        "section",
        "sectionEnteredAt",
        "recencyAt",
        "gitInfo",
    ] {
        object.remove(key);
    }
    let thread: Thread = serde_json::from_value(value).expect("thread deserializes");
    assert_eq!(thread.history_mode, ThreadHistoryMode::Legacy);
    assert_eq!(thread.section, None);
    // `projectId` is always written, even when it is null.
    let back = serde_json::to_value(&thread).expect("thread serializes");
    assert_eq!(back["projectId"], Value::Null);
}

#[test]
fn thread_status_variants_round_trip() {
    round_trip::<ThreadStatusChangedNotification>(json!({
        "threadId": "01a22805-92a4-7883-962f-a9117c3e60a2",
        "status": {"type": "active", "activeFlags": []}
    }));
    let status: ThreadStatus = round_trip(json!({
        "type": "active",
        "activeFlags": ["waitingOnApproval", "waitingOnUserInput"]
    }));
    assert_eq!(
        status,
        ThreadStatus::Active {
            active_flags: vec![
                ThreadActiveFlag::WaitingOnApproval,
                ThreadActiveFlag::WaitingOnUserInput
            ]
        }
    );
    round_trip::<ThreadStatus>(json!({"type": "notLoaded"}));
    round_trip::<ThreadStatus>(json!({"type": "systemError"}));
}

#[test]
fn session_sources_round_trip() {
    round_trip::<SessionSource>(json!("appServer"));
    round_trip::<SessionSource>(json!({"custom": "my-bot"}));
    round_trip::<SessionSource>(json!({"subAgent": "memory_consolidation"}));
    round_trip::<SessionSource>(json!({"subAgent": {"other": "triage"}}));
    let spawned: SessionSource = round_trip(json!({"subAgent": {"thread_spawn": {
        "parent_thread_id": "01a22805-92a4-7883-962f-a9117c3e60a2",
        "depth": 1,
        "agent_nickname": "Ada",
        "agent_role": "explorer",
        "agent_path": "/root/explorer"
    }}}));
    let SessionSource::SubAgent(SubAgentSource::ThreadSpawn { depth, .. }) = spawned else {
        panic!("expected a spawned sub-agent, got {spawned:?}");
    };
    assert_eq!(depth, 1);
}

#[test]
fn thread_start_params_leave_unset_members_out() {
    let params: ThreadStartParams = round_trip(json!({"cwd": "/home/user/work"}));
    assert_eq!(params.settings.cwd.as_deref(), Some("/home/user/work"));
    let back = serde_json::to_value(&params).expect("params serialize");
    let object = back.as_object().expect("params are an object");
    for key in [
        "model",
        "sandbox",
        "approvalPolicy",
        "config",
        "ephemeral",
        "threadSource",
    ] {
        assert!(!object.contains_key(key), "{key} should be absent");
    }

    round_trip::<ThreadStartParams>(json!({
        "cwd": "/home/user/work",
        "model": "gpt-5",
        "approvalPolicy": {"granular": {
            "sandbox_approval": true,
            "rules": true,
            "mcp_elicitations": false,
            "request_permissions": false,
            "skill_approval": false
        }},
        "approvalsReviewer": "auto_review",
        "sandbox": "workspace-write",
        "config": {"model_reasoning_effort": "high"},
        "ephemeral": true,
        "sessionStartSource": "clear",
        "threadSource": "quick-chat"
    }));
}

#[test]
fn thread_list_params_leave_unset_filters_out() {
    let params: ThreadListParams = round_trip(json!({}));
    assert_eq!(params.limit, None);
    let params: ThreadListParams = round_trip(json!({
        "limit": 20,
        "sortKey": "updated_at",
        "sortDirection": "asc",
        "cwd": ["/home/user/work", "/home/user/other"],
        "sourceKinds": ["vscode", "subAgentThreadSpawn"],
        "archived": false
    }));
    assert_eq!(
        params.cwd,
        Some(ThreadListCwdFilter::List(vec![
            "/home/user/work".to_owned(),
            "/home/user/other".to_owned()
        ]))
    );
    let back = serde_json::to_value(&params).expect("params serialize");
    let object = back.as_object().expect("params are an object");
    for key in [
        "cursor",
        "searchTerm",
        "sectionId",
        "useStateDbOnly",
        "excludedThreadIds",
    ] {
        assert!(!object.contains_key(key), "{key} should be absent");
    }
    let single: ThreadListParams = round_trip(json!({"cwd": "/home/user/work"}));
    assert_eq!(
        single.cwd,
        Some(ThreadListCwdFilter::Text("/home/user/work".to_owned()))
    );
}

#[test]
fn thread_list_response_keeps_null_cursors() {
    round_trip::<ThreadListResponse>(json!({
        "data": [transcript_thread()],
        "nextCursor": null,
        "backwardsCursor": "eyJ0cyI6MTc5NTk2Nzc4M30",
        "readStates": {"01a22805-92a4-7883-962f-a9117c3e60a2":
            {"firstUnread": {"type": "threadStart"}, "revision": "1:t:done"}}
    }));
    // A connection without `experimentalApi` does not get them (the stable shape).
    round_trip::<ThreadListResponse>(json!({
        "data": [],
        "nextCursor": null,
        "backwardsCursor": null
    }));
}
