//! ACP prompt content as the engine's user input (`turn/start`'s `input`).
//!
//! - `text` is text;
//! - `image` (the `image` prompt capability) is an image given as a `data:` URL;
//! - `resource_link` is a text mention of the resource, `[name](uri)`, which the agent can read
//!   with its own tools;
//! - `resource` (the `embeddedContext` prompt capability) is its text inside a
//!   `<context ref="URI">` block; an embedded image blob is an image; another blob is mentioned
//!   like a link (its bytes are not sent to the model);
//! - `audio` is refused: the capability is not advertised.

use agent_client_protocol::v1::schema::{ContentBlock, EmbeddedResourceResource};
use serde_json::{Value, json};

fn text(text: String) -> Value {
    json!({"type": "text", "text": text})
}

fn image(mime_type: &str, data: &str) -> Value {
    json!({"type": "image", "url": format!("data:{mime_type};base64,{data}")})
}

/// The engine's input parts for `prompt`, in order; `Err` names the block that cannot be sent
/// and why.
pub fn user_input(prompt: &[ContentBlock]) -> Result<Vec<Value>, String> {
    let mut input = Vec::with_capacity(prompt.len());
    for (index, block) in prompt.iter().enumerate() {
        let part = match block {
            ContentBlock::Text(block) => text(block.text.clone()),
            ContentBlock::Image(block) => image(&block.mime_type, &block.data),
            ContentBlock::ResourceLink(link) => text(format!("[{}]({})", link.name, link.uri)),
            ContentBlock::Resource(embedded) => match &embedded.resource {
                EmbeddedResourceResource::TextResourceContents(resource) => text(format!(
                    "<context ref=\"{}\">\n{}\n</context>",
                    resource.uri, resource.text
                )),
                EmbeddedResourceResource::BlobResourceContents(resource) => {
                    match resource.mime_type.as_deref() {
                        Some(mime) if mime.starts_with("image/") => image(mime, &resource.blob),
                        _ => text(format!("[{}]({})", resource.uri, resource.uri)),
                    }
                }
                _ => {
                    return Err(format!(
                        "prompt[{index}]: an embedded resource of a kind this agent does not know"
                    ));
                }
            },
            ContentBlock::Audio(_) => {
                return Err(format!(
                    "prompt[{index}]: audio is not supported (the agent does not advertise the audio prompt capability)"
                ));
            }
            _ => {
                return Err(format!(
                    "prompt[{index}]: a content block of a kind this agent does not know"
                ));
            }
        };
        input.push(part);
    }
    if input.is_empty() {
        return Err("prompt: at least one content block is needed".to_owned());
    }
    Ok(input)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_become_input_parts() {
        let prompt: Vec<ContentBlock> = serde_json::from_value(json!([
            {"type": "text", "text": "hello"},
            {"type": "image", "mimeType": "image/png", "data": "AAAA"},
            {"type": "resource_link", "name": "main.rs", "uri": "file:///w/main.rs"},
            {"type": "resource", "resource": {"uri": "file:///w/a.txt", "text": "alpha"}}
        ]))
        .expect("ACP content blocks");
        let input = user_input(&prompt).expect("supported");
        assert_eq!(
            Value::Array(input),
            json!([
                {"type": "text", "text": "hello"},
                {"type": "image", "url": "data:image/png;base64,AAAA"},
                {"type": "text", "text": "[main.rs](file:///w/main.rs)"},
                {"type": "text", "text": "<context ref=\"file:///w/a.txt\">\nalpha\n</context>"}
            ])
        );
    }

    #[test]
    fn audio_and_empty_prompts_are_refused() {
        let audio: Vec<ContentBlock> = serde_json::from_value(
            json!([{"type": "audio", "mimeType": "audio/wav", "data": "AA"}]),
        )
        .expect("ACP content blocks");
        assert!(user_input(&audio).expect_err("refused").contains("audio"));
        assert!(user_input(&[]).is_err());
    }
}
