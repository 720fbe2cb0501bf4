//! The runtime's behaviour over real pipes: handshake, errors, limits, concurrency, ordering,
//! server→client requests and shutdown.

use std::time::Duration;

use agentwire_protocol::method::Method;
use agentwire_protocol::methods::{
    CollaborationModeList, CommandExec, CommandExecutionRequestApproval, Initialize,
    ServerRequestResolved, ThreadList, ThreadNameUpdated, ThreadRead, ThreadSetName, Warning,
};
use agentwire_protocol::{WarningNotification, methods};
use serde_json::{Value, json};

use crate::harness::{Harness, error, home};
use crate::scripted::ExperimentalProbe;

const INVALID_REQUEST: i64 = -32600;

fn client_info() -> Value {
    json!({ "clientInfo": { "name": "test_client", "version": "1.2.3" } })
}

/// The `method` of each message, in order.
fn methods_of(messages: &[Value]) -> Vec<&str> {
    messages
        .iter()
        .map(|m| m["method"].as_str().unwrap_or("<not a notification>"))
        .collect()
}

#[test]
fn requests_before_initialize_are_refused_and_notifications_ignored() {
    let mut h = Harness::start();
    h.send(&json!({ "method": "initialized" }));
    let answer = h.request(json!(1), ThreadList::NAME, json!({}));
    assert_eq!(answer, error(json!(1), INVALID_REQUEST, "Not initialized"));
    // Even an unknown method is "not initialized" first.
    let answer = h.request(json!(2), "no/such", json!({}));
    assert_eq!(answer, error(json!(2), INVALID_REQUEST, "Not initialized"));
    assert_eq!(h.state.log(), Vec::<String>::new());
    assert_eq!(h.finish(), Vec::<Value>::new());
}

#[test]
fn initialize_answers_who_the_server_is_once() {
    let mut h = Harness::start();
    let answer = h.request(json!(1), Initialize::NAME, client_info());
    assert_eq!(answer["id"], json!(1));
    let result = answer["result"].as_object().expect("a result object");
    let mut keys: Vec<&str> = result.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        ["codexHome", "platformFamily", "platformOs", "userAgent"]
    );
    let user_agent = result["userAgent"].as_str().expect("userAgent is a string");
    assert!(
        user_agent.starts_with(&format!("test_client/{} (", env!("CARGO_PKG_VERSION"))),
        "{user_agent}"
    );
    assert!(
        user_agent.ends_with(" (test_client; 1.2.3)"),
        "{user_agent}"
    );
    assert_eq!(result["codexHome"], json!(home().to_string_lossy()));
    assert_eq!(result["platformFamily"], json!(std::env::consts::FAMILY));
    assert_eq!(result["platformOs"], json!(std::env::consts::OS));

    let again = h.request(json!(2), Initialize::NAME, client_info());
    assert_eq!(
        again,
        error(json!(2), INVALID_REQUEST, "Already initialized")
    );
    // The connection is still initialized and serving.
    let list = h.request(json!(3), ThreadList::NAME, json!({}));
    assert_eq!(
        list,
        json!({ "id": 3, "result": { "data": [], "nextCursor": null, "backwardsCursor": null } })
    );
    assert_eq!(h.finish(), Vec::<Value>::new());
}

#[test]
fn invalid_initialize_params_leave_the_connection_uninitialized() {
    let mut h = Harness::start();
    let answer = h.request(
        json!(1),
        Initialize::NAME,
        json!({ "clientInfo": { "name": 5 } }),
    );
    assert_eq!(answer["error"]["code"], json!(-32602), "{answer}");
    assert_eq!(answer["error"]["data"]["method"], json!(Initialize::NAME));
    let answer = h.request(json!(2), ThreadList::NAME, json!({}));
    assert_eq!(answer, error(json!(2), INVALID_REQUEST, "Not initialized"));
    h.initialize(None);
    h.finish();
}

#[test]
fn unknown_methods_answer_method_not_found() {
    let mut h = Harness::start();
    h.initialize(None);
    let answer = h.request(json!(1), "no/such", json!({}));
    assert_eq!(answer, error(json!(1), -32601, "Method not found: no/such"));
    // Methods of the table that the client may not send are unknown too.
    for (id, name) in [
        (2, CommandExecutionRequestApproval::NAME),
        (3, Warning::NAME),
        (4, "initialized"),
    ] {
        let answer = h.request(json!(id), name, json!({}));
        assert_eq!(
            answer,
            error(json!(id), -32601, &format!("Method not found: {name}"))
        );
    }
    // A method the handler does not implement answers method-not-found through the trait.
    let answer = h.request(json!(5), methods::ModelList::NAME, json!({}));
    assert_eq!(
        answer,
        error(json!(5), -32601, "Method not found: model/list")
    );
    h.finish();
}

#[test]
fn invalid_params_name_the_pointer() {
    let mut h = Harness::start();
    h.initialize(None);
    let answer = h.request(json!(1), ThreadRead::NAME, json!({ "threadId": 42 }));
    let error = &answer["error"];
    assert_eq!(answer["id"], json!(1));
    assert_eq!(error["code"], json!(-32602));
    assert_eq!(
        error["message"],
        json!("Invalid params for thread/read: /threadId: 42 is not of type \"string\"")
    );
    assert_eq!(error["data"]["method"], json!(ThreadRead::NAME));
    let errors = error["data"]["errors"].as_array().expect("errors array");
    assert_eq!(errors[0]["pointer"], json!("/threadId"));
    assert!(errors[0]["message"].is_string());

    // Missing params of a method that needs them, and `null` ones.
    h.send(&json!({ "id": 2, "method": ThreadRead::NAME }));
    let answer = h.answer_to(&json!(2));
    assert_eq!(answer["error"]["code"], json!(-32602));
    assert_eq!(
        answer["error"]["message"],
        json!("Invalid params for thread/read: missing `params`")
    );
    assert_eq!(answer["error"]["data"]["errors"][0]["pointer"], json!(""));
    let answer = h.request(json!(2), ThreadRead::NAME, Value::Null);
    assert_eq!(
        answer["error"]["message"],
        json!("Invalid params for thread/read: null is not of type \"object\"")
    );

    // Missing required member.
    let answer = h.request(json!(3), ThreadSetName::NAME, json!({ "threadId": "t" }));
    assert_eq!(answer["error"]["code"], json!(-32602), "{answer}");
    let errors = answer["error"]["data"]["errors"]
        .as_array()
        .expect("errors array");
    assert!(
        errors.iter().any(|e| e["pointer"] == json!("")
            && e["message"].as_str().is_some_and(|m| m.contains("name"))),
        "{answer}"
    );
    // The handler never saw any of them.
    assert_eq!(h.state.log(), Vec::<String>::new());
    h.finish();
}

#[test]
fn experimental_methods_need_the_capability() {
    let mut h = Harness::start();
    h.initialize(None);
    let answer = h.request(json!(1), CollaborationModeList::NAME, json!({}));
    assert_eq!(
        answer,
        error(
            json!(1),
            INVALID_REQUEST,
            "collaborationMode/list requires experimentalApi capability"
        )
    );
    h.finish();

    let mut h = Harness::start();
    h.initialize(Some(json!({ "experimentalApi": true })));
    let answer = h.request(json!(1), CollaborationModeList::NAME, json!({}));
    assert_eq!(answer, json!({ "id": 1, "result": { "data": [] } }));
    h.finish();
}

#[test]
fn opted_out_notifications_are_not_sent() {
    let mut h = Harness::start();
    h.initialize(Some(
        json!({ "optOutNotificationMethods": [ThreadNameUpdated::NAME] }),
    ));
    let params = json!({ "threadId": "t1", "name": "notify" });
    let answer = h.request(json!(1), ThreadSetName::NAME, params.clone());
    assert_eq!(answer, json!({ "id": 1, "result": {} }));
    // Notifications are written before the answer, so everything sent is already here.
    let sent = h.take_stash();
    assert_eq!(methods_of(&sent), [Warning::NAME], "{sent:?}");
    assert_eq!(
        sent[0]["params"],
        json!({ "threadId": "t1", "message": "scripted warning" })
    );
    h.finish();

    // Without the opt-out both arrive, in the order the handler sent them.
    let mut h = Harness::start();
    h.initialize(Some(
        json!({ "optOutNotificationMethods": ["thread/name/updatedX", ""] }),
    ));
    h.request(json!(1), ThreadSetName::NAME, params);
    let sent = h.take_stash();
    assert_eq!(
        methods_of(&sent),
        [ThreadNameUpdated::NAME, Warning::NAME],
        "{sent:?}"
    );
    h.finish();
}

#[test]
fn experimental_notifications_reach_only_experimental_connections() {
    // The check uses a probe notification declared experimental by the test, so that it does
    // not depend on which notifications of the method table are experimental.

    let params = json!({ "threadId": "t1", "name": "notify" });
    let mut h = Harness::start();
    h.initialize(None);
    h.request(json!(1), ThreadSetName::NAME, params.clone());
    let sent = h.take_stash();
    assert_eq!(
        methods_of(&sent),
        [ThreadNameUpdated::NAME, Warning::NAME],
        "{sent:?}"
    );
    h.finish();

    let mut h = Harness::start();
    h.initialize(Some(json!({ "experimentalApi": true })));
    h.request(json!(1), ThreadSetName::NAME, params);
    let sent = h.take_stash();
    assert_eq!(
        methods_of(&sent),
        [
            ThreadNameUpdated::NAME,
            Warning::NAME,
            ExperimentalProbe::NAME
        ],
        "{sent:?}"
    );
    h.finish();
}

#[test]
fn no_notification_before_initialize() {
    let mut h = Harness::start();
    let warning = WarningNotification::builder()
        .message("broadcast".to_owned())
        .build();
    // Broadcasts write synchronously: anything sent now would come before the next answer.
    h.server().hub().broadcast::<Warning>(&warning);
    h.server().hub().broadcast::<ExperimentalProbe>(&warning);
    let answer = h.request(json!(1), ThreadList::NAME, json!({}));
    assert_eq!(answer, error(json!(1), INVALID_REQUEST, "Not initialized"));
    h.initialize(None);
    // The connection counts as initialized once the server has read past `initialize`: one
    // more round trip makes sure of it.
    h.request(json!(2), ThreadList::NAME, json!({}));
    assert_eq!(h.take_stash(), Vec::<Value>::new());
    h.server().hub().broadcast::<Warning>(&warning);
    h.server().hub().broadcast::<ExperimentalProbe>(&warning);
    h.request(json!(3), ThreadList::NAME, json!({}));
    let sent = h.take_stash();
    assert_eq!(methods_of(&sent), [Warning::NAME], "{sent:?}");
    h.finish();
}

#[test]
fn malformed_lines_get_errors_and_the_connection_lives_on() {
    let mut h = Harness::start();
    h.initialize(None);
    let parse_error = |message: &Value| {
        assert_eq!(message["id"], Value::Null, "{message}");
        assert_eq!(message["error"]["code"], json!(-32700), "{message}");
        let text = message["error"]["message"].as_str().expect("a message");
        assert!(text.starts_with("Parse error: "), "{text}");
    };
    h.send_raw(b"\x00\xff\xfe garbage \x80\n");
    parse_error(&h.next());
    h.send_line(r#"{"id":1,"method":"thread/list","params":{"#);
    parse_error(&h.next());
    h.send_line("{\"id\":1,\"method\":\"thread/list\"}}");
    parse_error(&h.next());
    h.send_line(&"[".repeat(10_000));
    parse_error(&h.next());

    let expected = [
        (
            "[1,2,3]",
            error(
                Value::Null,
                INVALID_REQUEST,
                "Invalid request: expected a JSON object",
            ),
        ),
        (
            "\"just a string\"",
            error(
                Value::Null,
                INVALID_REQUEST,
                "Invalid request: expected a JSON object",
            ),
        ),
        (
            "null",
            error(
                Value::Null,
                INVALID_REQUEST,
                "Invalid request: expected a JSON object",
            ),
        ),
        (
            r#"{"id":{},"method":"thread/list","params":{}}"#,
            error(
                Value::Null,
                INVALID_REQUEST,
                "Invalid request: `id` must be a string or an integer",
            ),
        ),
        (
            r#"{"id":1.5,"method":"thread/list","params":{}}"#,
            error(
                Value::Null,
                INVALID_REQUEST,
                "Invalid request: `id` must be a string or an integer",
            ),
        ),
        (
            r#"{"id":null,"method":"thread/list","params":{}}"#,
            error(
                Value::Null,
                INVALID_REQUEST,
                "Invalid request: `id` must be a string or an integer",
            ),
        ),
        (
            r#"{"id":18446744073709551615,"method":"thread/list","params":{}}"#,
            error(
                Value::Null,
                INVALID_REQUEST,
                "Invalid request: `id` must be a string or an integer",
            ),
        ),
        (
            r#"{"id":7,"method":5}"#,
            error(
                json!(7),
                INVALID_REQUEST,
                "Invalid request: `method` must be a string",
            ),
        ),
        (
            "{}",
            error(
                Value::Null,
                INVALID_REQUEST,
                "Invalid request: no `method` and no `id`",
            ),
        ),
        (
            r#"{"id":8,"result":{},"error":{"code":1,"message":"x"}}"#,
            error(
                json!(8),
                INVALID_REQUEST,
                "Invalid request: a response needs exactly one of `result` and `error`",
            ),
        ),
        (
            r#"{"id":9}"#,
            error(
                json!(9),
                INVALID_REQUEST,
                "Invalid request: a response needs exactly one of `result` and `error`",
            ),
        ),
    ];
    for (line, answer) in expected {
        h.send_line(line);
        assert_eq!(h.next(), answer, "for {line}");
    }
    // An answer to a server request nobody made, and notifications nobody knows, are ignored.
    h.send_line(r#"{"id":12345,"result":{}}"#);
    h.send_line(r#"{"method":"no/such/notification","params":{}}"#);
    h.send_line("   \t ");
    h.send_line("");
    let answer = h.request(json!(10), ThreadList::NAME, json!({}));
    assert!(answer.get("result").is_some(), "{answer}");
    assert_eq!(h.take_stash(), Vec::<Value>::new());
    // A last line without a newline is still served at end of input.
    h.send_raw(br#"{"id":11,"method":"thread/list","params":{}}"#);
    let rest = h.finish();
    assert_eq!(rest.len(), 1, "{rest:?}");
    assert_eq!(rest[0]["id"], json!(11));
}

#[test]
fn jsonrpc_member_is_accepted_and_not_echoed() {
    let mut h = Harness::start();
    h.send_line(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"c","version":"1"}}}"#,
    );
    let answer = h.next();
    assert!(answer.get("result").is_some(), "{answer}");
    assert!(answer.get("jsonrpc").is_none(), "{answer}");
    h.send_line(r#"{"jsonrpc":"2.0","method":"initialized"}"#);
    h.send_line(r#"{"jsonrpc":"2.0","id":2,"method":"thread/list","params":{}}"#);
    let answer = h.next();
    assert_eq!(
        answer,
        json!({ "id": 2, "result": { "data": [], "nextCursor": null, "backwardsCursor": null } })
    );
    h.send_line(r#"{"jsonrpc":"2.0","id":3,"method":"no/such"}"#);
    assert_eq!(
        h.next(),
        error(json!(3), -32601, "Method not found: no/such")
    );
    h.finish();
}

#[test]
fn ids_are_echoed_exactly() {
    let mut h = Harness::start();
    h.initialize(None);
    let ids = [
        json!(0),
        json!(-5),
        json!(i64::MAX),
        json!(i64::MIN),
        json!("1"),
        json!(""),
        json!("abc"),
        json!("ü \" \\ \n 😀"),
        json!("x".repeat(1000)),
    ];
    for id in &ids {
        let answer = h.request(id.clone(), ThreadList::NAME, json!({}));
        assert_eq!(&answer["id"], id);
        assert!(answer.get("result").is_some(), "{answer}");
        let answer = h.request(id.clone(), "no/such", json!({}));
        assert_eq!(
            answer,
            error(id.clone(), -32601, "Method not found: no/such")
        );
    }
    // The same id in both forms stays apart.
    h.send(&json!({ "id": 77, "method": "no/such" }));
    h.send(&json!({ "id": "77", "method": "no/such" }));
    assert_eq!(h.next()["id"], json!(77));
    assert_eq!(h.next()["id"], json!("77"));
    h.finish();
}

#[test]
fn oversized_lines_are_refused_and_the_next_line_is_served() {
    let mut h = Harness::start_with(|c| c.max_message_bytes = 256);
    h.initialize(None);
    let big = format!(
        r#"{{"id":1,"method":"thread/read","params":{{"threadId":"{}"}}}}"#,
        "x".repeat(1000)
    );
    h.send_line(&big);
    assert_eq!(
        h.next(),
        error(
            Value::Null,
            INVALID_REQUEST,
            &format!(
                "Message of {} bytes exceeds the limit of 256 bytes",
                big.len()
            )
        )
    );
    let answer = h.request(json!(2), ThreadList::NAME, json!({}));
    assert!(answer.get("result").is_some(), "{answer}");

    // An oversized line written in pieces, with a good line right behind it in the same write.
    let mut pieces = big.into_bytes();
    let tail = pieces.split_off(700);
    h.send_raw(&pieces);
    let mut rest = tail;
    rest.extend_from_slice(b"\n{\"id\":3,\"method\":\"thread/list\",\"params\":{}}\n");
    h.send_raw(&rest);
    assert_eq!(h.next()["error"]["code"], json!(INVALID_REQUEST));
    assert_eq!(h.next()["id"], json!(3));
    // Exactly the limit is fine.
    let pad = 256 - r#"{"id":4,"method":"thread/list","params":{"cursor":""}}"#.len();
    let exact = format!(
        r#"{{"id":4,"method":"thread/list","params":{{"cursor":"{}"}}}}"#,
        "c".repeat(pad)
    );
    assert_eq!(exact.len(), 256);
    h.send_line(&exact);
    assert!(h.next().get("result").is_some());
    h.finish();
}

#[test]
fn a_flood_beyond_the_in_flight_limit_is_refused_with_overloaded() {
    const LIMIT: usize = 3;
    const SENT: usize = 40;
    let mut h = Harness::start_with(|c| c.max_in_flight_requests = LIMIT);
    h.initialize(None);
    // Pipelined in one write: the slow ones hold every slot while the rest arrive.
    let mut flood = String::new();
    for i in 0..SENT {
        let request = json!({
            "id": i,
            "method": ThreadRead::NAME,
            "params": { "threadId": format!("sleep:1000:{i}") },
        });
        flood.push_str(&request.to_string());
        flood.push('\n');
    }
    h.send_raw(flood.as_bytes());
    let mut answers = Vec::new();
    for _ in 0..SENT {
        answers.push(h.next());
    }
    let mut ids: Vec<u64> = answers
        .iter()
        .map(|a| a["id"].as_u64().expect("an integer id"))
        .collect();
    ids.sort_unstable();
    assert_eq!(
        ids,
        (0..SENT as u64).collect::<Vec<_>>(),
        "each answered once"
    );
    let served: Vec<&Value> = answers
        .iter()
        .filter(|a| a.get("result").is_some())
        .collect();
    let refused: Vec<&Value> = answers
        .iter()
        .filter(|a| a.get("error").is_some())
        .collect();
    assert_eq!(served.len(), LIMIT);
    for answer in &refused {
        assert_eq!(
            **answer,
            error(
                answer["id"].clone(),
                -32001,
                "Server overloaded; retry later."
            )
        );
    }
    // The first LIMIT took the slots; the refusals came out before any slow answer.
    let mut served_ids: Vec<u64> = served
        .iter()
        .map(|a| a["id"].as_u64().unwrap_or(99))
        .collect();
    served_ids.sort_unstable();
    assert_eq!(served_ids, (0..LIMIT as u64).collect::<Vec<_>>());
    assert!(
        answers[..SENT - LIMIT]
            .iter()
            .all(|a| a.get("error").is_some())
    );
    // Once the slots are free, requests are served again.
    let answer = h.request(json!("after"), ThreadList::NAME, json!({}));
    assert!(answer.get("result").is_some(), "{answer}");
    assert_eq!(h.take_stash(), Vec::<Value>::new());
    assert_eq!(h.finish(), Vec::<Value>::new());
}

#[test]
fn a_panicking_handler_answers_internal_error_and_serving_goes_on() {
    let mut h = Harness::start();
    h.initialize(None);
    let answer = h.request(json!(1), ThreadRead::NAME, json!({ "threadId": "panic" }));
    assert_eq!(
        answer,
        error(
            json!(1),
            -32603,
            "Internal error: the handler for thread/read failed"
        )
    );
    // A panic inside an ordered thread does not stall the requests queued behind it.
    h.send(&json!({ "id": 2, "method": ThreadSetName::NAME, "params": { "threadId": "p", "name": "panic" } }));
    h.send(&json!({ "id": 3, "method": ThreadSetName::NAME, "params": { "threadId": "p", "name": "ok" } }));
    assert_eq!(h.next()["error"]["code"], json!(-32603));
    assert_eq!(h.next(), json!({ "id": 3, "result": {} }));
    let answer = h.request(json!(4), ThreadList::NAME, json!({}));
    assert!(answer.get("result").is_some(), "{answer}");
    h.finish();
}

#[test]
fn same_thread_requests_keep_their_order_and_other_threads_overlap() {
    let mut h = Harness::start();
    h.initialize(None);
    // Same thread: the slow first request finishes before the quick second one starts.
    for (id, name) in [(1, "sleep:300"), (2, "sleep:0"), (3, "quick")] {
        h.send(&json!({
            "id": id,
            "method": ThreadSetName::NAME,
            "params": { "threadId": "same", "name": name },
        }));
    }
    let order: Vec<Value> = (0..3).map(|_| h.next()["id"].clone()).collect();
    assert_eq!(order, [json!(1), json!(2), json!(3)]);
    assert_eq!(
        h.state.log(),
        [
            "start same/sleep:300",
            "end same/sleep:300",
            "start same/sleep:0",
            "end same/sleep:0",
            "start same/quick",
            "end same/quick",
        ]
    );

    // Different threads: the others start while the first sleeps, and answer before it.
    let mut h = Harness::start();
    h.initialize(None);
    h.send(
        &json!({ "id": 1, "method": ThreadRead::NAME, "params": { "threadId": "sleep:800:a" } }),
    );
    h.send(&json!({ "id": 2, "method": ThreadRead::NAME, "params": { "threadId": "sleep:10:b" } }));
    h.send(&json!({ "id": 3, "method": ThreadRead::NAME, "params": { "threadId": "echo:c" } }));
    let answers: Vec<Value> = (0..3).map(|_| h.next()).collect();
    assert_eq!(answers[2]["id"], json!(1), "{answers:?}");
    // `thread.preview` records the order the calls began in: `a` first.
    assert_eq!(answers[2]["result"]["thread"]["preview"], json!("call 0"));
    let log = h.state.log();
    let at = |entry: &str| {
        log.iter()
            .position(|e| e == entry)
            .unwrap_or_else(|| panic!("{entry} missing from {log:?}"))
    };
    for other in ["sleep:10:b", "echo:c"] {
        assert!(
            at(&format!("start {other}")) < at("end sleep:800:a"),
            "{log:?}"
        );
        assert!(
            at(&format!("end {other}")) < at("end sleep:800:a"),
            "{log:?}"
        );
    }
    h.finish();
}

/// Starts a `command/exec` with `mode` (`approve` or `ask`) and returns the server→client request.
fn start_approval(h: &mut Harness, id: i64, mode: &str) -> Value {
    h.send(&json!({
        "id": id,
        "method": CommandExec::NAME,
        "params": { "command": [mode, "t-approval"] },
    }));
    let request = h.next();
    assert_eq!(
        request["method"],
        json!(CommandExecutionRequestApproval::NAME),
        "{request}"
    );
    assert_eq!(request["params"]["threadId"], json!("t-approval"));
    assert_eq!(request["params"]["command"], json!("echo hi"));
    assert!(request["id"].is_i64(), "{request}");
    request
}

/// Reads the `serverRequest/resolved` for `request_id` and then the answer to `id`.
fn resolved_then_answer(h: &mut Harness, request_id: &Value, id: i64) -> Value {
    let resolved = h.next();
    assert_eq!(
        resolved,
        json!({
            "method": ServerRequestResolved::NAME,
            "params": { "threadId": "t-approval", "requestId": request_id },
        })
    );
    let answer = h.next();
    assert_eq!(answer["id"], json!(id), "{answer}");
    answer["result"].clone()
}

#[test]
fn server_requests_deliver_the_typed_answer() {
    let mut h = Harness::start();
    h.initialize(None);
    let request = start_approval(&mut h, 1, "approve");
    assert_eq!(request["id"], json!(0));
    h.send(&json!({ "id": request["id"], "result": { "decision": "accept" } }));
    let result = resolved_then_answer(&mut h, &request["id"], 1);
    assert_eq!(result["stdout"], json!("\"accept\""));

    let request = start_approval(&mut h, 2, "ask");
    assert_eq!(request["id"], json!(1), "ids count up per connection");
    h.send(&json!({
        "id": request["id"],
        "result": { "decision": { "acceptWithExecpolicyAmendment": { "execpolicy_amendment": ["ls"] } } },
    }));
    let result = resolved_then_answer(&mut h, &request["id"], 2);
    assert_eq!(result["exitCode"], json!(0));
    assert_eq!(
        result["stdout"],
        json!(r#"{"acceptWithExecpolicyAmendment":{"execpolicy_amendment":["ls"]}}"#)
    );
    // A second answer to the settled request is ignored.
    h.send(&json!({ "id": request["id"], "result": { "decision": "accept" } }));
    let answer = h.request(json!(3), ThreadList::NAME, json!({}));
    assert!(answer.get("result").is_some());
    assert_eq!(h.take_stash(), Vec::<Value>::new());
    h.finish();
}

#[test]
fn server_requests_without_a_usable_answer_decline() {
    let mut h = Harness::start_with(|c| c.server_request_timeout = Duration::from_millis(300));
    h.initialize(None);
    let decline = json!("\"decline\"");

    // An error answer.
    let request = start_approval(&mut h, 1, "approve");
    h.send(&json!({ "id": request["id"], "error": { "code": -1, "message": "no" } }));
    assert_eq!(
        resolved_then_answer(&mut h, &request["id"], 1)["stdout"],
        decline
    );
    let request = start_approval(&mut h, 2, "ask");
    h.send(&json!({ "id": request["id"], "error": { "code": -1, "message": "no" } }));
    let result = resolved_then_answer(&mut h, &request["id"], 2);
    assert_eq!(result["exitCode"], json!(1));
    assert_eq!(result["stdout"], json!("client"));

    // A malformed answer.
    let request = start_approval(&mut h, 3, "approve");
    h.send(&json!({ "id": request["id"], "result": { "decision": "maybe" } }));
    assert_eq!(
        resolved_then_answer(&mut h, &request["id"], 3)["stdout"],
        decline
    );
    let request = start_approval(&mut h, 4, "ask");
    h.send(&json!({ "id": request["id"], "result": "yes" }));
    assert_eq!(
        resolved_then_answer(&mut h, &request["id"], 4)["stdout"],
        json!("malformed")
    );

    // No answer within the timeout.
    let request = start_approval(&mut h, 5, "approve");
    assert_eq!(
        resolved_then_answer(&mut h, &request["id"], 5)["stdout"],
        decline
    );
    let request = start_approval(&mut h, 6, "ask");
    let result = resolved_then_answer(&mut h, &request["id"], 6);
    assert_eq!(result["stdout"], json!("timedOut"));
    assert_eq!(
        result["stderr"],
        json!("the client did not answer within 300ms")
    );
    // A late answer after the timeout is ignored.
    h.send(&json!({ "id": request["id"], "result": { "decision": "accept" } }));
    let answer = h.request(json!(7), ThreadList::NAME, json!({}));
    assert!(answer.get("result").is_some());
    assert_eq!(h.take_stash(), Vec::<Value>::new());
    h.finish();
}

#[test]
fn resolved_notifications_respect_opt_out() {
    let mut h = Harness::start();
    h.initialize(Some(
        json!({ "optOutNotificationMethods": [ServerRequestResolved::NAME] }),
    ));
    let request = start_approval(&mut h, 1, "approve");
    h.send(&json!({ "id": request["id"], "result": { "decision": "cancel" } }));
    let answer = h.next();
    assert_eq!(answer["id"], json!(1), "{answer}");
    assert_eq!(answer["result"]["stdout"], json!("\"cancel\""));
    h.finish();
}

#[test]
fn end_of_input_waits_for_requests_in_flight() {
    let mut h = Harness::start();
    h.initialize(None);
    h.send(
        &json!({ "id": 1, "method": ThreadRead::NAME, "params": { "threadId": "sleep:300:a" } }),
    );
    h.send(&json!({ "id": 2, "method": ThreadSetName::NAME, "params": { "threadId": "o", "name": "sleep:200" } }));
    h.send(&json!({ "id": 3, "method": ThreadSetName::NAME, "params": { "threadId": "o", "name": "sleep:200" } }));
    let rest = h.finish();
    let mut ids: Vec<Value> = rest.iter().map(|m| m["id"].clone()).collect();
    ids.sort_by_key(|id| id.as_i64());
    assert_eq!(ids, [json!(1), json!(2), json!(3)], "{rest:?}");
    assert!(rest.iter().all(|m| m.get("result").is_some()), "{rest:?}");
}
