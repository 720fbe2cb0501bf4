//! User input: what a client sends as the content of a user message, and the text spans and
//! positions that go with it.
//!
//! [`UserInput`] is the element type of `input` in `turn/start` and `turn/steer`, and of the
//! `content` of `userMessage` items streamed back by `item/started` / `item/completed`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// A half-open span of UTF-8 bytes in a text buffer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ByteRange {
    /// Byte offset where the span begins (inclusive, 0-based).
    pub start: u64,
    /// Byte offset where the span ends (exclusive).
    pub end: u64,
}

/// Resolution at which the model should look at an image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum ImageDetail {
    /// Let the provider pick.
    Auto,
    /// Downscaled: cheaper, fewer tokens.
    Low,
    /// Full detail, at more tokens.
    High,
    /// The image as supplied, without resizing.
    Original,
}

/// A special element (a mention, a pasted block …) that the client's composer placed inside a
/// text input, so that it can be rendered again the same way.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct TextElement {
    /// Where the element sits in the input's `text`, in bytes.
    pub byte_range: ByteRange,
    /// Short label the UI shows for the element; left out when the UI needs none.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub placeholder: Option<String>,
}

/// A position in a text file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct TextPosition {
    /// Line number, counting from 1.
    pub line: u64,
    /// Column, counting from 1, measured in Unicode scalar values (not bytes).
    pub column: u64,
}

/// A span of a text file between two positions (e.g. where a configuration problem is).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct TextRange {
    /// Where the span begins.
    pub start: TextPosition,
    /// Where the span ends.
    pub end: TextPosition,
}

/// One part of a user message; discriminated by `type`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[non_exhaustive]
pub enum UserInput {
    /// Typed text.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Text {
        /// The text as the user wrote it.
        text: String,
        /// Composer elements inside `text` (snake_case `text_elements` on the wire); may be left
        /// out on input, always sent (possibly empty) on output.
        #[serde(rename = "text_elements", default)]
        #[ts(as = "Option<Vec<TextElement>>", optional)]
        text_elements: Vec<TextElement>,
    },
    /// An image given by URL or provider file id; the source member (`url` or `fileId`) sits
    /// beside `type`.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Image {
        /// Where the image comes from.
        #[serde(flatten)]
        source: MediaSource,
        /// Resolution the model should see it at; left out for the default.
        #[serde(default)]
        #[ts(optional = nullable)]
        detail: Option<ImageDetail>,
    },
    /// An image file on the server's machine, which the server reads and attaches.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    LocalImage {
        /// Path of the image file.
        path: String,
        /// Resolution the model should see it at; left out for the default.
        #[serde(default)]
        #[ts(optional = nullable)]
        detail: Option<ImageDetail>,
    },
    /// Audio given by URL or provider file id; the source member (`url` or `fileId`) sits beside
    /// `type`.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Audio {
        /// Where the audio comes from.
        #[serde(flatten)]
        source: MediaSource,
    },
    /// An audio file on the server's machine, which the server reads and attaches.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    LocalAudio {
        /// Path of the audio file.
        path: String,
    },
    /// A skill the user explicitly invoked.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Skill {
        /// The skill's name.
        name: String,
        /// Path of the skill's `SKILL.md`.
        path: String,
    },
    /// Something the user explicitly picked to mention, such as an app or a plugin.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Mention {
        /// Display name of what was mentioned.
        name: String,
        /// URI or path identifying it exactly, e.g. `app://<connector-id>` or
        /// `plugin://<name>@<marketplace>`.
        path: String,
    },
}

#[bon::bon]
impl UserInput {
    /// Starts building [`UserInput::Text`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn text(text: String, #[builder(default)] text_elements: Vec<TextElement>) -> Self {
        Self::Text {
            text,
            text_elements,
        }
    }

    /// Starts building [`UserInput::Image`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn image(source: MediaSource, detail: Option<ImageDetail>) -> Self {
        Self::Image { source, detail }
    }

    /// Starts building [`UserInput::LocalImage`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn local_image(path: String, detail: Option<ImageDetail>) -> Self {
        Self::LocalImage { path, detail }
    }

    /// Starts building [`UserInput::Audio`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn audio(source: MediaSource) -> Self {
        Self::Audio { source }
    }

    /// Starts building [`UserInput::LocalAudio`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn local_audio(path: String) -> Self {
        Self::LocalAudio { path }
    }

    /// Starts building [`UserInput::Skill`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn skill(name: String, path: String) -> Self {
        Self::Skill { name, path }
    }

    /// Starts building [`UserInput::Mention`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn mention(name: String, path: String) -> Self {
        Self::Mention { name, path }
    }
}

/// Where an image or audio input comes from: a URL (`data:` URLs included) or a file already
/// uploaded to the model provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(untagged)]
#[non_exhaustive]
pub enum MediaSource {
    /// Fetched from a URL.
    #[non_exhaustive]
    Url {
        /// The URL.
        url: String,
    },
    /// A file uploaded to the provider.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    FileId {
        /// The provider's file id.
        file_id: String,
    },
}

#[bon::bon]
impl MediaSource {
    /// Starts building [`MediaSource::Url`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn url(url: String) -> Self {
        Self::Url { url }
    }

    /// Starts building [`MediaSource::FileId`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn file_id(file_id: String) -> Self {
        Self::FileId { file_id }
    }
}

#[cfg(test)]
mod tests {
    use serde::de::DeserializeOwned;
    use serde_json::{Value, json};

    use super::*;

    /// Deserializes `value` into `T`, serializes it back and asserts nothing changed.
    fn round_trip<T: Serialize + DeserializeOwned>(value: &Value) -> T {
        let parsed: T = serde_json::from_value(value.clone()).expect("deserialize");
        let back = serde_json::to_value(&parsed).expect("serialize");
        assert_eq!(&back, value);
        parsed
    }

    #[test]
    fn text_input_with_elements_round_trips() {
        let value = json!({
            "type": "text",
            "text": "Explain [Image #1] please",
            "text_elements": [
                {"byteRange": {"start": 8, "end": 18}, "placeholder": "[Image #1]"},
                {"byteRange": {"start": 19, "end": 25}}
            ]
        });
        let input: UserInput = round_trip(&value);
        let UserInput::Text { text_elements, .. } = input else {
            panic!("expected a text input");
        };
        assert_eq!(text_elements[1].placeholder, None);
    }

    #[test]
    fn text_input_without_elements_gets_an_empty_list() {
        let input: UserInput =
            serde_json::from_value(json!({"type": "text", "text": "Say hello."})).expect("parse");
        assert_eq!(
            serde_json::to_value(&input).expect("serialize"),
            json!({"type": "text", "text": "Say hello.", "text_elements": []})
        );
    }

    #[test]
    fn image_inputs_round_trip_and_leave_unset_detail_out() {
        let by_url: UserInput = round_trip(&json!({
            "type": "image",
            "url": "https://example.com/cat.png",
            "detail": "low"
        }));
        assert!(matches!(
            by_url,
            UserInput::Image {
                source: MediaSource::Url { .. },
                detail: Some(ImageDetail::Low)
            }
        ));

        let by_file: UserInput = round_trip(&json!({"type": "image", "fileId": "file_123"}));
        assert!(matches!(
            by_file,
            UserInput::Image {
                source: MediaSource::FileId { .. },
                detail: None
            }
        ));

        let local: UserInput = round_trip(&json!({"type": "localImage", "path": "/tmp/shot.png"}));
        let back = serde_json::to_value(&local).expect("serialize");
        assert!(back.get("detail").is_none());
    }

    #[test]
    fn other_inputs_round_trip() {
        for value in [
            json!({"type": "audio", "url": "data:audio/wav;base64,UklGRg=="}),
            json!({"type": "localAudio", "path": "/tmp/note.wav"}),
            json!({"type": "skill", "name": "imagegen", "path": "/home/user/.codex/skills/imagegen/SKILL.md"}),
            json!({"type": "mention", "name": "Calendar", "path": "app://calendar"}),
        ] {
            round_trip::<UserInput>(&value);
        }
    }

    #[test]
    fn text_range_round_trips() {
        let range: TextRange = round_trip(&json!({
            "start": {"line": 3, "column": 1},
            "end": {"line": 3, "column": 14}
        }));
        assert_eq!(range.end.column, 14);
    }
}
