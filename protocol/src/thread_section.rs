//! Thread sections: user-named groups that clients show threads under
//! (`threadSection/list|create|update|delete`), and the server-kept order of the threads in
//! each (`thread/section/move`, announced by `thread/section/changed`). The section itself is
//! [`ThreadSection`]; `thread/list` takes a `sectionId` filter and the `section_position` sort.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::serde_util;
use crate::{ThreadSection, ThreadSectionAppearance};

/// Params of `threadSection/list`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadSectionListParams {
    /// The `nextCursor` of an earlier page; absent for the first page.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub cursor: Option<String>,
    /// Most sections in this page; absent lets the server choose.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub limit: Option<u32>,
}

/// Result of `threadSection/list`: sections in the order they were made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ThreadSectionListResponse {
    /// The sections of this page.
    pub data: Vec<ThreadSection>,
    /// Send as `cursor` for the next page; `null` when this was the last.
    #[serde(default)]
    pub next_cursor: Option<String>,
}

/// Params of `threadSection/create`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadSectionCreateParams {
    /// How to draw the section; absent or `null` for the default look.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub appearance: Option<ThreadSectionAppearance>,
    /// The section's name; must not be empty (two sections may share one).
    pub name: String,
}

/// Result of `threadSection/create`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ThreadSectionCreateResponse {
    /// The section made, with the id the server gave it.
    pub section: ThreadSection,
}

/// Params of `threadSection/update`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadSectionUpdateParams {
    /// How to draw the section from now on: absent keeps the look it has, `null` resets it to
    /// the default, an object replaces it.
    #[serde(default, deserialize_with = "serde_util::present_or_null")]
    #[schemars(with = "Option<ThreadSectionAppearance>")]
    #[ts(as = "Option<ThreadSectionAppearance>", optional = nullable)]
    pub appearance: Option<Option<ThreadSectionAppearance>>,
    /// The section's new name; must not be empty.
    pub name: String,
    /// The section to change.
    pub section_id: String,
}

/// Result of `threadSection/update`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ThreadSectionUpdateResponse {
    /// The section as it now is.
    pub section: ThreadSection,
}

/// Params of `threadSection/delete`: the section goes; its threads stay, in no section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadSectionDeleteParams {
    /// The section to delete.
    pub section_id: String,
}

/// Result of `threadSection/delete`: an empty object once it is gone.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ThreadSectionDeleteResponse {}

/// Params of `thread/section/move`: files a thread in a section at a given place, moves it
/// within its section, or takes it out of any.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = section_move_required_nullable)]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadSectionMoveParams {
    /// A thread of the destination section to put this one just before; absent or `null`
    /// puts it last.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub before_thread_id: Option<String>,
    /// The destination section; `null` takes the thread out of its section. Always sent.
    #[serialize_always]
    pub section_id: Option<String>,
    /// The thread to move.
    pub thread_id: String,
}

/// Result of `thread/section/move`: an empty object once the move is saved.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ThreadSectionMoveResponse {}

/// Params of `thread/section/changed`: a thread was moved into, within or out of a section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = section_changed_required_nullable)]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadSectionChangedNotification {
    /// The section the thread is in now; always sent, `null` when it is in none.
    pub section_id: Option<String>,
    /// The thread.
    pub thread_id: String,
}

#[cfg(feature = "schema")]
/// Schema transform: `sectionId` of [`ThreadSectionMoveParams`] must be sent, possibly `null`.
fn section_move_required_nullable(schema: &mut schemars::Schema) {
    serde_util::require_nullable(schema, &["sectionId"]);
}

#[cfg(feature = "schema")]
/// Schema transform: `sectionId` of [`ThreadSectionChangedNotification`] is always present,
/// possibly `null`.
fn section_changed_required_nullable(schema: &mut schemars::Schema) {
    serde_util::require_nullable(schema, &["sectionId"]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_update_tells_absent_null_and_a_new_appearance_apart() {
        let read = |json: &str| -> ThreadSectionUpdateParams {
            serde_json::from_str(json).expect("reads")
        };
        assert_eq!(read(r#"{"name":"n","sectionId":"s"}"#).appearance, None);
        assert_eq!(
            read(r#"{"name":"n","sectionId":"s","appearance":null}"#).appearance,
            Some(None)
        );
        let icon = read(r#"{"name":"n","sectionId":"s","appearance":{"icon":"star"}}"#);
        assert_eq!(
            icon.appearance,
            Some(Some(
                ThreadSectionAppearance::builder().icon("star").build()
            ))
        );
        let cleared = ThreadSectionUpdateParams::builder()
            .name("n")
            .section_id("s")
            .appearance(None)
            .build();
        assert_eq!(
            serde_json::to_value(&cleared).expect("serialises"),
            serde_json::json!({"appearance":null,"name":"n","sectionId":"s"})
        );
    }

    #[test]
    fn thread_list_tells_no_section_filter_from_the_unsectioned_one() {
        let read =
            |json: &str| -> crate::ThreadListParams { serde_json::from_str(json).expect("reads") };
        assert_eq!(read("{}").section_id, None);
        assert_eq!(read(r#"{"sectionId":null}"#).section_id, Some(None));
        assert_eq!(
            read(r#"{"sectionId":"s"}"#).section_id,
            Some(Some("s".to_owned()))
        );
        let unsectioned = crate::ThreadListParams {
            section_id: Some(None),
            ..Default::default()
        };
        assert_eq!(
            serde_json::to_value(&unsectioned).expect("serialises"),
            serde_json::json!({"sectionId": null})
        );
    }

    #[test]
    fn a_move_out_of_any_section_sends_a_null_section() {
        let params = ThreadSectionMoveParams::builder().thread_id("t").build();
        assert_eq!(
            serde_json::to_value(&params).expect("serialises"),
            serde_json::json!({"sectionId":null,"threadId":"t"})
        );
        let changed = ThreadSectionChangedNotification::builder()
            .thread_id("t")
            .section_id("s")
            .build();
        assert_eq!(
            serde_json::to_value(&changed).expect("serialises"),
            serde_json::json!({"sectionId":"s","threadId":"t"})
        );
    }
}
