//! The engine's answer to `initialize` (the runtime's `Handler::initialize_response` hook): who
//! the server is and where it runs.

use std::path::Path;

use agentwire_protocol::{ClientInfo, InitializeResponse};

/// The server version `userAgent` reports. `userAgent` follows the reference server's shape:
/// `<client name>/<server version> (<os> <os version>; <arch>; agentwire <version>) <terminal>
/// (<client name>; <client version>)`. Codex clients read the server version to decide whether
/// the server is older than they are (the TUI warns then), so it is the Codex release whose
/// app-server protocol this server speaks, [`CODEX_PROTOCOL_RELEASE`]; agentwire's own version
/// is named in the comment beside the platform.
pub(crate) const CODEX_PROTOCOL_RELEASE: &str = "0.171.0";

/// The default `initialize` result for a client; see [`CODEX_PROTOCOL_RELEASE`] for `userAgent`.
pub(crate) fn response(client: &ClientInfo, home: &Path) -> InitializeResponse {
    let (os, os_version) = os_release();
    let terminal = std::env::var("TERM_PROGRAM")
        .ok()
        .filter(|t| !t.is_empty())
        .or_else(|| std::env::var("TERM").ok().filter(|t| !t.is_empty()))
        .unwrap_or_else(|| "unknown".to_owned());
    let user_agent = format!(
        "{name}/{CODEX_PROTOCOL_RELEASE} ({os} {os_version}; {arch}; agentwire {version}) \
         {terminal} ({name}; {client_version})",
        name = client.name,
        version = env!("CARGO_PKG_VERSION"),
        arch = std::env::consts::ARCH,
        client_version = client.version,
    );
    InitializeResponse::builder()
        .user_agent(user_agent)
        .codex_home(agentwire_protocol::AbsolutePathBuf(
            home.to_string_lossy().into_owned(),
        ))
        .platform_family(std::env::consts::FAMILY.to_owned())
        .platform_os(std::env::consts::OS.to_owned())
        .build()
}

/// The operating system's name and version, from `/etc/os-release` where there is one.
fn os_release() -> (String, String) {
    let fallback = (std::env::consts::OS.to_owned(), "unknown".to_owned());
    let Ok(text) = std::fs::read_to_string("/etc/os-release") else {
        return fallback;
    };
    let field = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
            .map(|v| v.trim_matches('"').to_owned())
    };
    let name = field("NAME").map(|n| n.split_whitespace().next().unwrap_or("").to_owned());
    match (name, field("VERSION_ID")) {
        (Some(name), Some(version)) if !name.is_empty() => (name, version),
        (Some(name), None) if !name.is_empty() => (name, "unknown".to_owned()),
        _ => fallback,
    }
}
