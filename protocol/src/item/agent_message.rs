//! What the agent says: message deltas, display and moderation of answers, annotations,
//! questions asked while it works, hook prompts and memory citations.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::*;

/// How an agent message reaches the user when it is not part of the normal turn stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum AgentMessageDelivery {
    /// The message was sent asynchronously, apart from the streamed turn output.
    Async,
}

/// Params of `item/agentMessage/delta`: the next chunk of an agent message being written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct AgentMessageDeltaNotification {
    /// Thread the message belongs to.
    pub thread_id: String,
    /// Turn the message belongs to.
    pub turn_id: String,
    /// Id of the `agentMessage` item this text extends.
    pub item_id: String,
    /// Text to append to the item's `text`, in order of arrival.
    pub delta: String,
}

/// What a client should do with an agent message that went through moderation; discriminated by
/// `mode`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "mode", rename_all = "camelCase")]
#[non_exhaustive]
pub enum AgentMessageDisplay {
    /// Render the message as written, possibly with an annotation next to it.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Show {
        /// Format version of this instruction; always `1`.
        version: DisplayVersion,
        /// Whether the client should run its trusted-contacts check before showing it.
        trusted_contacts: TrustedContacts,
        /// Extra content to render alongside the message; `null` or absent when there is none.
        #[serde(default)]
        annotation: Option<AnswerAnnotation>,
    },
    /// Do not render the message text; render the given replacement instead.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Hide {
        /// Format version of this instruction; always `1`.
        version: DisplayVersion,
        /// What to render in place of the hidden text.
        replacement: AnswerReplacement,
    },
    /// Withhold the message entirely.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Block {
        /// Format version of this instruction; always `1`.
        version: DisplayVersion,
        /// Why the message was withheld.
        reason: BlockReason,
    },
}

#[bon::bon]
impl AgentMessageDisplay {
    /// Starts building [`AgentMessageDisplay::Show`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn show(
        version: DisplayVersion,
        trusted_contacts: TrustedContacts,
        annotation: Option<AnswerAnnotation>,
    ) -> Self {
        Self::Show {
            version,
            trusted_contacts,
            annotation,
        }
    }

    /// Starts building [`AgentMessageDisplay::Hide`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn hide(version: DisplayVersion, replacement: AnswerReplacement) -> Self {
        Self::Hide {
            version,
            replacement,
        }
    }

    /// Starts building [`AgentMessageDisplay::Block`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn block(version: DisplayVersion, reason: BlockReason) -> Self {
        Self::Block { version, reason }
    }
}

/// Moderation outcome attached to an agent message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct AgentMessageModeration {
    /// `true` when moderation acted on the message.
    pub moderated: bool,
    /// How to present the message; `null` or absent when the client should render it normally.
    #[serde(default)]
    pub display: Option<AgentMessageDisplay>,
}

/// Supplementary content to render next to a shown agent message; discriminated by `kind`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "kind", rename_all = "camelCase")]
#[non_exhaustive]
pub enum AnswerAnnotation {
    /// Point the user to a wellbeing support helpline.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    WellbeingHelpline {
        /// Whether the helpline is prompted by the answer or by the user's prompt.
        subject: HelplineSubject,
    },
}

#[bon::bon]
impl AnswerAnnotation {
    /// Starts building [`AnswerAnnotation::WellbeingHelpline`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn wellbeing_helpline(subject: HelplineSubject) -> Self {
        Self::WellbeingHelpline { subject }
    }
}

/// Content rendered instead of a hidden agent message; discriminated by `kind`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "kind", rename_all = "camelCase")]
#[non_exhaustive]
pub enum AnswerReplacement {
    /// A notice pointing the user to a wellbeing support helpline.
    WellbeingPromptHelpline,
}

/// A question the agent puts to the user without blocking the turn; no other members allowed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct AsyncUserInputQuestion {
    /// The question as shown to the user.
    pub title: String,
    /// Suggested answers to offer as choices; `null` or absent for a free-form answer.
    #[serde(default)]
    pub options: Option<Vec<String>>,
}

/// Why an agent message was blocked; discriminated by `kind`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "kind", rename_all = "camelCase")]
#[non_exhaustive]
pub enum BlockReason {
    /// A safety protection fired.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Protection {
        /// Opaque tag naming the protection that fired, for correlating with moderation records.
        protection_type: String,
    },
    /// The content falls under the cyber-security policy.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Cyber {
        /// Whether the account has trusted access for such content; `null` when unknown.
        #[serde(default)]
        trusted_access: Option<bool>,
    },
}

#[bon::bon]
impl BlockReason {
    /// Starts building [`BlockReason::Protection`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn protection(protection_type: String) -> Self {
        Self::Protection { protection_type }
    }

    /// Starts building [`BlockReason::Cyber`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn cyber(trusted_access: Option<bool>) -> Self {
        Self::Cyber { trusted_access }
    }
}

/// A piece of text a hook contributed to the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct HookPromptFragment {
    /// Id of the hook run that produced the text.
    pub hook_run_id: String,
    /// The text the hook injected.
    pub text: String,
}

/// Memories the agent drew on for a message, with where they came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct MemoryCitation {
    /// The memory file passages cited.
    #[builder(default)]
    pub entries: Vec<MemoryCitationEntry>,
    /// Ids of the earlier threads those memories were learned in.
    #[builder(default)]
    pub thread_ids: Vec<String>,
}

/// One cited passage of a memory file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct MemoryCitationEntry {
    /// Path of the memory file.
    pub path: String,
    /// First line of the passage (1-based).
    pub line_start: u32,
    /// Last line of the passage (1-based, inclusive).
    pub line_end: u32,
    /// Short note on what the passage contributed.
    pub note: String,
}

/// Role of an agent message within its turn; snake_case on the wire. Models do not always
/// report it, so a missing phase means "unknown", not "final".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum MessagePhase {
    /// Running narration while the agent works; more tool calls may follow.
    Commentary,
    /// Part of the answer that will not change, though more may be appended.
    PartialAnswer,
    /// The turn's final answer.
    FinalAnswer,
}
