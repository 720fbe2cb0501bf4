//! Arbitrary bytes into a live websocket listener over loopback TCP: the HTTP upgrade, the
//! header deadline, the memory meter, the websocket framing and the runtime's reader, down to
//! `Server::handle_message`, exactly as a remote client reaches them.
//!
//! The first byte picks the set-up: bit 0 sends a valid upgrade request first (else the bytes
//! are the HTTP request themselves); bit 1 builds frames from the rest (each: a flags byte, a
//! length byte, that many payload bytes, masked by the harness as clients must), else the rest
//! goes on the wire as it is (after the server's answer to the upgrade, as a client waits for
//! it). A length byte of 255 makes a long frame: a 16-bit length and a seed follow, and the
//! payload is the seed repeated to that length, so that small inputs reach frames the server
//! cuts into pieces (over 16 KiB) and frames past the limit. Then the client half-closes.
//!
//! Checked after every input: nothing panicked (a panic anywhere aborts), the server ends the
//! connection within a bounded time after the client's end of input, everything it sent parses
//! as server frames (unmasked; text frames are JSON objects; a close frame carries one of the
//! codes the runtime documents, or the client's own valid code echoed), and the server forgets
//! the connection.

#![no_main]

use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use agentwire_runtime::WsListener;
use agentwire_runtime::{RuntimeConfig, Server};
use libfuzzer_sys::fuzz_target;
use quick::Quick;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

mod quick;

/// The largest message accepted: above the 16 KiB pieces the server cuts longer frames into,
/// and within reach of a long frame (up to 64 KiB).
const LIMIT: usize = 40 * 1024;
/// A length byte announcing a long frame.
const LONG: u8 = 255;
/// How long the server may take to end a connection once the client's input has ended.
const PATIENCE: Duration = Duration::from_secs(5);
/// The close codes the runtime sends (normal, away, protocol, invalid text, idle, too large,
/// over budget).
const CLOSE_CODES: [u16; 7] = [1000, 1001, 1002, 1007, 1008, 1009, 1013];
const UPGRADE: &[u8] = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n\
    Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
    Sec-WebSocket-Version: 13\r\n\r\n";

struct Fuzzer {
    runtime: tokio::runtime::Runtime,
    server: Server<Quick>,
    addr: SocketAddr,
}

fn fuzzer() -> &'static Fuzzer {
    static FUZZER: OnceLock<Fuzzer> = OnceLock::new();
    FUZZER.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("build a tokio runtime");
        let mut config = RuntimeConfig::new(std::env::temp_dir());
        config.max_message_bytes = LIMIT;
        config.server_request_timeout = Duration::from_millis(2);
        config.http_header_timeout = Duration::from_secs(2);
        config.ws_memory_budget_bytes = 2 * LIMIT;
        let server = Server::new(Quick, config, runtime.handle().clone());
        let addr = runtime.block_on(async {
            let loopback: SocketAddr = "127.0.0.1:0".parse().expect("an address");
            let listener = WsListener::bind_tcp(loopback, None)
                .await
                .expect("bind a loopback port");
            let addr = listener.tcp_addr().expect("a TCP address");
            tokio::spawn(listener.serve(server.clone(), std::future::pending()));
            addr
        });
        Fuzzer {
            runtime,
            server,
            addr,
        }
    })
}

/// Frames built from `input`: a flags byte (FIN, RSV bits and opcode as sent), a length byte,
/// then that many payload bytes, masked with a key taken from the flags byte. A length byte of
/// [`LONG`] is followed by a 16-bit length, a seed length byte and the seed, repeated to fill
/// the payload.
fn frames(mut input: &[u8]) -> Vec<u8> {
    let mut wire = Vec::new();
    while let [flags, len, rest @ ..] = input {
        let payload: Vec<u8>;
        if *len == LONG {
            let [high, low, seed_len, rest @ ..] = rest else {
                break;
            };
            let seed_len = usize::from(*seed_len).min(rest.len());
            let (seed, next) = rest.split_at(seed_len);
            let long = usize::from(u16::from_be_bytes([*high, *low]));
            payload = if seed.is_empty() {
                vec![0; long]
            } else {
                seed.iter().copied().cycle().take(long).collect()
            };
            input = next;
        } else {
            let len = usize::from(*len).min(rest.len());
            let (taken, next) = rest.split_at(len);
            payload = taken[..len.min(125)].to_vec();
            input = next;
        }
        wire.push(*flags);
        match u8::try_from(payload.len()) {
            Ok(short @ 0..=125) => wire.push(0x80 | short),
            _ => {
                let long = u16::try_from(payload.len()).expect("at most 16 bits");
                wire.push(0x80 | 126);
                wire.extend_from_slice(&long.to_be_bytes());
            }
        }
        let mask = [*flags, flags.rotate_left(3), flags.wrapping_mul(7), 0x5a];
        wire.extend_from_slice(&mask);
        wire.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    }
    wire
}

/// Whether `code` is one a client may send, which the websocket layer then echoes in its own
/// close frame (RFC 6455 §5.5.1): the registered codes a peer may send, and 3000–4999.
fn echoed(code: u16) -> bool {
    matches!(code, 1000..=1003 | 1007..=1014 | 3000..=4999)
}

/// Checks what the server sent after its `101` answer: server frames only (unmasked), JSON
/// objects in text frames, documented codes in close frames.
fn check_server_frames(mut bytes: &[u8]) {
    while bytes.len() >= 2 {
        let (opcode, masked) = (bytes[0] & 0x0f, bytes[1] & 0x80 != 0);
        assert!(!masked, "the server masked a frame");
        let (len, start): (usize, usize) = match bytes[1] & 0x7f {
            126 if bytes.len() >= 4 => (usize::from(u16::from_be_bytes([bytes[2], bytes[3]])), 4),
            127 if bytes.len() >= 10 => {
                let mut len = [0u8; 8];
                len.copy_from_slice(&bytes[2..10]);
                (
                    usize::try_from(u64::from_be_bytes(len)).unwrap_or(usize::MAX),
                    10,
                )
            }
            n if n < 126 => (usize::from(n), 2),
            _ => return,
        };
        // The server may be cut off mid-frame (the client stops reading): the rest is not
        // judged.
        let Some(payload) = bytes.get(start..start.saturating_add(len)) else {
            return;
        };
        match opcode {
            0x1 => {
                let value: serde_json::Value =
                    serde_json::from_slice(payload).expect("a text frame holds JSON");
                assert!(value.is_object(), "a text frame holds a JSON object");
            }
            0x8 if payload.len() >= 2 => {
                let code = u16::from_be_bytes([payload[0], payload[1]]);
                assert!(
                    CLOSE_CODES.contains(&code) || echoed(code),
                    "close code {code}"
                );
            }
            _ => {}
        }
        bytes = &bytes[start + len..];
    }
}

/// Sends `request`; with `upgrade`, waits for the answer's head as a real client does (hyper
/// drops a connection whose client ends its input before the answer); sends `frames`,
/// half-closes, and returns everything the server sent until it ended the connection (or `None`
/// if it did not within [`PATIENCE`]).
async fn exchange(
    addr: SocketAddr,
    request: &[u8],
    upgrade: bool,
    frames: &[u8],
) -> Option<Vec<u8>> {
    let stream = TcpStream::connect(addr).await.expect("connect");
    let (mut reader, mut writer) = stream.into_split();
    let mut received = Vec::new();
    // The server may close first; a failed write is part of the game.
    let mut open = writer.write_all(request).await.is_ok();
    if upgrade {
        let head = async {
            let mut chunk = [0u8; 1024];
            while !received.windows(4).any(|w| w == b"\r\n\r\n") {
                match reader.read(&mut chunk).await {
                    Ok(0) | Err(_) => return false,
                    Ok(n) => received.extend_from_slice(&chunk[..n]),
                }
            }
            true
        };
        open &= tokio::time::timeout(PATIENCE, head).await.ok()?;
    }
    let reading = tokio::spawn(async move {
        let _ = reader.read_to_end(&mut received).await;
        received
    });
    if open && writer.write_all(frames).await.is_ok() {
        let _ = writer.shutdown().await;
    }
    let received = tokio::time::timeout(PATIENCE, reading).await.ok()?;
    Some(received.expect("the reading task"))
}

fuzz_target!(|data: &[u8]| {
    let Some((&setup, input)) = data.split_first() else {
        return;
    };
    let fuzzer = fuzzer();
    let (request, body): (&[u8], Vec<u8>) = match (setup & 1 == 1, setup & 2 == 2) {
        (true, true) => (UPGRADE, frames(input)),
        (true, false) => (UPGRADE, input.to_vec()),
        (false, _) => (input, Vec::new()),
    };
    let received = fuzzer
        .runtime
        .block_on(exchange(fuzzer.addr, request, setup & 1 == 1, &body))
        .expect("the server did not end the connection after the client's end of input");
    if setup & 1 == 1 {
        let Some(end) = received.windows(4).position(|w| w == b"\r\n\r\n") else {
            panic!("no answer to a valid upgrade request");
        };
        assert!(
            received.starts_with(b"HTTP/1.1 101"),
            "a valid upgrade was refused"
        );
        check_server_frames(&received[end + 4..]);
    }
    // The server forgets the connection soon after it ends.
    let deadline = Instant::now() + PATIENCE;
    while !fuzzer.server.hub().is_empty() {
        assert!(Instant::now() < deadline, "a connection leaked");
        std::thread::sleep(Duration::from_millis(1));
    }
});
