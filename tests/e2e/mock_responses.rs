//! Responses API streams for the mock model server ([`crate::mock_model::MockModel`] answers
//! `POST …/responses` too): [`Responses`] builds a reply out of the events OpenAI sends, each
//! as a named SSE event (`event: <type>` then `data: {"type": "<type>", …}`), with the
//! sequence numbers, item ids and recap events (`….done`, content parts) a real stream has.

use serde_json::{Value, json};

use crate::mock_model::{End, Reply, Sse};

/// A Responses stream under construction.
pub struct Responses {
    sse: Sse,
    /// The next `sequence_number`.
    sequence: u64,
    /// The next `output_index`.
    output: u64,
}

impl Responses {
    /// A stream that has sent `response.created` and `response.in_progress`.
    pub fn new() -> Self {
        let mut stream = Self {
            sse: Sse::new().end(End::Close),
            sequence: 0,
            output: 0,
        };
        let response = json!({"id": "resp_mock", "object": "response", "status": "in_progress",
                              "model": "gpt-mock", "output": []});
        stream.push("response.created", json!({"response": response}));
        stream.push("response.in_progress", json!({"response": response}));
        stream
    }

    /// Adds event `kind` with the members of `body`.
    pub fn push(&mut self, kind: &str, mut body: Value) {
        body["type"] = json!(kind);
        body["sequence_number"] = json!(self.sequence);
        self.sequence += 1;
        self.sse = std::mem::take(&mut self.sse).raw(&format!("event: {kind}\ndata: {body}"));
    }

    /// A reasoning item whose summary has `sections`, each streamed as the given deltas.
    pub fn reasoning(mut self, sections: &[&[&str]]) -> Self {
        let index = self.output;
        self.output += 1;
        let id = format!("rs_{index}");
        self.push(
            "response.output_item.added",
            json!({"output_index": index, "item": {"type": "reasoning", "id": id, "summary": []}}),
        );
        let mut summary = Vec::new();
        for (section, deltas) in sections.iter().enumerate() {
            let base = json!({"item_id": id, "output_index": index, "summary_index": section});
            let with = |extra: Value| {
                let mut event = base.clone();
                if let (Some(e), Some(x)) = (event.as_object_mut(), extra.as_object()) {
                    e.extend(x.clone());
                }
                event
            };
            self.push(
                "response.reasoning_summary_part.added",
                with(json!({"part": {"type": "summary_text", "text": ""}})),
            );
            for delta in *deltas {
                self.push(
                    "response.reasoning_summary_text.delta",
                    with(json!({"delta": delta})),
                );
            }
            let text: String = deltas.concat();
            self.push(
                "response.reasoning_summary_text.done",
                with(json!({"text": text})),
            );
            self.push(
                "response.reasoning_summary_part.done",
                with(json!({"part": {"type": "summary_text", "text": text}})),
            );
            summary.push(json!({"type": "summary_text", "text": text}));
        }
        self.push(
            "response.output_item.done",
            json!({"output_index": index,
                   "item": {"type": "reasoning", "id": id, "summary": summary}}),
        );
        self
    }

    /// An assistant message streamed as `deltas`.
    pub fn message(mut self, deltas: &[&str]) -> Self {
        let index = self.output;
        self.output += 1;
        let id = format!("msg_{index}");
        self.push(
            "response.output_item.added",
            json!({"output_index": index, "item": {"type": "message", "id": id,
                   "role": "assistant", "status": "in_progress", "content": []}}),
        );
        let part = json!({"item_id": id, "output_index": index, "content_index": 0});
        let mut added = part.clone();
        added["part"] = json!({"type": "output_text", "text": "", "annotations": []});
        self.push("response.content_part.added", added);
        for delta in deltas {
            let mut event = part.clone();
            event["delta"] = json!(delta);
            self.push("response.output_text.delta", event);
        }
        let text: String = deltas.concat();
        let mut done = part.clone();
        done["text"] = json!(text);
        self.push("response.output_text.done", done);
        let content = json!({"type": "output_text", "text": text, "annotations": []});
        let mut part_done = part;
        part_done["part"] = content.clone();
        self.push("response.content_part.done", part_done);
        self.push(
            "response.output_item.done",
            json!({"output_index": index, "item": {"type": "message", "id": id,
                   "role": "assistant", "status": "completed", "content": [content]}}),
        );
        self
    }

    /// A function call `name` with id `call_id`, its arguments streamed as `chunks`.
    pub fn function_call(mut self, call_id: &str, name: &str, chunks: &[&str]) -> Self {
        let index = self.output;
        self.output += 1;
        let id = format!("fc_{index}");
        self.push(
            "response.output_item.added",
            json!({"output_index": index, "item": {"type": "function_call", "id": id,
                   "call_id": call_id, "name": name, "arguments": "", "status": "in_progress"}}),
        );
        for chunk in chunks {
            self.push(
                "response.function_call_arguments.delta",
                json!({"item_id": id, "output_index": index, "delta": chunk}),
            );
        }
        let arguments: String = chunks.concat();
        self.push(
            "response.function_call_arguments.done",
            json!({"item_id": id, "output_index": index, "arguments": arguments}),
        );
        self.push(
            "response.output_item.done",
            json!({"output_index": index, "item": {"type": "function_call", "id": id,
                   "call_id": call_id, "name": name, "arguments": arguments,
                   "status": "completed"}}),
        );
        self
    }

    /// Ends with `response.completed` and this usage.
    pub fn completed(mut self, input: i64, cached: i64, output: i64, reasoning: i64) -> Reply {
        self.push(
            "response.completed",
            json!({"response": {"id": "resp_mock", "object": "response", "status": "completed",
                   "usage": {"input_tokens": input,
                             "input_tokens_details": {"cached_tokens": cached},
                             "output_tokens": output,
                             "output_tokens_details": {"reasoning_tokens": reasoning},
                             "total_tokens": input + output}}}),
        );
        Reply::Stream(self.sse)
    }

    /// Ends with `response.failed` carrying `code` and `message`.
    pub fn failed(mut self, code: &str, message: &str) -> Reply {
        self.push(
            "response.failed",
            json!({"response": {"id": "resp_mock", "object": "response", "status": "failed",
                   "error": {"code": code, "message": message}}}),
        );
        Reply::Stream(self.sse)
    }

    /// Ends with an `error` event.
    pub fn error(mut self, code: &str, message: &str) -> Reply {
        self.push(
            "error",
            json!({"code": code, "message": message, "param": null}),
        );
        Reply::Stream(self.sse)
    }

    /// A complete answer: one message, usage.
    pub fn answer(text: &str) -> Reply {
        Self::new().message(&[text]).completed(10, 0, 5, 0)
    }
}
