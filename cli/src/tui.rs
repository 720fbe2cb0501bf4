//! `agentwire` with no subcommand, or `agentwire tui`: the terminal client (crate
//! `agentwire-tui`), driving a local app-server child (this binary) or a remote one.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

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
}

impl TuiArgs {
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
    let options = agentwire_tui::Options {
        remote: args.remote,
        remote_auth_token_env: args.remote_auth_token_env,
        model: args.model,
        cwd: args.cwd,
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
