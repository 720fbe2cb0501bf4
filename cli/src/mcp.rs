//! `agentwire mcp`: list, show, add and remove the MCP servers of `$AGENTWIRE_HOME/config.toml`
//! (the logic is `agentwire_mcp::cli`, the engine's MCP client).

use std::process::ExitCode;

use agentwire_engine::EngineConfig;
use agentwire_mcp::cli::{self, Transport};
use clap::{Args, Subcommand};

/// `agentwire mcp …`.
#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// List the configured MCP servers.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show one MCP server.
    Get {
        /// The server's name.
        name: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Add an MCP server (or replace the one of that name): `add NAME -- COMMAND ARGS…` for a
    /// program speaking MCP on stdio, `add NAME --url URL` for a streamable HTTP server.
    Add(AddArgs),
    /// Remove an MCP server.
    Remove {
        /// The server's name.
        name: String,
    },
}

/// `agentwire mcp add`.
#[derive(Debug, Args)]
pub struct AddArgs {
    /// The server's name (letters, digits, `_`, `-`).
    name: String,
    /// An environment variable for a stdio server, `KEY=VALUE`. Repeatable.
    #[arg(long = "env", value_name = "KEY=VALUE", value_parser = env_pair)]
    env: Vec<(String, String)>,
    /// The server's streamable HTTP endpoint.
    #[arg(long, value_name = "URL", conflicts_with_all = ["env", "command"])]
    url: Option<String>,
    /// The environment variable holding the bearer token sent to `--url`.
    #[arg(long, value_name = "VAR", requires = "url")]
    bearer_token_env_var: Option<String>,
    /// The program and its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

fn env_pair(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.is_empty() => Ok((key.to_owned(), value.to_owned())),
        _ => Err(format!("expected KEY=VALUE, not {text:?}")),
    }
}

/// Runs `command` on the configuration under `$AGENTWIRE_HOME`.
pub fn run(command: McpCommand) -> Result<ExitCode, String> {
    let home = EngineConfig::from_env().home;
    let output = match command {
        McpCommand::List { json } => cli::list(&home, json)?,
        McpCommand::Get { name, json } => cli::get(&home, &name, json)?,
        McpCommand::Remove { name } => cli::remove(&home, &name)?,
        McpCommand::Add(args) => {
            let transport = match (args.url, args.command.split_first()) {
                (Some(url), _) => Transport::Http {
                    url,
                    bearer_token_env_var: args.bearer_token_env_var,
                },
                (None, Some((program, rest))) => Transport::Stdio {
                    command: program.clone(),
                    args: rest.to_vec(),
                    env: args.env,
                },
                (None, None) => {
                    return Err("give the server's command after `--`, or --url URL".to_owned());
                }
            };
            cli::add(&home, &args.name, transport)?
        }
    };
    crate::stdout::line(&output);
    Ok(ExitCode::SUCCESS)
}
