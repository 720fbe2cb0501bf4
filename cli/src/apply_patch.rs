//! `agentwire apply-patch --cwd DIR [--root DIR]…` (hidden): applies the patch on stdin under
//! DIR and prints the changes made as JSON. The engine runs it through `agentwire sandbox-exec`,
//! so the kernel checks every write the patch makes (see `engine/tools/src/patch/confined.rs`).
//! Exit code 1, with the reason on stderr, when the patch cannot be applied.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

/// Largest patch read from stdin.
const MAX_PATCH_BYTES: u64 = 64 * 1024 * 1024;

/// The arguments of `apply-patch`.
#[derive(Debug, Args)]
pub struct ApplyPatchArgs {
    /// The directory the patch's relative paths are resolved against.
    #[arg(long, value_name = "DIR")]
    cwd: PathBuf,
    /// A directory the patch may write beneath (repeatable); nothing else is written.
    #[arg(long = "root", value_name = "DIR")]
    roots: Vec<PathBuf>,
}

/// Applies the patch on stdin; prints the changes as JSON.
pub fn run(args: ApplyPatchArgs) -> ExitCode {
    let mut text = String::new();
    let read = std::io::stdin()
        .take(MAX_PATCH_BYTES)
        .read_to_string(&mut text);
    if let Err(e) = read {
        eprintln!("agentwire apply-patch: cannot read the patch from stdin: {e}");
        return ExitCode::FAILURE;
    }
    match agentwire_engine::apply_patch_text(&text, &args.cwd, &args.roots) {
        Ok(json) => {
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(reason) => {
            eprintln!("agentwire apply-patch: {reason}");
            ExitCode::FAILURE
        }
    }
}
