//! The slash commands both front ends take.

use agentwire_protocol::Turn;
use serde_json::Value;

use crate::session::Session;
use crate::transcript::Transcript;

/// A slash command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `/new`: start a new thread.
    New,
    /// `/threads`: list recent threads.
    Threads,
    /// `/resume ID`: continue a thread.
    Resume(String),
    /// `/model`: list models; `/model NAME`: use NAME for the next turns.
    Model(Option<String>),
    /// `/help`.
    Help,
    /// `/quit` or `/exit`.
    Quit,
}

/// What running a command asks of the front end.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// Exit the client.
    pub quit: bool,
}

/// The command `text` names: `Ok(None)` when it is not a command (it does not start with `/`),
/// an error naming the command when it is not one this client knows or lacks its argument.
pub fn parse(text: &str) -> Result<Option<Command>, String> {
    let Some(rest) = text.strip_prefix('/') else {
        return Ok(None);
    };
    let mut words = rest.split_whitespace();
    let name = words.next().unwrap_or_default();
    let argument = words.next().map(str::to_owned);
    Ok(Some(match name {
        "new" => Command::New,
        "threads" => Command::Threads,
        "resume" => Command::Resume(
            argument.ok_or_else(|| "/resume needs a thread id (see /threads)".to_owned())?,
        ),
        "model" => Command::Model(argument),
        "help" => Command::Help,
        "quit" | "exit" => Command::Quit,
        other => return Err(format!("/{other} is not a command; /help lists them")),
    }))
}

/// The help text, one command per line.
pub const HELP: &[&str] = &[
    "/new — start a new thread",
    "/threads — list recent threads",
    "/resume ID — continue a thread",
    "/model [NAME] — list models, or use NAME for the next turns",
    "/quit — exit (or Ctrl-C twice)",
];

/// Runs `command`, reporting into `transcript`.
pub async fn run(session: &mut Session, transcript: &mut Transcript, command: Command) -> Outcome {
    match command {
        Command::New => match session.start_thread().await {
            Ok(id) => {
                transcript.clear();
                transcript.notice(format!("new thread {id}"));
            }
            Err(e) => transcript.error(format!("/new: {e}")),
        },
        Command::Threads => match session.list_threads().await {
            Ok(threads) if threads.is_empty() => transcript.notice("no threads yet"),
            Ok(threads) => {
                for (id, preview) in threads {
                    transcript.notice(format!("{id}  {preview}"));
                }
            }
            Err(e) => transcript.error(format!("/threads: {e}")),
        },
        Command::Resume(id) => match session.resume(&id).await {
            Ok(result) => {
                transcript.clear();
                transcript.notice(format!("resumed thread {id}"));
                let turns: Vec<Turn> = result
                    .pointer("/thread/turns")
                    .cloned()
                    .and_then(|turns| serde_json::from_value(turns).ok())
                    .unwrap_or_default();
                transcript.load_turns(&turns);
                if let Some(model) = result.get("model").and_then(Value::as_str) {
                    transcript.notice(format!("model {model}"));
                }
            }
            Err(e) => transcript.error(format!("/resume {id}: {e}")),
        },
        Command::Model(Some(name)) => {
            transcript.notice(format!("the next turns use {name}"));
            session.model = Some(name);
        }
        Command::Model(None) => match session.list_models().await {
            Ok(models) => {
                for (id, default) in models {
                    let mark = if default { " (default)" } else { "" };
                    transcript.notice(format!("{id}{mark}"));
                }
            }
            Err(e) => transcript.error(format!("/model: {e}")),
        },
        Command::Help => {
            for line in HELP {
                transcript.notice(*line);
            }
        }
        Command::Quit => return Outcome { quit: true },
    }
    Outcome::default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse_and_mistakes_name_the_command() {
        assert_eq!(parse("hello"), Ok(None));
        assert_eq!(parse("/new"), Ok(Some(Command::New)));
        assert_eq!(
            parse("/resume abc"),
            Ok(Some(Command::Resume("abc".into())))
        );
        assert_eq!(parse("/model"), Ok(Some(Command::Model(None))));
        assert_eq!(
            parse("/model o4 "),
            Ok(Some(Command::Model(Some("o4".into()))))
        );
        assert!(
            parse("/resume")
                .expect_err("needs an id")
                .contains("/resume")
        );
        assert!(parse("/frob").expect_err("unknown").contains("/frob"));
    }
}
