//! `agentwire login [--with-api-key]`, `agentwire login status` and `agentwire logout`: the
//! API key of `$AGENTWIRE_HOME/auth.json`, stored and removed as `account/login/start` and
//! `account/logout` do it (the engine's code).
//!
//! The key is read from stdin, never from the command line (where other users could see it in
//! the process list), as `codex login --with-api-key` reads it:
//! `printenv OPENAI_API_KEY | agentwire login --with-api-key`. `--with-api-key` is accepted
//! for Codex's spelling; an API key is the only sign-in agentwire has, so `agentwire login`
//! reads stdin the same way.

use std::io::{IsTerminal, Read};
use std::process::ExitCode;

use agentwire_engine::{EngineConfig, SignIn};
use clap::{Args, Subcommand};

/// The most bytes read from stdin for a key.
const MAX_KEY_BYTES: u64 = 64 * 1024;

/// `agentwire login …`.
#[derive(Debug, Args)]
pub struct LoginArgs {
    /// `status`: print the sign-in (exit 0 signed in, 1 not).
    #[command(subcommand)]
    command: Option<LoginCommand>,
    /// Read the API key from stdin (pipe it in: `printenv OPENAI_API_KEY | agentwire login
    /// --with-api-key`).
    #[arg(long)]
    with_api_key: bool,
}

/// `agentwire login status`.
#[derive(Debug, Subcommand)]
enum LoginCommand {
    /// Print how this home is signed in, with the key masked; exit 0 when signed in, 1 when
    /// not.
    Status,
}

/// Runs `agentwire login …` on `$AGENTWIRE_HOME`.
pub fn login(args: LoginArgs) -> Result<ExitCode, String> {
    let home = EngineConfig::from_env().home;
    if let Some(LoginCommand::Status) = args.command {
        return match agentwire_engine::sign_in(&home)? {
            SignIn::ApiKey { masked } => {
                crate::stdout::line(&format!("Signed in with an API key: {masked}"));
                Ok(ExitCode::SUCCESS)
            }
            SignIn::SignedOut => {
                crate::stdout::line(
                    "Not signed in. Run `agentwire login --with-api-key` to sign in.",
                );
                Ok(ExitCode::FAILURE)
            }
        };
    }
    let _ = args.with_api_key;
    let key = read_key()?;
    agentwire_engine::store_api_key(&home, &key)?;
    crate::stdout::line(&format!(
        "Signed in with an API key: {} (stored in {}).",
        agentwire_engine::mask_key(key.trim()),
        home.join("auth.json").display()
    ));
    Ok(ExitCode::SUCCESS)
}

/// Runs `agentwire logout` on `$AGENTWIRE_HOME`.
pub fn logout() -> Result<ExitCode, String> {
    let home = EngineConfig::from_env().home;
    if agentwire_engine::remove_api_key(&home)? {
        crate::stdout::line("Signed out: the stored API key was removed.");
    } else {
        crate::stdout::line("Not signed in: there was no stored API key.");
    }
    Ok(ExitCode::SUCCESS)
}

/// The key piped to stdin; refused when stdin is a terminal (the key would be echoed) or
/// holds more than [`MAX_KEY_BYTES`].
fn read_key() -> Result<String, String> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Err(
            "the API key is read from stdin: pipe it in, e.g. `printenv OPENAI_API_KEY | \
             agentwire login --with-api-key`"
                .to_owned(),
        );
    }
    let mut bytes = Vec::new();
    stdin
        .lock()
        .take(MAX_KEY_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read the API key from stdin: {e}"))?;
    if bytes.len() as u64 > MAX_KEY_BYTES {
        return Err(format!(
            "stdin holds more than {MAX_KEY_BYTES} bytes: that is not an API key"
        ));
    }
    let key = String::from_utf8(bytes)
        .map_err(|_| "the API key on stdin is not UTF-8 text".to_owned())?;
    if key.trim().is_empty() {
        return Err(
            "no API key on stdin: pipe it in, e.g. `printenv OPENAI_API_KEY | agentwire login \
             --with-api-key`"
                .to_owned(),
        );
    }
    Ok(key)
}
