use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::*;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ByteRange {
    pub end: u64,
    pub start: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub enum ImageDetail {
    Auto,
    Low,
    High,
    Original,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct TextElement {
    pub byte_range: ByteRange,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub placeholder: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct TextPosition {
    pub column: u64,
    pub line: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct TextRange {
    pub end: TextPosition,
    pub start: TextPosition,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum UserInput {
    #[serde(rename_all = "camelCase")]
    Text {
        text: String,
        #[serde(rename = "text_elements", default)]
        #[ts(as = "Option<Vec<TextElement>>", optional)]
        text_elements: Vec<TextElement>,
    },
    #[serde(rename_all = "camelCase")]
    Image {
        #[serde(flatten)]
        source: MediaSource,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional = nullable)]
        detail: Option<ImageDetail>,
    },
    #[serde(rename_all = "camelCase")]
    LocalImage {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional = nullable)]
        detail: Option<ImageDetail>,
        path: String,
    },
    #[serde(rename_all = "camelCase")]
    Audio {
        #[serde(flatten)]
        source: MediaSource,
    },
    #[serde(rename_all = "camelCase")]
    LocalAudio {
        path: String,
    },
    #[serde(rename_all = "camelCase")]
    Skill {
        name: String,
        path: String,
    },
    #[serde(rename_all = "camelCase")]
    Mention {
        name: String,
        path: String,
    },
}


/// Where an image or audio input comes from: a URL (`data:` URLs included) or a file already
/// uploaded to the model provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(untagged)]
pub enum MediaSource {
    /// Fetched from a URL.
    Url {
        /// The URL.
        url: String,
    },
    /// A file uploaded to the provider.
    #[serde(rename_all = "camelCase")]
    FileId {
        /// The provider's file id.
        file_id: String,
    },
}
