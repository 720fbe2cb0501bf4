//! The environment context: where and how the model's tools run, told to the model as a
//! user-role message in the conversation (a [`HistoryEntry::Context`]), just before the user
//! message of the first turn, and again — a new block, before that turn's user message —
//! whenever something in it has changed since the last block the conversation holds:
//!
//! ```text
//! <environment_context>
//!   <cwd>/home/me/project</cwd>
//!   <shell>bash</shell>
//!   <sandbox_mode>workspace-write</sandbox_mode>
//!   <writable_roots>
//!     <root>/home/me/project</root>
//!     <root>/tmp</root>
//!   </writable_roots>
//!   <network_access>restricted</network_access>
//!   <approval_policy>on-request</approval_policy>
//!   <current_date>2026-12-06</current_date>
//!   <timezone>UTC</timezone>
//! </environment_context>
//! ```
//!
//! `writable_roots` is left out when nothing is confined (`danger-full-access`) and empty for
//! `read-only`; a `granular` approval policy is named by how it behaves for commands
//! (`on-request` when it lets sandbox escalations reach the user, else `never`). The date is
//! the UTC date. Text in the values is escaped (`&`, `<`, `>`).
//!
//! Which turn sent which block is recorded in the thread's rollout (an `environmentContext`
//! record, see `threads::environment_blocks`): a thread's history is rebuilt from its recorded
//! turns with each block before the turn that sent it, by this server or, after a restart, by
//! the next one, so a resumed thread's next turn sends a block only when something changed.

use std::path::Path;

use agentwire_protocol::{AskForApproval, SandboxPolicy};
use agentwire_providers::HistoryEntry;
use agentwire_store::meta::ThreadSettings;
use agentwire_tools::sandbox::{network_allowed, writable_roots};

/// The tag that opens (and, with a `/`, closes) an environment context block.
pub(crate) const TAG: &str = "environment_context";

/// The shell the `shell` tool runs command lines with (`bash -c`).
const SHELL: &str = "bash";

/// The block for a turn of a thread with `settings`, on `date` (`YYYY-MM-DD`).
pub(crate) fn block(settings: &ThreadSettings, date: &str) -> String {
    let cwd = Path::new(&settings.cwd);
    let mut lines = vec![
        format!("<{TAG}>"),
        element("cwd", &settings.cwd),
        element("shell", SHELL),
        element("sandbox_mode", sandbox_mode(&settings.sandbox)),
    ];
    if let Some(roots) = writable_roots(&settings.sandbox, cwd) {
        if roots.is_empty() {
            lines.push("  <writable_roots></writable_roots>".to_owned());
        } else {
            lines.push("  <writable_roots>".to_owned());
            for root in roots {
                lines.push(format!(
                    "    <root>{}</root>",
                    escape(&root.to_string_lossy())
                ));
            }
            lines.push("  </writable_roots>".to_owned());
        }
    }
    let network = if network_allowed(&settings.sandbox) {
        "enabled"
    } else {
        "restricted"
    };
    lines.push(element("network_access", network));
    lines.push(element(
        "approval_policy",
        approval_policy(&settings.approval_policy),
    ));
    lines.push(element("current_date", date));
    lines.push(element("timezone", "UTC"));
    lines.push(format!("</{TAG}>"));
    lines.join("\n")
}

/// Today's date in UTC, `YYYY-MM-DD`.
pub(crate) fn today() -> String {
    let date = time::OffsetDateTime::now_utc().date();
    format!(
        "{:04}-{:02}-{:02}",
        date.year(),
        u8::from(date.month()),
        date.day()
    )
}

/// Whether `entry` is an environment context block.
pub(crate) fn is_block(entry: &HistoryEntry) -> bool {
    matches!(entry, HistoryEntry::Context { text } if text.starts_with(&format!("<{TAG}>")))
}

/// The newest environment context block of `history`, if it holds one.
pub(crate) fn latest(history: &[HistoryEntry]) -> Option<&str> {
    history.iter().rev().find_map(|entry| match entry {
        HistoryEntry::Context { text } if is_block(entry) => Some(text.as_str()),
        _ => None,
    })
}

/// One `<name>value</name>` line, indented in the block.
fn element(name: &str, value: &str) -> String {
    format!("  <{name}>{}</{name}>", escape(value))
}

/// `text` with `&`, `<` and `>` escaped, so a value cannot close the block.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The sandbox mode `policy` is, as `config.toml` spells it.
fn sandbox_mode(policy: &SandboxPolicy) -> &'static str {
    match policy {
        SandboxPolicy::DangerFullAccess => "danger-full-access",
        SandboxPolicy::ExternalSandbox { .. } => "external-sandbox",
        SandboxPolicy::WorkspaceWrite { .. } => "workspace-write",
        // `read-only`, and a policy this server does not know (it confines the most).
        _ => "read-only",
    }
}

/// The approval policy as the base instructions explain it.
fn approval_policy(policy: &AskForApproval) -> &'static str {
    match policy {
        AskForApproval::Untrusted => "untrusted",
        AskForApproval::OnRequest => "on-request",
        AskForApproval::Granular {
            sandbox_approval: true,
            ..
        } => "on-request",
        // `never`, and a granular policy that lets no escalation reach the user.
        _ => "never",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentwire_config::defaults::{ThreadDefaults, sandbox_policy_with};
    use agentwire_protocol::{SandboxMode, SandboxWorkspaceWrite};

    fn settings(mode: SandboxMode, policy: AskForApproval) -> ThreadSettings {
        let mut settings = ThreadSettings::new(
            &ThreadDefaults::default(),
            agentwire_store::meta::SettingsOverrides::default(),
        );
        settings.cwd = "/w/a<b>".to_owned();
        settings.approval_policy = policy;
        settings.sandbox = sandbox_policy_with(
            mode,
            &SandboxWorkspaceWrite::builder()
                .writable_roots(vec!["/extra".to_owned()])
                .exclude_tmpdir_env_var(true)
                .network_access(true)
                .build(),
        );
        settings
    }

    #[test]
    fn a_workspace_write_block_lists_its_roots_and_escapes_values() {
        let text = block(
            &settings(SandboxMode::WorkspaceWrite, AskForApproval::OnRequest),
            "2026-01-02",
        );
        assert_eq!(
            text,
            "<environment_context>\n  <cwd>/w/a&lt;b&gt;</cwd>\n  <shell>bash</shell>\n  \
             <sandbox_mode>workspace-write</sandbox_mode>\n  <writable_roots>\n    \
             <root>/w/a&lt;b&gt;</root>\n    <root>/extra</root>\n    <root>/tmp</root>\n  \
             </writable_roots>\n  <network_access>enabled</network_access>\n  \
             <approval_policy>on-request</approval_policy>\n  \
             <current_date>2026-01-02</current_date>\n  <timezone>UTC</timezone>\n\
             </environment_context>"
        );
    }

    #[test]
    fn read_only_has_no_roots_and_full_access_no_list() {
        let read_only = block(
            &settings(SandboxMode::ReadOnly, AskForApproval::Never),
            "2026-01-02",
        );
        assert!(read_only.contains("<sandbox_mode>read-only</sandbox_mode>"));
        assert!(read_only.contains("<writable_roots></writable_roots>"));
        assert!(read_only.contains("<network_access>restricted</network_access>"));
        assert!(read_only.contains("<approval_policy>never</approval_policy>"));
        let full = block(
            &settings(
                SandboxMode::DangerFullAccess,
                AskForApproval::granular()
                    .sandbox_approval(true)
                    .rules(false)
                    .mcp_elicitations(false)
                    .build(),
            ),
            "2026-01-02",
        );
        assert!(!full.contains("writable_roots"), "{full}");
        assert!(full.contains("<network_access>enabled</network_access>"));
        assert!(full.contains("<approval_policy>on-request</approval_policy>"));
    }

    #[test]
    fn the_latest_block_is_found() {
        let history = vec![
            HistoryEntry::Context {
                text: "<environment_context>one".to_owned(),
            },
            HistoryEntry::user_text("<environment_context>typed by the user".to_owned()),
            HistoryEntry::Context {
                text: "# AGENTS.md instructions".to_owned(),
            },
        ];
        assert_eq!(latest(&history), Some("<environment_context>one"));
        assert_eq!(latest(&history[1..]), None);
    }

    #[test]
    fn today_is_a_date() {
        let date = today();
        assert_eq!(date.len(), 10, "{date}");
        assert_eq!(&date[4..5], "-");
    }
}
