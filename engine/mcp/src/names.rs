//! The function names the model sees for MCP tools.
//!
//! OpenAI function names allow only `[a-zA-Z0-9_-]` and at most 64 characters, so a tool is
//! offered as `<server>__<tool>` with every other character replaced by `_`; a name that is too
//! long, or that would collide with another, is cut and ends with a hash of the server and tool
//! names. The `mcpToolCall` item carries the real server and tool names.

use std::collections::HashSet;

use sha2::{Digest, Sha256};

/// Longest function name.
pub(crate) const MAX_NAME: usize = 64;
/// Between the server and the tool name.
pub(crate) const DELIMITER: &str = "__";

fn sanitise(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The function name of `tool` on `server`, different from every name in `taken`.
pub fn qualify(server: &str, tool: &str, taken: &HashSet<String>) -> String {
    let plain = format!("{}{DELIMITER}{}", sanitise(server), sanitise(tool));
    if plain.len() <= MAX_NAME && !taken.contains(&plain) {
        return plain;
    }
    let digest = Sha256::digest(format!("{server}\0{tool}").as_bytes());
    let hash: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    let keep = MAX_NAME - hash.len() - 1;
    let mut cut: String = plain.chars().take(keep).collect();
    cut.push('_');
    cut.push_str(&hash);
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(name: &str) -> bool {
        name.len() <= MAX_NAME
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    }

    #[test]
    fn plain_names_are_server_and_tool() {
        let name = qualify("everything", "get-sum", &HashSet::new());
        assert_eq!(name, "everything__get-sum");
    }

    #[test]
    fn odd_characters_become_underscores() {
        let name = qualify("my server", "tools/list.all", &HashSet::new());
        assert_eq!(name, "my_server__tools_list_all");
        assert!(valid(&name));
    }

    #[test]
    fn long_and_colliding_names_are_cut_and_hashed() {
        let long = "x".repeat(100);
        let name = qualify("srv", &long, &HashSet::new());
        assert!(valid(&name), "{name}");
        assert_ne!(name, qualify("srv", &format!("{long}y"), &HashSet::new()));
        let taken = HashSet::from(["a_b__c".to_owned()]);
        let other = qualify("a.b", "c", &taken);
        assert!(valid(&other) && other != "a_b__c", "{other}");
    }
}
