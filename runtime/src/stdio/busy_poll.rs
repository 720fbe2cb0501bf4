//! Busy-polling stdin for a moment after answering, while the client answers quickly.
//!
//! A thread that blocks on an empty pipe puts its CPU to sleep; on a virtual machine an idle
//! vCPU halts, and waking it again goes through the hypervisor: tens of microseconds, several
//! times what answering a cheap request costs. A client that sends its next request as soon as
//! it has read an answer (a lockstep exchange) pays that wake-up on every round trip.
//!
//! So after the answers to a chunk of input are written, the connection keeps looking for the
//! next chunk for up to a short `window` before it sleeps, as Go's scheduler and Linux's
//! `SO_BUSY_POLL` do. It looks cooperatively (each look yields to the runtime, whose other tasks
//! run and whose I/O driver is polled without blocking), so nothing else on the thread waits.
//!
//! Polling costs up to `window` of CPU for each chunk, so it is done only while it pays: when
//! the previous chunk came within `window` of the answers before it. A client that talks now
//! and then (an editor between keystrokes) never makes the server poll; one in a tight loop does
//! and gets its answers sooner. An idle server sleeps.

use std::time::{Duration, Instant};

/// When to poll for the next chunk of input, learnt from when the previous ones came.
#[derive(Debug)]
pub struct BusyPoll {
    /// How long to poll after answering; zero never polls.
    window: Duration,
    /// When the answers to the last chunk were written.
    answered: Option<Instant>,
    /// Whether the last chunk came within `window` of the answers before it.
    quick: bool,
}

impl BusyPoll {
    /// Polls for up to `window` after answering, while the client keeps up.
    pub fn new(window: Duration) -> Self {
        Self {
            window,
            answered: None,
            quick: false,
        }
    }

    /// Until when to poll for the next chunk; `None` to wait for it asleep.
    pub fn deadline(&self) -> Option<Instant> {
        match self.answered {
            Some(answered) if self.quick && !self.window.is_zero() => Some(answered + self.window),
            _ => None,
        }
    }

    /// A chunk of input arrived (or the input ended) at `now`.
    pub fn arrived(&mut self, now: Instant) {
        self.quick = self
            .answered
            .is_some_and(|answered| now.saturating_duration_since(answered) <= self.window);
    }

    /// The answers to the chunk were written at `now`.
    pub fn answered(&mut self, now: Instant) {
        self.answered = Some(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WINDOW: Duration = Duration::from_micros(100);

    #[test]
    fn the_first_chunk_is_waited_for_asleep() {
        let poll = BusyPoll::new(WINDOW);
        assert_eq!(poll.deadline(), None);
    }

    #[test]
    fn a_quick_client_is_polled_for_one_window_after_each_answer() {
        let start = Instant::now();
        let mut poll = BusyPoll::new(WINDOW);
        poll.arrived(start);
        poll.answered(start + Duration::from_micros(5));
        // The second chunk comes 40 µs after the first answers: the client keeps up.
        poll.arrived(start + Duration::from_micros(45));
        poll.answered(start + Duration::from_micros(50));
        assert_eq!(poll.deadline(), Some(start + Duration::from_micros(150)));
    }

    #[test]
    fn a_slow_client_is_waited_for_asleep_until_it_speeds_up() {
        let start = Instant::now();
        let mut poll = BusyPoll::new(WINDOW);
        poll.answered(start);
        poll.arrived(start + Duration::from_millis(30));
        poll.answered(start + Duration::from_millis(31));
        assert_eq!(poll.deadline(), None);
        poll.arrived(start + Duration::from_millis(31) + WINDOW);
        poll.answered(start + Duration::from_millis(32));
        assert_eq!(
            poll.deadline(),
            Some(start + Duration::from_millis(32) + WINDOW)
        );
    }

    #[test]
    fn a_zero_window_never_polls() {
        let start = Instant::now();
        let mut poll = BusyPoll::new(Duration::ZERO);
        poll.answered(start);
        poll.arrived(start);
        poll.answered(start);
        assert_eq!(poll.deadline(), None);
    }
}
