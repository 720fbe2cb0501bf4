//! The items of a review turn (`review/start`, see `turns::review`): it opens with
//! `enteredReviewMode` in place of the user message (whose text, the review instructions and
//! the diff, goes to the model only) and, however it ends, closes with `exitedReviewMode`
//! holding the review: the turn's final agent message (empty when there is none, e.g. after
//! an interrupt before any answer).

use agentwire_protocol::ThreadItemKind;
use agentwire_store::meta::new_id;

use super::{Steer, TurnRun, now_ms};

/// What marks a turn as a review.
#[derive(Debug, Clone)]
pub(crate) struct ReviewMode {
    /// What is reviewed, for display (the `review` of `enteredReviewMode`).
    pub hint: String,
}

impl TurnRun {
    /// The item of new input: `enteredReviewMode` for a review's own input, else the user
    /// message (input steered into a review is the user's).
    pub(super) async fn open_input(&mut self, input: &Steer) {
        let entered = self
            .turn
            .items
            .iter()
            .any(|i| matches!(i.kind, ThreadItemKind::EnteredReviewMode { .. }));
        match &self.review {
            Some(review) if !entered => {
                let kind = ThreadItemKind::entered_review_mode()
                    .id(new_id())
                    .review(review.hint.clone())
                    .build();
                let at = now_ms();
                self.started(kind.clone(), at);
                self.complete(kind, at).await;
            }
            _ => self.user_message(input).await,
        }
    }

    /// Closes a review turn with `exitedReviewMode`; nothing for other turns.
    pub(super) async fn exit_review(&mut self) {
        if self.review.take().is_none() {
            return;
        }
        let review = self
            .turn
            .items
            .iter()
            .rev()
            .find_map(|i| match &i.kind {
                ThreadItemKind::AgentMessage { text, .. } => Some(text.clone()),
                _ => None,
            })
            .unwrap_or_default();
        let kind = ThreadItemKind::exited_review_mode()
            .id(new_id())
            .review(review)
            .build();
        let at = now_ms();
        self.started(kind.clone(), at);
        self.complete(kind, at).await;
    }
}
