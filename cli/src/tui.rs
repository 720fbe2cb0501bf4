//! `agentwire` with no subcommand, or `agentwire tui`: the terminal client (crate
//! `agentwire-tui`), driving a local app-server child (this binary) or a remote one.

use std::path::PathBuf;
use std::process::ExitCode;

use agentwire_tui::policy::{APPROVAL_NAMES, ApprovalPolicy, SANDBOX_NAMES, SandboxMode};
use clap::Args;
use clap::builder::PossibleValuesParser;

use crate::ConfigOverrides;

/// Where the terminal client connects and what its turns use.
#[derive(Debug, Clone, Default, Args)]
pub struct TuiArgs {
    /// Drive a running app-server instead of a local child: ws://HOST:PORT, wss://HOST:PORT or
    /// unix://PATH (its control socket).
    #[arg(long, value_name = "URL")]
    pub remote: Option<String>,
    /// Send the token in this environment variable as a bearer token (needs --remote with a
    /// wss:// or loopback ws:// URL).
    #[arg(long, value_name = "VAR")]
    pub remote_auth_token_env: Option<String>,
    /// The model for the turns sent from this client.
    #[arg(long, short = 'm', value_name = "MODEL")]
    pub model: Option<String>,
    /// The working directory of new threads (default: the current directory).
    #[arg(long = "cd", short = 'C', value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// The sandbox of the agent's commands in new threads: read-only, workspace-write or
    /// danger-full-access (default: the configuration's `sandbox_mode`). `/approvals` changes it
    /// for the next turns.
    #[arg(
        long,
        short = 's',
        value_name = "MODE",
        value_parser = PossibleValuesParser::new(SANDBOX_NAMES)
    )]
    pub sandbox: Option<String>,
    /// When the agent asks before acting in new threads: untrusted, on-failure (sent as
    /// on-request), on-request or never (default: the configuration's `approval_policy`).
    /// `/approvals` changes it for the next turns.
    #[arg(
        long,
        short = 'a',
        value_name = "POLICY",
        value_parser = PossibleValuesParser::new(APPROVAL_NAMES)
    )]
    pub ask_for_approval: Option<String>,
    /// Work without stopping: `--sandbox workspace-write` with `--ask-for-approval on-request`.
    #[arg(long, conflicts_with_all = ["sandbox", "ask_for_approval"])]
    pub full_auto: bool,
    /// No sandbox and no approvals (`--sandbox danger-full-access --ask-for-approval never`):
    /// only where something else confines the agent.
    #[arg(
        long = "dangerously-bypass-approvals-and-sandbox",
        conflicts_with_all = ["sandbox", "ask_for_approval", "full_auto"]
    )]
    pub bypass: bool,
}

impl TuiArgs {
    /// The approval policy new threads get; `None` leaves the configuration's. (clap accepted
    /// only listed names, each of which parses.)
    fn approval_policy(&self) -> Option<ApprovalPolicy> {
        if self.full_auto {
            return Some(ApprovalPolicy::OnRequest);
        }
        if self.bypass {
            return Some(ApprovalPolicy::Never);
        }
        self.ask_for_approval
            .as_deref()
            .and_then(ApprovalPolicy::parse)
    }

    /// The sandbox new threads get; `None` leaves the configuration's.
    fn sandbox_mode(&self) -> Option<SandboxMode> {
        if self.full_auto {
            return Some(SandboxMode::WorkspaceWrite);
        }
        if self.bypass {
            return Some(SandboxMode::DangerFullAccess);
        }
        self.sandbox.as_deref().and_then(SandboxMode::parse)
    }

    /// The first of these flags given, if any (they mean nothing to other subcommands).
    pub fn given_flag(&self) -> Option<&'static str> {
        [
            (self.remote.is_some(), "--remote"),
            (
                self.remote_auth_token_env.is_some(),
                "--remote-auth-token-env",
            ),
            (self.model.is_some(), "--model"),
            (self.cwd.is_some(), "--cd"),
            (self.sandbox.is_some(), "--sandbox"),
            (self.ask_for_approval.is_some(), "--ask-for-approval"),
            (self.full_auto, "--full-auto"),
            (self.bypass, "--dangerously-bypass-approvals-and-sandbox"),
        ]
        .into_iter()
        .find_map(|(given, flag)| given.then_some(flag))
    }
}

/// Runs the client until the user quits.
pub fn run(
    args: TuiArgs,
    prompt: Option<String>,
    overrides: &ConfigOverrides,
) -> Result<ExitCode, String> {
    let program = std::env::current_exe()
        .map_err(|e| format!("cannot find this program to start the app-server: {e}"))?;
    let server_flags = overrides.child_args();
    let (approval_policy, sandbox) = (args.approval_policy(), args.sandbox_mode());
    let options = agentwire_tui::Options {
        remote: args.remote,
        remote_auth_token_env: args.remote_auth_token_env,
        model: args.model,
        cwd: args.cwd,
        approval_policy,
        sandbox,
        prompt,
        program,
        server_flags,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    Ok(runtime.block_on(agentwire_tui::run(options)))
}
