//! `--otel-sink`: a loopback OTLP/HTTP endpoint that reads each export and answers 200 with an
//! empty body (a valid empty protobuf response), so that the server's export costs what it
//! costs against a collector that keeps up.

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Longest request head read.
const MAX_HEAD: usize = 64 * 1024;

/// Starts the sink on the current runtime; its address.
pub async fn start() -> Result<SocketAddr, String> {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("cannot start the OTLP sink: {e}"))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("cannot start the OTLP sink: {e}"))?;
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(serve(stream));
        }
    });
    Ok(addr)
}

/// Answers the requests of one connection until it closes or sends something unreadable.
async fn serve(mut stream: TcpStream) {
    let mut buffer = Vec::new();
    loop {
        let Some(end) = head_end(&buffer) else {
            if buffer.len() > MAX_HEAD || !read_more(&mut stream, &mut buffer).await {
                return;
            }
            continue;
        };
        let head = String::from_utf8_lossy(&buffer[..end]).to_ascii_lowercase();
        let length: usize = head
            .lines()
            .find_map(|line| line.strip_prefix("content-length:"))
            .and_then(|value| value.trim().parse().ok())
            .unwrap_or(0);
        while buffer.len() < end + length {
            if !read_more(&mut stream, &mut buffer).await {
                return;
            }
        }
        buffer.drain(..end + length);
        let answer =
            b"HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n";
        if stream.write_all(answer).await.is_err() {
            return;
        }
    }
}

/// Where the head in `buffer` ends (past its blank line), once it is all there.
fn head_end(buffer: &[u8]) -> Option<usize> {
    buffer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|at| at + 4)
}

/// Reads more of the connection into `buffer`; false once it is closed or failed.
async fn read_more(stream: &mut TcpStream, buffer: &mut Vec<u8>) -> bool {
    let mut chunk = [0u8; 16 * 1024];
    match stream.read(&mut chunk).await {
        Ok(0) | Err(_) => false,
        Ok(n) => {
            buffer.extend_from_slice(&chunk[..n]);
            true
        }
    }
}
