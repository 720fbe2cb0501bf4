//! A deadline on each connection's first HTTP request: a client that has not sent the complete
//! headers of its first request within the configured time is disconnected, so connections
//! that stay silent or trickle bytes ("slowloris") cannot pile up. `axum::serve` has no such
//! timeout of its own.
//!
//! The guard watches the bytes read for the blank line that ends the headers; once it is seen
//! the connection runs unguarded (a websocket then lives as long as it likes).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::serve::Listener;
use tokio::io::{AsyncRead, ReadBuf};
use tokio::time::Sleep;

/// A listener whose connections must send their first request's headers within `timeout`.
pub(super) struct HeaderDeadline<L> {
    inner: L,
    timeout: Duration,
}

impl<L> HeaderDeadline<L> {
    /// Guards every connection `inner` accepts with `timeout`.
    pub(super) fn new(inner: L, timeout: Duration) -> Self {
        Self { inner, timeout }
    }
}

impl<L: Listener> Listener for HeaderDeadline<L> {
    type Io = Guarded<L::Io>;
    type Addr = L::Addr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        let (io, addr) = self.inner.accept().await;
        (Guarded::new(io, self.timeout), addr)
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}

/// A connection until the end of its first request's headers has been read.
pub(super) struct Guarded<S> {
    inner: S,
    /// Fires when the headers are late; `None` once they are complete.
    deadline: Option<Pin<Box<Sleep>>>,
    /// How much of `\r\n\r\n` the bytes read so far end with (0 to 3).
    matched: u8,
}

impl<S> Guarded<S> {
    fn new(inner: S, timeout: Duration) -> Self {
        Self {
            inner,
            deadline: Some(Box::pin(tokio::time::sleep(timeout))),
            matched: 0,
        }
    }

    /// The connection it guards.
    pub(super) fn inner(&self) -> &S {
        &self.inner
    }

    /// Follows `bytes`; returns whether they complete the headers.
    fn headers_end_in(&mut self, bytes: &[u8]) -> bool {
        for &byte in bytes {
            self.matched = match (self.matched, byte) {
                (2, b'\r') => 3,
                (_, b'\r') => 1,
                (1, b'\n') => 2,
                (3, b'\n') => return true,
                _ => 0,
            };
        }
        false
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Guarded<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if let Some(deadline) = this.deadline.as_mut()
            && deadline.as_mut().poll(cx).is_ready()
        {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the request headers did not arrive in time",
            )));
        }
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if this.deadline.is_some()
            && matches!(polled, Poll::Ready(Ok(())))
            && this.headers_end_in(&buf.filled()[before..])
        {
            this.deadline = None;
        }
        polled
    }
}

super::forward_write::forward_write!(Guarded);

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn finds_the_end_of_the_headers_across_reads() {
        let mut guard = Guarded::new((), Duration::from_secs(1));
        assert!(!guard.headers_end_in(b"GET / HTTP/1.1\r\nHost: x\r"));
        assert!(!guard.headers_end_in(b"\n"));
        assert!(guard.headers_end_in(b"\r\n"));
        let mut guard = Guarded::new((), Duration::from_secs(1));
        assert!(!guard.headers_end_in(b"a\r\n\r"));
        assert!(!guard.headers_end_in(b"\rx\n\n"));
        assert!(guard.headers_end_in(b"\r\r\n\r\n"));
    }
}
