//! What a client keeps on a thread beside its history: its goal (`thread/goal/get|set|clear`,
//! broadcasting `thread/goal/updated|cleared`) and what the user has read
//! (`thread/readState/update`, broadcasting `thread/readState/changed`).
//!
//! Both are rollout records (`goal`, `readMark`), so they persist in whichever store holds the
//! thread and come back when it is read again; a read mark does not change the thread's update
//! time, so marking a thread read does not move it in `thread/list`.
//!
//! A goal's `tokensUsed` is the thread's running token total minus the total when the goal was
//! set, and `timeUsedSeconds` the time of the turns that began since; both are worked out when
//! the goal is read, so they follow every turn without being written by it.
//!
//! A read state's `revision` names the thread's turns as the user could have seen them (their
//! count and the last one's id and status): an update whose `expectedRevision` is not the
//! current one is refused, since the user has not seen what came after.

use agentwire_protocol::methods::{ThreadGoalCleared, ThreadGoalUpdated, ThreadReadStateChanged};
use agentwire_protocol::{
    ThreadGoal, ThreadGoalClearParams, ThreadGoalClearResponse, ThreadGoalClearedNotification,
    ThreadGoalGetParams, ThreadGoalGetResponse, ThreadGoalSetParams, ThreadGoalSetResponse,
    ThreadGoalStatus, ThreadGoalUpdatedNotification, ThreadReadState,
    ThreadReadStateChangedNotification, ThreadReadStateOperation, ThreadReadStateUpdateParams,
    ThreadReadStateUpdateResponse, ThreadUnreadPosition, Turn, TurnStatus,
};
use agentwire_runtime::RequestContext;
use agentwire_store::error::ThreadError;
use agentwire_store::meta::{GoalRecord, ThreadSummary, now};
use agentwire_store::record::RolloutRecord;
use agentwire_support::lock;

use super::Threads;

/// Longest objective accepted, in bytes.
const MAX_OBJECTIVE_BYTES: usize = 16 * 1024;

impl Threads {
    /// `thread/goal/get`.
    pub(crate) fn goal_get(
        &self,
        params: ThreadGoalGetParams,
    ) -> Result<ThreadGoalGetResponse, ThreadError> {
        let (summary, turns) = self.snapshot(&params.thread_id)?;
        let goal = summary
            .goal
            .as_ref()
            .map(|g| wire_goal(&params.thread_id, g, &summary, &turns));
        Ok(ThreadGoalGetResponse::builder().maybe_goal(goal).build())
    }

    /// `thread/goal/set`: sets a goal (an objective is required then) or changes the thread's
    /// goal; broadcasts `thread/goal/updated`.
    pub(crate) fn goal_set(
        &self,
        context: &RequestContext,
        params: ThreadGoalSetParams,
    ) -> Result<ThreadGoalSetResponse, ThreadError> {
        let id = params.thread_id.clone();
        let objective = match params.objective.as_deref().map(str::trim) {
            Some("") => {
                return Err(ThreadError::InvalidParams(
                    "objective: must not be empty".into(),
                ));
            }
            Some(text) if text.len() > MAX_OBJECTIVE_BYTES => {
                return Err(ThreadError::InvalidParams(format!(
                    "objective: longer than {MAX_OBJECTIVE_BYTES} bytes"
                )));
            }
            other => other.map(str::to_owned),
        };
        if params.token_budget.is_some_and(|b| b <= 0) {
            return Err(ThreadError::InvalidParams(
                "tokenBudget: must be a positive number of tokens".into(),
            ));
        }
        let at = now();
        let (summary, turns) = self.snapshot(&id)?;
        let goal = match (summary.goal.clone(), objective) {
            (None, None) => {
                return Err(ThreadError::InvalidParams(format!(
                    "objective: required, thread {id} has no goal yet"
                )));
            }
            (None, Some(objective)) => GoalRecord {
                objective,
                status: params.status.unwrap_or(ThreadGoalStatus::Active),
                token_budget: params.token_budget,
                created_at: at,
                updated_at: at,
                tokens_at_start: total_tokens(&summary),
            },
            (Some(mut goal), objective) => {
                if let Some(objective) = objective {
                    goal.objective = objective;
                }
                if let Some(status) = params.status {
                    goal.status = status;
                }
                if params.token_budget.is_some() {
                    goal.token_budget = params.token_budget;
                }
                goal.updated_at = at;
                goal
            }
        };
        self.record(
            &id,
            RolloutRecord::Goal {
                at,
                goal: Some(goal.clone()),
            },
        )?;
        let mut summary = summary;
        summary.goal = Some(goal.clone());
        let wire = wire_goal(&id, &goal, &summary, &turns);
        let hub = context.peer.hub().clone();
        let notification = ThreadGoalUpdatedNotification::builder()
            .goal(wire.clone())
            .thread_id(id)
            .build();
        context.after_response(move || hub.broadcast::<ThreadGoalUpdated>(&notification));
        Ok(ThreadGoalSetResponse::builder().goal(wire).build())
    }

    /// `thread/goal/clear`: broadcasts `thread/goal/cleared` when there was a goal.
    pub(crate) fn goal_clear(
        &self,
        context: &RequestContext,
        params: ThreadGoalClearParams,
    ) -> Result<ThreadGoalClearResponse, ThreadError> {
        let id = params.thread_id;
        let (summary, _) = self.snapshot(&id)?;
        if summary.goal.is_none() {
            return Ok(ThreadGoalClearResponse::builder().cleared(false).build());
        }
        self.record(
            &id,
            RolloutRecord::Goal {
                at: now(),
                goal: None,
            },
        )?;
        let hub = context.peer.hub().clone();
        let notification = ThreadGoalClearedNotification::builder()
            .thread_id(id)
            .build();
        context.after_response(move || hub.broadcast::<ThreadGoalCleared>(&notification));
        Ok(ThreadGoalClearResponse::builder().cleared(true).build())
    }

    /// `thread/readState/update`: marks the thread read (through its last turn) or its last
    /// turn unread; broadcasts `thread/readState/changed`.
    pub(crate) fn read_state_update(
        &self,
        context: &RequestContext,
        params: ThreadReadStateUpdateParams,
    ) -> Result<ThreadReadStateUpdateResponse, ThreadError> {
        let id = params.thread_id;
        let (_, turns) = self.snapshot(&id)?;
        let current = revision(&turns);
        if params.expected_revision != current {
            return Err(ThreadError::Conflict(format!(
                "thread {id} changed since revision {} (now {current}): read it again",
                params.expected_revision
            )));
        }
        let through = match params.operation {
            ThreadReadStateOperation::Unread => turns.iter().rev().nth(1).map(|t| t.id.clone()),
            // `read`, and any operation newer than this server: everything is read.
            _ => turns.last().map(|t| t.id.clone()),
        };
        self.record(
            &id,
            RolloutRecord::ReadMark {
                through: through.clone(),
            },
        )?;
        let state = read_state(&turns, Some(&through));
        let hub = context.peer.hub().clone();
        let notification = ThreadReadStateChangedNotification::builder()
            .read_state(state.clone())
            .thread_id(id)
            .build();
        context.after_response(move || hub.broadcast::<ThreadReadStateChanged>(&notification));
        Ok(ThreadReadStateUpdateResponse::builder()
            .read_state(state)
            .build())
    }

    /// Appends `record` to thread `id`, loaded or not, and waits until it is durable.
    fn record(&self, id: &str, record: RolloutRecord) -> Result<(), ThreadError> {
        let at = record.at();
        if let Some(thread) = self.loaded(id) {
            let pending = {
                let mut thread = lock(&thread);
                apply(&mut thread.summary, &record);
                let at = at.unwrap_or(thread.summary.updated_at);
                thread.append(&[record], at)?
            };
            return pending.wait();
        }
        let mut row = self.lookup(id)?;
        let replayed = self.read_rollout(&row)?;
        let at = at.unwrap_or(replayed.summary.updated_at);
        self.append_stored(&mut row, replayed, record.clone(), at, |summary| {
            apply(summary, &record)
        })
    }
}

/// Makes `summary` say what `record` says (for the records of this module).
fn apply(summary: &mut ThreadSummary, record: &RolloutRecord) {
    match record {
        RolloutRecord::Goal { goal, .. } => summary.goal = goal.clone(),
        RolloutRecord::ReadMark { through } => summary.read_mark = Some(through.clone()),
        _ => {}
    }
}

/// The thread's running token total; 0 before its first model call.
fn total_tokens(summary: &ThreadSummary) -> i64 {
    summary
        .token_usage
        .as_ref()
        .map_or(0, |t| t.usage.total.total_tokens)
}

/// `goal` as the wire shows it, with what the thread's turns used since it was set.
fn wire_goal(id: &str, goal: &GoalRecord, summary: &ThreadSummary, turns: &[Turn]) -> ThreadGoal {
    let now = now();
    let seconds: i64 = turns
        .iter()
        .filter_map(|turn| {
            let started = turn.started_at?;
            (started >= goal.created_at).then(|| match (turn.duration_ms, turn.completed_at) {
                (Some(ms), _) => ms / 1000,
                (None, Some(done)) => done - started,
                (None, None) => now - started,
            })
        })
        .map(|s| s.max(0))
        .sum();
    ThreadGoal::builder()
        .created_at(goal.created_at)
        .objective(goal.objective.clone())
        .status(goal.status)
        .thread_id(id)
        .time_used_seconds(seconds)
        .maybe_token_budget(goal.token_budget)
        .tokens_used((total_tokens(summary) - goal.tokens_at_start).max(0))
        .updated_at(goal.updated_at)
        .build()
}

/// The revision of a thread with `turns`: their count and the last one's id and status.
pub(crate) fn revision(turns: &[Turn]) -> String {
    match turns.last() {
        None => "0".to_owned(),
        Some(last) => {
            let status = match last.status {
                TurnStatus::InProgress => "running",
                _ => "done",
            };
            format!("{}:{}:{status}", turns.len(), last.id)
        }
    }
}

/// The read state of a thread with `turns` and read mark `mark` (see
/// [`ThreadSummary::read_mark`]): a thread nobody marked reads as read.
pub(crate) fn read_state(turns: &[Turn], mark: Option<&Option<String>>) -> ThreadReadState {
    let first_unread = match mark {
        None => None,
        Some(None) => (!turns.is_empty()).then_some(ThreadUnreadPosition::ThreadStart),
        Some(Some(through)) => match turns.iter().position(|t| t.id == *through) {
            Some(at) => turns
                .get(at + 1)
                .map(|t| ThreadUnreadPosition::turn(t.id.clone())),
            // The turn read last was reverted away: everything left was seen before it.
            None => None,
        },
    };
    ThreadReadState::builder()
        .maybe_first_unread(first_unread)
        .revision(revision(turns))
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentwire_protocol::TurnItemsView;

    fn turn(id: &str, status: TurnStatus) -> Turn {
        Turn::builder()
            .id(id)
            .status(status)
            .items(Vec::new())
            .items_view(TurnItemsView::Full)
            .build()
    }

    #[test]
    fn a_thread_nobody_marked_reads_as_read_and_an_unread_mark_points_at_the_turn_after() {
        let turns = [
            turn("a", TurnStatus::Completed),
            turn("b", TurnStatus::Completed),
        ];
        assert_eq!(read_state(&turns, None).first_unread, None);
        assert_eq!(
            read_state(&turns, Some(&None)).first_unread,
            Some(ThreadUnreadPosition::ThreadStart)
        );
        assert_eq!(
            read_state(&turns, Some(&Some("a".into()))).first_unread,
            Some(ThreadUnreadPosition::turn("b"))
        );
        assert_eq!(
            read_state(&turns, Some(&Some("b".into()))).first_unread,
            None
        );
    }

    #[test]
    fn the_revision_moves_when_a_turn_starts_and_when_it_ends() {
        let running = [turn("a", TurnStatus::InProgress)];
        let done = [turn("a", TurnStatus::Completed)];
        assert_eq!(revision(&[]), "0");
        assert_ne!(revision(&running), revision(&done));
        assert_ne!(
            revision(&done),
            revision(&[
                turn("a", TurnStatus::Completed),
                turn("b", TurnStatus::InProgress)
            ])
        );
    }
}
