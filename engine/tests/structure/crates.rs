//! Rule 4: no crate of the workspace holds more than a third of the project's code, so no
//! part grows into the whole again. Code is every line of the `.rs` files under a member's
//! `src/` (its unit tests included); the members are those the workspace's `Cargo.toml` lists.

use std::fmt::Write as _;
use std::path::Path;

use crate::sources::count_lines;

/// Each member's folder (as the workspace lists it) and its lines of code, in list order.
pub(crate) fn crate_sizes(workspace: &Path) -> Vec<(String, usize)> {
    let manifest = std::fs::read_to_string(workspace.join("Cargo.toml"))
        .unwrap_or_else(|e| panic!("reading the workspace's Cargo.toml: {e}"));
    let manifest: toml::Table = toml::from_str(&manifest).expect("the workspace's Cargo.toml");
    let members = manifest["workspace"]["members"]
        .as_array()
        .expect("[workspace] members");
    members
        .iter()
        .map(|member| {
            let member = member.as_str().expect("a member is a path");
            (
                member.to_owned(),
                count_lines(&workspace.join(member).join("src")),
            )
        })
        .collect()
}

/// Reports every crate over a third of the total that is not in `allowed` (an allow-list like
/// [`ALLOWED_CRATE_SHARES`](crate::allow::ALLOWED_CRATE_SHARES)), and every entry there that is
/// no longer over it or no longer a member.
pub(crate) fn check_crate_shares(
    sizes: &[(String, usize)],
    allowed: &[(&str, &str)],
    problems: &mut String,
) {
    let total: usize = sizes.iter().map(|(_, lines)| lines).sum();
    for (member, lines) in sizes {
        let over = lines * 3 > total;
        let allowed = allowed.iter().any(|(m, _)| m == member);
        if over && !allowed {
            let _ = writeln!(
                problems,
                "- the crate in {member} holds {lines} of the workspace's {total} lines (more than a third): split it"
            );
        }
        if !over && allowed {
            let _ = writeln!(
                problems,
                "- the crate in {member} now holds {lines} of {total} lines: remove it from ALLOWED_CRATE_SHARES"
            );
        }
    }
    for (member, _) in allowed {
        if !sizes.iter().any(|(m, _)| m == member) {
            let _ = writeln!(
                problems,
                "- {member} (ALLOWED_CRATE_SHARES) is no longer a member: remove it"
            );
        }
    }
}
