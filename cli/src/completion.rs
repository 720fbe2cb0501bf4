//! `agentwire completion SHELL`: the shell's completion script for every subcommand and flag,
//! generated from the same clap definition that parses the command line (`clap_complete`).
//!
//! ```text
//! source <(agentwire completion bash)                 # bash, this shell
//! agentwire completion zsh > "${fpath[1]}/_agentwire" # zsh
//! agentwire completion fish > ~/.config/fish/completions/agentwire.fish
//! ```

use std::process::ExitCode;

use clap::{Args, Command, CommandFactory};
use clap_complete::Shell;

/// `agentwire completion`.
#[derive(Debug, Args)]
pub struct CompletionArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    shell: Shell,
}

/// Prints the script on stdout.
pub fn run(args: &CompletionArgs) -> ExitCode {
    let mut command = without_hidden_subcommands(crate::Cli::command());
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "agentwire", &mut script);
    crate::stdout::print(&String::from_utf8_lossy(&script));
    ExitCode::SUCCESS
}

/// `command` without its hidden subcommands (`sandbox-exec`, `apply-patch`, … which the engine
/// runs, not people): clap_complete's bash script would offer them otherwise.
fn without_hidden_subcommands(command: Command) -> Command {
    let visible: Vec<Command> = command
        .get_subcommands()
        .filter(|sub| !sub.is_hide_set())
        .cloned()
        .collect();
    Command::new("agentwire")
        .version(env!("CARGO_PKG_VERSION"))
        .args(command.get_arguments().cloned())
        .subcommands(visible)
}
