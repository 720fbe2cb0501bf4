//! The websocket layer's small per-connection buffers (`runtime/src/ws/buffers.rs`): requests
//! pipelined past the read buffer, a frame many times its size and answers past the write
//! buffer all cross whole, once each.

use std::collections::BTreeSet;

use futures_util::SinkExt;
use serde_json::json;
use tokio_tungstenite::tungstenite::Message;

use crate::app_server_ws::{App, initialize, next_json, open};
use crate::common::scratch;

/// Requests sent in one go: their bytes span many read buffers, their answers many write
/// buffers (and stay under the default `--max-in-flight` of 512).
const PIPELINED: u64 = 400;

#[tokio::test]
async fn pipelined_requests_and_a_large_frame_cross_the_small_buffers_whole() {
    let home = scratch("ws-buffers");
    let app = App::spawn(&home, &["--listen", "ws://127.0.0.1:0"]);
    let addr = app.listening_addr();
    let mut ws = open(addr, None).await.expect("upgrade");
    initialize(&mut ws).await;

    for id in 1..=PIPELINED {
        let message = json!({"id": id, "method": "thread/loaded/list", "params": {}});
        ws.feed(Message::text(message.to_string()))
            .await
            .expect("queue a request");
    }
    ws.flush().await.expect("send the requests");
    let mut answered = BTreeSet::new();
    for _ in 0..PIPELINED {
        let answer = next_json(&mut ws).await;
        let id = answer["id"]
            .as_u64()
            .unwrap_or_else(|| panic!("an answer without a numeric id: {answer}"));
        assert!(
            answer["result"]["data"].is_array(),
            "answer {id} has no /result/data array: {answer}"
        );
        assert!(answered.insert(id), "answer {id} came twice");
    }
    assert_eq!(
        answered,
        (1..=PIPELINED).collect::<BTreeSet<_>>(),
        "every request answered once"
    );

    // One frame 50 times the read buffer: read whole, then refused for its method.
    let pad = "x".repeat(200 * 1024);
    let big = json!({"id": "big", "method": "no/such/method", "params": {"pad": pad}});
    ws.send(Message::text(big.to_string()))
        .await
        .expect("send the large frame");
    let answer = next_json(&mut ws).await;
    assert_eq!(answer["id"], json!("big"), "{answer}");
    assert_eq!(answer["error"]["code"], json!(-32601), "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("no/such/method")),
        "the error names the method: {answer}"
    );

    // The connection still serves after it.
    let after = json!({"id": "after", "method": "thread/loaded/list", "params": {}});
    ws.send(Message::text(after.to_string()))
        .await
        .expect("send");
    let answer = next_json(&mut ws).await;
    assert_eq!(answer["id"], json!("after"), "{answer}");
    assert!(answer["result"]["data"].is_array(), "{answer}");
}
