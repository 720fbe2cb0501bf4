//! The scenarios, one file per group, and what runs each one: a fresh server (or fresh
//! connections), a contract checker, a mock model when asked for, and the verdict.

mod approvals;
mod errors;
mod experimental;
mod handshake;
mod optout;
mod overload;
mod threads;
mod turns;

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agentwire_codegen::contract::{self, Contract, Dir};
use serde_json::{Value, json};

use crate::Options;
use crate::mock_model::MockModel;
use crate::report::{Outcome, ScenarioResult};
use crate::session::{Conn, Log, Stop, fail};
use crate::target::{Link, Target};

/// One scenario.
pub struct Scenario {
    /// Its group (`handshake`, `errors`, …).
    pub group: &'static str,
    /// Its name within the group.
    pub id: &'static str,
    /// What it checks, in a few words.
    pub summary: &'static str,
    /// Whether it needs the scripted model (`--mock-model`).
    pub needs_mock: bool,
    /// The scenario: `Ok(what it saw)`, or why it failed or was skipped.
    pub run: fn(&mut Ctx<'_, '_>) -> Result<String, Stop>,
}

impl Scenario {
    /// `group/id`.
    pub fn name(&self) -> String {
        format!("{}/{}", self.group, self.id)
    }
}

/// Every scenario, in the order they run.
pub fn all() -> Vec<Scenario> {
    let mut all = Vec::new();
    all.extend(handshake::scenarios());
    all.extend(errors::scenarios());
    all.extend(threads::scenarios());
    all.extend(turns::scenarios());
    all.extend(approvals::scenarios());
    all.extend(optout::scenarios());
    all.extend(experimental::scenarios());
    all.extend(overload::scenarios());
    all
}

/// What a scenario works with.
pub struct Ctx<'c, 'o> {
    /// The run's options.
    pub options: &'o Options,
    log: Rc<RefCell<Log<'c>>>,
    name: String,
    /// The server's home (command targets).
    home: PathBuf,
    /// A directory for threads to work in.
    pub work: PathBuf,
    /// The scripted model, when there is one.
    mock: Option<MockModel>,
    connections: usize,
}

impl<'c> Ctx<'c, '_> {
    /// A new connection: for a command target a new server process on this scenario's home.
    pub fn connect(&mut self) -> Result<Conn<'c>, Stop> {
        self.connections += 1;
        let link = match &self.options.target {
            Target::Command(command) => {
                let mut command = command.replace("{home}", &self.home.to_string_lossy());
                if let Some(mock) = &self.mock {
                    command = command.replace("{mock_url}", &mock.base_url());
                }
                Link::spawn(&command, &self.home, &self.work)
            }
            Target::Url(url) => Link::connect(url),
        }
        .map_err(Stop::Fail)?;
        let session = format!("{}#{}", self.name, self.connections);
        Ok(Conn::new(
            session,
            link,
            self.log.clone(),
            self.options.timeout,
        ))
    }

    /// A new connection past the handshake (no capabilities).
    pub fn connect_initialized(&mut self) -> Result<Conn<'c>, Stop> {
        let mut conn = self.connect()?;
        conn.initialize(Value::Null)?;
        Ok(conn)
    }

    /// The scripted model.
    pub fn mock(&self) -> Result<&MockModel, Stop> {
        self.mock
            .as_ref()
            .ok_or_else(|| Stop::Skip("needs the scripted model (--mock-model)".to_owned()))
    }

    /// `thread/start` in the work directory with `extra` params; the thread id.
    pub fn start_thread(&self, conn: &mut Conn<'c>, extra: Value) -> Result<String, Stop> {
        let mut params = json!({"cwd": self.work.to_string_lossy()});
        if let (Some(params), Some(extra)) = (params.as_object_mut(), extra.as_object()) {
            params.extend(extra.clone());
        }
        let result = conn.call("thread/start", params)?;
        match result["thread"]["id"].as_str() {
            Some(id) => Ok(id.to_owned()),
            None => fail(format!(
                "thread/start answered without /result/thread/id: {result}"
            )),
        }
    }
}

/// Runs one scenario and judges it.
pub fn execute(contract: &Contract, options: &Options, scenario: &Scenario) -> ScenarioResult {
    let mut result = ScenarioResult {
        name: scenario.name(),
        summary: scenario.summary.to_owned(),
        outcome: Outcome::Skip,
        detail: String::new(),
        violations: Vec::new(),
        notes: Vec::new(),
        messages: 0,
    };
    if scenario.needs_mock {
        if let Target::Url(_) = options.target {
            result.detail = "needs the scripted model, whose URL goes into the server's command line: use --server with --mock-model".to_owned();
            return result;
        }
        if !options.mock_model {
            result.detail = "needs a scripted model: pass --mock-model and put {mock_url} in the server command (its model provider's base URL)".to_owned();
            return result;
        }
    }
    let home = match scratch(&result.name) {
        Ok(home) => home,
        Err(e) => {
            result.outcome = Outcome::Fail;
            result.detail = e;
            return result;
        }
    };
    let work = home.join("work");
    let mock = (options.mock_model && matches!(options.target, Target::Command(_)))
        .then(|| MockModel::start(Vec::new()));
    let log = Rc::new(RefCell::new(Log::new(
        contract.checker(contract::Options { experimental: true }),
    )));
    let mut ctx = Ctx {
        options,
        log: log.clone(),
        name: result.name.clone(),
        home: home.clone(),
        work,
        mock,
        connections: 0,
    };
    let ran = if let Err(e) = std::fs::create_dir_all(&ctx.work) {
        Err(Stop::Fail(format!(
            "cannot create {}: {e}",
            ctx.work.display()
        )))
    } else {
        (scenario.run)(&mut ctx)
    };
    drop(ctx);
    let log = log.borrow();
    result.messages = log.records.len();
    for violation in &log.violations {
        if violation.direction != Some(Dir::ServerToClient) {
            continue;
        }
        let is_notification = violation.method.is_some()
            && log
                .records
                .get(violation.line.saturating_sub(1))
                .and_then(|r| r["line"].as_str())
                .and_then(|l| serde_json::from_str::<Value>(l).ok())
                .is_some_and(|m| m.get("id").is_none());
        let method = violation.method.clone().unwrap_or_default();
        // What a client of the stable surface reads past (a notification it does not know, a
        // member its schema does not list) is noted; the rest fails the scenario.
        let note = if violation.rule == contract::rule::UNKNOWN_METHOD && is_notification {
            Some(format!(
                "the server sent notification {method}, which the contract does not declare"
            ))
        } else if violation.rule == contract::rule::EXPERIMENTAL
            && (violation.pointer.starts_with("/params/")
                || violation.pointer.starts_with("/result/"))
        {
            Some(format!(
                "the server sent experimental member {} of {method} without the experimentalApi \
                 capability",
                violation.pointer
            ))
        } else {
            None
        };
        if let Some(note) = note {
            if !result.notes.contains(&note) {
                result.notes.push(note);
            }
        } else {
            result.violations.push(violation.clone());
        }
    }
    match ran {
        Ok(detail) if result.violations.is_empty() => {
            result.outcome = Outcome::Pass;
            result.detail = detail;
        }
        Ok(detail) => {
            result.outcome = Outcome::Fail;
            result.detail = format!(
                "{} contract violation(s) by the server (behaviour: {detail})",
                result.violations.len()
            );
        }
        Err(Stop::Fail(reason)) => {
            result.outcome = Outcome::Fail;
            result.detail = reason;
        }
        Err(Stop::Skip(reason)) => {
            result.outcome = Outcome::Skip;
            result.detail = reason;
        }
    }
    if let Some(dir) = &options.transcripts {
        let file = dir.join(format!("{}.jsonl", result.name.replace('/', "-")));
        let text: String = log.records.iter().map(|r| format!("{r}\n")).collect();
        if let Err(e) = std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&file, text)) {
            result
                .notes
                .push(format!("cannot write {}: {e}", file.display()));
        }
    }
    let _ = std::fs::remove_dir_all(&home);
    result
}

/// A new empty directory for one scenario.
fn scratch(name: &str) -> Result<PathBuf, String> {
    static COUNT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "agentwire-conformance-{}-{}-{}",
        std::process::id(),
        COUNT.fetch_add(1, Ordering::Relaxed),
        name.replace('/', "-")
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    Ok(dir)
}

/// The `type` of every item `item/completed` reported, in order.
pub fn completed_item_types(conn: &Conn<'_>) -> Vec<String> {
    conn.seen
        .iter()
        .filter(|m| m.get("id").is_none() && m["method"] == "item/completed")
        .filter_map(|m| m["params"]["item"]["type"].as_str().map(str::to_owned))
        .collect()
}
