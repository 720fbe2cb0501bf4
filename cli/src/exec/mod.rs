//! `agentwire exec PROMPT` and `agentwire exec resume [--last | THREAD_ID] PROMPT`: one turn,
//! non-interactive, against an app-server child (this binary), the way scripts run Codex's
//! `exec`.
//!
//! - `args.rs`: the command line (Codex's names where they overlap) and the policies it means.
//! - `input.rs`: the prompt (argument or stdin), `--image` items, `--output-schema`; all read
//!   and checked before a server is started.
//! - `session.rs`: the child server, the thread (started or resumed), the turn, its end and
//!   `--output-last-message`.
//! - `printer.rs`: stdout (the agent's text, or JSON lines) and stderr (actions, command
//!   output, warnings, each error once).
//!
//! Exit status: 0 when the turn completed, 1 when it failed or could not run, 130 when it was
//! interrupted, 2 for bad arguments; killed by SIGPIPE (141 from a shell) when stdout's reader
//! left, after the turn was interrupted and the server shut down.

mod args;
mod input;
mod printer;
mod session;

use std::process::ExitCode;

use agentwire_protocol::TurnStatus;

pub use args::ExecArgs;
use args::ExecCommand;
use session::{Ended, Plan, Thread};

use crate::stdout::{end_as_broken_pipe, note};

/// Exit status of a turn that was interrupted (as a shell reports SIGINT).
const INTERRUPTED: u8 = 130;

/// Runs one turn and returns its exit status.
pub fn run(args: ExecArgs, overrides: crate::ConfigOverrides) -> Result<ExitCode, String> {
    let (thread, prompt) = match &args.command {
        None => (Thread::New, args.prompt.as_deref()),
        Some(ExecCommand::Resume(resume)) => {
            if args.prompt.is_some() {
                return Err("exec resume: the prompt comes after `resume`".to_owned());
            }
            match (resume.last, &resume.thread_id, &resume.prompt) {
                (true, Some(_), Some(_)) => {
                    return Err(
                        "exec resume: give --last or a THREAD_ID, not both (with --last the one argument is the prompt)"
                            .to_owned(),
                    );
                }
                (true, prompt, None) | (true, None, prompt) => {
                    (Thread::Last { all: resume.all }, prompt.as_deref())
                }
                (false, Some(id), prompt) => (Thread::Id(id.clone()), prompt.as_deref()),
                (false, None, _) => {
                    return Err("exec resume: give --last or a THREAD_ID".to_owned());
                }
            }
        }
    };
    let prompt = input::prompt(prompt)?;
    let input = input::items(&prompt, &args.turn.image)?;
    let output_schema = args
        .turn
        .output_schema
        .as_deref()
        .map(input::output_schema)
        .transpose()?;
    if matches!(args.turn.approval, Some(args::Approval::OnFailure)) {
        note(
            "note: --ask-for-approval on-failure is not in the protocol any more; using on-request",
        );
    }
    let cwd = match &args.turn.cd {
        Some(dir) => std::path::absolute(dir),
        None => std::env::current_dir(),
    }
    .map_err(|e| format!("cannot resolve the working directory: {e}"))?;
    let plan = Plan {
        args: args.turn,
        thread,
        input,
        output_schema,
        cwd,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let ended = runtime.block_on(session::run(plan, overrides))?;
    Ok(match ended {
        Ended::Turn(TurnStatus::Completed) => ExitCode::SUCCESS,
        Ended::Turn(_) => {
            note("the turn was interrupted");
            ExitCode::from(INTERRUPTED)
        }
        Ended::Quit => ExitCode::from(INTERRUPTED),
        Ended::Failed => ExitCode::FAILURE,
        Ended::StdoutGone => {
            drop(runtime);
            end_as_broken_pipe()
        }
    })
}
