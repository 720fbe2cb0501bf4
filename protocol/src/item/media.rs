//! Media and web items: generated images and audio, image generation, web search actions.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::*;

/// Why an image generation did not produce an image; discriminated by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[non_exhaustive]
pub enum ImageGenerationFailure {
    /// The account ran out of image-generation allowance.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    UsageLimitExceeded {
        /// Which usage limit was hit.
        limit_id: String,
        /// When the limit resets, in Unix seconds; `null` when unknown.
        #[serde(default)]
        resets_at: Option<i64>,
    },
}

#[bon::bon]
impl ImageGenerationFailure {
    /// Starts building [`ImageGenerationFailure::UsageLimitExceeded`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn usage_limit_exceeded(limit_id: String, resets_at: Option<i64>) -> Self {
        Self::UsageLimitExceeded {
            limit_id,
            resets_at,
        }
    }
}

/// A local image file that was fed into an image generation as a reference.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ImageGenerationInputImage {
    /// Absolute path of the file on the server's machine.
    pub path: AbsolutePathBuf,
    /// SHA-256 of the file's bytes as read, in lowercase hex.
    pub sha256: String,
}

/// Detail of what a web search item did; discriminated by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[non_exhaustive]
pub enum WebSearchAction {
    /// Ran one or more search queries.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Search {
        /// The main query; `null` when not reported.
        #[serde(default)]
        query: Option<String>,
        /// All queries run, when there were several; `null` when not reported.
        #[serde(default)]
        queries: Option<Vec<String>>,
    },
    /// Opened a web page.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    OpenPage {
        /// The page's URL; `null` when not reported.
        #[serde(default)]
        url: Option<String>,
    },
    /// Looked for a pattern inside a page.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    FindInPage {
        /// The page's URL; `null` when not reported.
        #[serde(default)]
        url: Option<String>,
        /// The text searched for; `null` when not reported.
        #[serde(default)]
        pattern: Option<String>,
    },
    /// Any other browsing action.
    Other,
}

#[bon::bon]
impl WebSearchAction {
    /// Starts building [`WebSearchAction::Search`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn search(query: Option<String>, queries: Option<Vec<String>>) -> Self {
        Self::Search { query, queries }
    }

    /// Starts building [`WebSearchAction::OpenPage`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn open_page(url: Option<String>) -> Self {
        Self::OpenPage { url }
    }

    /// Starts building [`WebSearchAction::FindInPage`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn find_in_page(url: Option<String>, pattern: Option<String>) -> Self {
        Self::FindInPage { url, pattern }
    }
}

/// Where an image in a tool's output comes from (Responses API member names).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(untagged)]
#[non_exhaustive]
pub enum OutputImageSource {
    /// Fetched from a URL (`data:` URLs included).
    #[non_exhaustive]
    ImageUrl {
        /// The URL.
        image_url: String,
    },
    /// A file uploaded to the provider.
    #[non_exhaustive]
    FileId {
        /// The provider's file id.
        file_id: String,
    },
}

#[bon::bon]
impl OutputImageSource {
    /// Starts building [`OutputImageSource::ImageUrl`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn image_url(image_url: String) -> Self {
        Self::ImageUrl { image_url }
    }

    /// Starts building [`OutputImageSource::FileId`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn file_id(file_id: String) -> Self {
        Self::FileId { file_id }
    }
}

/// Where audio in a tool's output comes from (Responses API member names).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(untagged)]
#[non_exhaustive]
pub enum OutputAudioSource {
    /// Fetched from a URL (`data:` URLs included).
    #[non_exhaustive]
    AudioUrl {
        /// The URL.
        audio_url: String,
    },
    /// A file uploaded to the provider.
    #[non_exhaustive]
    FileId {
        /// The provider's file id.
        file_id: String,
    },
}

#[bon::bon]
impl OutputAudioSource {
    /// Starts building [`OutputAudioSource::AudioUrl`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn audio_url(audio_url: String) -> Self {
        Self::AudioUrl { audio_url }
    }

    /// Starts building [`OutputAudioSource::FileId`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn file_id(file_id: String) -> Self {
        Self::FileId { file_id }
    }
}

/// A generated image: its durable attachment id, or its inline data.
///
/// The attachment form comes first so that items carrying both keep the attachment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(untagged)]
#[non_exhaustive]
pub enum GeneratedImage {
    /// Stored as an attachment.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    File {
        /// The attachment-store id.
        file_id: String,
    },
    /// Inline image data.
    #[non_exhaustive]
    Inline {
        /// Base64 image data.
        result: String,
    },
}

#[bon::bon]
impl GeneratedImage {
    /// Starts building [`GeneratedImage::File`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn file(file_id: String) -> Self {
        Self::File { file_id }
    }

    /// Starts building [`GeneratedImage::Inline`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn inline(result: String) -> Self {
        Self::Inline { result }
    }
}

/// The version of a moderation display instruction; only version 1 exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(try_from = "u8", into = "u8")]
#[ts(type = "1")]
pub struct DisplayVersion;

impl TryFrom<u8> for DisplayVersion {
    type Error = String;
    fn try_from(value: u8) -> Result<Self, Self::Error> {
        if value == 1 {
            Ok(DisplayVersion)
        } else {
            Err(format!("unsupported display version {value}; expected 1"))
        }
    }
}

impl From<DisplayVersion> for u8 {
    fn from(_: DisplayVersion) -> u8 {
        1
    }
}

#[cfg(feature = "schema")]
impl JsonSchema for DisplayVersion {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "DisplayVersion".into()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "integer", "format": "uint8", "minimum": 0, "enum": [1] })
    }
}
