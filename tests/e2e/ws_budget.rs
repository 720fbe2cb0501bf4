//! The websocket memory budget, attacked from outside: connections that each send most of a
//! huge frame and then stall hold no more than the budget between them, the one that would go
//! past it is refused with -32001 and close code 1013, and a well-behaved client is answered
//! all along.

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::app_server_ws::{App, initialize, open, request};
use crate::common::scratch;

const WAIT: Duration = Duration::from_secs(30);
/// The mask every frame here uses (clients must mask; the value does not matter).
const MASK: [u8; 4] = [1, 2, 3, 4];

/// A TCP connection upgraded to a websocket by hand, so that frames can be cut anywhere.
pub(crate) async fn raw_upgrade(addr: SocketAddr) -> TcpStream {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    let head = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
                Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
    stream.write_all(head.as_bytes()).await.expect("handshake");
    let mut response = Vec::new();
    while !response.ends_with(b"\r\n\r\n") {
        let mut byte = [0u8; 1];
        stream
            .read_exact(&mut byte)
            .await
            .expect("handshake answer");
        response.push(byte[0]);
    }
    assert!(
        response.starts_with(b"HTTP/1.1 101"),
        "{}",
        String::from_utf8_lossy(&response)
    );
    stream
}

/// The header of a masked text frame announcing `len` payload bytes (64-bit length form).
pub(crate) fn text_frame_header(len: u64) -> Vec<u8> {
    let mut header = vec![0x81, 0x80 | 127];
    header.extend_from_slice(&len.to_be_bytes());
    header.extend_from_slice(&MASK);
    header
}

/// Announces an 8 MiB frame, sends as much of it as the server takes, and returns whatever the
/// server sent back until it closed the connection (read all along, so that nothing is lost to
/// the reset a close with unread input causes).
async fn hog(addr: SocketAddr) -> Vec<u8> {
    const ANNOUNCED: usize = 8 << 20;
    let (mut reader, mut writer) = raw_upgrade(addr).await.into_split();
    let reading = tokio::spawn(async move {
        let mut answer = Vec::new();
        let mut chunk = [0u8; 4096];
        while let Ok(Ok(n)) = tokio::time::timeout(WAIT, reader.read(&mut chunk)).await {
            if n == 0 {
                break;
            }
            answer.extend_from_slice(&chunk[..n]);
        }
        answer
    });
    writer
        .write_all(&text_frame_header(ANNOUNCED as u64))
        .await
        .expect("frame header");
    let chunk = vec![b'x' ^ MASK[0]; 64 * 1024];
    let mut sent = 0;
    while sent < ANNOUNCED {
        // A server that stops reading this connection leaves the write pending: move on.
        match tokio::time::timeout(Duration::from_secs(2), writer.write_all(&chunk)).await {
            Ok(Ok(())) => sent += chunk.len(),
            Ok(Err(_)) | Err(_) => break,
        }
    }
    reading.await.expect("reader")
}

/// The close code of the close frame in what the server sent, if any.
fn close_code(bytes: &[u8]) -> Option<u16> {
    let at = bytes.windows(2).position(|w| w[0] == 0x88 && w[1] >= 2)?;
    let code = bytes.get(at + 2..at + 4)?;
    Some(u16::from_be_bytes([code[0], code[1]]))
}

/// The JSON text frames in what the server sent (unmasked, short length forms only).
fn json_frames(mut bytes: &[u8]) -> Vec<Value> {
    let mut found = Vec::new();
    while bytes.len() >= 2 {
        let (len, start) = match bytes[1] & 0x7f {
            126 if bytes.len() >= 4 => (usize::from(u16::from_be_bytes([bytes[2], bytes[3]])), 4),
            n if n < 126 => (usize::from(n), 2),
            _ => break,
        };
        let Some(payload) = bytes.get(start..start + len) else {
            break;
        };
        if bytes[0] == 0x81
            && let Ok(value) = serde_json::from_slice(payload)
        {
            found.push(value);
        }
        bytes = &bytes[start + len..];
    }
    found
}

/// Peak resident memory of process `pid`, in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/PID/status")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn frames_that_never_finish_hold_no_more_than_the_budget() {
    const BUDGET: usize = 4_000_000;
    let home = scratch("ws-budget");
    let budget = BUDGET.to_string();
    let app = App::spawn(
        &home,
        &[
            "--listen",
            "ws://127.0.0.1:0",
            "--ws-memory-budget-bytes",
            &budget,
            "--ws-idle-timeout-ms",
            "4000",
            "--ws-ping-interval-ms",
            "500",
        ],
    );
    let addr = app.listening_addr();
    let mut client = open(addr, None).await.expect("upgrade");
    initialize(&mut client).await;
    let at_rest = peak_rss_kib(app.pid());

    // Eight connections try to make the server hold 64 MiB of unfinished frames.
    let hogs: Vec<_> = (0..8).map(|_| tokio::spawn(hog(addr))).collect();
    // Meanwhile the well-behaved client is answered.
    for n in 0..20 {
        let answer = request(&mut client, json!(n), "thread/list", json!({})).await;
        assert!(answer["result"]["data"].is_array(), "{answer}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut refused = Vec::new();
    for hog in hogs {
        let answer = hog.await.expect("hog");
        if close_code(&answer) == Some(1013) {
            refused.push(answer);
        }
    }
    let peak = peak_rss_kib(app.pid());
    assert!(
        !refused.is_empty(),
        "no connection was refused for the budget"
    );
    for answer in &refused {
        let error = json_frames(answer)
            .into_iter()
            .find(|m| m.get("error").is_some())
            .expect("a JSON-RPC error before the close frame");
        assert_eq!(error["error"]["code"], json!(-32001), "{error}");
        assert_eq!(
            error["error"]["data"]["memoryBudgetBytes"],
            json!(BUDGET),
            "{error}"
        );
    }
    // Without the budget the server buffers all 64 MiB (it grew by 66 MiB here); with it, no
    // more than the bound docs/security.md gives: the budget plus 192 KiB per connection (the
    // allowance and the websocket layer's read-ahead; nine connections here), 5.5 MiB, with
    // 4 MiB of room for the allocator and the threads' stacks.
    const PER_CONNECTION_KIB: u64 = 192;
    const ROOM_KIB: u64 = 4 * 1024;
    let bound_kib = BUDGET as u64 / 1024 + 9 * PER_CONNECTION_KIB;
    let grown_kib = peak.saturating_sub(at_rest);
    eprintln!("grown by {grown_kib} KiB; the bound is {bound_kib} KiB");
    assert!(
        grown_kib <= bound_kib + ROOM_KIB,
        "the server grew by {grown_kib} KiB; the bound is {bound_kib} KiB (budget {BUDGET} \
         bytes, 9 connections)"
    );

    // Every hog is gone, and the budget with them: a message of most of it goes through.
    let big = "y".repeat(BUDGET * 3 / 4);
    let answer = request(&mut client, json!("big"), "no/such", json!({ "pad": big })).await;
    assert_eq!(answer["error"]["code"], json!(-32601), "{answer}");
    let (status, _) = app.terminate();
    assert!(status.success(), "{status:?}");
}
