//! `deprecationNotice`: the configuration a client's server runs with sets a key that Codex
//! has deprecated.
//!
//! Codex's `config.toml` is read unchanged (see [`agentwire_config`]), so a home carried over
//! from Codex may still set keys Codex replaced. Once a connection is initialized, each such
//! key found in the effective configuration (the user's file and the project layers of the
//! server's working directory, as for `configWarning`) is named in one `deprecationNotice` to
//! that connection, with what to set instead. Nothing is sent when none is set.

use agentwire_protocol::DeprecationNoticeNotification;
use agentwire_protocol::methods::DeprecationNotice;
use agentwire_runtime::NotificationContext;

/// A deprecated top-level key and what replaces it.
struct Deprecated {
    /// The key in `config.toml`.
    key: &'static str,
    /// What to do instead, for the user.
    instead: &'static str,
}

/// The deprecated keys, in the order they are reported.
const DEPRECATED: &[Deprecated] = &[
    Deprecated {
        key: "experimental_instructions_file",
        instead: "Set `model_instructions_file` to the file instead; this server reads only that \
                  key for replacement instructions.",
    },
    Deprecated {
        key: "experimental_use_exec_command_tool",
        instead: "Codex moved this switch to the `[features]` table; this server ignores it (its \
                  agent has its command tool unless `[features] shell_tool = false`). Remove \
                  the key.",
    },
    Deprecated {
        key: "experimental_use_unified_exec_tool",
        instead: "Codex moved this switch to `[features] unified_exec`; this server ignores it \
                  (its agent has its command tool unless `[features] shell_tool = false`). \
                  Remove the key.",
    },
    Deprecated {
        key: "experimental_use_freeform_apply_patch",
        instead: "Codex moved this switch to `[features] apply_patch_freeform`; this server \
                  ignores it (its agent has `apply_patch` unless `[features] apply_patch_tool = \
                  false`). Remove the key.",
    },
    Deprecated {
        key: "include_plan_tool",
        instead: "Use `[tools.update_plan] enabled = true` as Codex does now. Remove the key.",
    },
    Deprecated {
        key: "include_apply_patch_tool",
        instead: "Codex moved this switch to the `[features]` table; this server ignores it. To \
                  withhold the `apply_patch` tool here, set `apply_patch_tool = false` under \
                  `[features]`. Remove the key.",
    },
];

/// The notices for a configuration whose merged top-level table is `merged`.
fn notices(merged: &toml::Table) -> Vec<DeprecationNoticeNotification> {
    DEPRECATED
        .iter()
        .filter(|d| merged.contains_key(d.key))
        .map(|d| {
            DeprecationNoticeNotification::builder()
                .summary(format!("`{}` in config.toml is deprecated.", d.key))
                .details(d.instead)
                .build()
        })
        .collect()
}

/// Sends the notices of the effective configuration to the connection just initialized.
pub(crate) fn send(store: &agentwire_config::Store, context: &NotificationContext) {
    let cwd = agentwire_config::layers::absolute(".");
    let effective = store.effective(Some(&cwd));
    for notice in notices(&effective.merged) {
        context.peer.notify::<DeprecationNotice>(&notice);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_deprecated_key_set_is_named_once_in_order() {
        let merged: toml::Table = toml::from_str(
            "model = \"m\"\ninclude_plan_tool = true\nexperimental_instructions_file = \"x\"\n",
        )
        .expect("toml");
        let found: Vec<String> = notices(&merged).into_iter().map(|n| n.summary).collect();
        assert_eq!(
            found,
            vec![
                "`experimental_instructions_file` in config.toml is deprecated.".to_owned(),
                "`include_plan_tool` in config.toml is deprecated.".to_owned(),
            ]
        );
        assert!(notices(&toml::Table::new()).is_empty());
    }
}
