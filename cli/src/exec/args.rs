//! The command line of `agentwire exec` and `agentwire exec resume`, with Codex's names where
//! the two overlap (`codex exec --help`, 0.171.0): `-C/--cd`, `-i/--image`, `-s/--sandbox`,
//! `-a/--ask-for-approval`, `--full-auto`, `--dangerously-bypass-approvals-and-sandbox`,
//! `--output-schema`, `-o/--output-last-message`, `--json`, `resume [--last | ID]`.

use std::path::PathBuf;

use clap::{ArgGroup, Args, Subcommand, ValueEnum};

/// `agentwire exec`.
#[derive(Debug, Args)]
pub struct ExecArgs {
    /// Continue a stored thread instead of starting one.
    #[command(subcommand)]
    pub command: Option<ExecCommand>,
    /// The prompt. `-`, or no prompt while stdin is not a terminal, reads it from stdin.
    pub prompt: Option<String>,
    #[command(flatten)]
    pub turn: TurnArgs,
}

/// The subcommands of `exec`.
#[derive(Debug, Subcommand)]
pub enum ExecCommand {
    /// Resume a stored thread and run one more turn on it: the thread given by its id, or
    /// with `--last` the one updated last.
    Resume(ResumeArgs),
}

/// `agentwire exec resume [--last [--all] | THREAD_ID] PROMPT`.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("which").required(true).multiple(true).args(["last", "thread_id"])))]
pub struct ResumeArgs {
    /// Resume the thread updated last among those whose working directory is this one (or
    /// `-C DIR`); with `--last` a single argument is the prompt.
    #[arg(long)]
    pub last: bool,
    /// With `--last`: look at the threads of every working directory.
    #[arg(long, requires = "last")]
    pub all: bool,
    /// The id of the thread to resume (as `thread/started` and `thread/list` give it).
    #[arg(value_name = "THREAD_ID")]
    pub thread_id: Option<String>,
    /// The prompt of the next turn. `-`, or no prompt while stdin is not a terminal, reads it
    /// from stdin.
    pub prompt: Option<String>,
}

/// What one `exec` turn uses and how it reports; accepted before or after `resume`. Their ids
/// are prefixed: a global argument's value also reaches the top-level command, whose terminal
/// client flags share some names (`--model`, `--cd`, `--sandbox`).
#[derive(Debug, Args)]
pub struct TurnArgs {
    /// Print every notification as one JSON line (`{"method", "params"}`) on stdout instead of
    /// the agent's text.
    #[arg(id = "exec_json", long = "json", global = true)]
    pub json: bool,
    /// Write the agent's last message of the turn to FILE when the turn ends (an empty file
    /// when it sent none).
    #[arg(
        id = "exec_output_last_message",
        long = "output-last-message",
        short = 'o',
        value_name = "FILE",
        global = true
    )]
    pub output_last_message: Option<PathBuf>,
    /// A JSON Schema the agent's final message must follow (sent as the turn's `outputSchema`,
    /// which the model receives as its structured-output format).
    #[arg(
        id = "exec_output_schema",
        long = "output-schema",
        value_name = "FILE",
        global = true
    )]
    pub output_schema: Option<PathBuf>,
    /// Attach an image (PNG, JPEG, GIF or WebP) to the prompt; repeatable, or comma-separated.
    #[arg(
        id = "exec_image",
        long = "image",
        short = 'i',
        value_name = "FILE",
        value_delimiter = ',',
        global = true
    )]
    pub image: Vec<PathBuf>,
    /// The model to use.
    #[arg(
        id = "exec_model",
        long = "model",
        short = 'm',
        value_name = "MODEL",
        global = true
    )]
    pub model: Option<String>,
    /// The working directory of the thread (default: the current directory).
    // `--cwd`, the older name, stays as a hidden alias (one name per concept: `tui -C/--cd`).
    #[arg(
        id = "exec_cd",
        long = "cd",
        short = 'C',
        alias = "cwd",
        value_name = "DIR",
        global = true
    )]
    pub cd: Option<PathBuf>,
    /// The sandbox the agent's commands run in.
    #[arg(
        id = "exec_sandbox",
        long = "sandbox",
        short = 's',
        value_enum,
        value_name = "MODE",
        global = true
    )]
    pub sandbox: Option<Sandbox>,
    /// When the agent must ask before acting.
    // `--approve`, the older name, stays as a hidden alias.
    #[arg(
        id = "exec_approval",
        long = "ask-for-approval",
        short = 'a',
        alias = "approve",
        value_enum,
        value_name = "POLICY",
        global = true
    )]
    pub approval: Option<Approval>,
    /// Work without stopping: `--sandbox workspace-write` with `--ask-for-approval on-request`.
    #[arg(
        id = "exec_full_auto",
        long = "full-auto",
        global = true,
        conflicts_with_all = ["exec_sandbox", "exec_approval"]
    )]
    pub full_auto: bool,
    /// No sandbox and no approvals (`--sandbox danger-full-access --ask-for-approval never`):
    /// only where something else confines the agent.
    #[arg(
        id = "exec_bypass",
        long = "dangerously-bypass-approvals-and-sandbox",
        global = true,
        conflicts_with_all = ["exec_sandbox", "exec_approval", "exec_full_auto"]
    )]
    pub bypass: bool,
    /// Accept every approval the agent asks for (otherwise each is declined and reported).
    #[arg(id = "exec_yes", long = "yes", short = 'y', global = true)]
    pub yes: bool,
}

impl TurnArgs {
    /// The sandbox mode the thread is started or resumed with, as the protocol names it; `None`
    /// leaves the configuration's.
    pub fn sandbox_wire(&self) -> Option<&'static str> {
        if self.full_auto {
            return Some(Sandbox::WorkspaceWrite.wire());
        }
        if self.bypass {
            return Some(Sandbox::DangerFullAccess.wire());
        }
        self.sandbox.map(Sandbox::wire)
    }

    /// The approval policy the thread is started or resumed with, as the protocol names it;
    /// `None` leaves the configuration's.
    pub fn approval_wire(&self) -> Option<&'static str> {
        if self.full_auto {
            return Some(Approval::OnRequest.wire());
        }
        if self.bypass {
            return Some(Approval::Never.wire());
        }
        self.approval.map(Approval::wire)
    }
}

/// `-a/--ask-for-approval`: when the agent asks before acting.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Approval {
    /// Ask before any command that is not known to be harmless.
    Untrusted,
    /// Accepted for scripts written for older Codex releases: the protocol no longer has it,
    /// and it is sent as `on-request`.
    OnFailure,
    /// The agent asks when it needs more than the sandbox allows.
    OnRequest,
    /// Never ask; what would need approval fails and the agent is told.
    Never,
}

impl Approval {
    /// The protocol's name (`AskForApproval`).
    pub fn wire(self) -> &'static str {
        match self {
            Approval::Never => "never",
            Approval::OnRequest | Approval::OnFailure => "on-request",
            Approval::Untrusted => "untrusted",
        }
    }
}

/// `-s/--sandbox`: what the agent's commands may touch.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Sandbox {
    /// Commands may read, not write.
    ReadOnly,
    /// Commands may write inside the workspace.
    WorkspaceWrite,
    /// No sandbox.
    DangerFullAccess,
}

impl Sandbox {
    /// The protocol's name (`SandboxMode`).
    pub fn wire(self) -> &'static str {
        match self {
            Sandbox::ReadOnly => "read-only",
            Sandbox::WorkspaceWrite => "workspace-write",
            Sandbox::DangerFullAccess => "danger-full-access",
        }
    }
}
