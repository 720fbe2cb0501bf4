//! The websocket layer's small per-connection buffers (`runtime/src/ws/buffers.rs`): requests
//! pipelined past the read buffer, a frame many times its size and answers past the write
//! buffer all cross whole, once each; and a connection that once sent or was sent a large
//! message does not keep a buffer of that size.

use std::collections::BTreeSet;

use futures_util::SinkExt;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;

use crate::app_server_ws::{App, initialize, next_json, open, request};
use crate::common::{memory_kib, scratch};
use crate::ws_budget::long_thread;

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

/// Connections that each send one large request and read one large answer, then stay open.
const LARGE_EXCHANGES: usize = 16;
/// Text in the thread's one turn: `thread/read` with its turns answers with about twice this.
const TURN_TEXT_BYTES: usize = 2_000_000;
/// Padding of each large request.
const REQUEST_PAD_BYTES: usize = 4_000_000;

/// Sends one large request (read whole, then refused for its method) and reads one large
/// answer (`thread/read` with the turns of `thread`); returns the answer's length in bytes.
async fn large_exchange<S: AsyncRead + AsyncWrite + Unpin>(
    ws: &mut WebSocketStream<S>,
    thread: &Value,
) -> usize {
    let pad = "p".repeat(REQUEST_PAD_BYTES);
    let big = json!({"id": "big", "method": "no/such/method", "params": {"pad": pad}});
    ws.send(Message::text(big.to_string()))
        .await
        .expect("send the large request");
    let refused = next_json(ws).await;
    assert_eq!(refused["error"]["code"], json!(-32601), "{refused}");
    let read = request(
        ws,
        json!("read"),
        "thread/read",
        json!({ "threadId": thread, "includeTurns": true }),
    )
    .await;
    let turns = &read["result"]["thread"]["turns"];
    assert_eq!(turns.as_array().map(Vec::len), Some(1), "no turn read back");
    read.to_string().len()
}

/// tungstenite reserves its read buffer to the length of each whole frame and formats each
/// outbound frame whole into its write buffer, then keeps both at that size for as long as the
/// connection lives: 16 connections that had each sent a 4 MB request used to keep 70 MB, and
/// 16 that had each read a 4 MB answer 88 MB (measured apart, with a raw client). Inbound
/// frames are now re-cut and large answers leave as continuation frames, so what the 16
/// connections keep is a few pieces each.
#[tokio::test]
async fn connections_that_sent_and_were_sent_large_messages_keep_no_buffer_of_their_size() {
    let home = scratch("ws-buffers-large");
    let (app, addr, mut first, thread) = long_thread(&home, 256 << 20, TURN_TEXT_BYTES).await;
    // Once on a connection of its own first, so that the allocator has grown for one exchange.
    let answer_bytes = large_exchange(&mut first, &thread).await;
    assert!(
        answer_bytes > 2 * TURN_TEXT_BYTES,
        "the answer is only {answer_bytes} bytes"
    );
    let mut connections = Vec::new();
    for _ in 0..LARGE_EXCHANGES {
        let mut ws = open(addr, None).await.expect("upgrade");
        initialize(&mut ws).await;
        connections.push(ws);
    }
    let before = memory_kib(app.pid(), "VmRSS");
    for ws in &mut connections {
        large_exchange(ws, &thread).await;
    }
    let after = memory_kib(app.pid(), "VmRSS");
    let grown_kib = after.saturating_sub(before);
    let exchanged_kib = (LARGE_EXCHANGES * (REQUEST_PAD_BYTES + answer_bytes) / 1024) as u64;
    eprintln!(
        "{LARGE_EXCHANGES} connections each sent {REQUEST_PAD_BYTES} and were sent \
         {answer_bytes} bytes: resident memory grew by {grown_kib} KiB ({exchanged_kib} KiB \
         exchanged)"
    );
    // A piece in each direction is 16 KiB. What the allocator keeps of the freed messages on
    // its own varies from run to run (glibc's per-thread arenas: the reads run on the blocking
    // pool; 6.7 to 20 MiB over eight runs on the 2-core machine), so the bound is 2 MiB per
    // connection: still half of one message, and far below the 70 to 88 MiB that whole-message
    // buffers kept.
    assert!(
        grown_kib < LARGE_EXCHANGES as u64 * 2048,
        "the server kept {grown_kib} KiB after {LARGE_EXCHANGES} connections exchanged \
         {exchanged_kib} KiB"
    );
    // Every connection still serves.
    for ws in &mut connections {
        let answer = request(ws, json!("after"), "thread/loaded/list", json!({})).await;
        assert!(answer["result"]["data"].is_array(), "{answer}");
    }
}
