//! The plain front end, used when stdout is not a terminal: each line of stdin is a message or
//! a slash command, and every finished item, notice and error is printed as plain lines. While
//! a turn runs, stdin is read only to answer approvals (`y`, `a`, `n` or `c`; end of input
//! declines). Commands that start a turn (`/compact`, `/review`, `/init`) wait for it the same
//! way.

use std::io::Write;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::mpsc;

use crate::command::{self, Command};
use crate::connection::Incoming;
use crate::session::{Approval, Decision, Session};
use crate::transcript::{Cell, Transcript, cell_of_item};
use crate::view;

/// Runs until stdin ends (or `/quit`); `false` when the connection to the server was lost.
pub async fn run(
    mut session: Session,
    mut incoming: mpsc::Receiver<Incoming>,
    first: Option<String>,
) -> bool {
    let mut stdin = BufReader::new(tokio::io::stdin()).lines();
    let mut transcript = Transcript::default();
    let mut first = first;
    let mut turn_pending = false;
    loop {
        if !turn_pending {
            let line = match first.take() {
                Some(line) => line,
                None => match stdin.next_line().await {
                    Ok(Some(line)) => line,
                    _ => return true,
                },
            };
            let text = line.trim();
            match command::parse(text) {
                _ if text.is_empty() => {}
                Ok(Some(Command::Quit)) => return true,
                Ok(Some(command)) => {
                    // A new or resumed thread starts the transcript again: print all of it.
                    let before = match command {
                        Command::New | Command::Resume(_) => 0,
                        _ => transcript.cells().len(),
                    };
                    let outcome = command::run(&mut session, &mut transcript, command).await;
                    let before = before.min(transcript.cells().len());
                    print_cells(&transcript.cells()[before..]);
                    turn_pending = outcome.turn_started;
                }
                Ok(None) => match session.send(text, None).await {
                    Ok(()) => turn_pending = true,
                    Err(e) => print_cells(&[Cell::Error(format!("sending: {e}"))]),
                },
                Err(e) => print_cells(&[Cell::Error(e)]),
            }
            continue;
        }
        let Some(message) = incoming.recv().await else {
            return false;
        };
        match message {
            Incoming::Notification { method, params } => {
                if session.observe(&method, &params) {
                    continue;
                }
                // Kept for /status and /diff; they show nothing themselves.
                if matches!(
                    method.as_str(),
                    "thread/tokenUsage/updated" | "turn/diff/updated"
                ) {
                    transcript.apply(&method, &params);
                    continue;
                }
                if method == "item/completed" {
                    if let Some(cell) = params.get("item").and_then(cell_of_item) {
                        print_cells(&[cell]);
                    }
                    continue;
                }
                // Finished items are printed above; of the rest, only errors and the end of
                // the turn show (streamed deltas would repeat the finished items).
                if matches!(method.as_str(), "error" | "turn/completed") {
                    let before = transcript.cells().len();
                    transcript.apply(&method, &params);
                    print_cells(&transcript.cells()[before..]);
                }
                if method == "turn/completed" {
                    turn_pending = false;
                }
            }
            Incoming::Request {
                id,
                method,
                params,
                reply,
            } => {
                let Some(approval) = Approval::of(id, &method, &params, &reply) else {
                    Session::refuse(&reply, &method);
                    continue;
                };
                println!("? {} [y/a/n/c]", approval.question);
                let _ = std::io::stdout().flush();
                let answer = stdin.next_line().await.ok().flatten().unwrap_or_default();
                let decision = Decision::from_answer(&answer).unwrap_or(Decision::Decline);
                Session::decide(&approval, decision);
            }
            Incoming::Closed(why) => {
                print_cells(&[Cell::Error(format!("disconnected: {why}"))]);
                return false;
            }
        }
    }
}

/// Prints cells as plain text, a line each.
fn print_cells(cells: &[Cell]) {
    let mut out = std::io::stdout().lock();
    for line in view::transcript_lines(cells) {
        let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
        let _ = writeln!(out, "{text}");
    }
    let _ = out.flush();
}
