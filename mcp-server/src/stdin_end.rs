//! The host's end of input, seen as it happens. rmcp, at the end of its input, waits up to
//! 5 s for the answers still due before it returns; a `codex` call answers only when its turn
//! ends, so the engine must hear of the end first, from the reader itself, to interrupt its
//! turns at once rather than let them run on for the host that has gone.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

/// `inner`, calling `at_end` once when it reports the end of input.
pub(crate) struct StopAtEnd<R, F> {
    inner: R,
    at_end: Option<F>,
}

impl<R, F: FnOnce()> StopAtEnd<R, F> {
    pub(crate) fn new(inner: R, at_end: F) -> Self {
        Self {
            inner,
            at_end: Some(at_end),
        }
    }
}

impl<R: AsyncRead + Unpin, F: FnOnce() + Unpin> AsyncRead for StopAtEnd<R, F> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let room = buf.remaining();
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        // A read with room that fills nothing is the end of input.
        if let Poll::Ready(Ok(())) = polled
            && room > 0
            && buf.filled().len() == before
            && let Some(at_end) = self.at_end.take()
        {
            at_end();
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tokio::io::AsyncReadExt;

    use super::StopAtEnd;

    #[tokio::test]
    async fn the_end_is_reported_once_after_every_byte() {
        let ends = Arc::new(AtomicUsize::new(0));
        let counted = ends.clone();
        let mut reader = StopAtEnd::new(&b"{}\n"[..], move || {
            counted.fetch_add(1, Ordering::SeqCst);
        });
        let mut first = [0u8; 2];
        reader.read_exact(&mut first).await.expect("two bytes");
        assert_eq!(ends.load(Ordering::SeqCst), 0, "not at the end yet");
        let mut rest = Vec::new();
        reader.read_to_end(&mut rest).await.expect("the rest");
        assert_eq!(rest, b"\n");
        assert_eq!(reader.read(&mut [0u8; 4]).await.expect("at the end"), 0);
        assert_eq!(ends.load(Ordering::SeqCst), 1, "reported once");
    }
}
