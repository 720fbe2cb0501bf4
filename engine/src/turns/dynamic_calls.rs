//! A dynamic tool call's result as the model reads it: the client's content as text, and a
//! recorded `dynamicToolCall` item as the call and result the model saw.

use agentwire_protocol::{
    DynamicToolCallOutputContentItem, DynamicToolCallResponse, ThreadItemKind,
};
use agentwire_providers::ToolCall;

/// The client's content as text for the model.
pub(super) fn content_for_model(response: &DynamicToolCallResponse) -> String {
    let parts: Vec<String> = response
        .content_items
        .iter()
        .map(|item| match item {
            DynamicToolCallOutputContentItem::InputText { text, .. } => text.clone(),
            DynamicToolCallOutputContentItem::InputImage { image_url, .. } => {
                format!("[image: {}]", shown_url(image_url))
            }
            DynamicToolCallOutputContentItem::InputAudio { audio_url, .. } => {
                format!("[audio: {}]", shown_url(audio_url))
            }
            _ => "[content of a kind this server does not know]".to_owned(),
        })
        .collect();
    let text = parts.join("\n");
    if response.success {
        text
    } else {
        format!("The tool reported a failure.\n{text}")
    }
}

/// A URL as named to the model: `data:` URLs by their media type only.
fn shown_url(url: &str) -> String {
    match url.strip_prefix("data:") {
        Some(rest) => {
            let media = rest.split([';', ',']).next().unwrap_or_default();
            format!("inline {media} data")
        }
        None => url.chars().take(2048).collect(),
    }
}

/// A recorded `dynamicToolCall` item as the model saw it: the call (under the item's id, by
/// the function name it was offered under) and the result text; `None` for other items.
pub(super) fn dynamic_call_history(kind: &ThreadItemKind) -> Option<(ToolCall, String)> {
    let ThreadItemKind::DynamicToolCall {
        id,
        tool,
        namespace,
        arguments,
        success,
        content_items,
        ..
    } = kind
    else {
        return None;
    };
    let name = match namespace {
        Some(namespace) => format!("{namespace}__{tool}"),
        None => tool.clone(),
    };
    let result = match (success, content_items) {
        (Some(success), Some(items)) => content_for_model(
            &DynamicToolCallResponse::builder()
                .content_items(items.clone())
                .success(*success)
                .build(),
        ),
        _ => format!("The tool `{tool}` gave no result."),
    };
    let call = ToolCall {
        call_id: id.clone(),
        name,
        arguments: arguments.to_string(),
    };
    Some((call, result))
}
