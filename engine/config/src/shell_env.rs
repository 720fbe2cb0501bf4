//! `[shell_environment_policy]`: the environment of the commands the engine runs for the model,
//! with Codex's keys and meaning.
//!
//! ```toml
//! [shell_environment_policy]
//! inherit = "core"                 # "all" (default): the server's environment; "core": only
//!                                  # HOME, LOGNAME, PATH, SHELL, USER, USERNAME, TMPDIR,
//!                                  # TEMP, TMP; "none": nothing
//! ignore_default_excludes = false  # false (default) drops every name matching *KEY*,
//!                                  # *SECRET* or *TOKEN* (case-insensitive)
//! exclude = ["AWS_*"]              # more names to drop (globs, case-insensitive)
//! set = { CI = "1" }               # set these
//! include_only = ["PATH", "CI"]    # if given, keep only names matching one of these
//! ```
//!
//! Applied in that order: inherit, default excludes, `exclude`, `set`, `include_only`. Globs
//! know `*` (any run of characters) and `?` (one character).

use std::collections::BTreeMap;

use serde::Deserialize;

/// Where the environment starts from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Inherit {
    /// Everything the server has.
    #[default]
    All,
    /// The few variables a shell needs.
    Core,
    /// Nothing.
    None,
}

/// The `[shell_environment_policy]` table.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShellEnvironmentPolicy {
    /// Where the environment starts from.
    #[serde(default)]
    pub inherit: Inherit,
    /// Keep names matching `*KEY*`, `*SECRET*`, `*TOKEN*`.
    #[serde(default)]
    pub ignore_default_excludes: bool,
    /// Globs of names to drop.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Variables to set.
    #[serde(default)]
    pub set: BTreeMap<String, String>,
    /// Globs of the only names to keep (when not empty).
    #[serde(default)]
    pub include_only: Vec<String>,
    /// Codex's experimental switch to run commands through the user's login shell profile;
    /// accepted and ignored.
    #[serde(default)]
    pub experimental_use_profile: Option<bool>,
}

/// The variables `inherit = "core"` keeps.
const CORE: &[&str] = &[
    "HOME", "LOGNAME", "PATH", "SHELL", "USER", "USERNAME", "TMPDIR", "TEMP", "TMP",
];

/// The names dropped unless `ignore_default_excludes`.
const DEFAULT_EXCLUDES: &[&str] = &["*KEY*", "*SECRET*", "*TOKEN*"];

/// The environment a command runs with under `policy`, from the server's own environment.
pub fn command_environment(policy: &ShellEnvironmentPolicy) -> BTreeMap<String, String> {
    environment_from(policy, std::env::vars_os())
}

/// [`command_environment`] starting from `vars` (names or values that are not UTF-8 are
/// dropped).
fn environment_from(
    policy: &ShellEnvironmentPolicy,
    vars: impl IntoIterator<Item = (std::ffi::OsString, std::ffi::OsString)>,
) -> BTreeMap<String, String> {
    let mut env: BTreeMap<String, String> = match policy.inherit {
        Inherit::None => BTreeMap::new(),
        inherit => vars
            .into_iter()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .filter(|(k, _)| inherit == Inherit::All || CORE.contains(&k.as_str()))
            .collect(),
    };
    if !policy.ignore_default_excludes {
        env.retain(|name, _| !DEFAULT_EXCLUDES.iter().any(|g| glob_match(g, name)));
    }
    env.retain(|name, _| !policy.exclude.iter().any(|g| glob_match(g, name)));
    for (name, value) in &policy.set {
        env.insert(name.clone(), value.clone());
    }
    if !policy.include_only.is_empty() {
        env.retain(|name, _| policy.include_only.iter().any(|g| glob_match(g, name)));
    }
    env
}

/// Whether `name` matches `pattern` (`*`, `?`), ignoring ASCII case.
fn glob_match(pattern: &str, name: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().map(|c| c.to_ascii_uppercase()).collect();
    let name: Vec<char> = name.chars().map(|c| c.to_ascii_uppercase()).collect();
    let (mut p, mut n) = (0, 0);
    // Where the last `*` was, and the name position it is trying to cover up to.
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, n));
                p += 1;
            }
            Some(&c) if c == '?' || c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match star {
                Some((star_p, star_n)) => {
                    p = star_p + 1;
                    n = star_n + 1;
                    star = Some((star_p, star_n + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect()
    }

    const SERVER: &[(&str, &str)] = &[
        ("PATH", "/bin"),
        ("HOME", "/home/me"),
        ("OPENAI_API_KEY", "sk"),
        ("github_token", "t"),
        ("MY_SECRET_THING", "s"),
        ("AWS_REGION", "eu"),
        ("EDITOR", "vi"),
    ];

    #[test]
    fn the_default_drops_secrets_and_keeps_the_rest() {
        let env = environment_from(&ShellEnvironmentPolicy::default(), vars(SERVER));
        let names: Vec<_> = env.keys().map(String::as_str).collect();
        assert_eq!(names, vec!["AWS_REGION", "EDITOR", "HOME", "PATH"]);
    }

    #[test]
    fn every_step_applies_in_order() {
        let policy = ShellEnvironmentPolicy {
            inherit: Inherit::Core,
            ignore_default_excludes: true,
            exclude: vec!["home".to_owned()],
            set: BTreeMap::from([("CI".to_owned(), "1".to_owned())]),
            ..ShellEnvironmentPolicy::default()
        };
        let env = environment_from(&policy, vars(SERVER));
        assert_eq!(
            env,
            BTreeMap::from([
                ("CI".to_owned(), "1".to_owned()),
                ("PATH".to_owned(), "/bin".to_owned())
            ])
        );
        let only = ShellEnvironmentPolicy {
            ignore_default_excludes: true,
            include_only: vec!["*_KEY".to_owned(), "P?TH".to_owned()],
            ..ShellEnvironmentPolicy::default()
        };
        let names: Vec<_> = environment_from(&only, vars(SERVER)).into_keys().collect();
        assert_eq!(names, vec!["OPENAI_API_KEY", "PATH"]);
        let none = ShellEnvironmentPolicy {
            inherit: Inherit::None,
            ..ShellEnvironmentPolicy::default()
        };
        assert!(environment_from(&none, vars(SERVER)).is_empty());
    }

    #[test]
    fn globs() {
        assert!(glob_match("*KEY*", "openai_api_key"));
        assert!(glob_match("*", ""));
        assert!(glob_match("A*B*C", "AxxBxxC"));
        assert!(!glob_match("A*B*C", "AxxBxx"));
        assert!(glob_match("a?c", "ABC"));
        assert!(!glob_match("abc", "abcd"));
    }
}
