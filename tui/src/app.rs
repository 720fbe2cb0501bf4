//! The full-screen front end: keys and server messages in, a redrawn screen out.
//!
//! Enter sends the input (a new turn, or steering while a turn runs); a line starting with `/`
//! is a command ([`crate::command`]). While the server waits for an approval, `y`, `a`, `n` and
//! `c` answer it, and the command or file change it is for shows "waiting for approval". Ctrl-C
//! interrupts the running turn; a second Ctrl-C within [`QUIT_WINDOW`] (or one while nothing
//! runs, pressed twice) exits. While a turn runs the screen is redrawn every [`TICK`], so the
//! status line's timer counts.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crossterm::event::{Event, EventStream, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use futures_util::StreamExt;
use ratatui::DefaultTerminal;
use serde_json::Value;
use tokio::sync::mpsc;

use crate::command::{self, Command};
use crate::connection::Incoming;
use crate::session::{Approval, Decision, Session};
use crate::status::{Activity, Status};
use crate::transcript::Transcript;
use crate::view;

/// How soon a second Ctrl-C must follow the first to exit.
pub const QUIT_WINDOW: Duration = Duration::from_secs(3);

/// How often the screen is redrawn while a turn runs (for the elapsed time).
pub const TICK: Duration = Duration::from_millis(500);

/// Everything the screen shows.
#[derive(Debug)]
pub struct App {
    /// The current thread's transcript.
    pub transcript: Transcript,
    /// What the user is typing.
    pub input: String,
    /// The approval being asked, if any; later ones wait in `queued`.
    pub approval: Option<Approval>,
    queued: VecDeque<Approval>,
    /// Lines scrolled up from the bottom of the transcript.
    pub scroll: usize,
    session: Session,
    last_ctrl_c: Option<Instant>,
    quit: bool,
}

impl App {
    /// A screen for `session`.
    pub fn new(session: Session) -> Self {
        Self {
            transcript: Transcript::default(),
            input: String::new(),
            approval: None,
            queued: VecDeque::new(),
            scroll: 0,
            session,
            last_ctrl_c: None,
            quit: false,
        }
    }

    /// The status line: the model and effort in use, what is running and for how long, the
    /// thread and its tokens.
    pub fn status_line(&self) -> String {
        let since = self
            .transcript
            .running_since
            .map(|at| at.elapsed())
            .unwrap_or_default();
        let activity = if self.approval.is_some() {
            Activity::WaitingForApproval(since)
        } else if self.transcript.running_turn.is_some() {
            Activity::Working(since)
        } else {
            Activity::Ready
        };
        Status {
            thread: self.session.thread_id.as_deref(),
            in_use: &self.session.in_use,
            default_effort: self.session.default_effort(),
            activity,
            usage: self.transcript.token_usage.as_ref(),
        }
        .line()
    }

    /// Shows `approval`, or queues it behind the one shown.
    fn ask(&mut self, approval: Approval) {
        if let Some(item) = &approval.item_id {
            self.transcript.set_waiting(item, true);
        }
        if self.approval.is_none() {
            self.approval = Some(approval);
        } else {
            self.queued.push_back(approval);
        }
    }

    /// Takes `approval` off the screen (answered or withdrawn) and shows the next one.
    fn settle(&mut self, approval: &Approval) {
        if let Some(item) = &approval.item_id {
            self.transcript.set_waiting(item, false);
        }
        self.queued.retain(|a| a.id != approval.id);
        if self.approval.as_ref().is_some_and(|a| a.id == approval.id) {
            self.approval = self.queued.pop_front();
        }
    }

    async fn on_key(&mut self, key: KeyEvent) {
        if key.kind == KeyEventKind::Release {
            return;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && matches!(key.code, KeyCode::Char('c' | 'd')) {
            return self.on_ctrl_c().await;
        }
        if let Some(approval) = self.approval.clone() {
            let decision = match key.code {
                KeyCode::Char(c) => Decision::from_answer(&c.to_string()),
                _ => None,
            };
            if let Some(decision) = decision {
                Session::decide(&approval, decision);
                self.settle(&approval);
            }
            return;
        }
        match key.code {
            KeyCode::Enter => {
                let text = std::mem::take(&mut self.input);
                self.scroll = 0;
                self.submit(text.trim()).await;
            }
            KeyCode::Backspace => {
                self.input.pop();
            }
            KeyCode::PageUp => self.scroll = self.scroll.saturating_add(10),
            KeyCode::PageDown => self.scroll = self.scroll.saturating_sub(10),
            KeyCode::Char(c) if !ctrl => self.input.push(c),
            _ => {}
        }
    }

    async fn on_ctrl_c(&mut self) {
        let again = self
            .last_ctrl_c
            .is_some_and(|at| at.elapsed() < QUIT_WINDOW);
        if again {
            self.quit = true;
            return;
        }
        self.last_ctrl_c = Some(Instant::now());
        match self.transcript.running_turn.clone() {
            Some(turn) => {
                self.transcript
                    .notice("interrupting (Ctrl-C again to exit)");
                if let Err(e) = self.session.interrupt(&turn).await {
                    self.transcript.error(format!("interrupt: {e}"));
                }
            }
            None => self.transcript.notice("press Ctrl-C again to exit"),
        }
    }

    async fn submit(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        match command::parse(text) {
            Ok(Some(command)) => self.run(command).await,
            Ok(None) => {
                let running = self.transcript.running_turn.clone();
                if let Err(e) = self.session.send(text, running.as_deref()).await {
                    self.transcript.error(format!("sending: {e}"));
                }
            }
            Err(e) => self.transcript.error(e),
        }
    }

    async fn run(&mut self, command: Command) {
        let outcome = command::run(&mut self.session, &mut self.transcript, command).await;
        if outcome.quit {
            self.quit = true;
        }
    }

    async fn on_incoming(&mut self, incoming: Incoming) {
        match incoming {
            Incoming::Notification { method, params } => {
                if method == "serverRequest/resolved" {
                    self.withdraw(&params);
                }
                if !self.session.observe(&method, &params) {
                    self.transcript.apply(&method, &params);
                }
            }
            Incoming::Request {
                id,
                method,
                params,
                reply,
            } => match Approval::of(id, &method, &params, &reply) {
                Some(approval) => self.ask(approval),
                None => Session::refuse(&reply, &method),
            },
            Incoming::Closed(why) => {
                self.transcript.error(format!("disconnected: {why}"));
                self.transcript.running_turn = None;
                self.transcript.running_since = None;
            }
        }
    }

    /// Drops an approval the server no longer waits for (answered elsewhere, or withdrawn).
    fn withdraw(&mut self, params: &Value) {
        let Some(id) = params.get("requestId") else {
            return;
        };
        let withdrawn = self
            .approval
            .iter()
            .chain(&self.queued)
            .find(|a| &a.id == id)
            .cloned();
        if let Some(approval) = withdrawn {
            self.settle(&approval);
        }
    }
}

/// Runs the full-screen client until the user quits.
pub async fn run(
    terminal: &mut DefaultTerminal,
    mut app: App,
    mut incoming: mpsc::Receiver<Incoming>,
) -> std::io::Result<()> {
    let mut keys = EventStream::new();
    let mut connected = true;
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    while !app.quit {
        terminal.draw(|frame| view::draw(frame, &app))?;
        let running = app.transcript.running_turn.is_some();
        tokio::select! {
            _ = tick.tick(), if running => {}
            event = keys.next() => match event {
                Some(Ok(Event::Key(key))) => app.on_key(key).await,
                Some(Ok(Event::Paste(text))) if app.approval.is_none() => app.input.push_str(&text),
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e),
                None => break,
            },
            message = incoming.recv(), if connected => match message {
                Some(message) => app.on_incoming(message).await,
                None => connected = false,
            },
        }
    }
    Ok(())
}
