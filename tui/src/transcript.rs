//! What the terminal client shows of a thread: a list of cells built from the server's
//! notifications (and from the history `thread/resume` returns), updated in place as deltas
//! arrive. Rendering is elsewhere ([`crate::view`] and [`crate::plain`]); this module only keeps
//! state, so it is tested without a terminal.
//!
//! Besides the cells it keeps what the status line and the commands need: the running turn and
//! since when it runs, the thread's token usage, the last turn diff (`/diff`) and the items an
//! approval waits on.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use agentwire_protocol::{
    AgentMessageDeltaNotification, CommandExecutionOutputDeltaNotification, ErrorNotification,
    ItemCompletedNotification, ItemStartedNotification, PatchChangeKind,
    ReasoningSummaryTextDeltaNotification, ThreadItem, ThreadItemKind, ThreadTokenUsage,
    ThreadTokenUsageUpdatedNotification, Turn, TurnCompletedNotification,
    TurnDiffUpdatedNotification, TurnPlanStepStatus, TurnPlanUpdatedNotification,
    TurnStartedNotification, TurnStatus, UserInput,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// One block of the transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cell {
    /// What the user sent.
    User(String),
    /// The agent's answer, growing with each delta.
    Agent(String),
    /// The agent's reasoning summary, growing with each delta.
    Reasoning(String),
    /// A command and its output so far; `exit` once it finished.
    Command {
        /// The command line.
        command: String,
        /// Output so far.
        output: String,
        /// Exit code, once known.
        exit: Option<i32>,
        /// `inProgress`, `completed`, `failed` or `declined`, or [`WAITING_FOR_APPROVAL`].
        status: String,
    },
    /// File changes: (path, what happened, unified diff).
    Patch {
        /// Each changed file.
        changes: Vec<(String, String, String)>,
        /// `inProgress`, `completed`, `failed` or `declined`, or [`WAITING_FOR_APPROVAL`].
        status: String,
    },
    /// The agent's plan: each step with `[ ]`, `[~]` or `[x]`.
    Plan(Vec<String>),
    /// A tool call that is not a command or a patch (MCP, client tools): a label and status.
    Tool(String),
    /// Something the client says (thread started, turn interrupted …).
    Notice(String),
    /// An error the server reported.
    Error(String),
    /// A unified diff shown on request (`/diff`): a heading, then the diff.
    Diff {
        /// What the diff is of.
        title: String,
        /// The unified diff.
        diff: String,
    },
}

/// The status this client gives a command or file change while the server waits for the user
/// to approve it (an approval request names the item); the server's own statuses replace it.
pub const WAITING_FOR_APPROVAL: &str = "waitingForApproval";

/// The last diff a turn of the thread reported (`turn/diff/updated`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnDiff {
    /// The turn.
    pub turn_id: String,
    /// Its unified diff of every file it changed.
    pub diff: String,
}

/// The cells of the current thread, and what is running.
#[derive(Debug, Default)]
pub struct Transcript {
    cells: Vec<Cell>,
    /// Index in `cells` of each item shown, by item id.
    items: HashMap<String, usize>,
    /// The plan cell of each turn, by turn id.
    plans: HashMap<String, usize>,
    /// The running turn, if any.
    pub running_turn: Option<String>,
    /// When this client saw the running turn start.
    pub running_since: Option<Instant>,
    /// The thread's token usage, as last reported.
    pub token_usage: Option<ThreadTokenUsage>,
    /// The last turn diff reported for the thread.
    pub turn_diff: Option<TurnDiff>,
    /// Items (by id) whose approval the server waits for.
    waiting: HashSet<String>,
}

impl Transcript {
    /// The cells, oldest first.
    pub fn cells(&self) -> &[Cell] {
        &self.cells
    }

    /// Empties the transcript (a new or another thread).
    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// Adds a notice.
    pub fn notice(&mut self, text: impl Into<String>) {
        self.cells.push(Cell::Notice(text.into()));
    }

    /// Adds an error line.
    pub fn error(&mut self, text: impl Into<String>) {
        self.cells.push(Cell::Error(text.into()));
    }

    /// Shows the turns of a thread read from the server (`thread/resume`, `thread/read`).
    pub fn load_turns(&mut self, turns: &[Turn]) {
        for turn in turns {
            for item in &turn.items {
                self.show_item(item);
            }
            self.turn_ended(turn);
        }
        self.running_turn = None;
        self.running_since = None;
    }

    /// Marks the item an approval request names as waiting for the user (`true`), or as
    /// running again once the approval is answered or withdrawn (`false`). An item not shown
    /// yet takes the mark when it appears.
    pub fn set_waiting(&mut self, item_id: &str, waiting: bool) {
        if waiting {
            self.waiting.insert(item_id.to_owned());
        } else {
            self.waiting.remove(item_id);
        }
        if let Some(&at) = self.items.get(item_id) {
            mark_waiting(&mut self.cells[at], waiting);
        }
    }

    /// Shows the last turn diff of the thread (`/diff`), or says there is none.
    pub fn show_turn_diff(&mut self) {
        match self.turn_diff.clone() {
            Some(TurnDiff { turn_id, diff }) => self.cells.push(Cell::Diff {
                title: format!("changes made by turn {turn_id}"),
                diff,
            }),
            None => self.notice(
                "no turn of this thread has changed files since this client opened it \
                 (/diff shows the server's turn/diff/updated)",
            ),
        }
    }

    /// Applies one notification; returns whether anything visible changed. Notifications this
    /// client does not show, and params it cannot read, change nothing.
    pub fn apply(&mut self, method: &str, params: &Value) -> bool {
        match method {
            "item/started" => parse(params).is_some_and(|n: ItemStartedNotification| {
                self.show_item(&n.item);
                true
            }),
            "item/completed" => parse(params).is_some_and(|n: ItemCompletedNotification| {
                self.show_item(&n.item);
                true
            }),
            "item/agentMessage/delta" => {
                parse(params).is_some_and(|n: AgentMessageDeltaNotification| {
                    self.append(&n.item_id, &n.delta, || Cell::Agent(String::new()))
                })
            }
            "item/reasoning/summaryTextDelta" => {
                parse(params).is_some_and(|n: ReasoningSummaryTextDeltaNotification| {
                    self.append(&n.item_id, &n.delta, || Cell::Reasoning(String::new()))
                })
            }
            "item/commandExecution/outputDelta" => {
                parse(params).is_some_and(|n: CommandExecutionOutputDeltaNotification| {
                    self.append(&n.item_id, &n.delta, || Cell::Command {
                        command: String::new(),
                        output: String::new(),
                        exit: None,
                        status: "inProgress".to_owned(),
                    })
                })
            }
            "turn/started" => parse(params).is_some_and(|n: TurnStartedNotification| {
                if self.running_turn.as_deref() != Some(n.turn.id.as_str()) {
                    self.running_since = Some(Instant::now());
                }
                self.running_turn = Some(n.turn.id);
                true
            }),
            "turn/completed" => parse(params).is_some_and(|n: TurnCompletedNotification| {
                self.turn_ended(&n.turn);
                if self.running_turn.as_deref() == Some(n.turn.id.as_str()) {
                    self.running_turn = None;
                    self.running_since = None;
                }
                true
            }),
            "turn/diff/updated" => parse(params).is_some_and(|n: TurnDiffUpdatedNotification| {
                self.turn_diff = Some(TurnDiff {
                    turn_id: n.turn_id,
                    diff: n.diff,
                });
                false
            }),
            "turn/plan/updated" => parse(params).is_some_and(|n: TurnPlanUpdatedNotification| {
                let steps = n
                    .plan
                    .iter()
                    .map(|step| {
                        let mark = match step.status {
                            TurnPlanStepStatus::Pending => "[ ]",
                            TurnPlanStepStatus::InProgress => "[~]",
                            TurnPlanStepStatus::Completed => "[x]",
                            _ => "[?]",
                        };
                        format!("{mark} {}", step.step)
                    })
                    .collect();
                match self.plans.get(&n.turn_id) {
                    Some(&at) => self.cells[at] = Cell::Plan(steps),
                    None => {
                        self.plans.insert(n.turn_id, self.cells.len());
                        self.cells.push(Cell::Plan(steps));
                    }
                }
                true
            }),
            "error" => parse(params).is_some_and(|n: ErrorNotification| {
                if n.will_retry {
                    self.notice(format!("retrying: {}", n.error.message));
                } else {
                    self.error(n.error.message);
                }
                true
            }),
            "thread/tokenUsage/updated" => {
                parse(params).is_some_and(|n: ThreadTokenUsageUpdatedNotification| {
                    self.token_usage = Some(n.token_usage);
                    true
                })
            }
            "model/rerouted" => {
                let text = |key: &str| params.get(key).and_then(Value::as_str);
                match (text("fromModel"), text("toModel")) {
                    (Some(from), Some(to)) => {
                        self.notice(format!("{to} answered instead of {from} (model/rerouted)"));
                        true
                    }
                    _ => false,
                }
            }
            _ => false,
        }
    }

    fn turn_ended(&mut self, turn: &Turn) {
        match turn.status {
            TurnStatus::Interrupted => self.notice("turn interrupted"),
            TurnStatus::Failed => {
                let why = turn
                    .error
                    .as_ref()
                    .map_or("no reason given", |e| e.message.as_str());
                self.error(format!("turn failed: {why}"));
            }
            TurnStatus::Completed | TurnStatus::InProgress => {}
            _ => self.notice("turn ended"),
        }
    }

    /// Appends `delta` to the item's text, creating its cell with `new` on the first delta.
    fn append(&mut self, item_id: &str, delta: &str, new: impl FnOnce() -> Cell) -> bool {
        let at = match self.items.get(item_id) {
            Some(&at) => at,
            None => {
                self.items.insert(item_id.to_owned(), self.cells.len());
                self.cells.push(new());
                self.cells.len() - 1
            }
        };
        match &mut self.cells[at] {
            Cell::Agent(text) | Cell::Reasoning(text) => text.push_str(delta),
            Cell::Command { output, .. } => output.push_str(delta),
            _ => return false,
        }
        true
    }

    /// Shows an item: a new cell when it starts, its final form when it completes (keeping
    /// what was streamed when the final form carries less).
    fn show_item(&mut self, item: &ThreadItem) {
        let Some((id, cell)) = cell_of(&item.kind) else {
            return;
        };
        match self.items.get(&id) {
            Some(&at) => {
                let streamed = std::mem::replace(&mut self.cells[at], cell);
                keep_streamed(&mut self.cells[at], streamed);
            }
            None => {
                self.items.insert(id.clone(), self.cells.len());
                self.cells.push(cell);
            }
        }
        if self.waiting.contains(&id)
            && let Some(&at) = self.items.get(&id)
        {
            mark_waiting(&mut self.cells[at], true);
        }
    }
}

/// Gives a running command or file change the waiting status, or takes it back.
fn mark_waiting(cell: &mut Cell, waiting: bool) {
    let (from, to) = if waiting {
        ("inProgress", WAITING_FOR_APPROVAL)
    } else {
        (WAITING_FOR_APPROVAL, "inProgress")
    };
    if let Cell::Command { status, .. } | Cell::Patch { status, .. } = cell
        && status == from
    {
        *status = to.to_owned();
    }
}

/// Keeps text streamed into a cell when the item's final form carries less of it.
fn keep_streamed(last: &mut Cell, streamed: Cell) {
    match (last, streamed) {
        (Cell::Agent(text), Cell::Agent(old)) | (Cell::Reasoning(text), Cell::Reasoning(old))
            if text.len() < old.len() =>
        {
            *text = old;
        }
        (Cell::Command { output, .. }, Cell::Command { output: old, .. }) if output.is_empty() => {
            *output = old;
        }
        _ => {}
    }
}

/// The cell a finished item (as sent in `item/completed`) shows as, if this client shows it.
pub fn cell_of_item(item: &Value) -> Option<Cell> {
    let item: ThreadItem = parse(item)?;
    cell_of(&item.kind).map(|(_, cell)| cell)
}

/// The cell an item shows as, with its id; `None` for items this client does not show.
fn cell_of(kind: &ThreadItemKind) -> Option<(String, Cell)> {
    Some(match kind {
        ThreadItemKind::UserMessage { id, content, .. } => {
            let text = content
                .iter()
                .map(|input| match input {
                    UserInput::Text { text, .. } => text.clone(),
                    _ => "[attachment]".to_owned(),
                })
                .collect::<Vec<_>>()
                .join(" ");
            (id.clone(), Cell::User(text))
        }
        ThreadItemKind::AgentMessage { id, text, .. } => (id.clone(), Cell::Agent(text.clone())),
        ThreadItemKind::Reasoning { id, summary, .. } => {
            (id.clone(), Cell::Reasoning(summary.join("")))
        }
        ThreadItemKind::CommandExecution {
            id,
            command,
            status,
            aggregated_output,
            exit_code,
            ..
        } => (
            id.clone(),
            Cell::Command {
                command: command.clone(),
                output: aggregated_output.clone().unwrap_or_default(),
                exit: *exit_code,
                status: status_of(status),
            },
        ),
        ThreadItemKind::FileChange {
            id,
            status,
            changes,
            ..
        } => (
            id.clone(),
            Cell::Patch {
                changes: changes
                    .iter()
                    .map(|change| {
                        let what = match &change.kind {
                            PatchChangeKind::Add => "added".to_owned(),
                            PatchChangeKind::Delete => "deleted".to_owned(),
                            PatchChangeKind::Update {
                                move_path: Some(to),
                                ..
                            } => {
                                format!("moved to {to}")
                            }
                            PatchChangeKind::Update {
                                move_path: None, ..
                            } => "edited".to_owned(),
                            _ => "changed".to_owned(),
                        };
                        (change.path.clone(), what, change.diff.clone())
                    })
                    .collect(),
                status: status_of(status),
            },
        ),
        ThreadItemKind::McpToolCall {
            id,
            server,
            tool,
            status,
            ..
        } => (
            id.clone(),
            Cell::Tool(format!("{server}.{tool} ({})", status_of(status))),
        ),
        ThreadItemKind::DynamicToolCall {
            id, tool, status, ..
        } => (
            id.clone(),
            Cell::Tool(format!("{tool} ({})", status_of(status))),
        ),
        ThreadItemKind::EnteredReviewMode { id, review, .. } => {
            (id.clone(), Cell::Notice(format!("reviewing {review}")))
        }
        ThreadItemKind::ExitedReviewMode { id, .. } => {
            (id.clone(), Cell::Notice("review finished".to_owned()))
        }
        ThreadItemKind::ContextCompaction { id, .. } => (
            id.clone(),
            Cell::Notice("context compacted: later turns start from the summary".to_owned()),
        ),
        _ => return None,
    })
}

/// A status enum as its wire string.
fn status_of<T: serde::Serialize>(status: &T) -> String {
    match serde_json::to_value(status) {
        Ok(Value::String(text)) => text,
        _ => "unknown".to_owned(),
    }
}

fn parse<T: DeserializeOwned>(params: &Value) -> Option<T> {
    T::deserialize(params).ok()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn item(kind: Value) -> Value {
        json!({"threadId": "t", "turnId": "u", "item": kind, "startedAtMs": 1, "completedAtMs": 2})
    }

    #[test]
    fn deltas_grow_cells_in_place_and_completion_keeps_what_streamed() {
        let mut t = Transcript::default();
        assert!(t.apply(
            "turn/started",
            &json!({"threadId": "t", "turn": {"id": "u", "items": [], "status": "inProgress"}})
        ));
        assert_eq!(t.running_turn.as_deref(), Some("u"));
        let delta = |id: &str, text: &str| json!({"threadId": "t", "turnId": "u", "itemId": id, "delta": text});
        assert!(t.apply("item/agentMessage/delta", &delta("m", "Hel")));
        assert!(t.apply("item/agentMessage/delta", &delta("m", "lo")));
        assert_eq!(t.cells(), [Cell::Agent("Hello".into())]);
        // A final item with less text than streamed (a server that sends the text only in
        // deltas) keeps the streamed text; one with the whole text replaces it.
        assert!(t.apply(
            "item/completed",
            &item(json!({"type": "agentMessage", "id": "m", "text": ""}))
        ));
        assert_eq!(t.cells(), [Cell::Agent("Hello".into())]);
        assert!(t.apply(
            "item/completed",
            &item(json!({"type": "agentMessage", "id": "m", "text": "Hello!"}))
        ));
        assert_eq!(t.cells(), [Cell::Agent("Hello!".into())]);

        assert!(t.apply("item/commandExecution/outputDelta", &delta("c", "out\n")));
        assert!(t.apply(
            "item/completed",
            &item(json!({
                "type": "commandExecution", "id": "c", "command": "ls", "cwd": "/w",
                "status": "completed", "commandActions": [], "exitCode": 0,
            }))
        ));
        assert_eq!(
            t.cells()[1],
            Cell::Command {
                command: "ls".into(),
                output: "out\n".into(),
                exit: Some(0),
                status: "completed".into()
            }
        );

        let plan = |status: &str| json!({"threadId": "t", "turnId": "u", "plan": [{"step": "read", "status": status}]});
        assert!(t.apply("turn/plan/updated", &plan("inProgress")));
        assert!(t.apply("turn/plan/updated", &plan("completed")));
        assert_eq!(
            t.cells()[2],
            Cell::Plan(vec!["[x] read".into()]),
            "one plan cell per turn"
        );

        assert!(t.apply(
            "turn/completed",
            &json!({"threadId": "t", "turn": {
            "id": "u", "items": [], "status": "failed", "error": {"message": "boom"}}})
        ));
        assert_eq!(t.running_turn, None);
        assert_eq!(t.cells()[3], Cell::Error("turn failed: boom".into()));
    }

    #[test]
    fn an_item_waiting_for_approval_says_so_until_it_is_answered() {
        let mut t = Transcript::default();
        let command = |status: &str| {
            item(json!({
                "type": "commandExecution", "id": "c", "command": "make", "cwd": "/w",
                "status": status, "commandActions": [],
            }))
        };
        // The approval request may come before the item is shown: the item takes the mark.
        t.set_waiting("c", true);
        assert!(t.apply("item/started", &command("inProgress")));
        let status_of_cell = |t: &Transcript| match &t.cells()[0] {
            Cell::Command { status, .. } => status.clone(),
            other => panic!("not a command: {other:?}"),
        };
        assert_eq!(status_of_cell(&t), WAITING_FOR_APPROVAL);
        t.set_waiting("c", false);
        assert_eq!(status_of_cell(&t), "inProgress");
        t.set_waiting("c", true);
        assert_eq!(status_of_cell(&t), WAITING_FOR_APPROVAL);
        // The server's final status replaces the mark.
        t.set_waiting("c", false);
        assert!(t.apply("item/completed", &command("declined")));
        t.set_waiting("c", true);
        assert_eq!(
            status_of_cell(&t),
            "declined",
            "a finished item is not marked"
        );
    }

    #[test]
    fn the_last_turn_diff_is_kept_for_diff_and_usage_for_status() {
        let mut t = Transcript::default();
        t.show_turn_diff();
        assert!(
            matches!(&t.cells()[0], Cell::Notice(text) if text.starts_with("no turn")),
            "{:?}",
            t.cells()
        );
        let diff = |turn: &str, text: &str| json!({"threadId": "t", "turnId": turn, "diff": text});
        assert!(!t.apply("turn/diff/updated", &diff("u1", "+a\n")));
        assert!(!t.apply("turn/diff/updated", &diff("u2", "+b\n")));
        t.show_turn_diff();
        assert_eq!(
            t.cells()[1],
            Cell::Diff {
                title: "changes made by turn u2".into(),
                diff: "+b\n".into()
            }
        );
        let breakdown = json!({"inputTokens": 7, "cachedInputTokens": 0,
            "outputTokens": 3, "reasoningOutputTokens": 0, "totalTokens": 10});
        assert!(t.apply(
            "thread/tokenUsage/updated",
            &json!({"threadId": "t", "turnId": "u2", "tokenUsage": {
                "total": breakdown, "last": breakdown, "modelContextWindow": null}})
        ));
        assert_eq!(t.token_usage.map(|u| u.total.total_tokens), Some(10));
    }

    #[test]
    fn unknown_notifications_and_unreadable_params_change_nothing() {
        let mut t = Transcript::default();
        assert!(!t.apply("thread/started", &json!({})));
        assert!(!t.apply("item/agentMessage/delta", &json!({"delta": 5})));
        assert!(!t.apply(
            "item/started",
            &json!({"item": {"type": "noSuchKind", "id": "x"}})
        ));
        assert!(t.cells().is_empty());
    }
}
