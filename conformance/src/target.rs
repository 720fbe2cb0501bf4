//! The server under test, and the raw line transport to it: a child process's stdio or a
//! websocket. Lines from the server arrive on a channel, read by a thread of their own, each
//! bounded by [`MAX_LINE`].

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, Sender, TryRecvError, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

/// The longest line (or websocket text frame) read from the server.
pub const MAX_LINE: usize = 64 * 1024 * 1024;
/// How long a server process may take to exit once its stdin is closed.
const EXIT_GRACE: Duration = Duration::from_secs(5);
/// How much of the server's stderr is kept for failure reports.
const STDERR_TAIL: usize = 4096;

/// Where the server is.
#[derive(Debug, Clone)]
pub enum Target {
    /// A command line (run through `sh -c`) that serves the protocol over its stdio;
    /// `{mock_url}` and `{home}` are replaced per scenario.
    Command(String),
    /// A running server's websocket endpoint (`ws://HOST:PORT`).
    Url(String),
}

impl Target {
    /// How reports name it.
    pub fn describe(&self) -> String {
        match self {
            Self::Command(command) => format!("--server {command}"),
            Self::Url(url) => format!("--url {url}"),
        }
    }
}

/// What the reader thread saw.
pub enum Incoming {
    /// One line (without its newline) or text frame.
    Line(String),
    /// The server closed the connection (or exited); why, if known.
    Closed(String),
}

/// One open connection.
pub struct Link {
    writer: Writer,
    /// Lines from the server.
    pub incoming: Receiver<Incoming>,
    /// The server process, for a command target (killed on drop).
    child: Option<Child>,
    /// The tail of its stderr.
    stderr: Arc<Mutex<String>>,
}

enum Writer {
    Stdio(Option<ChildStdin>),
    Ws(Sender<String>),
}

impl Link {
    /// Starts `command` (placeholders already replaced) in `cwd` with its home at `home`.
    pub fn spawn(command: &str, home: &Path, cwd: &Path) -> Result<Self, String> {
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(format!("exec {command}"))
            .current_dir(cwd)
            .env("CODEX_HOME", home)
            .env("AGENTWIRE_HOME", home)
            .env("RUST_LOG", "error")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start `{command}`: {e}"))?;
        let stdin = child.stdin.take();
        let stdout = child
            .stdout
            .take()
            .ok_or("the server's stdout is not a pipe")?;
        let stderr_pipe = child
            .stderr
            .take()
            .ok_or("the server's stderr is not a pipe")?;
        let (tx, incoming) = channel();
        std::thread::spawn(move || read_lines(stdout, &tx));
        let stderr = Arc::new(Mutex::new(String::new()));
        let tail = stderr.clone();
        std::thread::spawn(move || keep_tail(stderr_pipe, &tail));
        Ok(Self {
            writer: Writer::Stdio(stdin),
            incoming,
            child: Some(child),
            stderr,
        })
    }

    /// Connects to a websocket endpoint.
    pub fn connect(url: &str) -> Result<Self, String> {
        let (socket, _) =
            tungstenite::connect(url).map_err(|e| format!("cannot connect to {url}: {e}"))?;
        if let MaybeTlsStream::Plain(stream) = socket.get_ref() {
            stream
                .set_read_timeout(Some(Duration::from_millis(20)))
                .map_err(|e| format!("{url}: {e}"))?;
        }
        let (to_server, outgoing) = channel::<String>();
        let (tx, incoming) = channel();
        std::thread::spawn(move || pump_ws(socket, &outgoing, &tx));
        Ok(Self {
            writer: Writer::Ws(to_server),
            incoming,
            child: None,
            stderr: Arc::new(Mutex::new(String::new())),
        })
    }

    /// Sends one line (a newline is added on stdio).
    pub fn send(&mut self, line: &str) -> Result<(), String> {
        match &mut self.writer {
            Writer::Stdio(Some(stdin)) => stdin
                .write_all(format!("{line}\n").as_bytes())
                .and_then(|()| stdin.flush())
                .map_err(|e| format!("cannot write to the server: {e}")),
            Writer::Stdio(None) => Err("the server's stdin is closed".to_owned()),
            Writer::Ws(tx) => tx
                .send(line.to_owned())
                .map_err(|_| "the websocket is closed".to_owned()),
        }
    }

    /// The tail of the server's stderr (empty for a websocket target).
    pub fn stderr(&self) -> String {
        self.stderr.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        if let Writer::Stdio(stdin) = &mut self.writer {
            stdin.take();
        }
        // End of input first, so the server can finish writing its state; killed if it has
        // not exited after a grace period.
        if let Some(child) = &mut self.child {
            let deadline = std::time::Instant::now() + EXIT_GRACE;
            while std::time::Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Reads newline-terminated lines, each at most [`MAX_LINE`] bytes.
fn read_lines(stdout: impl Read, tx: &Sender<Incoming>) {
    let mut reader = BufReader::new(stdout);
    loop {
        let mut line = Vec::new();
        let limit = u64::try_from(MAX_LINE).unwrap_or(u64::MAX) + 1;
        match reader.by_ref().take(limit).read_until(b'\n', &mut line) {
            Ok(0) => {
                let _ = tx.send(Incoming::Closed("the server closed its stdout".to_owned()));
                return;
            }
            Ok(_) if line.last() != Some(&b'\n') && line.len() > MAX_LINE => {
                let _ = tx.send(Incoming::Closed(format!(
                    "the server wrote a line longer than {MAX_LINE} bytes"
                )));
                return;
            }
            Ok(_) => {
                while matches!(line.last(), Some(b'\n' | b'\r')) {
                    line.pop();
                }
                let text = String::from_utf8_lossy(&line).into_owned();
                if tx.send(Incoming::Line(text)).is_err() {
                    return;
                }
            }
            Err(e) => {
                let _ = tx.send(Incoming::Closed(format!(
                    "cannot read the server's stdout: {e}"
                )));
                return;
            }
        }
    }
}

fn keep_tail(stderr: impl Read, tail: &Mutex<String>) {
    let mut reader = BufReader::new(stderr);
    let mut buffer = [0u8; 4096];
    while let Ok(n) = reader.read(&mut buffer) {
        if n == 0 {
            return;
        }
        if let Ok(mut tail) = tail.lock() {
            tail.push_str(&String::from_utf8_lossy(&buffer[..n]));
            if tail.len() > STDERR_TAIL {
                let mut cut = tail.len() - STDERR_TAIL;
                while !tail.is_char_boundary(cut) {
                    cut += 1;
                }
                tail.drain(..cut);
            }
        }
    }
}

/// Owns the socket: writes what `outgoing` brings, forwards text frames.
fn pump_ws(
    mut socket: WebSocket<MaybeTlsStream<TcpStream>>,
    outgoing: &Receiver<String>,
    tx: &Sender<Incoming>,
) {
    loop {
        loop {
            match outgoing.try_recv() {
                Ok(line) => {
                    if let Err(e) = socket.send(Message::text(line)) {
                        let _ = tx.send(Incoming::Closed(format!("websocket write: {e}")));
                        return;
                    }
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    let _ = socket.close(None);
                    return;
                }
            }
        }
        match socket.read() {
            Ok(Message::Text(text)) => {
                let text = text.as_str();
                if text.len() > MAX_LINE {
                    let _ = tx.send(Incoming::Closed(format!(
                        "the server sent a frame longer than {MAX_LINE} bytes"
                    )));
                    return;
                }
                if tx.send(Incoming::Line(text.to_owned())).is_err() {
                    return;
                }
            }
            Ok(Message::Close(frame)) => {
                let _ = tx.send(Incoming::Closed(format!("the server closed: {frame:?}")));
                return;
            }
            Ok(_) => {}
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(e) => {
                let _ = tx.send(Incoming::Closed(format!("websocket read: {e}")));
                return;
            }
        }
    }
}
