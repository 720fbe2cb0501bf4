//! No unauthenticated control across users (issue #32, finding 5): a loopback TCP listener
//! without a token — `app-server --listen ws://127.0.0.1:PORT` and `mcp-server --listen
//! http://127.0.0.1:PORT/mcp` — serves only processes of the server's own user. A process of
//! another user (uid 65534 here, the tests run as root) gets 401 with the reason before the
//! websocket upgrade or any MCP handling; with a token configured, the token decides, whoever
//! presents it.
//!
//! The peers are real processes: a small Python client run through `setpriv` as another user,
//! which sends the raw HTTP request and prints what came back.

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command};

use crate::app_server_ws::App;
use crate::common::scratch;

/// The other user the refused peers run as.
const NOBODY: &str = "65534";

/// Sends one HTTP request to `127.0.0.1:PORT` and prints the answer's head and body (up to
/// the end of the head for a switch to websocket, else to the end of the connection).
const PROBE: &str = r#"
import socket, sys
port, kind, token = int(sys.argv[1]), sys.argv[2], sys.argv[3]
auth = "Authorization: Bearer %s\r\n" % token if token else ""
host = "127.0.0.1:%d" % port
if kind == "ws":
    request = ("GET / HTTP/1.1\r\nHost: %s\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
               "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
               "%s\r\n" % (host, auth))
else:
    body = ('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
            '"2025-11-25","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}')
    request = ("POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
               "Accept: application/json, text/event-stream\r\nContent-Length: %d\r\n"
               "Connection: close\r\n%s\r\n%s" % (host, len(body), auth, body))
conn = socket.create_connection(("127.0.0.1", port), timeout=20)
conn.sendall(request.encode())
data = b""
while True:
    if b" 101 " in data.split(b"\r\n", 1)[0] and b"\r\n\r\n" in data:
        break
    try:
        chunk = conn.recv(65536)
    except socket.timeout:
        break
    if not chunk:
        break
    data += chunk
sys.stdout.write(data.decode("utf-8", "replace"))
"#;

/// Runs the probe against `port` as `uid` (`None`: as this process's user); the status and
/// the whole answer.
fn probe(uid: Option<&str>, port: u16, kind: &str, token: &str) -> (u16, String) {
    let python = "/usr/bin/python3";
    let port = port.to_string();
    let mut command = match uid {
        Some(uid) => {
            let mut command = Command::new("setpriv");
            command.args(["--reuid", uid, "--regid", uid, "--clear-groups", python]);
            command
        }
        None => Command::new(python),
    };
    let output = command
        .args(["-c", PROBE, &port, kind, token])
        .current_dir("/")
        .env_clear()
        .output()
        .expect("run the probe");
    let answer = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "the probe failed: {answer}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {answer:?}"));
    (status, answer)
}

/// Whether `uid` can be taken on by a child (the tests run as root; elsewhere they cannot
/// show another user's refusal and say so).
fn can_switch_user() -> bool {
    let root = rustix::process::geteuid().is_root();
    if !root {
        eprintln!("not root: the other-user cases need root to run a peer as uid {NOBODY}");
    }
    root
}

fn assert_refused_for_another_user(status: u16, answer: &str) {
    assert_eq!(status, 401, "{answer}");
    assert!(
        answer.contains("serves only processes of its own user")
            && answer.contains(&format!("from uid {NOBODY}")),
        "the 401 says why: {answer}"
    );
}

#[test]
fn ws_without_a_token_serves_only_the_servers_own_user() {
    let home = scratch("security-listen-ws");
    let app = App::spawn(&home, &["--listen", "ws://127.0.0.1:0"]);
    let port = app.listening_addr().port();

    let (status, answer) = probe(None, port, "ws", "");
    assert_eq!(status, 101, "the server's own user is served: {answer}");
    if can_switch_user() {
        let (status, answer) = probe(Some(NOBODY), port, "ws", "");
        assert_refused_for_another_user(status, &answer);
        assert!(
            !answer.to_ascii_lowercase().contains("sec-websocket-accept"),
            "refused before the upgrade: {answer}"
        );
    }
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn ws_with_a_token_serves_whoever_presents_it() {
    let home = scratch("security-listen-ws-token");
    std::fs::create_dir_all(&home).expect("home");
    let token = home.join("token");
    std::fs::write(&token, "s3cret\n").expect("token file");
    let token_arg = token.to_str().expect("utf-8 path");
    let app = App::spawn(
        &home,
        &[
            "--listen",
            "ws://127.0.0.1:0",
            "--ws-auth-token-file",
            token_arg,
        ],
    );
    let port = app.listening_addr().port();
    assert_eq!(probe(None, port, "ws", "").0, 401, "no token, same user");
    assert_eq!(probe(None, port, "ws", "s3cret").0, 101);
    if can_switch_user() {
        let (status, answer) = probe(Some(NOBODY), port, "ws", "s3cret");
        assert_eq!(status, 101, "the token decides: {answer}");
        assert_eq!(probe(Some(NOBODY), port, "ws", "wrong").0, 401);
    }
    let _ = std::fs::remove_dir_all(&home);
}

/// `agentwire mcp-server --listen http://127.0.0.1:0/mcp` (plus `args`), killed when dropped.
struct McpHttp(Child);

impl McpHttp {
    /// The server and the port it listens on.
    fn spawn(home: &Path, args: &[&str]) -> (Self, u16) {
        let (child, url) = crate::mcp_server::spawn_http(home, args);
        let server = Self(child);
        let port = url
            .strip_prefix("http://")
            .and_then(|rest| rest.split_once('/'))
            .and_then(|(authority, _)| authority.parse::<SocketAddr>().ok())
            .map(|addr| addr.port())
            .unwrap_or_else(|| panic!("the server printed an http://ADDR/PATH URL: {url}"));
        (server, port)
    }
}

impl Drop for McpHttp {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn mcp_http_without_a_token_serves_only_the_servers_own_user() {
    let home = scratch("security-listen-mcp");
    std::fs::create_dir_all(&home).expect("home");
    let (_server, port) = McpHttp::spawn(&home, &[]);

    let (status, answer) = probe(None, port, "mcp", "");
    assert_eq!(status, 200, "the server's own user is served: {answer}");
    assert!(answer.contains("agentwire-mcp-server"), "{answer}");
    if can_switch_user() {
        let (status, answer) = probe(Some(NOBODY), port, "mcp", "");
        assert_refused_for_another_user(status, &answer);
        assert!(
            !answer.contains("agentwire-mcp-server"),
            "refused before MCP handling: {answer}"
        );
    }
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn mcp_http_with_a_token_serves_whoever_presents_it() {
    let home = scratch("security-listen-mcp-token");
    std::fs::create_dir_all(&home).expect("home");
    let token = home.join("token");
    std::fs::write(&token, "s3cret\n").expect("token file");
    let token_arg = token.to_str().expect("utf-8 path");
    let (_server, port) = McpHttp::spawn(&home, &["--token-file", token_arg]);
    assert_eq!(probe(None, port, "mcp", "").0, 401, "no token, same user");
    if can_switch_user() {
        let (status, answer) = probe(Some(NOBODY), port, "mcp", "s3cret");
        assert_eq!(status, 200, "the token decides: {answer}");
        assert!(answer.contains("agentwire-mcp-server"), "{answer}");
        assert_eq!(probe(Some(NOBODY), port, "mcp", "wrong").0, 401);
    }
    let _ = std::fs::remove_dir_all(&home);
}
