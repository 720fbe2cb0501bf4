//! The conversation a model call sees, rebuilt from a thread's recorded turns.
//!
//! Items become history entries in order: a user message → a user entry; agent messages and
//! the tool items after them → one assistant entry (text plus tool calls) followed by one tool
//! result per call. A tool item's id is its call id. Reasoning is not sent back.

use std::collections::HashMap;

use agentwire_protocol::{ThreadItemKind, Turn, UserInput};
use agentwire_providers::{HistoryEntry, ToolCall};
use agentwire_store::meta::InjectedItems;
use agentwire_tools as tools;
use serde_json::json;

/// Builds history entries from items, keeping an assistant entry open while tool calls may
/// still join it.
#[derive(Debug, Default)]
struct Builder {
    entries: Vec<HistoryEntry>,
    /// The assistant entry being built: its text and tool calls.
    assistant: Option<(String, Vec<ToolCall>)>,
    /// Results of the open entry's tool calls, sent after it.
    results: Vec<HistoryEntry>,
}

impl Builder {
    fn flush(&mut self) {
        if let Some((text, tool_calls)) = self.assistant.take() {
            self.entries
                .push(HistoryEntry::Assistant { text, tool_calls });
            self.entries.append(&mut self.results);
        }
    }

    fn text(&mut self, text: &str) {
        if self
            .assistant
            .as_ref()
            .is_some_and(|(_, calls)| !calls.is_empty())
        {
            self.flush();
        }
        let (open, _) = self.assistant.get_or_insert_with(Default::default);
        if !open.is_empty() {
            open.push('\n');
        }
        open.push_str(text);
    }

    fn tool(&mut self, call: ToolCall, result: String) {
        self.results.push(HistoryEntry::ToolResult {
            call_id: call.call_id.clone(),
            output: result,
        });
        let (_, calls) = self.assistant.get_or_insert_with(Default::default);
        calls.push(call);
    }

    fn item(&mut self, kind: &ThreadItemKind) {
        match kind {
            ThreadItemKind::UserMessage { content, .. } => {
                self.flush();
                self.entries.push(HistoryEntry::User {
                    content: content.clone(),
                });
            }
            ThreadItemKind::AgentMessage { text, .. } => self.text(text),
            // A review's input (instructions and diff) went to the model only; later calls see
            // that a review was asked for, and the review itself (the agent's messages).
            // Text hooks gave the model (see `run::hook_points`).
            ThreadItemKind::HookPrompt { fragments, .. } => {
                self.flush();
                let texts: Vec<&str> = fragments.iter().map(|f| f.text.as_str()).collect();
                self.entries.push(HistoryEntry::Context {
                    text: texts.join("\n\n"),
                });
            }
            ThreadItemKind::EnteredReviewMode { review, .. } => {
                self.flush();
                self.entries.push(HistoryEntry::user_text(format!(
                    "Review requested: {review}"
                )));
            }
            ThreadItemKind::CommandExecution {
                id,
                command,
                aggregated_output,
                exit_code,
                status,
                ..
            } => {
                let call = ToolCall {
                    call_id: id.clone(),
                    name: tools::SHELL.to_owned(),
                    arguments: json!({ "command": command }).to_string(),
                };
                let result = format!(
                    "Status: {}\nExit code: {}\nOutput:\n{}",
                    wire_name(status),
                    exit_code.map_or_else(|| "none".to_owned(), |c| c.to_string()),
                    aggregated_output.as_deref().unwrap_or_default()
                );
                self.tool(call, result);
            }
            ThreadItemKind::FileChange {
                id,
                status,
                changes,
                ..
            } => {
                let diff: Vec<String> = changes
                    .iter()
                    .map(|c| format!("{}\n{}", c.path, c.diff))
                    .collect();
                let call = ToolCall {
                    call_id: id.clone(),
                    name: tools::APPLY_PATCH.to_owned(),
                    arguments: json!({ "input": diff.join("\n") }).to_string(),
                };
                self.tool(call, format!("Patch status: {}", wire_name(status)));
            }
            ThreadItemKind::DynamicToolCall { .. } => {
                if let Some((call, result)) = super::dynamic_calls::dynamic_call_history(kind) {
                    self.tool(call, result);
                }
            }
            ThreadItemKind::McpToolCall {
                id,
                server,
                tool,
                arguments,
                result,
                error,
                ..
            } => {
                let call = ToolCall {
                    call_id: id.clone(),
                    name: agentwire_mcp::names::qualify(server, tool, &Default::default()),
                    arguments: arguments.to_string(),
                };
                let text = agentwire_mcp::content::recorded_text(result.as_ref(), error.as_ref());
                self.tool(call, text);
            }
            ThreadItemKind::WebSearch {
                id, query, results, ..
            } => {
                let call = ToolCall {
                    call_id: id.clone(),
                    name: tools::WEB_SEARCH.to_owned(),
                    arguments: json!({ "query": query }).to_string(),
                };
                let hits: Vec<tools::web_search::Hit> = results
                    .iter()
                    .flatten()
                    .map(|hit| {
                        let field = |name: &str| {
                            hit.get(name)
                                .and_then(serde_json::Value::as_str)
                                .unwrap_or_default()
                                .to_owned()
                        };
                        tools::web_search::Hit {
                            title: field("title"),
                            url: field("url"),
                            snippet: field("snippet"),
                        }
                    })
                    .collect();
                self.tool(call, tools::web_search::render(query, &hits));
            }
            // An image the model viewed (`view_image`) reaches every later model call as it
            // reached the next one: a user message carrying the image, read again from its
            // path (under the rules of a `localImage`).
            ThreadItemKind::ImageView { path, .. } => {
                self.flush();
                self.entries.push(HistoryEntry::User {
                    content: vec![
                        UserInput::text()
                            .text(format!(
                                "The image you asked to view with `{}`:",
                                tools::VIEW_IMAGE
                            ))
                            .build(),
                        UserInput::local_image().path(path.0.clone()).build(),
                    ],
                });
            }
            _ => {}
        }
    }
}

/// How `value` (a unit enum) is spelled on the wire, e.g. `completed`.
fn wire_name(value: &impl serde::Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(name)) => name,
        _ => "unknown".to_owned(),
    }
}

/// The history of `turns`, oldest first.
pub(super) fn from_turns(turns: &[Turn]) -> Vec<HistoryEntry> {
    with_blocks(turns, &HashMap::new())
}

/// The history of `turns`, oldest first, with the environment context block each turn sent
/// (`blocks`, by turn id; see [`super::environment`]) before the turn's first entry.
pub(super) fn with_blocks(turns: &[Turn], blocks: &HashMap<String, String>) -> Vec<HistoryEntry> {
    with_injected(turns, blocks, &[])
}

/// [`with_blocks`], with the item batches clients injected (`thread/inject_items`), each right
/// after the turn it follows (before the first turn when it follows none).
pub(super) fn with_injected(
    turns: &[Turn],
    blocks: &HashMap<String, String>,
    injected: &[InjectedItems],
) -> Vec<HistoryEntry> {
    let inject = |builder: &mut Builder, after: Option<&str>| {
        for batch in injected
            .iter()
            .filter(|b| b.after_turn_id.as_deref() == after)
        {
            builder.flush();
            builder
                .entries
                .extend(crate::threads::inject::history_entries(&batch.items));
        }
    };
    let mut builder = Builder::default();
    inject(&mut builder, None);
    for turn in turns {
        if let Some(block) = blocks.get(&turn.id) {
            builder.flush();
            builder.entries.push(HistoryEntry::Context {
                text: block.clone(),
            });
        }
        for (at, item) in turn.items.iter().enumerate() {
            // A compaction (`thread/compact/start`, or automatic within a turn) replaces
            // everything before it with its summary: the agent message just before the
            // `contextCompaction` item. What follows in the turn stays.
            if matches!(item.kind, ThreadItemKind::ContextCompaction { .. }) {
                if let Some(summary) = compaction_summary(&turn.items[..at]) {
                    builder = Builder::default();
                    builder.entries.push(HistoryEntry::user_text(format!(
                        "{SUMMARY_PREFIX}{summary}"
                    )));
                }
                continue;
            }
            builder.item(&item.kind);
        }
        inject(&mut builder, Some(&turn.id));
    }
    builder.flush();
    builder.entries
}

/// Cuts every tool result of `history` to `limit` bytes (its middle left out), as the model
/// was shown it when the call was made: a recorded item keeps the whole output, the
/// conversation a later model call sees keeps the model's budget (`tool_output_token_limit`,
/// else its family's truncation policy).
pub(super) fn cut_tool_results(history: &mut [HistoryEntry], limit: usize) {
    for entry in history {
        if let HistoryEntry::ToolResult { output, .. } = entry
            && output.len() > limit
        {
            *output = tools::truncate::middle_cut(output, limit);
        }
    }
}

/// What goes before a compaction summary in the conversation the model sees.
pub(super) const SUMMARY_PREFIX: &str =
    "The conversation before this point was compacted. Summary of it:\n\n";

/// The summary of a compaction whose `contextCompaction` item follows `before`: the last
/// agent message of `before`.
fn compaction_summary(before: &[agentwire_protocol::ThreadItem]) -> Option<&str> {
    before.iter().rev().find_map(|i| match &i.kind {
        ThreadItemKind::AgentMessage { text, .. } => Some(text.as_str()),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use agentwire_protocol::{
        CommandExecutionSource, CommandExecutionStatus, LegacyAppPathString, ThreadItem,
        TurnItemsView, TurnStatus, UserInput,
    };

    use super::*;

    fn item(kind: ThreadItemKind) -> ThreadItem {
        ThreadItem::builder().kind(kind).build()
    }

    fn message(text: &str) -> ThreadItem {
        item(
            ThreadItemKind::agent_message()
                .id("m".to_owned())
                .text(text.to_owned())
                .build(),
        )
    }

    fn command(id: &str) -> ThreadItem {
        item(
            ThreadItemKind::command_execution()
                .id(id.to_owned())
                .command("ls".to_owned())
                .cwd(LegacyAppPathString("/w".to_owned()))
                .status(CommandExecutionStatus::Completed)
                .source(CommandExecutionSource::default())
                .aggregated_output("a.txt\n".to_owned())
                .exit_code(0)
                .duration_ms(3)
                .build(),
        )
    }

    fn turn(items: Vec<ThreadItem>) -> Turn {
        Turn::builder()
            .id("t".to_owned())
            .items(items)
            .items_view(TurnItemsView::Full)
            .status(TurnStatus::Completed)
            .build()
    }

    fn user(text: &str) -> ThreadItem {
        item(
            ThreadItemKind::user_message()
                .id("u".to_owned())
                .content(vec![UserInput::text().text(text.to_owned()).build()])
                .build(),
        )
    }

    #[test]
    fn a_compaction_inside_a_turn_keeps_what_follows_it() {
        let marker = item(
            ThreadItemKind::context_compaction()
                .id("c".to_owned())
                .build(),
        );
        let turns = [
            turn(vec![user("first"), message("one")]),
            turn(vec![
                user("second"),
                command("c1"),
                message("the summary"),
                marker,
                message("after"),
            ]),
            turn(vec![user("third")]),
        ];
        let history = from_turns(&turns);
        assert_eq!(history.len(), 3, "{history:#?}");
        assert_eq!(
            history[0],
            HistoryEntry::user_text(format!("{SUMMARY_PREFIX}the summary"))
        );
        assert!(
            matches!(&history[1], HistoryEntry::Assistant { text, tool_calls } if text == "after" && tool_calls.is_empty())
        );
        assert_eq!(
            history[2],
            HistoryEntry::User {
                content: vec![UserInput::text().text("third".to_owned()).build()]
            }
        );
    }

    #[test]
    fn each_block_goes_before_the_turn_that_sent_it() {
        let mut first = turn(vec![user("first"), message("one")]);
        first.id = "t1".to_owned();
        let mut second = turn(vec![user("second"), message("two")]);
        second.id = "t2".to_owned();
        let mut third = turn(vec![user("third")]);
        third.id = "t3".to_owned();
        let blocks = HashMap::from([
            ("t1".to_owned(), "env one".to_owned()),
            ("t3".to_owned(), "env two".to_owned()),
        ]);
        let history = with_blocks(&[first, second, third], &blocks);
        let context = |text: &str| HistoryEntry::Context {
            text: text.to_owned(),
        };
        assert_eq!(history.len(), 7, "{history:#?}");
        assert_eq!(history[0], context("env one"));
        assert!(matches!(&history[1], HistoryEntry::User { .. }));
        assert!(matches!(&history[4], HistoryEntry::Assistant { text, .. } if text == "two"));
        assert_eq!(history[5], context("env two"));
        assert!(matches!(&history[6], HistoryEntry::User { .. }));
    }

    #[test]
    fn tool_items_join_the_assistant_entry_before_them() {
        let user = item(
            ThreadItemKind::user_message()
                .id("u".to_owned())
                .content(vec![UserInput::text().text("list".to_owned()).build()])
                .build(),
        );
        let turn = turn(vec![
            user,
            message("Looking."),
            command("c1"),
            command("c2"),
            message("Done."),
        ]);
        let history = from_turns(&[turn]);
        assert_eq!(history.len(), 5, "{history:#?}");
        assert_eq!(
            history[0],
            HistoryEntry::User {
                content: vec![UserInput::text().text("list".to_owned()).build()]
            }
        );
        let HistoryEntry::Assistant { text, tool_calls } = &history[1] else {
            panic!("assistant entry: {history:#?}");
        };
        assert_eq!(text, "Looking.");
        assert_eq!(tool_calls.len(), 2);
        assert!(
            matches!(&history[2], HistoryEntry::ToolResult { call_id, output } if call_id == "c1" && output.contains("a.txt") && output.contains("Status: completed"))
        );
        assert!(matches!(&history[3], HistoryEntry::ToolResult { call_id, .. } if call_id == "c2"));
        assert!(
            matches!(&history[4], HistoryEntry::Assistant { text, tool_calls } if text == "Done." && tool_calls.is_empty())
        );
    }

    #[test]
    fn mcp_calls_and_viewed_images_are_kept_for_later_calls() {
        let mcp = item(
            ThreadItemKind::mcp_tool_call()
                .id("m1".to_owned())
                .server("docs".to_owned())
                .tool("lookup".to_owned())
                .arguments(json!({"q": "x"}))
                .status(agentwire_protocol::McpToolCallStatus::Completed)
                .result(
                    agentwire_protocol::McpToolCallResult::builder()
                        .content(vec![json!({"type": "text", "text": "found x"})])
                        .build(),
                )
                .build(),
        );
        let image = item(
            ThreadItemKind::image_view()
                .id("v1".to_owned())
                .path(LegacyAppPathString("/w/shot.png".to_owned()))
                .build(),
        );
        let history = from_turns(&[turn(vec![user("look"), mcp, image, message("seen")])]);
        assert_eq!(history.len(), 5, "{history:#?}");
        let HistoryEntry::Assistant { tool_calls, .. } = &history[1] else {
            panic!("assistant entry: {history:#?}");
        };
        assert_eq!(tool_calls[0].name, "docs__lookup");
        assert_eq!(tool_calls[0].arguments, r#"{"q":"x"}"#);
        assert!(
            matches!(&history[2], HistoryEntry::ToolResult { call_id, output } if call_id == "m1" && output == "found x")
        );
        let HistoryEntry::User { content } = &history[3] else {
            panic!("image entry: {history:#?}");
        };
        assert!(
            content.iter().any(|c| *c
                == UserInput::local_image()
                    .path("/w/shot.png".to_owned())
                    .build()),
            "{content:?}"
        );
    }

    #[test]
    fn tool_results_are_cut_to_the_budget_and_nothing_else_is() {
        let long = "x".repeat(100);
        let mut history = vec![
            HistoryEntry::user_text(long.clone()),
            HistoryEntry::ToolResult {
                call_id: "c".to_owned(),
                output: long.clone(),
            },
        ];
        cut_tool_results(&mut history, 10);
        assert_eq!(history[0], HistoryEntry::user_text(long));
        let HistoryEntry::ToolResult { output, .. } = &history[1] else {
            panic!("{history:#?}");
        };
        assert!(output.contains("90 bytes left out"), "{output}");
    }
}
