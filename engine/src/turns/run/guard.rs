//! The turn's guard: a turn that ends without settling (its task panicked, or its future was
//! dropped before it ran to its end) is settled as `failed` as it is dropped.
//!
//! Settling is what a failed turn does anyway ([`TurnRun::settle`]): the token totals, the
//! `error` notification, the turn's end in the rollout, the thread idle again (so the next
//! `turn/start` is accepted) and `turn/completed`. Nothing here may panic: a panic while
//! unwinding aborts the process.

use agentwire_protocol::CodexErrorInfo;

use super::{CallEnd, TurnRun, turn_error};

impl Drop for TurnRun {
    fn drop(&mut self) {
        if self.settled {
            return;
        }
        let (message, cause) = if std::thread::panicking() {
            (
                "The turn stopped on an internal error of the server; it was ended as failed.",
                "the turn's task panicked (see the server log)",
            )
        } else {
            (
                "The turn stopped before it could finish; it was ended as failed.",
                "the turn's task was dropped before its end",
            )
        };
        tracing::error!(
            thread = %self.thread_id,
            turn = %self.turn.id,
            cause,
            "turn ended without settling: settling it as failed"
        );
        // Stopped before it began: it begins now, so that it has a start to end.
        futures_executor::block_on(async {
            if self.turn.started_at.is_none() {
                self.begin().await;
            }
            self.settle(CallEnd::Failed(turn_error(
                message,
                Some(cause.to_owned()),
                Some(CodexErrorInfo::Other),
            )))
            .await;
        });
    }
}
