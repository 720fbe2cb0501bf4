//! Exec sessions: commands the model started with `exec_command` that were still running when
//! the call's yield time was up, kept running for the thread so that `write_stdin` can write
//! to their standard input and read what they printed since.
//!
//! - A session is numbered (`session_id` for the model; the same number as a string is the
//!   `processId` of its `commandExecution` item and of `thread/backgroundTerminals/*`). It runs
//!   through `exec::run_with`: its own process group, the thread's sandbox policy as any
//!   command, its stdin a pipe, no time limit.
//! - What it prints is kept for the model in a bounded buffer (the last `UNREAD_BYTES`; a
//!   note says how much was dropped before them) until the next read.
//! - A session belongs to its thread, not to the turn that started it: it outlives the turn.
//!   At most `MAX_SESSIONS` run per thread (starting one more kills the one least recently
//!   used); they are killed when the thread is no longer loaded, when the server stops, and by
//!   `thread/backgroundTerminals/terminate` and `clean`.
//! - When its command ends, however it ends, the caller's `finish` completes its item; the
//!   ended session stays readable until the model has read its end (or more sessions of the
//!   thread have ended since than `MAX_SESSIONS`).

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agentwire_protocol::ThreadItem;
use agentwire_support::lock;
use serde::Deserialize;
use tokio::sync::{mpsc, watch};

use super::exec::{self, Controls, ExecError, ExecOutput, ExecRequest};

/// Most sessions running at once per thread.
pub const MAX_SESSIONS: usize = 16;
/// How long `exec_command` waits for its command when the model does not say.
pub(crate) const EXEC_YIELD_DEFAULT: Duration = Duration::from_millis(10_000);
/// How long `write_stdin` waits for more output when the model does not say.
pub const WRITE_YIELD_DEFAULT: Duration = Duration::from_millis(250);
/// The shortest wait a model may ask for.
pub(crate) const MIN_YIELD: Duration = Duration::from_millis(250);
/// The longest wait a model may ask for.
pub(crate) const MAX_YIELD: Duration = Duration::from_millis(30_000);
/// Bytes of unread output a session keeps (the most recent).
pub(crate) const UNREAD_BYTES: usize = 1024 * 1024;
/// Longest text one `write_stdin` may write.
pub(crate) const MAX_STDIN_BYTES: usize = 1024 * 1024;
/// Writes waiting for a command to read them, per session.
const STDIN_QUEUE: usize = 16;
/// How often a session checks that its thread is still loaded.
const WATCH_EVERY: Duration = Duration::from_millis(500);
/// How long a kill is waited for before giving up on seeing the command end.
pub const KILL_WAIT: Duration = Duration::from_secs(10);

/// `yield_time_ms` as a wait: `default` when absent (or not a number), else clamped to
/// [`MIN_YIELD`, `MAX_YIELD`].
pub fn yield_time(ms: Option<f64>, default: Duration) -> Duration {
    match ms.filter(|ms| !ms.is_nan()) {
        None => default,
        Some(ms) => {
            let min = MIN_YIELD.as_millis() as f64;
            let max = MAX_YIELD.as_millis() as f64;
            Duration::from_millis(ms.clamp(min, max) as u64)
        }
    }
}

/// The arguments of a `write_stdin` call.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteStdinArgs {
    /// The session, as `exec_command` reported it.
    pub session_id: SessionId,
    /// Text to write to its stdin; empty to only read.
    #[serde(default)]
    pub chars: String,
    /// How long to wait for output (milliseconds).
    #[serde(default)]
    pub yield_time_ms: Option<f64>,
    /// Roughly how much output to return.
    #[serde(default)]
    pub max_output_tokens: Option<f64>,
}

/// A session id as a model writes it: a number, or a number in a string.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum SessionId {
    /// `3`.
    Integer(i64),
    /// `3.0`.
    Float(f64),
    /// `"3"`.
    Text(String),
}

impl SessionId {
    /// The number, if it is a whole one.
    pub fn number(&self) -> Option<i64> {
        match self {
            SessionId::Integer(n) => Some(*n),
            SessionId::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Some(*f as i64),
            SessionId::Float(_) => None,
            SessionId::Text(text) => text.trim().parse().ok(),
        }
    }

    /// The id as the model gave it, for messages.
    pub fn shown(&self) -> String {
        match self {
            SessionId::Integer(n) => n.to_string(),
            SessionId::Float(f) => f.to_string(),
            SessionId::Text(text) => format!("{text:?}"),
        }
    }
}

/// What a session's item says, and the thread it belongs to.
#[derive(Debug, Clone)]
pub struct SessionInfo {
    /// The thread that started it.
    pub thread_id: String,
    /// The turn that started it.
    pub turn_id: String,
    /// Its `commandExecution` item.
    pub item_id: String,
    /// The command line.
    pub command: String,
    /// Its working directory.
    pub cwd: String,
}

/// A boxed future, for the hooks of [`Launch`].
pub(crate) type Hook<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// Completes a session's item once its command has ended (see [`Launch::finish`]).
pub(crate) type Finish =
    Box<dyn FnOnce(Result<ExecOutput, ExecError>) -> Hook<Option<ThreadItem>> + Send>;

/// A command to run as a session, and what it tells its caller.
pub struct Launch {
    /// The command and how it runs.
    pub request: ExecRequest,
    /// Each piece of output, while the stream limit of [`exec::run`] lasts (for
    /// `item/commandExecution/outputDelta`).
    pub on_output: Box<dyn FnMut(&str) + Send>,
    /// Whether the thread is still loaded (checked from time to time; once it is not, the
    /// session is killed).
    pub alive: Box<dyn Fn() -> bool + Send>,
    /// Resolves when the server stops: the session is killed.
    pub stopping: Hook<()>,
    /// Completes the session's item once its command has ended; gives the completed item.
    pub finish: Finish,
}

/// How a session's command ended.
#[derive(Debug)]
pub struct Ended {
    /// As [`exec::run`] reports it.
    pub result: Result<ExecOutput, ExecError>,
    /// The completed item, when `finish` made one.
    pub item: Option<ThreadItem>,
}

/// Where a session is.
#[derive(Debug, Clone)]
enum Phase {
    Running,
    Ended(Arc<Ended>),
}

/// Output not yet read by the model: the most recent [`UNREAD_BYTES`] of it.
#[derive(Debug, Default)]
struct Unread {
    text: String,
    /// Bytes dropped from the front since the last read.
    dropped: usize,
}

impl Unread {
    fn push(&mut self, text: &str) {
        self.text.push_str(text);
        // Trimmed when twice over, so that trimming costs little per byte.
        if self.text.len() > 2 * UNREAD_BYTES {
            let mut cut = self.text.len() - UNREAD_BYTES;
            while !self.text.is_char_boundary(cut) {
                cut += 1;
            }
            self.text.drain(..cut);
            self.dropped += cut;
        }
    }

    fn take(&mut self) -> String {
        let mut text = std::mem::take(&mut self.text);
        if text.len() > UNREAD_BYTES {
            let mut cut = text.len() - UNREAD_BYTES;
            while !text.is_char_boundary(cut) {
                cut += 1;
            }
            text.drain(..cut);
            self.dropped += cut;
        }
        let dropped = std::mem::take(&mut self.dropped);
        if dropped == 0 {
            text
        } else {
            format!("[… {dropped} earlier bytes of output were not kept …]\n{text}")
        }
    }
}

/// The changing part of a session.
#[derive(Debug)]
struct State {
    unread: Unread,
    /// When the model last started or read it.
    last_used: Instant,
    os_pid: Option<u32>,
}

/// One command running (or ended, and not yet read to its end) as a session.
#[derive(Debug)]
pub struct Session {
    /// The `session_id`.
    pub id: i64,
    /// What its item says, and its thread.
    pub info: SessionInfo,
    stdin: mpsc::Sender<Vec<u8>>,
    kill: watch::Sender<bool>,
    phase: watch::Sender<Phase>,
    state: Mutex<State>,
}

impl Session {
    /// Kills its process group (it ends soon after, and its item completes).
    pub fn kill(&self) {
        self.kill.send_replace(true);
    }

    /// How it ended, once it has (and its item is complete).
    pub(crate) fn ended(&self) -> Option<Arc<Ended>> {
        match &*self.phase.borrow() {
            Phase::Running => None,
            Phase::Ended(ended) => Some(ended.clone()),
        }
    }

    /// Waits up to `wait` for it to end; how it ended if it did.
    pub async fn wait(&self, wait: Duration) -> Option<Arc<Ended>> {
        let mut phase = self.phase.subscribe();
        let ended = tokio::time::timeout(
            wait,
            phase.wait_for(|phase| matches!(phase, Phase::Ended(_))),
        )
        .await;
        match ended {
            Ok(Ok(phase)) => match &*phase {
                Phase::Ended(ended) => Some(ended.clone()),
                Phase::Running => None,
            },
            _ => self.ended(),
        }
    }

    /// Queues `chars` for its stdin; the error says why it could not be (for the model).
    pub fn write(&self, chars: &str) -> Result<(), String> {
        if chars.len() > MAX_STDIN_BYTES {
            return Err(format!(
                "the input is {} bytes, more than the {MAX_STDIN_BYTES} one call may write",
                chars.len()
            ));
        }
        if self.ended().is_some() {
            return Err("the process had already exited, so nothing was written".to_owned());
        }
        self.stdin
            .try_send(chars.as_bytes().to_vec())
            .map_err(|error| match error {
                mpsc::error::TrySendError::Full(_) => {
                    "the process is not reading its input (earlier writes are still waiting), \
                     so nothing was written"
                        .to_owned()
                }
                mpsc::error::TrySendError::Closed(_) => {
                    "its standard input is closed, so nothing was written".to_owned()
                }
            })
    }

    /// The output since the last read (which this is).
    pub fn take_unread(&self) -> String {
        let mut state = lock(&self.state);
        state.last_used = Instant::now();
        state.unread.take()
    }

    /// The operating system's id of its process (the group leader), once started.
    pub fn os_pid(&self) -> Option<u32> {
        lock(&self.state).os_pid
    }

    fn last_used(&self) -> Instant {
        lock(&self.state).last_used
    }
}

/// The sessions of every thread, by thread id, oldest first.
type Table = Arc<Mutex<HashMap<String, Vec<Arc<Session>>>>>;

/// The exec sessions of the server's threads.
#[derive(Debug, Default)]
pub struct ExecSessions {
    last_id: AtomicI64,
    table: Table,
}

/// What starting a session did.
pub struct Started {
    /// The session, now running.
    pub session: Arc<Session>,
    /// The session killed to make room, if one was: its id and command line.
    pub evicted: Option<(i64, String)>,
}

impl ExecSessions {
    /// A new session id (unique on this server).
    pub fn next_id(&self) -> i64 {
        self.last_id.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Starts `launch` as session `id` of `info.thread_id`; the command runs in a task of
    /// its own. Must be called on the runtime.
    pub fn start(&self, id: i64, info: SessionInfo, launch: Launch) -> Started {
        let (stdin, stdin_rx) = mpsc::channel(STDIN_QUEUE);
        let (kill, kill_rx) = watch::channel(false);
        let session = Arc::new(Session {
            id,
            info,
            stdin,
            kill,
            phase: watch::channel(Phase::Running).0,
            state: Mutex::new(State {
                unread: Unread::default(),
                last_used: Instant::now(),
                os_pid: None,
            }),
        });
        let evicted = {
            let mut table = lock(&self.table);
            let sessions = table.entry(session.info.thread_id.clone()).or_default();
            let evicted = make_room(sessions);
            sessions.push(session.clone());
            evicted
        };
        if let Some(old) = &evicted {
            old.kill();
        }
        let controls = Controls {
            stdin: stdin_rx,
            kill: kill_rx,
            tap: {
                let session = session.clone();
                Box::new(move |text: &str| lock(&session.state).unread.push(text))
            },
            started: {
                let session = session.clone();
                Box::new(move |pid| lock(&session.state).os_pid = pid)
            },
        };
        // Cleaned up after a panic: the session ends (a reader waiting on it is told it could
        // not run: its child was killed as the task unwound) and leaves the table.
        let cleanup = {
            let (session, table) = (session.clone(), self.table.clone());
            move || {
                let program = session.info.command.clone();
                let result = Err(ExecError::Spawn {
                    program,
                    reason: "the session's task stopped on an internal error".to_owned(),
                });
                let ended = Ended { result, item: None };
                session.phase.send_replace(Phase::Ended(Arc::new(ended)));
                let mut table = lock(&table);
                if let Some(sessions) = table.get_mut(&session.info.thread_id) {
                    sessions.retain(|s| s.id != session.id);
                    if sessions.is_empty() {
                        table.remove(&session.info.thread_id);
                    }
                }
            }
        };
        let work = drive(session.clone(), self.table.clone(), launch, controls);
        agentwire_support::supervised::spawn("exec session", work, cleanup);
        Started {
            session,
            evicted: evicted.map(|old| (old.id, old.info.command.clone())),
        }
    }

    /// Session `id` of `thread_id`, running or ended but not yet read to its end.
    pub fn find(&self, thread_id: &str, id: i64) -> Option<Arc<Session>> {
        lock(&self.table)
            .get(thread_id)?
            .iter()
            .find(|s| s.id == id)
            .cloned()
    }

    /// Drops session `id` of `thread_id` (its end has been read).
    pub fn forget(&self, thread_id: &str, id: i64) {
        let mut table = lock(&self.table);
        if let Some(sessions) = table.get_mut(thread_id) {
            sessions.retain(|s| s.id != id);
            if sessions.is_empty() {
                table.remove(thread_id);
            }
        }
    }

    /// The sessions of `thread_id` whose command still runs, oldest first.
    pub fn running(&self, thread_id: &str) -> Vec<Arc<Session>> {
        lock(&self.table)
            .get(thread_id)
            .map(|sessions| {
                sessions
                    .iter()
                    .filter(|s| s.ended().is_none())
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Kills the running session of `thread_id` whose id is `process_id` and waits (a while)
    /// for its end; whether there was one.
    pub async fn terminate(&self, thread_id: &str, process_id: &str) -> bool {
        let Ok(id) = process_id.trim().parse::<i64>() else {
            return false;
        };
        let Some(session) = self.find(thread_id, id).filter(|s| s.ended().is_none()) else {
            return false;
        };
        session.kill();
        session.wait(KILL_WAIT).await;
        true
    }

    /// Kills every running session of `thread_id` and waits (a while) for their ends; how
    /// many there were.
    pub async fn clean(&self, thread_id: &str) -> usize {
        let running = self.running(thread_id);
        for session in &running {
            session.kill();
        }
        for session in &running {
            session.wait(KILL_WAIT).await;
        }
        running.len()
    }
}

/// Before one more session joins `sessions`: drops the oldest ended ones past
/// [`MAX_SESSIONS`], and takes out (to be killed) the running one least recently used when
/// [`MAX_SESSIONS`] run.
fn make_room(sessions: &mut Vec<Arc<Session>>) -> Option<Arc<Session>> {
    let ended = sessions.iter().filter(|s| s.ended().is_some()).count();
    let mut extra = ended.saturating_sub(MAX_SESSIONS - 1);
    sessions.retain(|s| {
        if extra > 0 && s.ended().is_some() {
            extra -= 1;
            false
        } else {
            true
        }
    });
    let running: Vec<&Arc<Session>> = sessions.iter().filter(|s| s.ended().is_none()).collect();
    if running.len() < MAX_SESSIONS {
        return None;
    }
    running.into_iter().min_by_key(|s| s.last_used()).cloned()
}

/// Runs a session's command to its end, killing it when the thread goes or the server stops,
/// then completes its item and marks it ended.
async fn drive(session: Arc<Session>, table: Table, launch: Launch, controls: Controls) {
    let Launch {
        request,
        mut on_output,
        alive,
        mut stopping,
        finish,
    } = launch;
    let run = exec::run_with(request, &mut *on_output, Some(controls));
    tokio::pin!(run);
    let mut watch = tokio::time::interval(WATCH_EVERY);
    watch.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut stop_seen = false;
    let mut thread_gone = false;
    let result = loop {
        tokio::select! {
            result = &mut run => break result,
            () = &mut stopping, if !stop_seen => {
                stop_seen = true;
                session.kill();
            }
            _ = watch.tick(), if !thread_gone => {
                if !alive() {
                    thread_gone = true;
                    session.kill();
                }
            }
        }
    };
    let item = finish(result.clone()).await;
    session
        .phase
        .send_replace(Phase::Ended(Arc::new(Ended { result, item })));
    if thread_gone {
        // Nobody can read it any more.
        let mut table = lock(&table);
        if let Some(sessions) = table.get_mut(&session.info.thread_id) {
            sessions.retain(|s| s.id != session.id);
            if sessions.is_empty() {
                table.remove(&session.info.thread_id);
            }
        }
    }
}

/// The first line of a read when the command still runs: the session to go on with.
pub fn still_running(id: i64) -> String {
    format!(
        "Process still running; session_id: {id} (call write_stdin with it to send input, or \
         with empty chars to read more output)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yield_times_default_and_clamp() {
        assert_eq!(yield_time(None, EXEC_YIELD_DEFAULT), EXEC_YIELD_DEFAULT);
        assert_eq!(
            yield_time(Some(f64::NAN), WRITE_YIELD_DEFAULT),
            WRITE_YIELD_DEFAULT
        );
        assert_eq!(yield_time(Some(0.0), EXEC_YIELD_DEFAULT), MIN_YIELD);
        assert_eq!(yield_time(Some(-5.0), EXEC_YIELD_DEFAULT), MIN_YIELD);
        assert_eq!(yield_time(Some(1e12), EXEC_YIELD_DEFAULT), MAX_YIELD);
        assert_eq!(
            yield_time(Some(f64::INFINITY), EXEC_YIELD_DEFAULT),
            MAX_YIELD
        );
        assert_eq!(
            yield_time(Some(1234.0), EXEC_YIELD_DEFAULT),
            Duration::from_millis(1234)
        );
    }

    #[test]
    fn session_ids_are_read_from_numbers_and_numeric_strings() {
        let id = |json: &str| {
            serde_json::from_str::<WriteStdinArgs>(json)
                .expect("parses")
                .session_id
                .number()
        };
        assert_eq!(id(r#"{"session_id": 3}"#), Some(3));
        assert_eq!(id(r#"{"session_id": 3.0}"#), Some(3));
        assert_eq!(id(r#"{"session_id": "3"}"#), Some(3));
        assert_eq!(id(r#"{"session_id": 3.5}"#), None);
        assert_eq!(id(r#"{"session_id": "x"}"#), None);
        let args: WriteStdinArgs =
            serde_json::from_str(r#"{"session_id": 1, "chars": "a\n", "yield_time_ms": 500}"#)
                .expect("parses");
        assert_eq!(args.chars, "a\n");
        assert!(serde_json::from_str::<WriteStdinArgs>(r#"{"chars": "a"}"#).is_err());
        assert!(serde_json::from_str::<WriteStdinArgs>(r#"{"session_id": 1, "x": 1}"#).is_err());
    }

    #[test]
    fn unread_output_keeps_the_most_recent_bytes_and_says_what_it_dropped() {
        let mut unread = Unread::default();
        unread.push("hello ");
        unread.push("world");
        assert_eq!(unread.take(), "hello world");
        assert_eq!(unread.take(), "");
        let chunk = "é".repeat(1000);
        for _ in 0..3000 {
            unread.push(&chunk);
        }
        let text = unread.take();
        let (note, kept) = text.split_once('\n').expect("a note");
        assert!(
            note.contains("earlier bytes of output were not kept"),
            "{note}"
        );
        assert!(kept.len() <= UNREAD_BYTES && kept.len() > UNREAD_BYTES - 4);
        assert!(kept.chars().all(|c| c == 'é'));
        let dropped: usize = note
            .split_whitespace()
            .find_map(|w| w.parse().ok())
            .expect("a count");
        assert_eq!(dropped + kept.len(), 3000 * chunk.len());
        assert_eq!(unread.take(), "");
    }

    fn request(script: &str) -> ExecRequest {
        ExecRequest {
            argv: vec!["sh".to_owned(), "-c".to_owned(), script.to_owned()],
            cwd: std::env::temp_dir(),
            timeout: Duration::from_secs(3600),
            sandbox: None,
            sandbox_exe: None,
            env: None,
        }
    }

    fn launch(script: &str) -> Launch {
        Launch {
            request: request(script),
            on_output: Box::new(|_| {}),
            alive: Box::new(|| true),
            stopping: Box::pin(std::future::pending()),
            finish: Box::new(|_| Box::pin(async { None })),
        }
    }

    fn info(thread: &str) -> SessionInfo {
        SessionInfo {
            thread_id: thread.to_owned(),
            turn_id: "turn".to_owned(),
            item_id: "item".to_owned(),
            command: "cmd".to_owned(),
            cwd: "/".to_owned(),
        }
    }

    #[tokio::test]
    async fn a_session_reads_its_input_and_ends_with_its_exit_code() {
        let sessions = ExecSessions::default();
        let id = sessions.next_id();
        let started = sessions.start(id, info("t"), launch("read line; echo got:$line; exit 4"));
        assert!(started.evicted.is_none());
        let session = started.session;
        assert!(session.wait(Duration::from_millis(300)).await.is_none());
        session.write("hello\n").expect("written");
        let ended = session.wait(Duration::from_secs(20)).await.expect("ended");
        assert_eq!(ended.result.as_ref().expect("ran").exit_code, Some(4));
        assert_eq!(session.take_unread(), "got:hello\n");
        assert!(session.write("more").is_err_and(|e| e.contains("exited")));
        assert!(sessions.find("t", id).is_some());
        assert!(sessions.running("t").is_empty());
        sessions.forget("t", id);
        assert!(sessions.find("t", id).is_none());
    }

    #[tokio::test]
    async fn terminate_clean_and_a_gone_thread_kill_sessions() {
        let sessions = ExecSessions::default();
        let one = sessions.next_id();
        sessions.start(one, info("t"), launch("sleep 600"));
        let two = sessions.next_id();
        sessions.start(two, info("t"), launch("sleep 600"));
        assert_eq!(sessions.running("t").len(), 2);
        assert!(!sessions.terminate("t", "nope").await);
        assert!(!sessions.terminate("other", &one.to_string()).await);
        assert!(sessions.terminate("t", &one.to_string()).await);
        assert_eq!(sessions.running("t").len(), 1);
        assert!(!sessions.terminate("t", &one.to_string()).await);
        assert_eq!(sessions.clean("t").await, 1);
        assert!(sessions.running("t").is_empty());
        let ended = sessions
            .find("t", two)
            .and_then(|s| s.ended())
            .expect("ended");
        assert_eq!(ended.result.as_ref().expect("ran").exit_code, None);

        let gone = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let mut orphan = launch("sleep 600");
        let flag = gone.clone();
        orphan.alive = Box::new(move || !flag.load(Ordering::Relaxed));
        let three = sessions.next_id();
        let session = sessions.start(three, info("u"), orphan).session;
        gone.store(true, Ordering::Relaxed);
        assert!(session.wait(Duration::from_secs(20)).await.is_some());
        assert!(sessions.find("u", three).is_none());
    }

    #[tokio::test]
    async fn the_seventeenth_session_evicts_the_least_recently_used() {
        let sessions = ExecSessions::default();
        let mut ids = Vec::new();
        for _ in 0..MAX_SESSIONS {
            let id = sessions.next_id();
            sessions.start(id, info("t"), launch("sleep 600"));
            ids.push(id);
        }
        // The first one was read just now: the second is the least recently used.
        sessions.find("t", ids[0]).expect("first").take_unread();
        let extra = sessions.next_id();
        let started = sessions.start(extra, info("t"), launch("sleep 600"));
        assert_eq!(started.evicted.as_ref().map(|e| e.0), Some(ids[1]));
        let evicted = sessions.find("t", ids[1]).expect("evicted, unread");
        assert!(evicted.wait(Duration::from_secs(20)).await.is_some());
        assert_eq!(sessions.running("t").len(), MAX_SESSIONS);
        assert_eq!(sessions.clean("t").await, MAX_SESSIONS);
    }
}
