//! The full-screen layout: the transcript (newest at the bottom), an approval prompt when the
//! server waits for one (its question wrapped to the width, however long the reason), the input
//! line and a status line.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use crate::app::App;
use crate::transcript::{Cell, WAITING_FOR_APPROVAL};
use crate::wrap;

/// Output lines shown per command; earlier ones are elided.
const COMMAND_TAIL: usize = 12;

/// The answers an approval prompt offers, under its question.
const APPROVAL_CHOICES: &str =
    "[y] yes   [a] yes, for this session   [n] no   [c] no, and stop the turn";

/// Draws the whole screen.
pub fn draw(frame: &mut Frame<'_>, app: &App) {
    let area = frame.area();
    // The approval's question and choices, each wrapped to the width.
    let prompt = app.approval.as_ref().map(|pending| {
        (
            wrap::wrap(&pending.question, usize::from(area.width)),
            wrap::wrap(APPROVAL_CHOICES, usize::from(area.width)),
        )
    });
    // The prompt (its top border and its lines) takes at most half the screen.
    let approval_height = prompt.as_ref().map_or(0, |(question, choices)| {
        u16::try_from(question.len() + choices.len() + 1)
            .unwrap_or(u16::MAX)
            .min(area.height / 2)
    });
    let [transcript, approval, input, status] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(approval_height),
        Constraint::Length(3),
        Constraint::Length(1),
    ])
    .areas(area);

    let lines = wrap_lines(transcript_lines(app.transcript.cells()), transcript.width);
    let skip = lines
        .len()
        .saturating_sub(usize::from(transcript.height) + app.scroll);
    let visible: Vec<Line<'static>> = lines
        .into_iter()
        .skip(skip)
        .take(usize::from(transcript.height))
        .collect();
    frame.render_widget(Paragraph::new(visible), transcript);

    if let Some((question, choices)) = prompt {
        let bold = Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD);
        let lines: Vec<Line<'static>> = question
            .into_iter()
            .map(|line| Line::styled(line, bold))
            .chain(choices.into_iter().map(Line::raw))
            .collect();
        let prompt = Paragraph::new(lines).block(
            Block::new()
                .borders(Borders::TOP)
                .title(" approval — y/a/n/c "),
        );
        frame.render_widget(prompt, approval);
    }

    let title = if app.transcript.running_turn.is_some() {
        " working — Enter steers, Ctrl-C interrupts "
    } else {
        " message — Enter sends, /help for commands "
    };
    let input_line = Paragraph::new(Line::from(vec![
        Span::styled("› ", Style::new().fg(Color::Cyan)),
        Span::raw(tail(&app.input, input.width.saturating_sub(4))),
    ]))
    .block(Block::new().borders(Borders::ALL).title(title));
    frame.render_widget(input_line, input);
    let cursor_x = input
        .x
        .saturating_add(3)
        .saturating_add(u16::try_from(app.input.chars().count()).unwrap_or(u16::MAX))
        .min(input.right().saturating_sub(2));
    frame.set_cursor_position((cursor_x, input.y.saturating_add(1)));

    frame.render_widget(
        Paragraph::new(app.status_line()).style(Style::new().add_modifier(Modifier::DIM)),
        status,
    );
}

/// The last `width` characters of `text` (the input scrolls with the cursor).
fn tail(text: &str, width: u16) -> String {
    let count = text.chars().count();
    text.chars()
        .skip(count.saturating_sub(usize::from(width)))
        .collect()
}

/// Every cell as styled lines, a blank line between cells.
pub fn transcript_lines(cells: &[Cell]) -> Vec<Line<'static>> {
    let dim = Style::new().add_modifier(Modifier::DIM);
    let mut lines = Vec::new();
    let mut previous: Option<&Cell> = None;
    for cell in cells {
        let notices = matches!((previous, cell), (Some(Cell::Notice(_)), Cell::Notice(_)));
        if previous.is_some() && !notices {
            lines.push(Line::default());
        }
        previous = Some(cell);
        match cell {
            Cell::User(text) => lines.extend(text.lines().map(|l| {
                Line::styled(
                    format!("› {l}"),
                    Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
                )
            })),
            Cell::Agent(text) => lines.extend(text.lines().map(|l| Line::raw(l.to_owned()))),
            Cell::Reasoning(text) => lines.extend(text.lines().map(|l| {
                Line::styled(format!("thinking: {l}"), dim.add_modifier(Modifier::ITALIC))
            })),
            Cell::Command {
                command,
                output,
                exit,
                status,
            } => {
                lines.push(Line::styled(
                    format!("$ {command}"),
                    Style::new().fg(Color::Yellow),
                ));
                let output: Vec<&str> = output.lines().collect();
                if output.len() > COMMAND_TAIL {
                    lines.push(Line::styled(
                        format!("  … {} earlier lines", output.len() - COMMAND_TAIL),
                        dim,
                    ));
                }
                let from = output.len().saturating_sub(COMMAND_TAIL);
                lines.extend(
                    output[from..]
                        .iter()
                        .map(|l| Line::styled(format!("  {l}"), dim)),
                );
                let end = match exit {
                    Some(code) => format!("  └ exit {code}"),
                    None if status == "inProgress" => "  └ running…".to_owned(),
                    None if status == WAITING_FOR_APPROVAL => "  └ waiting for approval".to_owned(),
                    None => format!("  └ {status}"),
                };
                lines.push(Line::styled(end, dim));
            }
            Cell::Patch { changes, status } => {
                let status = if status == WAITING_FOR_APPROVAL {
                    "waiting for approval"
                } else {
                    status
                };
                for (path, what, diff) in changes {
                    lines.push(Line::styled(
                        format!("✎ {path} ({what}, {status})"),
                        Style::new().fg(Color::Magenta),
                    ));
                    lines.extend(diff_lines(diff));
                }
            }
            Cell::Diff { title, diff } => {
                lines.push(Line::styled(
                    format!("✎ {title}"),
                    Style::new().fg(Color::Magenta),
                ));
                lines.extend(diff_lines(diff));
            }
            Cell::Plan(steps) => {
                lines.push(Line::styled(
                    "Plan",
                    Style::new().add_modifier(Modifier::BOLD),
                ));
                lines.extend(steps.iter().map(|s| Line::raw(format!("  {s}"))));
            }
            Cell::Tool(label) => lines.push(Line::styled(format!("⚙ {label}"), dim)),
            Cell::Notice(text) => lines.push(Line::styled(format!("· {text}"), dim)),
            Cell::Error(text) => {
                lines.push(Line::styled(
                    format!("✗ {text}"),
                    Style::new().fg(Color::Red),
                ));
            }
        }
    }
    lines
}

/// A diff's lines, indented, added lines green and removed ones red.
fn diff_lines(diff: &str) -> impl Iterator<Item = Line<'static>> + '_ {
    diff.lines().map(|l| {
        let style = match l.as_bytes().first() {
            Some(b'+') => Style::new().fg(Color::Green),
            Some(b'-') => Style::new().fg(Color::Red),
            Some(b'@') => Style::new().fg(Color::Cyan),
            _ => Style::new().add_modifier(Modifier::DIM),
        };
        Line::styled(format!("  {l}"), style)
    })
}

/// Word-wraps lines at `width` columns ([`wrap::wrap`]), keeping each line's style.
fn wrap_lines(lines: Vec<Line<'static>>, width: u16) -> Vec<Line<'static>> {
    let width = usize::from(width.max(1));
    let mut wrapped = Vec::with_capacity(lines.len());
    for line in lines {
        let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
        if wrap::width(&text) <= width {
            wrapped.push(line);
            continue;
        }
        let style = line
            .spans
            .first()
            .map_or(line.style, |span| line.style.patch(span.style));
        wrapped.extend(
            wrap::wrap(&text, width)
                .into_iter()
                .map(|part| Line::styled(part, style)),
        );
    }
    wrapped
}
