//! The environment of a `command/exec` process: the server-computed base, then the request's
//! `env` changes (a string sets a variable, `null` removes it).

use std::collections::BTreeMap;
use std::ffi::OsString;

use agentwire_config::shell_env::{ShellEnvironmentPolicy, command_environment};

use super::request::Refusal;

/// The environment a `command/exec` process starts from, before the request's own `env`
/// changes: the one model commands get, built by `[shell_environment_policy]` (so the server's
/// secrets, `*KEY*`, `*SECRET*`, `*TOKEN*`, stay out unless the configuration lets them in).
pub(crate) fn base_env(policy: &ShellEnvironmentPolicy) -> BTreeMap<OsString, OsString> {
    command_environment(policy)
        .into_iter()
        .map(|(name, value)| (OsString::from(name), OsString::from(value)))
        .collect()
}

/// `base` with `overrides` applied: a value sets the variable (replacing an inherited one), `null`
/// removes it (absent already is fine). A name that is empty or holds `=` or NUL, or a value
/// holding NUL, cannot be passed to a process and is refused, naming `env.<NAME>`.
pub(super) fn apply(
    mut base: BTreeMap<OsString, OsString>,
    overrides: &BTreeMap<String, Option<String>>,
) -> Result<BTreeMap<OsString, OsString>, Refusal> {
    for (name, value) in overrides {
        if name.is_empty() {
            return Err(Refusal {
                field: "env".to_owned(),
                reason: "has a variable with an empty name".to_owned(),
            });
        }
        if name.contains(['=', '\0']) {
            return Err(Refusal {
                field: format!("env.{name}"),
                reason: "is not a valid variable name (it holds `=` or NUL)".to_owned(),
            });
        }
        match value {
            Some(value) if value.contains('\0') => {
                return Err(Refusal {
                    field: format!("env.{name}"),
                    reason: "holds a NUL character, which an environment value cannot hold"
                        .to_owned(),
                });
            }
            Some(value) => {
                base.insert(OsString::from(name), OsString::from(value));
            }
            None => {
                base.remove(&OsString::from(name));
            }
        }
    }
    Ok(base)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<OsString, OsString> {
        pairs
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect()
    }

    #[test]
    fn values_set_replace_and_null_removes() {
        let base = map(&[("HOME", "/home/u"), ("PAGER", "less"), ("LANG", "C")]);
        let overrides = BTreeMap::from([
            ("PAGER".to_owned(), None),
            ("LANG".to_owned(), Some("C.UTF-8".to_owned())),
            ("NEW".to_owned(), Some(String::new())),
            ("ABSENT".to_owned(), None),
        ]);
        let env = apply(base, &overrides).expect("valid");
        assert_eq!(
            env,
            map(&[("HOME", "/home/u"), ("LANG", "C.UTF-8"), ("NEW", "")])
        );
    }

    #[test]
    fn the_base_keeps_path_and_drops_secrets() {
        // The default policy inherits everything but names that look like secrets.
        let env = base_env(&ShellEnvironmentPolicy::default());
        assert_eq!(
            env.get(&OsString::from("PATH")),
            std::env::var_os("PATH").as_ref()
        );
        for name in env.keys() {
            let name = name.to_string_lossy().to_ascii_uppercase();
            assert!(
                !["KEY", "SECRET", "TOKEN"].iter().any(|s| name.contains(s)),
                "{name} reached the base environment"
            );
        }
    }
}
