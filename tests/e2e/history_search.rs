//! Reading and searching thread history end to end through the binary: `thread/items/read`,
//! `thread/timeline/list`, `thread/search` and `thread/search/stream` (with
//! `thread/search/partial` and both cancels), `thread/searchOccurrences` and
//! `thread/inject_items`, on the embedded store (some threads written as rollout files by the
//! test) and on PostgreSQL.

use std::path::Path;

use serde_json::{Value, json};

use crate::client::{Client, thread_id};
use crate::common::{fixture_steps, scratch};
use crate::mock_model::{MockModel, Sse};
use crate::model_context::chat_conversation;
use crate::stores::Store;

/// A server on `home` with `args` and `env`, its connection granted the experimental API.
fn start(home: &Path, args: &[&str], env: &[(&str, &str)]) -> Client {
    let mut client = Client::spawn_with_env(home, args, env);
    let answer = client.request(
        "initialize",
        json!({"clientInfo": {"name": "e2e", "version": "0.0.1"},
               "capabilities": {"experimentalApi": true}}),
    );
    assert!(answer.is_ok(), "initialize failed: {answer:?}");
    client.send(&json!({"method": "initialized"}));
    client
}

/// What one written thread holds.
struct Written<'a> {
    id: &'a str,
    created_at: i64,
    name: Option<&'a str>,
    parent: Option<&'a str>,
    archived: bool,
    /// Per turn: (user message, agent message).
    turns: &'a [(&'a str, &'a str)],
}

/// A thread id for the `n`th written thread.
fn written_id(n: u32) -> String {
    format!("00000000-0000-7000-8000-{n:012}")
}

/// Writes the rollout of `thread` under `home` (turn `t<n>`: user message `u<n>`, a reasoning
/// item `r<n>`, agent message `a<n>`).
fn write_thread(home: &Path, thread: &Written) {
    let root = if thread.archived {
        "archived_sessions"
    } else {
        "sessions"
    };
    let dir = home.join(root).join("2026/01/02");
    std::fs::create_dir_all(&dir).expect("sessions dir");
    let path = dir.join(format!("rollout-2026-01-02T03-04-05-{}.jsonl", thread.id));
    let mut lines = vec![json!({"type": "thread", "version": 1, "meta": {
        "id": thread.id, "sessionId": thread.id, "createdAt": thread.created_at,
        "cliVersion": "0.6.0", "source": "vscode", "parentThreadId": thread.parent,
        "settings": {
            "model": "fixture", "modelProvider": "fixture", "cwd": "/tmp",
            "approvalPolicy": "never", "approvalsReviewer": "user",
            "sandbox": {"type": "readOnly", "networkAccess": false}
        }
    }})];
    if let Some(name) = thread.name {
        lines.push(json!({"type": "name", "at": thread.created_at, "name": name}));
    }
    for (n, (user, agent)) in thread.turns.iter().enumerate() {
        let (turn, at) = (format!("t{n}"), thread.created_at + n as i64);
        lines.push(json!({"type": "turnStarted", "at": at, "turnId": turn, "startedAt": at}));
        lines.push(
            json!({"type": "itemCompleted", "at": at, "turnId": turn, "item": {
            "type": "userMessage", "id": format!("u{n}"),
            "content": [{"type": "text", "text": user, "text_elements": []}]}}),
        );
        lines.push(
            json!({"type": "itemCompleted", "at": at, "turnId": turn, "item": {
            "type": "reasoning", "id": format!("r{n}"), "summary": ["thinking"], "content": []}}),
        );
        lines.push(
            json!({"type": "itemCompleted", "at": at, "turnId": turn, "item": {
            "type": "agentMessage", "id": format!("a{n}"), "text": agent}}),
        );
        lines.push(json!({"type": "turnCompleted", "at": at, "turnId": turn,
                          "status": "completed", "completedAt": at, "durationMs": 5}));
    }
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(path, text).expect("write rollout");
}

/// A thread of `turns` turns written under `home` (see [`write_thread`]); returns its id.
fn plain_thread(home: &Path, n: u32, turns: &[(&str, &str)]) -> String {
    let id = written_id(n);
    write_thread(
        home,
        &Written {
            id: &id,
            created_at: 1_767_323_045 + i64::from(n) * 100,
            name: None,
            parent: None,
            archived: false,
            turns,
        },
    );
    id
}

/// Asserts that `error` is an invalid-params error whose message names `field`.
fn names_field(error: &Value, field: &str) {
    assert_eq!(error["code"], json!(-32602), "{error}");
    let message = error["message"].as_str().expect("message");
    assert!(message.contains(field), "{field} not named in: {message}");
}

fn ids_of(list: &[Value], pointer: &str) -> Vec<String> {
    list.iter()
        .map(|e| {
            e.pointer(pointer)
                .and_then(Value::as_str)
                .unwrap_or_else(|| panic!("{pointer} in {e}"))
                .to_owned()
        })
        .collect()
}

/// Every entry of thread `id`'s timeline, walked `limit` at a time.
fn whole_timeline(client: &mut Client, id: &str, limit: u32) -> Vec<Value> {
    let mut entries = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let page = client.call(
            "thread/timeline/list",
            json!({"threadId": id, "limit": limit, "cursor": cursor}),
        );
        assert_eq!(
            page["activeRealtimeSessionAtPageStart"],
            Value::Null,
            "{page}"
        );
        let data = page["data"].as_array().expect("data");
        assert!(data.len() <= limit as usize, "{page}");
        entries.extend(data.iter().cloned());
        cursor = page["nextCursor"].clone();
        if cursor.is_null() {
            return entries;
        }
        assert!(!data.is_empty(), "a next page after an empty one: {page}");
    }
}

/// The entry types of `entries`, with the item type for items.
fn shape(entries: &[Value]) -> Vec<String> {
    entries
        .iter()
        .map(|e| match e["type"].as_str().expect("type") {
            "item" => format!("item:{}", e["item"]["type"].as_str().expect("item type")),
            other => other.to_owned(),
        })
        .collect()
}

fn assert_positions_grow(entries: &[Value]) {
    let positions: Vec<u64> = entries
        .iter()
        .map(|e| e["position"].as_u64().expect("position"))
        .collect();
    assert!(
        positions.windows(2).all(|w| w[0] < w[1]),
        "positions do not grow: {positions:?}"
    );
}

#[test]
fn items_read_returns_the_named_items_of_a_turn_in_stored_order() {
    let home = scratch("history-items-read");
    let id = plain_thread(
        &home,
        1,
        &[("first q", "first a"), ("second q", "second a")],
    );
    let mut client = start(&home, &[], &[]);
    let read = client.call(
        "thread/items/read",
        json!({"threadId": id, "turnId": "t1", "itemIds": ["a1", "u1", "a1"]}),
    );
    let data = read["data"].as_array().expect("data");
    assert_eq!(ids_of(data, "/item/id"), ["u1", "a1"], "{read}");
    assert_eq!(ids_of(data, "/turnId"), ["t1", "t1"]);
    assert_eq!(data[1]["item"]["text"], json!("second a"));

    let unknown_item = client.call_err(
        "thread/items/read",
        json!({"threadId": id, "turnId": "t1", "itemIds": ["a0"]}),
    );
    names_field(&unknown_item, "itemIds");
    let unknown_turn = client.call_err(
        "thread/items/read",
        json!({"threadId": id, "turnId": "t9", "itemIds": ["a1"]}),
    );
    names_field(&unknown_turn, "turnId");
    let none = client.call_err(
        "thread/items/read",
        json!({"threadId": id, "turnId": "t1", "itemIds": []}),
    );
    names_field(&none, "itemIds");
    let too_many: Vec<String> = (0..101).map(|n| format!("x{n}")).collect();
    let refused = client.call_err(
        "thread/items/read",
        json!({"threadId": id, "turnId": "t1", "itemIds": too_many}),
    );
    names_field(&refused, "itemIds");
    let missing = client.call_err(
        "thread/items/read",
        json!({"threadId": written_id(99), "turnId": "t1", "itemIds": ["a1"]}),
    );
    assert_eq!(missing["code"], json!(-32600), "{missing}");
    client.stop();
}

#[test]
fn the_timeline_pages_through_turn_starts_items_and_ends() {
    let home = scratch("history-timeline");
    let id = plain_thread(&home, 1, &[("q0", "a0"), ("q1", "a1"), ("q2", "a2")]);
    let mut client = start(&home, &[], &[]);
    let all = whole_timeline(&mut client, &id, 100);
    let turn = [
        "turnStarted",
        "item:userMessage",
        "item:reasoning",
        "item:agentMessage",
        "turnCompleted",
    ];
    assert_eq!(shape(&all), turn.repeat(3), "{all:?}");
    assert_positions_grow(&all);
    assert_eq!(all[0]["turn_id"], json!("t0"));
    assert_eq!(all[0]["started_at"], json!(1_767_323_145));
    assert_eq!(all[3]["turnId"], json!("t0"));
    assert_eq!(all[4]["status"], json!("completed"));
    assert_eq!(all[4]["duration_ms"], json!(5));
    // Every page size walks the same timeline.
    for limit in [1, 4, 5, 7] {
        assert_eq!(
            whole_timeline(&mut client, &id, limit),
            all,
            "limit {limit}"
        );
    }
    let refused = client.call_err(
        "thread/timeline/list",
        json!({"threadId": id, "cursor": "not a cursor"}),
    );
    names_field(&refused, "cursor");

    // A thread run here: its timeline follows the turn as it is recorded, and is the same
    // after a restart.
    fixture_steps(
        &home,
        json!([{"type": "message", "deltas": ["All ", "done."]}]),
        "",
    );
    client.stop();
    let mut client = start(&home, &[], &[]);
    let live = thread_id(&client.start_thread(json!({"cwd": "/tmp"})));
    client.start_turn(&live, "Do the thing.");
    client.until_turn_completed();
    let entries = whole_timeline(&mut client, &live, 2);
    assert_eq!(
        shape(&entries),
        [
            "turnStarted",
            "item:userMessage",
            "item:agentMessage",
            "turnCompleted"
        ],
        "{entries:?}"
    );
    assert_eq!(entries[2]["item"]["text"], json!("All done."));
    client.stop();
    let mut client = start(&home, &[], &[]);
    assert_eq!(whole_timeline(&mut client, &live, 3), entries);
    assert_eq!(whole_timeline(&mut client, &id, 100), all);
    client.stop();
}

/// The threads of the search tests, written under `home`; returns their ids: named, by
/// preview, by a later agent message, no match, archived, attached to a parent.
fn search_threads(home: &Path) -> [String; 6] {
    let ids: Vec<String> = (1..=6).map(written_id).collect();
    let at = |n: i64| 1_767_323_045 + n * 100;
    let threads = [
        Written {
            id: &ids[0],
            created_at: at(1),
            name: Some("Kiwi planning"),
            parent: None,
            archived: false,
            turns: &[("hello", "hi")],
        },
        Written {
            id: &ids[1],
            created_at: at(2),
            name: None,
            parent: None,
            archived: false,
            turns: &[("tell me about kiwi fruit", "green")],
        },
        Written {
            id: &ids[2],
            created_at: at(3),
            name: None,
            parent: None,
            archived: false,
            turns: &[
                ("weather?", "sunny"),
                ("and birds?", "The KIWI is a bird of New Zealand."),
            ],
        },
        Written {
            id: &ids[3],
            created_at: at(4),
            name: Some("Apples"),
            parent: None,
            archived: false,
            turns: &[("apples", "red")],
        },
        Written {
            id: &ids[4],
            created_at: at(5),
            name: None,
            parent: None,
            archived: true,
            turns: &[("old", "a kiwi from the archive")],
        },
        Written {
            id: &ids[5],
            created_at: at(6),
            name: None,
            parent: Some(&ids[0]),
            archived: false,
            turns: &[("spawned", "a kiwi for the parent")],
        },
    ];
    for thread in &threads {
        write_thread(home, thread);
    }
    [
        ids[0].clone(),
        ids[1].clone(),
        ids[2].clone(),
        ids[3].clone(),
        ids[4].clone(),
        ids[5].clone(),
    ]
}

fn thread_ids(answer: &Value) -> Vec<String> {
    ids_of(answer["data"].as_array().expect("data"), "/thread/id")
}

#[test]
fn search_finds_names_previews_and_messages_and_pages() {
    let home = scratch("history-search");
    let [named, preview, message, _apples, archived, attached] = search_threads(&home);
    let mut client = start(&home, &[], &[]);

    let found = client.call("thread/search", json!({"searchTerm": "KiWi"}));
    assert_eq!(
        thread_ids(&found),
        [message.as_str(), preview.as_str(), named.as_str()],
        "{found}"
    );
    assert_eq!(found["nextCursor"], Value::Null);
    let snippets: Vec<&str> = found["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|r| r["snippet"].as_str().expect("snippet"))
        .collect();
    assert_eq!(
        snippets,
        [
            "The KIWI is a bird of New Zealand.",
            "tell me about kiwi fruit",
            "Kiwi planning"
        ]
    );
    assert!(
        found["data"][0]["thread"]["turns"]
            .as_array()
            .expect("turns")
            .is_empty()
    );

    let ascending = client.call(
        "thread/search",
        json!({"searchTerm": "kiwi", "sortDirection": "asc"}),
    );
    assert_eq!(
        thread_ids(&ascending),
        [named.as_str(), preview.as_str(), message.as_str()]
    );
    let in_archive = client.call(
        "thread/search",
        json!({"searchTerm": "kiwi", "archived": true}),
    );
    assert_eq!(thread_ids(&in_archive), [archived.as_str()]);
    let with_attached = client.call(
        "thread/search",
        json!({"searchTerm": "kiwi", "includeAttachedThreads": true}),
    );
    assert_eq!(
        thread_ids(&with_attached),
        [
            attached.as_str(),
            message.as_str(),
            preview.as_str(),
            named.as_str()
        ]
    );
    let nothing = client.call("thread/search", json!({"searchTerm": "durian"}));
    assert!(thread_ids(&nothing).is_empty(), "{nothing}");
    assert_eq!(nothing["backwardsCursor"], Value::Null);

    // One at a time, following the cursors.
    let mut walked = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let page = client.call(
            "thread/search",
            json!({"searchTerm": "kiwi", "limit": 1, "sortKey": "updated_at", "cursor": cursor}),
        );
        walked.extend(thread_ids(&page));
        cursor = page["nextCursor"].clone();
        if cursor.is_null() {
            break;
        }
    }
    assert_eq!(walked, [message.as_str(), preview.as_str(), named.as_str()]);

    // The streaming form answers the same, after partials that name the request.
    let id = client.send_request("thread/search/stream", json!({"searchTerm": "kiwi"}));
    let streamed = client.answer(&id).expect("streamed search");
    assert_eq!(streamed, found);
    let partial: Vec<Value> = client
        .backlog()
        .into_iter()
        .filter(|m| m["method"] == json!("thread/search/partial"))
        .collect();
    assert!(!partial.is_empty(), "no thread/search/partial");
    let mut seen = Vec::new();
    for message in &partial {
        assert_eq!(message["params"]["requestId"], id, "{message}");
        seen.extend(thread_ids(&message["params"]));
    }
    seen.sort();
    let mut expected = thread_ids(&found);
    expected.sort();
    assert_eq!(seen, expected);

    names_field(
        &client.call_err("thread/search", json!({"searchTerm": "  "})),
        "searchTerm",
    );
    names_field(
        &client.call_err(
            "thread/search",
            json!({"searchTerm": "kiwi", "cursor": "nope"}),
        ),
        "cursor",
    );
    client.stop();
}

#[test]
fn searches_in_flight_are_stopped_by_their_own_kind_of_cancel() {
    let home = scratch("history-search-cancel");
    for n in 1..=12 {
        plain_thread(&home, n, &[("find the marker here", "ok")]);
    }
    // Each thread looked at takes a while, so the searches are still running when cancelled.
    let mut client = start(&home, &[], &[("AGENTWIRE_TEST_SEARCH_DELAY_MS", "400")]);
    let plain = client.send_request("thread/search", json!({"searchTerm": "marker"}));
    let stream = client.send_request("thread/search/stream", json!({"searchTerm": "marker"}));
    let partial = client.notification("thread/search/partial");
    assert_eq!(partial["requestId"], stream);
    assert!(!thread_ids(&partial).is_empty(), "{partial}");

    // A cancel of the other kind, or of a request nobody sent, is acknowledged and stops
    // nothing.
    assert_eq!(
        client.call("thread/search/cancel", json!({"requestId": stream})),
        json!({})
    );
    assert_eq!(
        client.call(
            "thread/search/stream/cancel",
            json!({"requestId": "nobody"})
        ),
        json!({})
    );
    assert_eq!(
        client.call("thread/search/stream/cancel", json!({"requestId": stream})),
        json!({})
    );
    assert_eq!(
        client.call("thread/search/cancel", json!({"requestId": plain})),
        json!({})
    );
    for id in [&stream, &plain] {
        let error = client.answer(id).expect_err("the search was cancelled");
        assert_eq!(error["code"], json!(-32800), "{error}");
        assert!(
            error["message"]
                .as_str()
                .expect("message")
                .contains("cancelled"),
            "{error}"
        );
    }
    client.stop();
}

#[test]
fn occurrences_walk_every_match_in_message_order() {
    let home = scratch("history-occurrences");
    let id = plain_thread(
        &home,
        1,
        &[
            ("Apple and apple pie", "no APPLES here, just an apple"),
            ("nothing", "😀 one more apple at the end"),
        ],
    );
    let mut client = start(&home, &[], &[]);
    let all = client.call(
        "thread/searchOccurrences",
        json!({"threadId": id, "searchTerm": "apple"}),
    );
    assert_eq!(all["nextCursor"], Value::Null);
    let data = all["data"].as_array().expect("data").clone();
    assert_eq!(
        ids_of(&data, "/itemId"),
        ["u0", "u0", "a0", "a0", "a1"],
        "{all}"
    );
    assert_eq!(ids_of(&data, "/turnId"), ["t0", "t0", "t0", "t0", "t1"]);
    for occurrence in &data {
        let snippet: Vec<u16> = occurrence["snippet"]
            .as_str()
            .expect("snippet")
            .encode_utf16()
            .collect();
        let range = &occurrence["snippetMatchRange"];
        let (start, end) = (
            range["start"].as_u64().expect("start") as usize,
            range["end"].as_u64().expect("end") as usize,
        );
        let matched = String::from_utf16(&snippet[start..end]).expect("utf-16");
        assert_eq!(matched.to_lowercase(), "apple", "{occurrence}");
    }
    // The turn cursor opens `thread/turns/list` at the occurrence's turn.
    let turns = client.call(
        "thread/turns/list",
        json!({"threadId": id, "cursor": data[4]["turnCursor"], "limit": 1, "sortDirection": "asc"}),
    );
    assert_eq!(turns["data"][0]["id"], json!("t1"), "{turns}");

    let mut walked = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let page = client.call(
            "thread/searchOccurrences",
            json!({"threadId": id, "searchTerm": "APPLE", "limit": 2, "cursor": cursor}),
        );
        walked.extend(page["data"].as_array().expect("data").iter().cloned());
        cursor = page["nextCursor"].clone();
        if cursor.is_null() {
            break;
        }
    }
    assert_eq!(walked, data);

    names_field(
        &client.call_err(
            "thread/searchOccurrences",
            json!({"threadId": id, "searchTerm": ""}),
        ),
        "searchTerm",
    );
    names_field(
        &client.call_err(
            "thread/searchOccurrences",
            json!({"threadId": id, "searchTerm": "apple", "cursor": "zzz"}),
        ),
        "cursor",
    );
    let unknown = client.call_err(
        "thread/searchOccurrences",
        json!({"threadId": written_id(77), "searchTerm": "apple"}),
    );
    assert_eq!(unknown["code"], json!(-32600), "{unknown}");
    client.stop();
}

/// Points `home`'s default provider at `mock`.
fn configure_mock(home: &Path, mock: &MockModel) {
    let config = format!(
        "model_provider = \"mock\"\nmodel = \"mock-model\"\n\n[model_providers.mock]\n\
         name = \"mock model\"\nbase_url = \"{}\"\nmodel_context_window = 32768\n\
         request_max_retries = 0\n",
        mock.base_url()
    );
    std::fs::write(home.join("config.toml"), config).expect("write config");
}

/// The position in `conversation` of the message with `role` and `content`.
fn position_of(conversation: &[Value], role: &str, content: &str) -> usize {
    conversation
        .iter()
        .position(|m| m["role"] == json!(role) && m["content"] == json!(content))
        .unwrap_or_else(|| panic!("no {role} message {content:?} in {conversation:#?}"))
}

#[test]
fn injected_items_reach_later_model_calls_and_survive_a_restart() {
    let mock = MockModel::start(vec![Sse::answer("First answer.")]);
    let home = scratch("history-inject");
    configure_mock(&home, &mock);
    let mut client = Client::start(&home);
    let thread = thread_id(&client.start_thread(json!({"cwd": "/tmp"})));
    client.start_turn(&thread, "First question.");
    client.until_turn_completed();

    let injected = client.call(
        "thread/inject_items",
        json!({"threadId": thread, "items": [
            {"type": "message", "role": "user",
             "content": [{"type": "input_text", "text": "Side question: what is 2+2?"}]},
            {"type": "message", "role": "assistant",
             "content": [{"type": "output_text", "text": "Side answer: 4."}]},
            {"type": "reasoning", "summary": []}
        ]}),
    );
    assert_eq!(injected, json!({}));

    mock.push(Sse::answer("Second answer."));
    client.start_turn(&thread, "Second question.");
    client.until_turn_completed();
    let second = chat_conversation(&mock.wait_requests(2)[1].body);
    let first_answer = position_of(&second, "assistant", "First answer.");
    let side_question = position_of(&second, "user", "Side question: what is 2+2?");
    let side_answer = position_of(&second, "assistant", "Side answer: 4.");
    let next_question = position_of(&second, "user", "Second question.");
    assert!(
        first_answer < side_question && side_question < side_answer && side_answer < next_question,
        "{second:#?}"
    );

    // The thread's own history does not show them.
    let read = client.call(
        "thread/read",
        json!({"threadId": thread, "includeTurns": true}),
    );
    let turns = read["thread"]["turns"].as_array().expect("turns");
    assert_eq!(turns.len(), 2, "{read}");
    assert!(!read.to_string().contains("Side question"), "{read}");

    let errors = [
        (json!({"threadId": thread, "items": []}), "items"),
        (
            json!({"threadId": thread, "items": [{"type": "message", "role": "user", "content": "x"},
                                                  {"type": "web_search_call"}]}),
            "items[1]",
        ),
        (
            json!({"threadId": thread, "items": [{"type": "message", "role": "tool", "content": "x"}]}),
            "items[0]",
        ),
    ];
    for (params, field) in errors {
        names_field(&client.call_err("thread/inject_items", params), field);
    }
    let unknown = client.call_err(
        "thread/inject_items",
        json!({"threadId": written_id(5), "items": [{"type": "reasoning"}]}),
    );
    assert_eq!(unknown["code"], json!(-32600), "{unknown}");
    client.stop();

    // After a restart, a thread resumed from its rollout still carries them.
    let mut client = Client::start(&home);
    client.call("thread/resume", json!({"threadId": thread}));
    mock.push(Sse::answer("Third answer."));
    client.start_turn(&thread, "Third question.");
    client.until_turn_completed();
    let third = chat_conversation(&mock.wait_requests(3)[2].body);
    let side_answer = position_of(&third, "assistant", "Side answer: 4.");
    assert!(
        position_of(&third, "assistant", "First answer.") < side_answer
            && side_answer < position_of(&third, "user", "Second question."),
        "{third:#?}"
    );
    client.stop();
}

#[test]
fn postgres_serves_the_same_history_search_and_injection() {
    let store = Store::postgres("history_search");
    let home = scratch("history-postgres");
    fixture_steps(
        &home,
        json!([{"type": "message", "deltas": ["The answer mentions ", "a walrus."]}]),
        "",
    );
    let mut client = start(&home, &store.args(), &[]);
    let otters = thread_id(&client.start_thread(json!({"cwd": "/tmp"})));
    client.start_turn(&otters, "A first question about otters.");
    client.until_turn_completed();
    let other = thread_id(&client.start_thread(json!({"cwd": "/tmp"})));
    client.start_turn(&other, "Something unrelated.");
    client.until_turn_completed();
    client.call(
        "thread/inject_items",
        json!({"threadId": otters, "items": [
            {"type": "message", "role": "user", "content": "an injected otter note"}]}),
    );

    let walrus = client.call("thread/search", json!({"searchTerm": "WALRUS"}));
    assert_eq!(
        thread_ids(&walrus),
        [other.as_str(), otters.as_str()],
        "{walrus}"
    );
    assert_eq!(
        walrus["data"][0]["snippet"],
        json!("The answer mentions a walrus.")
    );
    let by_preview = client.call("thread/search", json!({"searchTerm": "otters"}));
    assert_eq!(thread_ids(&by_preview), [otters.as_str()]);
    // What was injected is for the model, not a message of the thread.
    let injected = client.call("thread/search", json!({"searchTerm": "injected otter"}));
    assert!(thread_ids(&injected).is_empty(), "{injected}");

    let occurrences = client.call(
        "thread/searchOccurrences",
        json!({"threadId": otters, "searchTerm": "walrus"}),
    );
    assert_eq!(occurrences["data"].as_array().expect("data").len(), 1);
    let turn_id = occurrences["data"][0]["turnId"]
        .as_str()
        .expect("turn")
        .to_owned();
    let item_id = occurrences["data"][0]["itemId"]
        .as_str()
        .expect("item")
        .to_owned();

    let timeline = whole_timeline(&mut client, &otters, 2);
    assert_eq!(
        shape(&timeline),
        [
            "turnStarted",
            "item:userMessage",
            "item:agentMessage",
            "turnCompleted"
        ],
        "{timeline:?}"
    );
    assert_positions_grow(&timeline);
    let read = client.call(
        "thread/items/read",
        json!({"threadId": otters, "turnId": turn_id, "itemIds": [item_id]}),
    );
    assert_eq!(
        read["data"][0]["item"]["text"],
        json!("The answer mentions a walrus.")
    );
    client.stop();

    // Another worker with a home of its own sees the same.
    let elsewhere = scratch("history-postgres-2");
    fixture_steps(
        &elsewhere,
        json!([{"type": "message", "deltas": ["ok"]}]),
        "",
    );
    let mut client = start(&elsewhere, &store.args(), &[]);
    assert_eq!(whole_timeline(&mut client, &otters, 3), timeline);
    let again = client.call("thread/search", json!({"searchTerm": "WALRUS"}));
    assert_eq!(thread_ids(&again), thread_ids(&walrus));
    assert_eq!(again["data"][1]["snippet"], walrus["data"][1]["snippet"]);
    client.stop();
}
