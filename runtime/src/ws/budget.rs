//! One memory budget for every websocket connection of a listener: the bytes of frames that
//! have not finished arriving, and the messages queued for peers that have not read them yet.
//!
//! Each connection may hold [`ALLOWANCE`] bytes in each direction for free, so small messages
//! always get through; beyond that it draws on the shared budget. A connection that would take
//! more than is left is refused rather than buffered: a read stops before the bytes that would
//! exceed the budget ([`Exhausted`] as the read's error), and a message that would exceed it is
//! not queued. Either way that connection is closed and the memory it held is given back, while
//! every other connection goes on.
//!
//! Inbound bytes are counted as they are read from the socket and given back when the frame
//! they belong to has been handed over whole ([`Meter::frame_done`]). The websocket layer may
//! have read ahead into the next frame by then (at most its read buffer,
//! [`super::buffers::READ_BUFFER`]): those bytes are forgiven, so the bound is the budget plus
//! that much per connection.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};

use axum::serve::Listener;
use tokio::io::{AsyncRead, ReadBuf};

/// What each connection may hold in each direction without drawing on the shared budget.
pub(crate) const ALLOWANCE: usize = 64 * 1024;

/// The bytes every connection together may hold beyond their allowances.
#[derive(Debug)]
pub(crate) struct Budget {
    limit: usize,
    used: AtomicUsize,
}

impl Budget {
    pub(crate) fn new(limit: usize) -> Arc<Self> {
        Arc::new(Self {
            limit,
            used: AtomicUsize::new(0),
        })
    }

    /// Takes up to `wanted` bytes; returns how many it got.
    fn take_up_to(&self, wanted: usize) -> usize {
        let mut granted = 0;
        let _ = self
            .used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                granted = wanted.min(self.limit.saturating_sub(used));
                Some(used + granted)
            });
        granted
    }

    /// Takes exactly `wanted` bytes, or nothing.
    fn take_all(&self, wanted: usize) -> bool {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                (used.checked_add(wanted)? <= self.limit).then_some(used + wanted)
            })
            .is_ok()
    }

    fn give_back(&self, bytes: usize) {
        if bytes > 0 {
            self.used.fetch_sub(bytes, Ordering::AcqRel);
        }
    }

    /// The bytes taken now.
    #[cfg(test)]
    fn used(&self) -> usize {
        self.used.load(Ordering::Acquire)
    }
}

/// The read or write that would have gone over the budget.
#[derive(Debug, thiserror::Error)]
#[error("the server's websocket memory budget ({limit} bytes for every connection) is used up")]
pub(crate) struct Exhausted {
    pub(crate) limit: usize,
}

/// What one connection holds in one direction: its allowance first, then the shared budget.
/// The part of `held` past the allowance is exactly what this meter has taken from the budget.
#[derive(Debug)]
pub(crate) struct Meter {
    budget: Arc<Budget>,
    /// Bytes held, allowance included.
    held: Mutex<usize>,
}

impl Meter {
    pub(crate) fn new(budget: Arc<Budget>) -> Self {
        Self {
            budget,
            held: Mutex::new(0),
        }
    }

    fn held(&self) -> MutexGuard<'_, usize> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The part of `held` bytes that draws on the budget.
    fn over_allowance(held: usize) -> usize {
        held.saturating_sub(ALLOWANCE)
    }

    /// Reserves room for up to `wanted` more bytes and returns how many may come; the
    /// reservation counts as held until [`settle`](Self::settle) says how many came.
    fn reserve(&self, wanted: usize) -> usize {
        let mut held = self.held();
        let free = ALLOWANCE.saturating_sub(*held);
        let granted = if wanted <= free {
            wanted
        } else {
            free + self.budget.take_up_to(wanted - free)
        };
        *held += granted;
        granted
    }

    /// Records that `got` of the `reserved` bytes came, and gives back the rest.
    fn settle(&self, reserved: usize, got: usize) {
        self.release(reserved.saturating_sub(got));
    }

    /// Holds `bytes` more, all or nothing.
    pub(crate) fn hold(&self, bytes: usize) -> Result<(), Exhausted> {
        let mut held = self.held();
        let after = held.saturating_add(bytes);
        let drawn = Self::over_allowance(after) - Self::over_allowance(*held);
        if !self.budget.take_all(drawn) {
            return Err(Exhausted {
                limit: self.budget.limit,
            });
        }
        *held = after;
        Ok(())
    }

    /// Gives back `bytes` held (all of them, at most).
    pub(crate) fn release(&self, bytes: usize) {
        let mut held = self.held();
        let after = held.saturating_sub(bytes);
        self.budget
            .give_back(Self::over_allowance(*held) - Self::over_allowance(after));
        *held = after;
    }

    /// A whole frame has been handed over: what was read for it is no longer held.
    pub(crate) fn frame_done(&self) {
        self.release(usize::MAX);
    }
}

impl Drop for Meter {
    fn drop(&mut self) {
        self.frame_done();
    }
}

/// A listener whose connections' reads are metered against one budget.
pub(super) struct Metered<L> {
    inner: L,
    budget: Arc<Budget>,
}

impl<L> Metered<L> {
    pub(super) fn new(inner: L, budget: Arc<Budget>) -> Self {
        Self { inner, budget }
    }
}

impl<L: Listener> Listener for Metered<L> {
    type Io = MeteredIo<L::Io>;
    type Addr = L::Addr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        let (io, addr) = self.inner.accept().await;
        let io = MeteredIo {
            inner: io,
            meter: Arc::new(Meter::new(self.budget.clone())),
        };
        (io, addr)
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}

/// A connection whose reads stop where the budget ends.
pub(super) struct MeteredIo<S> {
    inner: S,
    meter: Arc<Meter>,
}

impl<S> MeteredIo<S> {
    /// The meter of this connection's inbound bytes.
    pub(super) fn meter(&self) -> &Arc<Meter> {
        &self.meter
    }

    /// The connection it meters.
    pub(super) fn inner(&self) -> &S {
        &self.inner
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for MeteredIo<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let wanted = buf.remaining();
        if wanted == 0 {
            return Pin::new(&mut this.inner).poll_read(cx, buf);
        }
        let allowed = this.meter.reserve(wanted);
        if allowed == 0 {
            let limit = this.meter.budget.limit;
            return Poll::Ready(Err(io::Error::other(Exhausted { limit })));
        }
        let mut part = ReadBuf::new(buf.initialize_unfilled_to(allowed));
        let polled = Pin::new(&mut this.inner).poll_read(cx, &mut part);
        let got = match polled {
            Poll::Ready(Ok(())) => part.filled().len(),
            _ => 0,
        };
        this.meter.settle(allowed, got);
        buf.advance(got);
        polled
    }
}

super::forward_write::forward_write!(MeteredIo);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_allowance_is_free_and_the_rest_is_shared() {
        let budget = Budget::new(100);
        let a = Meter::new(budget.clone());
        let b = Meter::new(budget.clone());
        a.hold(ALLOWANCE).expect("within the allowance");
        assert_eq!(budget.used(), 0);
        a.hold(60).expect("within the budget");
        assert_eq!(budget.used(), 60);
        assert!(b.hold(ALLOWANCE + 41).is_err(), "41 more than is left");
        assert_eq!(budget.used(), 60, "a refusal takes nothing");
        b.hold(ALLOWANCE + 40).expect("exactly what is left");
        assert_eq!(budget.used(), 100);
        a.release(ALLOWANCE + 60);
        assert_eq!(budget.used(), 40);
        drop(b);
        assert_eq!(
            budget.used(),
            0,
            "a meter gives everything back when dropped"
        );
    }

    #[test]
    fn reservations_give_back_what_did_not_come() {
        let budget = Budget::new(1000);
        let meter = Meter::new(budget.clone());
        let reserved = meter.reserve(ALLOWANCE + 500);
        assert_eq!(reserved, ALLOWANCE + 500);
        assert_eq!(budget.used(), 500);
        meter.settle(reserved, ALLOWANCE + 100);
        assert_eq!(budget.used(), 100);
        // The allowance is spent: a new reservation draws on the budget only.
        assert_eq!(meter.reserve(2000), 900);
        meter.settle(900, 0);
        assert_eq!(budget.used(), 100);
        meter.frame_done();
        assert_eq!(budget.used(), 0);
        assert_eq!(
            meter.reserve(10),
            10,
            "a finished frame frees the allowance"
        );
    }

    #[test]
    fn an_empty_budget_still_lets_the_allowance_through() {
        let budget = Budget::new(0);
        let meter = Meter::new(budget.clone());
        assert_eq!(meter.reserve(ALLOWANCE * 2), ALLOWANCE);
        meter.settle(ALLOWANCE, ALLOWANCE);
        assert_eq!(meter.reserve(1), 0, "nothing more until the frame is done");
        meter.frame_done();
        assert_eq!(meter.reserve(1), 1);
    }

    #[tokio::test]
    async fn reads_stop_at_the_budget_with_an_error_naming_it() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let budget = Budget::new(10);
        let (client, server) = tokio::io::duplex(4 * ALLOWANCE);
        let mut io = MeteredIo {
            inner: server,
            meter: Arc::new(Meter::new(budget.clone())),
        };
        let mut client = client;
        client
            .write_all(&vec![b'x'; ALLOWANCE + 20])
            .await
            .expect("write");
        let mut read = Vec::new();
        let mut chunk = vec![0u8; 4096];
        let error = loop {
            match io.read(&mut chunk).await {
                Ok(n) => read.extend_from_slice(&chunk[..n]),
                Err(error) => break error,
            }
        };
        assert_eq!(
            read.len(),
            ALLOWANCE + 10,
            "read up to the budget, not past it"
        );
        let exhausted = error
            .get_ref()
            .and_then(|e| e.downcast_ref::<Exhausted>())
            .expect("the error is the budget's");
        assert_eq!(exhausted.limit, 10);
        assert_eq!(budget.used(), 10);
        drop(io);
        assert_eq!(budget.used(), 0);
    }
}
