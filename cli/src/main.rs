//! The `agentwire` command.
//!
//! ```text
//! agentwire [--remote ws://HOST:PORT|wss://…|unix://PATH [--remote-auth-token-env VAR]] [-m MODEL] [-C DIR]
//! agentwire tui [same flags] [PROMPT]
//! agentwire app-server [--listen stdio://|ws://IP:PORT|unix://[PATH]|off] [--ws-auth-token-file PATH | --ws-auth-token-sha256 HEX]
//! agentwire app-server generate-json-schema --out DIR [--experimental] [--protocol-version X.Y.Z]
//! agentwire app-server generate-ts --out DIR [--experimental] [--protocol-version X.Y.Z] [--zod]
//! agentwire app-server generate-openrpc --out FILE|- [--experimental] [--protocol-version X.Y.Z] [--openrpc-version 1.2.6|1.3.2]
//! agentwire app-server generate-docs --out DIR [--experimental] [--protocol-version X.Y.Z]
//! agentwire schema diff OLD NEW [--format text|json]
//! agentwire mcp-server [--listen stdio://|http://IP:PORT/PATH] [--token-file PATH]
//! agentwire mcp list|get NAME|add NAME [--env K=V]… -- CMD ARGS…|add NAME --url URL|remove NAME [--json]
//! agentwire app-server daemon start|stop|status
//! agentwire import codex [--dry-run]
//! agentwire login [--with-api-key] < KEY | agentwire login status | agentwire logout
//! agentwire app-server proxy [--socket PATH]
//! agentwire exec [--json] [-o FILE] [--output-schema FILE] [-i IMAGE]… [-a POLICY] [-s MODE] [--full-auto] [--yes] [-m MODEL] [-C DIR] [PROMPT|-]
//! agentwire exec resume [--last [--all] | THREAD_ID] [same flags] [PROMPT|-]
//! agentwire completion bash|zsh|fish|elvish|powershell
//! agentwire contract check [--protocol-version X.Y.Z] [--experimental] [--format text|json] TRANSCRIPT.jsonl
//! agentwire conformance --server COMMAND|--url ws://HOST:PORT [--mock-model] [--bounded-queue N] [--format text|json]
//! ```
//!
//! Every subcommand also takes `-c key=value` (repeatable), `--profile NAME`,
//! `--enable`/`--disable FEATURE` and `--oss [--local-provider ollama|lmstudio]`: configuration
//! overrides above every `config.toml`.

mod apply_patch;
mod completion;
mod conformance;
mod contract;
mod daemon;
mod exec;
mod generate;
mod import;
mod log_file;
mod logging;
// Sign-in from the terminal (issue 33).
mod acp;
mod login;
mod mcp;
mod mcp_server;
mod metrics_listen;
// operations: OpenTelemetry export (`[otel]`).
mod otel;
mod pinned;
mod proxy;
mod sandbox_exec;
mod schema_diff;
mod serve;
mod stdout;
mod stop_watch;
mod tui;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// The help heading of the configuration overrides every subcommand takes, so they stand
/// apart from the subcommand's own flags.
const CONFIG_HEADING: &str = "Configuration (every subcommand)";

/// The coding-agent app-server protocol, schema first: a server, its clients and its tools.
///
/// One engine, several faces: `app-server` (the protocol Codex clients speak, over stdio, ws://
/// or unix://), `mcp-server` (the engine as MCP tools), `acp` (the Agent Client Protocol, for
/// editors), `exec` (one turn from a script), and the terminal client (no subcommand, or
/// `tui`). For client authors: the `app-server generate-*` commands (JSON Schema, TypeScript,
/// OpenRPC, a docs site), `schema diff`, `contract check` and `conformance`.
#[derive(Debug, Parser)]
#[command(name = "agentwire", version)]
struct Cli {
    /// Without a subcommand: the terminal client (whose flags apply only then).
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten, next_help_heading = "Terminal client (no subcommand)")]
    tui: tui::TuiArgs,
    #[command(flatten)]
    overrides: ConfigOverrides,
}

/// Configuration overrides, accepted before or after any subcommand.
#[derive(Debug, Clone, Default, Args)]
pub struct ConfigOverrides {
    /// Override a configuration value, above every config.toml: a dotted key path and a TOML
    /// value (`-c model="o4"`, `-c sandbox_workspace_write.network_access=true`); a value that
    /// is not TOML is taken as a string. Repeatable.
    #[arg(
        short = 'c',
        long = "config",
        value_name = "key=value",
        global = true,
        help_heading = CONFIG_HEADING,
        value_parser = parse_override
    )]
    pub config: Vec<String>,
    /// Use the `[profiles.NAME]` table of the configuration (over its `profile` key).
    #[arg(long, value_name = "NAME", global = true, help_heading = CONFIG_HEADING)]
    pub profile: Option<String>,
    /// Turn a feature flag on: the same as `-c features.NAME=true` (as Codex takes it, so
    /// clients that pass it to `codex app-server` start agentwire unchanged). Repeatable.
    #[arg(
        long,
        value_name = "NAME",
        global = true,
        value_parser = feature_name,
        help_heading = CONFIG_HEADING
    )]
    pub enable: Vec<String>,
    /// Turn a feature flag off: the same as `-c features.NAME=false`. Repeatable.
    #[arg(
        long,
        value_name = "NAME",
        global = true,
        value_parser = feature_name,
        help_heading = CONFIG_HEADING
    )]
    pub disable: Vec<String>,
    /// Use a local open-model server, as Codex's `--oss`: the same as
    /// `-c model_provider="ollama"` (or the `--local-provider`), after the `-c` flags. With no
    /// `model` configured, a thread asks for the first model the server lists.
    #[arg(long, global = true, help_heading = CONFIG_HEADING)]
    pub oss: bool,
    /// The local server `--oss` uses (and implies): `ollama` (the default) or `lmstudio`.
    #[arg(
        long,
        value_name = "PROVIDER",
        global = true,
        value_enum,
        help_heading = CONFIG_HEADING
    )]
    pub local_provider: Option<LocalProvider>,
}

/// A local open-model server of `--local-provider` (a built-in model provider id).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LocalProvider {
    /// Ollama, at `http://localhost:11434/v1`.
    Ollama,
    /// LM Studio, at `http://localhost:1234/v1`.
    Lmstudio,
}

impl ConfigOverrides {
    /// The overrides as arguments of a child `agentwire` (`-c k=v`… then `--profile NAME`), so
    /// a server this command starts sees the configuration it was given.
    pub fn child_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        for flag in self.flags() {
            args.push("-c".to_owned());
            args.push(flag);
        }
        if let Some(profile) = &self.profile {
            args.push("--profile".to_owned());
            args.push(profile.clone());
        }
        args
    }

    /// Every override as a `key=value` flag: `-c` ones in order, then `--enable`/`--disable`.
    pub fn flags(&self) -> Vec<String> {
        let features = |names: &[String], on: bool| {
            names
                .iter()
                .map(move |name| format!("features.{name}={on}"))
                .collect::<Vec<_>>()
        };
        let mut flags = self.config.clone();
        flags.extend(features(&self.enable, true));
        flags.extend(features(&self.disable, false));
        let local = match self.local_provider {
            Some(LocalProvider::Lmstudio) => Some("lmstudio"),
            Some(LocalProvider::Ollama) => Some("ollama"),
            None => self.oss.then_some("ollama"),
        };
        if let Some(id) = local {
            flags.push(format!("model_provider=\"{id}\""));
        }
        flags
    }
}

/// A feature name for `--enable`/`--disable`: one bare TOML key.
fn feature_name(name: &str) -> Result<String, String> {
    let bare = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if bare {
        Ok(name.to_owned())
    } else {
        Err(format!(
            "feature names are letters, digits, `_` and `-` only, not {name:?}"
        ))
    }
}

/// Checks a `-c` flag when the command line is parsed, so a malformed one fails at once.
fn parse_override(flag: &str) -> Result<String, String> {
    agentwire_engine::parse_config_override(flag).map(|_| flag.to_owned())
}

#[derive(Debug, Subcommand)]
enum Command {
    /// The terminal client (also what `agentwire` with no subcommand runs).
    Tui {
        #[command(flatten)]
        args: tui::TuiArgs,
        /// A first message, placed in the input line (sent at once in plain mode).
        prompt: Option<String>,
    },
    /// Serve the app-server protocol (default: over stdio), or generate bindings for it.
    #[command(args_conflicts_with_subcommands = true)]
    AppServer {
        #[command(subcommand)]
        command: Option<AppServerCommand>,
        #[command(flatten)]
        serve: serve::ServeArgs,
    },
    /// Serve the engine to MCP hosts as the `codex` and `codex-reply` tools (default: over stdio).
    McpServer(mcp_server::McpServerArgs),
    /// Serve the engine to editors over the Agent Client Protocol (ACP) on stdio (Zed and other
    /// ACP clients launch `agentwire acp`).
    Acp,
    /// Run one turn non-interactively (a new thread, or `exec resume` a stored one) and print
    /// what it does.
    Exec(exec::ExecArgs),
    /// Check recorded exchanges against a pinned protocol contract.
    Contract {
        #[command(subcommand)]
        command: ContractCommand,
    },
    /// Run protocol scenarios against any app-server and contract-check every message.
    Conformance(conformance::ConformanceArgs),
    /// Work with schema bundles.
    Schema {
        #[command(subcommand)]
        command: SchemaCommand,
    },
    /// Confine this process to a sandbox policy, then run COMMAND (used by the engine).
    #[command(hide = true)]
    SandboxExec(sandbox_exec::SandboxExecArgs),
    /// The first process of a sandbox's PID namespace (used by `sandbox-exec`).
    #[command(hide = true)]
    SandboxInit(sandbox_exec::SandboxInitArgs),
    /// Apply the patch on stdin and print the changes as JSON (used by the engine, confined).
    #[command(hide = true)]
    ApplyPatch(apply_patch::ApplyPatchArgs),
    /// List, show, add and remove the MCP servers of config.toml.
    Mcp {
        #[command(subcommand)]
        command: mcp::McpCommand,
    },
    /// Bring another agent's set-up over into this home (`import codex [--dry-run]`).
    Import {
        #[command(subcommand)]
        command: import::ImportCommand,
    },
    /// Sign in with an API key read from stdin (`login [--with-api-key]`), or print the
    /// sign-in (`login status`; exit 1 when signed out).
    Login(login::LoginArgs),
    /// Remove the stored API key.
    Logout,
    /// Print a shell completion script (`source <(agentwire completion bash)`).
    Completion(completion::CompletionArgs),
}

// The variant names are the subcommand names clap derives (`generate-ts`, …).
#[allow(clippy::enum_variant_names)]
#[derive(Debug, Subcommand)]
enum AppServerCommand {
    /// Write the JSON Schema bundle, the flat bundle, meta.json and one schema per type.
    GenerateJsonSchema(GenerateArgs),
    /// Write TypeScript definitions: one file per type, the method unions and index.ts (with
    /// `--zod`, zod validators too).
    GenerateTs(GenerateTsArgs),
    /// Write the OpenRPC document (OpenRPC 1.2.6 unless `--openrpc-version`): every client
    /// request as a method, server requests and notifications under `x-` extensions, errors,
    /// recorded examples.
    GenerateOpenrpc(GenerateFileArgs),
    /// Keep one background server on the Unix control socket (pid and log files under
    /// `$AGENTWIRE_HOME/app-server-control/`).
    Daemon {
        #[command(subcommand)]
        command: daemon::DaemonCommand,
    },
    /// Bridge stdin/stdout to the daemon's socket, so stdio clients share the daemon.
    Proxy(proxy::ProxyArgs),
    /// Write the protocol reference: a static HTML site with a page per method and per type and
    /// a changelog between pinned versions, examples recorded from real sessions, and a search
    /// box on the index (its only script).
    GenerateDocs(GenerateArgs),
}

#[derive(Debug, Args)]
struct GenerateFileArgs {
    /// File to write (its directory must exist); `-` writes the document to stdout.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Include experimental methods and fields.
    #[arg(long)]
    experimental: bool,
    /// Emit a pinned protocol release instead of the current one (see `generated/versions/`).
    #[arg(long, value_name = "X.Y.Z")]
    protocol_version: Option<String>,
    /// The OpenRPC specification version the document declares: 1.2.6 (default; what the stock
    /// @open-rpc tools accept) or 1.3.2.
    #[arg(long, value_name = "X.Y.Z")]
    openrpc_version: Option<String>,
}

#[derive(Debug, Args)]
struct GenerateTsArgs {
    #[command(flatten)]
    common: GenerateArgs,
    /// Also write zod validators (`zod-validators.ts`, for zod 4): one per definition of the
    /// same version's flat JSON Schema bundle.
    #[arg(long)]
    zod: bool,
}

#[derive(Debug, Args)]
struct GenerateArgs {
    /// Directory to write into (created if missing).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Include experimental methods and fields.
    #[arg(long)]
    experimental: bool,
    /// Emit a pinned protocol release instead of the current one (see `generated/versions/`).
    #[arg(long, value_name = "X.Y.Z")]
    protocol_version: Option<String>,
}

#[derive(Debug, Subcommand)]
enum ContractCommand {
    /// Validate every message of a transcript (JSON Lines of `{"session"?, "dir", "line", "ts"?}`)
    /// against a pinned schema bundle and the protocol's rules; exits 1 on any violation, 2 when
    /// the transcript cannot be read.
    Check {
        /// The transcript (as written by `app-server --record`).
        transcript: PathBuf,
        /// Check against a pinned protocol release instead of the current one.
        #[arg(long, value_name = "X.Y.Z")]
        protocol_version: Option<String>,
        /// Check sessions that negotiated `experimentalApi` against the experimental surface.
        #[arg(long)]
        experimental: bool,
        /// `text`: each violation with its transcript line and JSON pointer, then a summary;
        /// `json`: one report document.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
}

#[derive(Debug, Subcommand)]
enum SchemaCommand {
    /// Classify every change between two bundles as breaking or compatible; exits 1 when any
    /// change is breaking.
    Diff {
        /// The older bundle: a bundle file, or a directory holding one.
        old: PathBuf,
        /// The newer bundle: a bundle file, or a directory holding one.
        new: PathBuf,
        /// `text`: one line per change (breaking or compatible), then a summary; `json`: one
        /// report document.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
}

/// How `schema diff`, `contract check` and `conformance` print their report (each says what
/// its lines are).
#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    /// Lines for a person, then a summary.
    Text,
    /// One JSON document, for tools.
    Json,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let Some(command) = cli.command else {
        return finish(tui::run(cli.tui, None, &cli.overrides));
    };
    if let Some(flag) = cli.tui.given_flag() {
        eprintln!(
            "error: {flag} applies to the terminal client (`agentwire` or `agentwire tui`) only"
        );
        return ExitCode::from(2);
    }
    let result = match command {
        Command::Tui { args, prompt } => tui::run(args, prompt, &cli.overrides),
        Command::AppServer {
            command: None,
            serve,
        } => serve::run(serve, cli.overrides),
        Command::AppServer {
            command: Some(AppServerCommand::GenerateJsonSchema(args)),
            ..
        } => generate::run(
            generate::Kind::JsonSchema,
            &args.out,
            args.experimental,
            args.protocol_version.as_deref(),
            false,
        ),
        Command::AppServer {
            command: Some(AppServerCommand::GenerateTs(args)),
            ..
        } => generate::run(
            generate::Kind::TypeScript,
            &args.common.out,
            args.common.experimental,
            args.common.protocol_version.as_deref(),
            args.zod,
        ),
        Command::AppServer {
            command: Some(AppServerCommand::GenerateOpenrpc(args)),
            ..
        } => generate::openrpc(
            &args.out,
            args.experimental,
            args.protocol_version.as_deref(),
            args.openrpc_version.as_deref(),
        ),
        Command::AppServer {
            command: Some(AppServerCommand::Daemon { command }),
            ..
        } => daemon::run(command, &cli.overrides),
        Command::AppServer {
            command: Some(AppServerCommand::Proxy(args)),
            ..
        } => proxy::run(args),
        Command::AppServer {
            command: Some(AppServerCommand::GenerateDocs(args)),
            ..
        } => generate::docs(
            &args.out,
            args.experimental,
            args.protocol_version.as_deref(),
        ),
        Command::Exec(args) => exec::run(args, cli.overrides),
        Command::McpServer(args) => mcp_server::run(args, cli.overrides),
        Command::Acp => acp::run(cli.overrides),
        Command::Conformance(args) => Ok(conformance::run(args)),
        Command::Contract {
            command:
                ContractCommand::Check {
                    transcript,
                    protocol_version,
                    experimental,
                    format,
                },
        } => Ok(contract::run(
            &transcript,
            protocol_version.as_deref(),
            experimental,
            matches!(format, Format::Json),
        )),
        Command::Schema {
            command: SchemaCommand::Diff { old, new, format },
        } => schema_diff::run(&old, &new, matches!(format, Format::Json)),
        Command::SandboxExec(args) => Ok(sandbox_exec::run(args)),
        Command::ApplyPatch(args) => Ok(apply_patch::run(args)),
        Command::SandboxInit(args) => Ok(sandbox_exec::run_init(args)),
        Command::Mcp { command } => mcp::run(command),
        Command::Import { command } => import::run(command, cli.overrides),
        Command::Login(args) => login::login(args),
        Command::Logout => login::logout(),
        Command::Completion(args) => Ok(completion::run(&args)),
    };
    finish(result)
}

/// The exit code of a subcommand's result, printing its error.
fn finish(result: Result<ExitCode, String>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(message) => {
            stdout::note(&format!("error: {message}"));
            ExitCode::FAILURE
        }
    }
}
