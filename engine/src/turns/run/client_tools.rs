//! Tools the client answers: `request_user_input` and the thread's dynamic tools.
//!
//! - `request_user_input` is offered while the thread's collaboration mode is `plan` (the last
//!   `turn/start` with a `collaborationMode` chose it), as the reference offers it. A call
//!   becomes `item/tool/requestUserInput` (blocking; every free-text answer allowed besides the
//!   options); the thread's status carries `waitingOnUserInput` until it is settled. The
//!   answers go back to the model as the call's output (`{"answers": {id: {"answers": [..]}}}`)
//!   and are recorded as a `functionCallOutput` item (the reference has no item of its own for
//!   this tool).
//! - Dynamic tools (`thread/start`'s `dynamicTools`, kept in the thread's settings) are offered
//!   on every turn: a function by its name, a namespace's function as `namespace__name`. A
//!   call becomes a `dynamicToolCall` item and `item/tool/call`; the client's `contentItems`
//!   go back to the model as text (text parts as they are, images and audio named by URL) and
//!   `success` sets the item's status. Dynamic tools whose name collides with a built-in tool
//!   are not offered.
//!
//! Both follow the approval rules (see [`TurnRun::ask_followers`]): every follower of the
//! thread is asked and the first well-formed answer wins; a timeout, an error answer or a
//! malformed one is a failure the model is told about (the turn goes on); an interrupt while
//! waiting withdraws the requests (`serverRequest/resolved`) and ends the turn.

use std::collections::BTreeMap;
use std::time::Instant;

use agentwire_mcp::ModelTool;
use agentwire_protocol::methods::{DynamicToolCall, ToolRequestUserInput};
use agentwire_protocol::{
    DynamicToolCallParams, DynamicToolCallStatus, DynamicToolNamespaceTool, DynamicToolSpec,
    FunctionCallOutputBody, ModeKind, ThreadActiveFlag, ThreadItemKind, ThreadStatus,
    ToolRequestUserInputAnswer, ToolRequestUserInputOption, ToolRequestUserInputParams,
    ToolRequestUserInputQuestion, ToolRequestUserInputResponse,
};
use agentwire_providers::ToolCall;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{CallEnd, TurnRun, now_ms};
use crate::turns::dynamic_calls::content_for_model;

/// The name of the tool by which the model asks the user questions.
pub(crate) const REQUEST_USER_INPUT: &str = "request_user_input";

/// Most questions one `request_user_input` call may ask.
const MAX_QUESTIONS: usize = 8;

/// Most bytes of answers (all questions together) handed back to the model.
const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// How a client tool call ended: the text for the model, and whether the turn must end.
pub(super) type ClientOutcome = (String, Option<CallEnd>);

/// A dynamic tool as the model sees it.
struct DynamicFunction<'a> {
    /// The function name the model calls.
    function: String,
    namespace: Option<&'a str>,
    tool: &'a str,
    description: String,
    parameters: &'a Value,
}

/// Every function of `specs`, flattened (namespaced ones as `namespace__name`).
fn dynamic_functions(specs: &[DynamicToolSpec]) -> Vec<DynamicFunction<'_>> {
    let mut functions = Vec::new();
    for spec in specs {
        match spec {
            DynamicToolSpec::Function {
                name,
                description,
                input_schema,
                ..
            } => functions.push(DynamicFunction {
                function: name.clone(),
                namespace: None,
                tool: name,
                description: description.clone(),
                parameters: input_schema,
            }),
            DynamicToolSpec::Namespace {
                name: namespace,
                description: about,
                tools,
                ..
            } => {
                for tool in tools {
                    let DynamicToolNamespaceTool::Function {
                        name,
                        description,
                        input_schema,
                        ..
                    } = tool
                    else {
                        continue;
                    };
                    functions.push(DynamicFunction {
                        function: format!("{namespace}__{name}"),
                        namespace: Some(namespace),
                        tool: name,
                        description: if about.is_empty() {
                            description.clone()
                        } else {
                            format!("{description} ({namespace}: {about})")
                        },
                        parameters: input_schema,
                    });
                }
            }
            // A kind of tool this server does not know is not offered.
            _ => {}
        }
    }
    // A built-in tool keeps its name.
    let builtin = agentwire_tools::BUILTIN_NAMES;
    functions.retain(|f| {
        let taken = builtin.contains(&f.function.as_str()) || f.function == REQUEST_USER_INPUT;
        if taken {
            tracing::warn!(tool = %f.function, "a dynamic tool named like a built-in one is not offered");
        }
        !taken
    });
    functions
}

/// The JSON Schema of `request_user_input`'s arguments.
fn request_user_input_parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "questions": {
                "type": "array",
                "description": "The questions, in the order to ask them (one is best).",
                "minItems": 1,
                "maxItems": MAX_QUESTIONS,
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string", "description": "A short unique id (snake_case); the answer is keyed by it."},
                        "header": {"type": "string", "description": "A title of a few words."},
                        "question": {"type": "string", "description": "The question, in one sentence."},
                        "options": {
                            "type": "array",
                            "description": "Choices to offer; the user may also type another answer.",
                            "items": {
                                "type": "object",
                                "properties": {
                                    "label": {"type": "string"},
                                    "description": {"type": "string", "description": "What choosing it means."}
                                },
                                "required": ["label", "description"],
                                "additionalProperties": false
                            }
                        }
                    },
                    "required": ["id", "header", "question"],
                    "additionalProperties": false
                }
            }
        },
        "required": ["questions"],
        "additionalProperties": false
    })
}

/// The arguments of a `request_user_input` call.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct UserInputArgs {
    questions: Vec<QuestionArgs>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct QuestionArgs {
    id: String,
    header: String,
    question: String,
    #[serde(default)]
    options: Option<Vec<ToolRequestUserInputOption>>,
}

/// The questions of a `request_user_input` call, or what is wrong with its arguments.
fn parse_questions(arguments: &str) -> Result<Vec<ToolRequestUserInputQuestion>, String> {
    let args: UserInputArgs = serde_json::from_str(arguments)
        .map_err(|e| format!("invalid arguments for `{REQUEST_USER_INPUT}`: {e}"))?;
    if args.questions.is_empty() || args.questions.len() > MAX_QUESTIONS {
        return Err(format!(
            "invalid arguments for `{REQUEST_USER_INPUT}`: `questions` must hold 1 to \
             {MAX_QUESTIONS} questions, not {}",
            args.questions.len()
        ));
    }
    let mut seen = Vec::new();
    for question in &args.questions {
        if question.id.is_empty() || seen.contains(&question.id.as_str()) {
            return Err(format!(
                "invalid arguments for `{REQUEST_USER_INPUT}`: question ids must be unique and \
                 not empty (`{}`)",
                question.id
            ));
        }
        seen.push(&question.id);
    }
    Ok(args
        .questions
        .into_iter()
        .map(|q| {
            ToolRequestUserInputQuestion::builder()
                .id(q.id)
                .header(q.header)
                .question(q.question)
                .is_other(true)
                .maybe_options(q.options.filter(|options| !options.is_empty()))
                .build()
        })
        .collect())
}

/// The answers the model gets: only those to the questions asked, at most
/// [`MAX_ANSWER_BYTES`] of them; or what is wrong with them.
fn answers_for_model(
    questions: &[ToolRequestUserInputQuestion],
    response: ToolRequestUserInputResponse,
) -> Result<String, String> {
    let mut kept: BTreeMap<String, ToolRequestUserInputAnswer> = BTreeMap::new();
    for (id, answer) in response.answers {
        if questions.iter().any(|q| q.id == id) {
            kept.insert(id, answer);
        } else {
            tracing::warn!(question = %id, "an answer to a question that was not asked is dropped");
        }
    }
    let text = json!({ "answers": kept }).to_string();
    if text.len() > MAX_ANSWER_BYTES {
        return Err(format!(
            "the answers are {} bytes long, more than the {MAX_ANSWER_BYTES} bytes allowed",
            text.len()
        ));
    }
    Ok(text)
}

impl TurnRun {
    /// The tools the client answers, to offer with the next model call.
    pub(super) fn client_tools(&self) -> Vec<ModelTool> {
        let mut tools = Vec::new();
        if self.settings.collaboration_mode == Some(ModeKind::Plan) {
            tools.push(ModelTool {
                name: REQUEST_USER_INPUT.to_owned(),
                description: "Asks the user one to a few short questions and waits for the \
                              answers. Use it only when you cannot go on without the user's \
                              choice; offer options where they help."
                    .to_owned(),
                parameters: request_user_input_parameters(),
            });
        }
        tools.extend(
            dynamic_functions(&self.settings.dynamic_tools)
                .into_iter()
                .map(|f| ModelTool {
                    name: f.function,
                    description: f.description,
                    parameters: f.parameters.clone(),
                }),
        );
        tools
    }

    /// Runs `call` when it names a tool the client answers; `None` otherwise.
    pub(super) async fn client_tool(&mut self, call: &ToolCall) -> Option<ClientOutcome> {
        if call.name == REQUEST_USER_INPUT
            && self.settings.collaboration_mode == Some(ModeKind::Plan)
        {
            return Some(self.request_user_input(call).await);
        }
        let target = dynamic_functions(&self.settings.dynamic_tools)
            .into_iter()
            .find(|f| f.function == call.name)
            .map(|f| (f.namespace.map(str::to_owned), f.tool.to_owned()))?;
        Some(self.dynamic_call(target.0, target.1, &call.arguments).await)
    }

    /// Sets the thread's active flags (`thread/status/changed` to every connection).
    fn active_flags(&self, active_flags: Vec<ThreadActiveFlag>) {
        self.set_status(ThreadStatus::active().active_flags(active_flags).build());
    }

    /// A `request_user_input` call.
    async fn request_user_input(&mut self, call: &ToolCall) -> ClientOutcome {
        let questions = match parse_questions(&call.arguments) {
            Ok(questions) => questions,
            Err(error) => return (error, None),
        };
        let item_id = agentwire_store::meta::new_id();
        let params = ToolRequestUserInputParams::builder()
            .thread_id(self.thread_id.clone())
            .turn_id(self.turn.id.clone())
            .item_id(item_id.clone())
            .questions(questions.clone())
            .is_blocking(true)
            .build();
        self.active_flags(vec![ThreadActiveFlag::WaitingOnUserInput]);
        let answer = self.ask_followers::<ToolRequestUserInput>(&params).await;
        self.active_flags(Vec::new());
        let answer = match answer {
            None => {
                return (
                    "The turn was interrupted before the user answered.".to_owned(),
                    Some(CallEnd::Interrupted),
                );
            }
            Some(answer) => answer.and_then(|response| answers_for_model(&questions, response)),
        };
        match answer {
            Ok(text) => {
                let started_ms = now_ms();
                let kind = ThreadItemKind::function_call_output()
                    .id(item_id)
                    .name(REQUEST_USER_INPUT.to_owned())
                    .output(FunctionCallOutputBody::Text(text.clone()))
                    .build();
                self.started(kind.clone(), started_ms);
                self.complete(kind, started_ms).await;
                (text, None)
            }
            Err(reason) => {
                tracing::warn!(%reason, "request_user_input: no answer");
                (
                    format!("The user did not answer the questions ({reason})."),
                    None,
                )
            }
        }
    }

    /// A call of the dynamic tool `tool` (in `namespace`) with the model's `arguments`.
    async fn dynamic_call(
        &mut self,
        namespace: Option<String>,
        tool: String,
        arguments: &str,
    ) -> ClientOutcome {
        let arguments = match agentwire_tools::call_arguments(arguments) {
            Ok(value) => value,
            Err(error) => {
                return (
                    format!("invalid arguments for `{tool}`: not JSON: {error}"),
                    None,
                );
            }
        };
        let id = agentwire_store::meta::new_id();
        let started_ms = now_ms();
        let clock = Instant::now();
        let kind = |status, success, content_items, duration_ms| {
            ThreadItemKind::dynamic_tool_call()
                .id(id.clone())
                .tool(tool.clone())
                .maybe_namespace(namespace.clone())
                .arguments(arguments.clone())
                .status(status)
                .maybe_success(success)
                .maybe_content_items(content_items)
                .maybe_duration_ms(duration_ms)
                .build()
        };
        self.started(
            kind(DynamicToolCallStatus::InProgress, None, None, None),
            started_ms,
        );
        let params = DynamicToolCallParams::builder()
            .thread_id(self.thread_id.clone())
            .turn_id(self.turn.id.clone())
            .call_id(id.clone())
            .maybe_namespace(namespace.clone())
            .tool(tool.clone())
            .arguments(arguments.clone())
            .build();
        let answer = self.ask_followers::<DynamicToolCall>(&params).await;
        let duration_ms = Some(i64::try_from(clock.elapsed().as_millis()).unwrap_or(i64::MAX));
        let (item, outcome) = match answer {
            None => (
                kind(DynamicToolCallStatus::Failed, None, None, duration_ms),
                (
                    "The tool call was interrupted.".to_owned(),
                    Some(CallEnd::Interrupted),
                ),
            ),
            Some(Err(reason)) => {
                tracing::warn!(%tool, %reason, "dynamic tool call failed");
                (
                    kind(
                        DynamicToolCallStatus::Failed,
                        Some(false),
                        None,
                        duration_ms,
                    ),
                    (format!("The tool `{tool}` failed: {reason}"), None),
                )
            }
            Some(Ok(response)) => {
                let status = if response.success {
                    DynamicToolCallStatus::Completed
                } else {
                    DynamicToolCallStatus::Failed
                };
                let text = content_for_model(&response);
                (
                    kind(
                        status,
                        Some(response.success),
                        Some(response.content_items),
                        duration_ms,
                    ),
                    (text, None),
                )
            }
        };
        self.complete(item, started_ms).await;
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentwire_protocol::{DynamicToolCallOutputContentItem, DynamicToolCallResponse};

    use crate::turns::dynamic_calls::dynamic_call_history;

    fn function(name: &str) -> DynamicToolSpec {
        DynamicToolSpec::function()
            .name(name.to_owned())
            .description("d".to_owned())
            .input_schema(json!({"type": "object"}))
            .build()
    }

    #[test]
    fn dynamic_tools_are_flattened_and_never_shadow_built_ins() {
        let specs = vec![
            function("lookup"),
            function("shell"),
            DynamicToolSpec::namespace()
                .name("crm".to_owned())
                .description("customers".to_owned())
                .tools(vec![
                    DynamicToolNamespaceTool::function()
                        .name("find".to_owned())
                        .description("finds".to_owned())
                        .input_schema(json!({"type": "object"}))
                        .defer_loading(true)
                        .build(),
                ])
                .build(),
        ];
        let functions = dynamic_functions(&specs);
        let names: Vec<&str> = functions.iter().map(|f| f.function.as_str()).collect();
        assert_eq!(names, vec!["lookup", "crm__find"]);
        assert_eq!(functions[1].namespace, Some("crm"));
        assert_eq!(functions[1].tool, "find");
    }

    #[test]
    fn questions_are_checked() {
        let ok = parse_questions(
            r#"{"questions":[{"id":"db","header":"Database","question":"Which?","options":[{"label":"Postgres","description":"d"}]}]}"#,
        )
        .expect("questions");
        assert!(ok[0].is_other && ok[0].options.as_ref().is_some_and(|o| o.len() == 1));
        let empty = parse_questions(r#"{"questions":[]}"#).expect_err("empty");
        assert!(empty.contains("questions"), "{empty}");
        let twice = parse_questions(
            r#"{"questions":[{"id":"a","header":"h","question":"q"},{"id":"a","header":"h","question":"q"}]}"#,
        )
        .expect_err("duplicate ids");
        assert!(twice.contains("unique"), "{twice}");
        assert!(parse_questions("not json").is_err());
    }

    #[test]
    fn answers_keep_only_the_questions_asked() {
        let questions =
            parse_questions(r#"{"questions":[{"id":"a","header":"h","question":"q"}]}"#)
                .expect("questions");
        let response: ToolRequestUserInputResponse = serde_json::from_value(
            json!({"answers": {"a": {"answers": ["yes"]}, "zzz": {"answers": ["no"]}}}),
        )
        .expect("response");
        assert_eq!(
            answers_for_model(&questions, response).expect("answers"),
            r#"{"answers":{"a":{"answers":["yes"]}}}"#
        );
        let huge: ToolRequestUserInputResponse = serde_json::from_value(
            json!({"answers": {"a": {"answers": ["x".repeat(MAX_ANSWER_BYTES)]}}}),
        )
        .expect("response");
        assert!(answers_for_model(&questions, huge).is_err());
    }

    #[test]
    fn a_recorded_call_comes_back_as_the_model_saw_it() {
        let kind = ThreadItemKind::dynamic_tool_call()
            .id("item-1".to_owned())
            .tool("find".to_owned())
            .namespace("crm".to_owned())
            .arguments(json!({"name": "Ada"}))
            .status(DynamicToolCallStatus::Completed)
            .success(true)
            .content_items(vec![
                DynamicToolCallOutputContentItem::input_text()
                    .text("found".to_owned())
                    .build(),
            ])
            .duration_ms(3)
            .build();
        let (call, result) = dynamic_call_history(&kind).expect("a dynamic call");
        assert_eq!(call.call_id, "item-1");
        assert_eq!(call.name, "crm__find");
        assert_eq!(call.arguments, r#"{"name":"Ada"}"#);
        assert_eq!(result, "found");
        let interrupted = ThreadItemKind::dynamic_tool_call()
            .id("item-2".to_owned())
            .tool("lookup".to_owned())
            .arguments(json!({}))
            .status(DynamicToolCallStatus::Failed)
            .build();
        let (_, result) = dynamic_call_history(&interrupted).expect("a dynamic call");
        assert!(result.contains("no result"), "{result}");
    }

    #[test]
    fn content_goes_to_the_model_as_text() {
        let response = DynamicToolCallResponse::builder()
            .content_items(vec![
                DynamicToolCallOutputContentItem::input_text()
                    .text("42 rows".to_owned())
                    .build(),
                DynamicToolCallOutputContentItem::input_image()
                    .image_url("data:image/png;base64,AAAA".to_owned())
                    .build(),
            ])
            .success(false)
            .build();
        assert_eq!(
            content_for_model(&response),
            "The tool reported a failure.\n42 rows\n[image: inline image/png data]"
        );
    }
}
