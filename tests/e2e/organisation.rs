//! Organising threads, end to end through the binary: projects (`project/*`), sections
//! (`threadSection/*`, `thread/section/move`, `thread/list` by section), attachments
//! (`thread/attachment/*`, `thread/attachmentOwner/list`) and queued input (`thread/queue/*`).
//! Each test checks the notifications, the errors for bad input, and that what it set is
//! still there after the server restarts on the same home.

use std::path::Path;

use serde_json::{Value, json};

use crate::client::{Client, params, thread_id};
use crate::common::{home_and_workspace, scratch};

/// A server on `home` that accepts experimental methods.
fn server(home: &Path) -> Client {
    Client::start_with_capabilities(home, json!({"experimentalApi": true}))
}

/// Starts a thread in `cwd`; returns its id (the backlog cleared).
fn thread(client: &mut Client, cwd: &Path) -> String {
    thread_id(&client.start_thread(json!({"cwd": cwd})))
}

/// The ids of `threads` (a `data` array of threads, projects or sections).
fn ids(list: &Value) -> Vec<String> {
    list["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|item| item["id"].as_str().expect("id").to_owned())
        .collect()
}

/// The `(method, params)` of every notification in the backlog whose method is one of
/// `methods`, in order; the backlog is emptied.
fn seen(client: &mut Client, methods: &[&str]) -> Vec<(String, Value)> {
    client
        .backlog()
        .into_iter()
        .filter_map(|m| {
            let method = m["method"].as_str()?.to_owned();
            methods
                .contains(&method.as_str())
                .then(|| (method, m["params"].clone()))
        })
        .collect()
}

/// Asserts that `error` is a JSON-RPC error with `code` whose message contains `text`.
fn refused(error: &Value, code: i64, text: &str) {
    assert_eq!(error["code"], json!(code), "{error}");
    let message = error["message"].as_str().expect("message");
    assert!(
        message.contains(text),
        "{message:?} should mention {text:?}"
    );
}

#[test]
fn projects_persist_in_their_order_with_their_threads_and_are_announced() {
    let root = scratch("org-projects");
    let (home, workspace) = home_and_workspace(&root);
    let mut client = server(&home);
    let first = thread(&mut client, &workspace);
    let second = thread(&mut client, &workspace);
    let root_path = workspace.display().to_string();

    let created = client.call(
        "project/create",
        json!({"idempotencyKey": "k1", "name": " Alpha ", "roots": [{"path": root_path}],
               "metadata": {"colour": "blue"}}),
    )["project"]
        .clone();
    let alpha = created["id"].as_str().expect("id").to_owned();
    assert_eq!(created["name"], json!("Alpha"));
    assert_eq!(created["roots"], json!([{"path": root_path}]));
    assert_eq!(created["metadata"], json!({"colour": "blue"}));
    assert_eq!(created["recencyAt"], Value::Null);
    assert_eq!(
        client.notification("project/changed"),
        json!({"changeType": "created", "projectId": alpha})
    );
    // The same key answers the same project and makes no other.
    let again = client.call(
        "project/create",
        json!({"idempotencyKey": "k1", "name": "Other", "roots": []}),
    );
    assert_eq!(again["project"], created);

    let imported = client.call(
        "project/import",
        json!({"idempotencyKey": "k2", "name": "Beta", "roots": [], "threads": [first, second]}),
    )["project"]
        .clone();
    let beta = imported["id"].as_str().expect("id").to_owned();
    assert!(imported["recencyAt"].is_i64(), "{imported}");
    assert_eq!(
        client.notification("project/changed"),
        json!({"changeType": "created", "projectId": beta})
    );
    let filed: Vec<Value> = (0..2)
        .map(|_| client.notification("thread/project/updated"))
        .collect();
    assert_eq!(
        filed,
        [
            json!({"projectId": beta, "threadId": first}),
            json!({"projectId": beta, "threadId": second})
        ]
    );
    assert!(
        params(&client.backlog(), "project/changed").is_empty(),
        "the repeated create announced nothing"
    );

    let updated = client.call(
        "project/update",
        json!({"projectId": alpha, "name": "Alpha 2", "metadata": {}}),
    )["project"]
        .clone();
    assert_eq!(updated["name"], json!("Alpha 2"));
    assert_eq!(updated["metadata"], json!({}));
    assert_eq!(
        updated["roots"], created["roots"],
        "roots left out are kept"
    );
    assert_eq!(
        client.notification("project/changed"),
        json!({"changeType": "updated", "projectId": alpha})
    );
    client.call(
        "project/move",
        json!({"projectId": beta, "beforeProjectId": alpha}),
    );
    assert_eq!(
        client.notification("project/changed"),
        json!({"changeType": "updated", "projectId": beta})
    );
    assert_eq!(
        ids(&client.call("project/list", json!({}))),
        [beta.as_str(), alpha.as_str()]
    );
    let page = client.call("project/list", json!({"limit": 1}));
    assert_eq!(ids(&page), [beta.as_str()]);
    let rest = client.call(
        "project/list",
        json!({"limit": 1, "cursor": page["nextCursor"]}),
    );
    assert_eq!(ids(&rest), [alpha.as_str()]);
    assert_eq!(rest["nextCursor"], Value::Null);
    // Recency puts the project with threads first whichever way; empty ones go last.
    for direction in ["asc", "desc"] {
        let by_recency = client.call(
            "project/list",
            json!({"sortKey": "recencyAt", "sortDirection": direction}),
        );
        assert_eq!(ids(&by_recency), [beta.as_str(), alpha.as_str()]);
    }
    let read = client.call("thread/read", json!({"threadId": first}));
    assert_eq!(read["thread"]["projectId"], json!(beta));

    // Errors name what is wrong.
    refused(
        &client.call_err(
            "project/create",
            json!({"idempotencyKey": "k3", "name": "  ", "roots": []}),
        ),
        -32602,
        "name",
    );
    refused(
        &client.call_err(
            "project/create",
            json!({"idempotencyKey": "k3", "name": "n", "roots": [{"path": "relative/dir"}]}),
        ),
        -32602,
        "roots[0].path",
    );
    refused(
        &client.call_err(
            "project/import",
            json!({"idempotencyKey": "k4", "name": "n", "roots": [], "threads": ["nope"]}),
        ),
        -32602,
        "threads[0]",
    );
    refused(
        &client.call_err("project/read", json!({"projectId": "nope"})),
        -32602,
        "no project nope",
    );
    refused(
        &client.call_err("project/list", json!({"sortDirection": "asc"})),
        -32602,
        "sortKey",
    );
    refused(
        &client.call_err(
            "project/move",
            json!({"projectId": alpha, "beforeProjectId": alpha}),
        ),
        -32602,
        "before itself",
    );
    client.stop();

    // A new server on the same home has the same projects, order and threads.
    let mut client = server(&home);
    let listed = client.call("project/list", json!({}));
    assert_eq!(ids(&listed), [beta.as_str(), alpha.as_str()]);
    assert_eq!(listed["data"][1]["name"], json!("Alpha 2"));
    assert_eq!(listed["data"][1]["roots"], created["roots"]);
    let read = client.call("thread/read", json!({"threadId": second}));
    assert_eq!(read["thread"]["projectId"], json!(beta));
    let listed_threads = client.call("thread/list", json!({}));
    assert!(
        listed_threads["data"]
            .as_array()
            .expect("threads")
            .iter()
            .all(|t| t["projectId"] == json!(beta)),
        "{listed_threads}"
    );

    client.call("project/delete", json!({"projectId": beta}));
    assert_eq!(
        client.notification("project/changed"),
        json!({"changeType": "deleted", "projectId": beta})
    );
    let unfiled: Vec<Value> = (0..2)
        .map(|_| client.notification("thread/project/updated"))
        .collect();
    assert_eq!(
        unfiled,
        [
            json!({"projectId": null, "threadId": first}),
            json!({"projectId": null, "threadId": second})
        ]
    );
    refused(
        &client.call_err("project/delete", json!({"projectId": beta})),
        -32602,
        "no project",
    );
    client.stop();

    let mut client = server(&home);
    assert_eq!(
        ids(&client.call("project/list", json!({}))),
        [alpha.as_str()]
    );
    let read = client.call("thread/read", json!({"threadId": first}));
    assert_eq!(read["thread"]["projectId"], Value::Null);
    client.stop();
}

#[test]
fn sections_order_their_threads_filter_the_thread_list_and_persist() {
    let root = scratch("org-sections");
    let (home, workspace) = home_and_workspace(&root);
    let mut client = server(&home);
    let (one, two, three, loose) = (
        thread(&mut client, &workspace),
        thread(&mut client, &workspace),
        thread(&mut client, &workspace),
        thread(&mut client, &workspace),
    );

    // A new home has the pinned section.
    let first_list = client.call("threadSection/list", json!({}));
    assert_eq!(first_list["data"][0]["name"], json!("Pinned"));
    let section = client.call(
        "threadSection/create",
        json!({"name": "Work", "appearance": {"color": "red", "icon": null}}),
    )["section"]
        .clone();
    let work = section["id"].as_str().expect("id").to_owned();
    assert_eq!(section["appearance"], json!({"color": "red", "icon": null}));
    let other = client.call("threadSection/create", json!({"name": "Other"}))["section"]["id"]
        .as_str()
        .expect("id")
        .to_owned();
    // Left out keeps the look; `null` resets it.
    let renamed = client.call(
        "threadSection/update",
        json!({"sectionId": work, "name": "Work!"}),
    );
    assert_eq!(renamed["section"]["appearance"]["color"], json!("red"));
    let reset = client.call(
        "threadSection/update",
        json!({"sectionId": other, "name": "Other", "appearance": null}),
    );
    assert_eq!(reset["section"]["appearance"], Value::Null);

    client.call(
        "thread/section/move",
        json!({"threadId": one, "sectionId": work}),
    );
    client.call(
        "thread/section/move",
        json!({"threadId": two, "sectionId": work}),
    );
    client.call(
        "thread/section/move",
        json!({"threadId": three, "sectionId": work, "beforeThreadId": one}),
    );
    let moves: Vec<Value> = (0..3)
        .map(|_| client.notification("thread/section/changed"))
        .collect();
    assert_eq!(
        moves,
        [
            json!({"sectionId": work, "threadId": one}),
            json!({"sectionId": work, "threadId": two}),
            json!({"sectionId": work, "threadId": three}),
        ]
    );
    refused(
        &client.call_err(
            "thread/section/move",
            json!({"threadId": three, "sectionId": work, "beforeThreadId": three}),
        ),
        -32602,
        "before itself",
    );
    refused(
        &client.call_err(
            "thread/section/move",
            json!({"threadId": three, "sectionId": other, "beforeThreadId": one}),
        ),
        -32602,
        "not in section",
    );
    refused(
        &client.call_err(
            "thread/section/move",
            json!({"threadId": three, "sectionId": "nope"}),
        ),
        -32602,
        "no section nope",
    );
    refused(
        &client.call_err("thread/list", json!({"sortKey": "section_position"})),
        -32602,
        "sectionId",
    );
    refused(
        &client.call_err("threadSection/create", json!({"name": ""})),
        -32602,
        "name",
    );

    let ordered = client.call(
        "thread/list",
        json!({"sectionId": work, "sortKey": "section_position"}),
    );
    assert_eq!(ids(&ordered), [three.as_str(), one.as_str(), two.as_str()]);
    assert_eq!(ordered["data"][0]["section"]["name"], json!("Work!"));
    assert!(ordered["data"][0]["sectionEnteredAt"].is_i64());
    let reversed = client.call(
        "thread/list",
        json!({"sectionId": work, "sortKey": "section_position", "sortDirection": "desc"}),
    );
    assert_eq!(ids(&reversed), [two.as_str(), one.as_str(), three.as_str()]);
    let page = client.call(
        "thread/list",
        json!({"sectionId": work, "sortKey": "section_position", "limit": 2}),
    );
    assert_eq!(ids(&page), [three.as_str(), one.as_str()]);
    let rest = client.call(
        "thread/list",
        json!({"sectionId": work, "sortKey": "section_position", "limit": 2,
               "cursor": page["nextCursor"]}),
    );
    assert_eq!(ids(&rest), [two.as_str()]);
    let mut by_time = ids(&client.call("thread/list", json!({"sectionId": work})));
    by_time.sort();
    let mut members = vec![one.clone(), two.clone(), three.clone()];
    members.sort();
    assert_eq!(by_time, members, "the section's threads and no other");
    assert_eq!(
        ids(&client.call("thread/list", json!({"sectionId": other}))),
        Vec::<String>::new()
    );
    let everything = client.call("thread/list", json!({}));
    let unsectioned: Vec<&Value> = everything["data"]
        .as_array()
        .expect("threads")
        .iter()
        .filter(|t| t["section"].is_null())
        .collect();
    assert_eq!(unsectioned.len(), 1);
    assert_eq!(unsectioned[0]["id"], json!(loose));
    // `null` lists the threads in no section.
    assert_eq!(
        ids(&client.call("thread/list", json!({"sectionId": null}))),
        [loose.as_str()]
    );

    // Out of any section, announced with `null`.
    client.call(
        "thread/section/move",
        json!({"threadId": two, "sectionId": null}),
    );
    assert_eq!(
        client.notification("thread/section/changed"),
        json!({"sectionId": null, "threadId": two})
    );
    let read = client.call("thread/read", json!({"threadId": one}));
    let entered = read["thread"]["sectionEnteredAt"].clone();
    assert_eq!(read["thread"]["section"]["id"], json!(work));
    let rollout = read["thread"]["path"].as_str().expect("path").to_owned();
    let records = std::fs::read_to_string(&rollout).expect("rollout");
    assert!(
        records.contains(r#""type":"section""#),
        "the move is a record of the thread: {records}"
    );
    client.stop();

    // A new server on the same home: same sections, same order, same marks.
    let mut client = server(&home);
    let sections = client.call("threadSection/list", json!({}));
    assert_eq!(
        sections["data"]
            .as_array()
            .expect("sections")
            .iter()
            .map(|s| s["name"].clone())
            .collect::<Vec<_>>(),
        [json!("Pinned"), json!("Work!"), json!("Other")]
    );
    let ordered = client.call(
        "thread/list",
        json!({"sectionId": work, "sortKey": "section_position"}),
    );
    assert_eq!(ids(&ordered), [three.as_str(), one.as_str()]);
    let read = client.call("thread/read", json!({"threadId": one}));
    assert_eq!(read["thread"]["sectionEnteredAt"], entered);
    assert_eq!(
        client.call("thread/read", json!({"threadId": two}))["thread"]["section"],
        Value::Null
    );
    let mut loose_now = ids(&client.call("thread/list", json!({"sectionId": null})));
    loose_now.sort();
    let mut expected = vec![two.clone(), loose.clone()];
    expected.sort();
    assert_eq!(loose_now, expected);

    // Deleting the section takes its threads out of it, for good.
    client.call("threadSection/delete", json!({"sectionId": work}));
    refused(
        &client.call_err("threadSection/delete", json!({"sectionId": work})),
        -32602,
        "no section",
    );
    assert_eq!(
        client.call("thread/read", json!({"threadId": three}))["thread"]["section"],
        Value::Null
    );
    client.stop();
    let mut client = server(&home);
    assert_eq!(
        client.call("thread/read", json!({"threadId": three}))["thread"]["section"],
        Value::Null
    );
    assert_eq!(
        ids(&client.call("threadSection/list", json!({}))).len(),
        2,
        "Pinned and Other are left"
    );
    client.stop();
}

#[test]
fn attachments_are_kept_once_per_key_found_by_owner_and_persist() {
    let root = scratch("org-attachments");
    let (home, workspace) = home_and_workspace(&root);
    let mut client = server(&home);
    let first = thread(&mut client, &workspace);
    let second = thread(&mut client, &workspace);
    let pr = json!({"attachmentType": "pullRequest", "identityKey": "github.com/o/r/pull/7"});
    let with = |thread: &str, payload: Value| {
        let mut params = pr.clone();
        params["threadId"] = json!(thread);
        params["payload"] = payload;
        params
    };

    let added = client.call(
        "thread/attachment/add",
        with(&first, json!({"title": "Fix"})),
    );
    assert_eq!(added["outcome"], json!("created"));
    let attachment = added["attachment"].clone();
    assert_eq!(attachment["payload"], json!({"title": "Fix"}));
    assert_eq!(
        client.notification("thread/attachment/updated"),
        json!({"attachmentId": attachment["id"], "attachmentType": "pullRequest",
               "identityKey": "github.com/o/r/pull/7", "operation": "created",
               "threadId": first})
    );
    let again = client.call(
        "thread/attachment/add",
        with(&first, json!({"title": "Other"})),
    );
    assert_eq!(again["outcome"], json!("existing"));
    assert_eq!(again["attachment"], attachment, "answered unchanged");
    client.call("thread/attachment/add", with(&second, Value::Null));
    client.call(
        "thread/attachment/add",
        json!({"threadId": first, "attachmentType": "issue", "identityKey": "7",
               "payload": [1, 2]}),
    );
    let second_added = client.notification("thread/attachment/updated");
    assert_eq!(second_added["threadId"], json!(second));
    let issue_added = client.notification("thread/attachment/updated");
    assert_eq!(issue_added["attachmentType"], json!("issue"));
    assert!(
        seen(&mut client, &["thread/attachment/updated"]).is_empty(),
        "the existing attachment was not announced again"
    );
    refused(
        &client.call_err(
            "thread/attachment/add",
            json!({"threadId": first, "attachmentType": "", "identityKey": "k", "payload": 1}),
        ),
        -32602,
        "attachmentType",
    );
    refused(
        &client.call_err(
            "thread/attachment/add",
            json!({"threadId": "nope", "attachmentType": "t", "identityKey": "k",
                   "payload": 1}),
        ),
        -32600,
        "nope",
    );

    let listed = client.call("thread/attachment/list", json!({"threadId": first}));
    assert_eq!(listed["data"].as_array().expect("data").len(), 2);
    assert_eq!(listed["data"][0], attachment);
    let page = client.call(
        "thread/attachment/list",
        json!({"threadId": first, "limit": 1}),
    );
    let rest = client.call(
        "thread/attachment/list",
        json!({"threadId": first, "limit": 1, "cursor": page["nextCursor"]}),
    );
    assert_eq!(rest["data"][0]["attachmentType"], json!("issue"));
    let owners = |client: &mut Client, archived: Value| {
        let mut query = pr.clone();
        if !archived.is_null() {
            query["archived"] = archived;
        }
        client.call("thread/attachmentOwner/list", query)["data"].clone()
    };
    assert_eq!(
        owners(&mut client, Value::Null),
        json!([{"archived": false, "threadId": first}, {"archived": false, "threadId": second}])
    );
    client.call("thread/archive", json!({"threadId": second}));
    assert_eq!(
        owners(&mut client, json!(true)),
        json!([{"archived": true, "threadId": second}])
    );
    assert_eq!(
        owners(&mut client, json!(false)),
        json!([{"archived": false, "threadId": first}])
    );
    client.stop();

    // Everything is still there for a new server; removing announces the removal.
    let mut client = server(&home);
    let listed = client.call("thread/attachment/list", json!({"threadId": first}));
    assert_eq!(listed["data"][0], attachment);
    assert_eq!(
        owners(&mut client, Value::Null)
            .as_array()
            .expect("owners")
            .len(),
        2
    );
    let mut remove = pr.clone();
    remove["threadId"] = json!(first);
    client.call("thread/attachment/remove", remove.clone());
    assert_eq!(
        client.notification("thread/attachment/updated")["operation"],
        json!("deleted")
    );
    client.call("thread/attachment/remove", remove);
    assert_eq!(
        owners(&mut client, Value::Null),
        json!([{"archived": true, "threadId": second}])
    );
    assert!(
        seen(&mut client, &["thread/attachment/updated"]).is_empty(),
        "removing what is gone announces nothing"
    );
    // A deleted thread holds nothing any more.
    client.call("thread/delete", json!({"threadId": second}));
    assert_eq!(owners(&mut client, Value::Null), json!([]));
    let file = std::fs::read_to_string(home.join("organisation/attachment_owners.json"))
        .expect("owners file");
    assert!(!file.contains(&second), "{file}");
    client.stop();
    let mut client = server(&home);
    let listed = client.call("thread/attachment/list", json!({"threadId": first}));
    assert_eq!(listed["data"].as_array().expect("data").len(), 1);
    client.stop();
}

/// A fixture model whose answer to "slow" streams for a few seconds, and to anything else at
/// once.
fn queue_script(home: &Path) {
    let script = json!({
        "version": 1,
        "deltaDelayMs": 100,
        "responses": [
            {"when": "slow", "steps": [{"type": "message", "deltas": vec!["word "; 30]}]},
            {"steps": [{"type": "message", "deltas": ["done"]}]}
        ]
    });
    std::fs::write(home.join("queue.json"), script.to_string()).expect("write script");
    std::fs::write(
        home.join("config.toml"),
        "model_provider = \"fixture\"\nfixture_script = \"queue.json\"\n",
    )
    .expect("write config");
}

/// `thread/queue/add` of `text` as client message `client_id`; returns the queued id.
fn queue(client: &mut Client, thread: &str, client_id: &str, text: &str) -> String {
    let added = client.call(
        "thread/queue/add",
        json!({"threadId": thread, "clientUserMessageId": client_id,
               "input": [{"type": "text", "text": text}]}),
    );
    assert_eq!(
        added["queuedSubmission"]["clientUserMessageId"],
        json!(client_id)
    );
    added["queuedSubmission"]["id"]
        .as_str()
        .expect("id")
        .to_owned()
}

/// The `clientId` of the user message of the next turn that starts.
fn next_queued_turn(client: &mut Client) -> Value {
    client.notification("turn/started");
    loop {
        let item = client.notification("item/started");
        if item["item"]["type"] == json!("userMessage") {
            return item["item"]["clientId"].clone();
        }
    }
}

#[test]
fn queued_input_runs_turn_after_turn_waits_after_an_interrupt_and_persists() {
    let root = scratch("org-queue");
    let (home, workspace) = home_and_workspace(&root);
    queue_script(&home);
    let mut client = server(&home);
    let thread = thread(&mut client, &workspace);
    let running = client.start_turn(&thread, "slow one");
    client.notification("item/agentMessage/delta");

    let a = queue(&mut client, &thread, "c-a", "first");
    let b = queue(&mut client, &thread, "c-b", "second");
    let c = queue(&mut client, &thread, "c-c", "third");
    let listed = client.call("thread/queue/list", json!({"threadId": thread, "limit": 2}));
    assert_eq!(ids(&listed), [a.as_str(), b.as_str()]);
    assert_eq!(listed["nextCursor"], json!("2"));
    let updated = client.call(
        "thread/queue/update",
        json!({"threadId": thread, "queuedSubmissionId": a,
               "input": [{"type": "text", "text": "first, edited"}],
               "responsesapiClientMetadata": {"k": "v"}}),
    );
    assert_eq!(
        updated["queuedSubmission"]["responsesapiClientMetadata"],
        json!({"k": "v"})
    );
    client.call(
        "thread/queue/reorder",
        json!({"threadId": thread, "queuedSubmissionIds": [c, a, b]}),
    );
    refused(
        &client.call_err(
            "thread/queue/reorder",
            json!({"threadId": thread, "queuedSubmissionIds": [c, a]}),
        ),
        -32602,
        "left out",
    );
    let deleted = client.call(
        "thread/queue/delete",
        json!({"threadId": thread, "queuedSubmissionId": b}),
    );
    assert_eq!(deleted["deleted"], json!(true));
    let gone = client.call(
        "thread/queue/delete",
        json!({"threadId": thread, "queuedSubmissionId": b}),
    );
    assert_eq!(gone["deleted"], json!(false));
    refused(
        &client.call_err(
            "thread/queue/add",
            json!({"threadId": thread, "clientUserMessageId": "x", "input": []}),
        ),
        -32602,
        "input",
    );
    refused(
        &client.call_err("thread/queue/start", json!({"threadId": thread})),
        -32600,
        "running a turn",
    );
    // Three adds, an update, a reorder and a delete.
    for _ in 0..6 {
        assert_eq!(
            client.notification("thread/queue/changed"),
            json!({"threadId": thread})
        );
    }

    // The running turn completes; the queue follows in its order, one turn after the other.
    let ended = client.until_turn_completed();
    assert_eq!(
        ended.last().expect("completed")["params"]["turn"]["id"],
        json!(running)
    );
    assert_eq!(next_queued_turn(&mut client), json!("c-c"));
    client.until_turn_completed();
    assert_eq!(next_queued_turn(&mut client), json!("c-a"));
    client.until_turn_completed();
    let empty = client.call("thread/queue/list", json!({"threadId": thread}));
    assert_eq!(empty["data"], json!([]));
    let read = client.call(
        "thread/read",
        json!({"threadId": thread, "includeTurns": true}),
    );
    let edited = &read["thread"]["turns"][2]["items"][0];
    assert_eq!(edited["clientId"], json!("c-a"));
    assert_eq!(edited["content"][0]["text"], json!("first, edited"));

    // An interrupted turn holds the queue; it is still there after a restart.
    let slow = client.start_turn(&thread, "slow two");
    client.notification("item/agentMessage/delta");
    let d = queue(&mut client, &thread, "c-d", "fourth");
    client.call(
        "turn/interrupt",
        json!({"threadId": thread, "turnId": slow}),
    );
    let stopped = client.until_turn_completed();
    assert_eq!(
        stopped.last().expect("completed")["params"]["turn"]["status"],
        json!("interrupted")
    );
    let held = client.call("thread/queue/list", json!({"threadId": thread}));
    assert_eq!(ids(&held), [d.as_str()]);
    client.stop();

    let mut client = server(&home);
    let held = client.call("thread/queue/list", json!({"threadId": thread}));
    assert_eq!(ids(&held), [d.as_str()]);
    assert_eq!(held["data"][0]["input"][0]["text"], json!("fourth"));
    client.call("thread/resume", json!({"threadId": thread}));
    refused(
        &client.call_err(
            "thread/queue/start",
            json!({"threadId": thread, "queuedSubmissionId": "nope"}),
        ),
        -32600,
        "no queued input nope",
    );
    let started = client.call(
        "thread/queue/start",
        json!({"threadId": thread, "queuedSubmissionId": d}),
    );
    assert_eq!(started["turn"]["status"], json!("inProgress"));
    assert_eq!(
        client.notification("thread/queue/changed")["threadId"],
        json!(thread)
    );
    assert_eq!(next_queued_turn(&mut client), json!("c-d"));
    client.until_turn_completed();
    let empty = client.call("thread/queue/list", json!({"threadId": thread}));
    assert_eq!(empty["data"], json!([]));
    refused(
        &client.call_err("thread/queue/start", json!({"threadId": thread})),
        -32600,
        "no queued input",
    );
    client.stop();
}

#[test]
fn input_queued_on_an_idle_thread_starts_at_once() {
    let root = scratch("org-queue-idle");
    let (home, workspace) = home_and_workspace(&root);
    queue_script(&home);
    let mut client = server(&home);
    let thread = thread(&mut client, &workspace);
    queue(&mut client, &thread, "c-now", "right away");
    assert_eq!(next_queued_turn(&mut client), json!("c-now"));
    let seen = client.until_turn_completed();
    assert_eq!(
        seen.last().expect("completed")["params"]["turn"]["status"],
        json!("completed")
    );
    let empty = client.call("thread/queue/list", json!({"threadId": thread}));
    assert_eq!(empty["data"], json!([]));
    client.stop();
}
