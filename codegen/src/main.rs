//! `agentwire-codegen`: rewrites or checks `generated/` from the protocol crate.
//!
//! ```text
//! cargo run -p agentwire-codegen -- write   # regenerate generated/
//! cargo run -p agentwire-codegen -- check   # exit 1 with a diff when generated/ is stale
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use agentwire_codegen::{REGENERATE_COMMAND, drift, workspace};

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let command = args.next().unwrap_or_default();
    let root = args
        .next()
        .map(PathBuf::from)
        .unwrap_or_else(drift::generated_dir);
    match command.as_str() {
        "write" => match drift::write(&root) {
            Ok(count) => {
                eprintln!("wrote {count} files under {}", root.display());
                ExitCode::SUCCESS
            }
            Err(error) => {
                eprintln!("error: {error}");
                ExitCode::FAILURE
            }
        },
        "check" => match workspace::generate_all() {
            Ok(expected) => match drift::compare(&root, &expected) {
                Ok(report) if report.is_empty() => {
                    eprintln!("{} is up to date", root.display());
                    ExitCode::SUCCESS
                }
                Ok(report) => {
                    eprintln!(
                        "{report}\n{} is stale: run `{REGENERATE_COMMAND}`",
                        root.display()
                    );
                    ExitCode::FAILURE
                }
                Err(error) => {
                    eprintln!("error: {error}");
                    ExitCode::FAILURE
                }
            },
            Err(error) => {
                eprintln!("error: {error}");
                ExitCode::FAILURE
            }
        },
        _ => {
            eprintln!("usage: agentwire-codegen write|check [GENERATED_DIR]");
            ExitCode::from(2)
        }
    }
}
