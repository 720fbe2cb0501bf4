//! Keeping what is valid of a setting that does not read as a whole.
//!
//! A used top-level key whose value does not read is taken apart rather than dropped: each key
//! of a table is checked on its own (a table inside it, key by key in turn), and only the keys
//! at fault are left out, each reported as its own [`Fault`] with its full key path. An entry of
//! a table of independent entries (`[model_providers.<id>]`, `[mcp_servers.<name>]`,
//! `[projects.<path>]`) is salvaged on its own the same way. A table left without a key it needs
//! (a provider's `base_url`) is left out whole, and reported with what it misses.
//!
//! Checking a key on its own tolerates "missing field" (the other keys of its table are not
//! there by design): serde reports a bad or unknown key while it reads the key, and a missing
//! one only after reading all of them.

use toml::{Table, Value};

/// One key left out, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Fault {
    /// The key path, from the top level (`["model_providers", "local", "env_kye"]`).
    pub path: Vec<String>,
    /// The deserializer's words (`unknown field \`env_kye\`, expected one of …`).
    pub reason: String,
    /// Whether the key is unknown (rather than its value bad, or a needed key missing).
    pub unknown: bool,
}

/// What salvaging a value kept, and the keys it left out.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Salvaged {
    /// What still reads; `None` when nothing of it does.
    pub value: Option<Value>,
    /// The keys left out (the value's own path when all of it was).
    pub faults: Vec<Fault>,
}

/// Checks a candidate value of the setting being salvaged.
type Probe<'a> = &'a dyn Fn(&Value) -> Result<(), String>;

/// Salvages `value` of the used top-level key at `path`; `check` tells whether a value of that
/// key reads (see `keys::check_value`); `maps` are the keys whose tables hold independent
/// entries.
pub(crate) fn salvage(
    path: &[String],
    value: &Value,
    check: &dyn Fn(&Value) -> Result<(), String>,
    maps: bool,
) -> Salvaged {
    if check(value).is_ok() {
        return kept(value.clone());
    }
    let Some(entries) = value.as_table().filter(|_| maps) else {
        return within(path, value, check);
    };
    let mut kept_entries = Table::new();
    let mut faults = Vec::new();
    for (name, entry) in entries {
        let probe = |candidate: &Value| check(&single(name, candidate.clone()));
        let entry_path = joined(path, name);
        let salvaged = within(&entry_path, entry, &probe);
        if let Some(entry) = salvaged.value {
            kept_entries.insert(name.clone(), entry);
        }
        faults.extend(salvaged.faults);
    }
    Salvaged {
        value: Some(Value::Table(kept_entries)),
        faults,
    }
}

/// `value` (at `path`) without the keys `probe` refuses; the whole of it when it is not a
/// table, or the table itself is refused (the built-in `fixture` provider's id, a required key
/// missing once the bad ones are out).
fn within(path: &[String], value: &Value, probe: Probe<'_>) -> Salvaged {
    let reason = match probe(value) {
        Ok(()) => return kept(value.clone()),
        Err(reason) => reason,
    };
    let Some(table) = value.as_table() else {
        return dropped(path, reason);
    };
    if let Err(reason) = probe(&Value::Table(Table::new()))
        && !is_missing(&reason)
    {
        return dropped(path, reason);
    }
    let mut kept_keys = Table::new();
    let mut faults = Vec::new();
    for (key, inner) in table {
        let key_path = joined(path, key);
        let alone = |candidate: &Value| match probe(&single(key, candidate.clone())) {
            Err(reason) if !is_missing(&reason) => Err(reason),
            _ => Ok(()),
        };
        let reason = match alone(inner) {
            Ok(()) => {
                kept_keys.insert(key.clone(), inner.clone());
                continue;
            }
            Err(reason) => reason,
        };
        // A table whose own keys may be at fault: look inside it.
        if inner.is_table() && alone(&Value::Table(Table::new())).is_ok() {
            let salvaged = within(&key_path, inner, &alone);
            if let Some(inner) = salvaged.value {
                kept_keys.insert(key.clone(), inner);
            }
            faults.extend(salvaged.faults);
        } else {
            faults.push(fault(key_path, reason));
        }
    }
    let rest = Value::Table(kept_keys);
    match probe(&rest) {
        Ok(()) => Salvaged {
            value: Some(rest),
            faults,
        },
        Err(reason) => {
            faults.push(fault(path.to_vec(), reason));
            Salvaged {
                value: None,
                faults,
            }
        }
    }
}

/// Whether a deserializer's `reason` is only a needed key missing.
fn is_missing(reason: &str) -> bool {
    reason.starts_with("missing field")
}

fn kept(value: Value) -> Salvaged {
    Salvaged {
        value: Some(value),
        faults: Vec::new(),
    }
}

fn dropped(path: &[String], reason: String) -> Salvaged {
    Salvaged {
        value: None,
        faults: vec![fault(path.to_vec(), reason)],
    }
}

fn fault(path: Vec<String>, reason: String) -> Fault {
    Fault {
        path,
        unknown: reason.starts_with("unknown field"),
        reason,
    }
}

/// `{key: value}`.
fn single(key: &str, value: Value) -> Value {
    let mut table = Table::new();
    table.insert(key.to_owned(), value);
    Value::Table(table)
}

fn joined(path: &[String], key: &str) -> Vec<String> {
    let mut path = path.to_vec();
    path.push(key.to_owned());
    path
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Entry {
        #[allow(dead_code)]
        url: String,
        #[serde(default)]
        #[allow(dead_code)]
        retries: Option<u32>,
        #[serde(default)]
        #[allow(dead_code)]
        inner: Option<Inner>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Inner {
        #[serde(default)]
        #[allow(dead_code)]
        flag: bool,
    }

    fn check(value: &Value) -> Result<(), String> {
        value
            .clone()
            .try_into::<std::collections::BTreeMap<String, Entry>>()
            .map(|_| ())
            .map_err(|e: toml::de::Error| e.message().to_owned())
    }

    fn path(segments: &[&str]) -> Vec<String> {
        segments.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn only_the_keys_at_fault_are_left_out_each_with_its_path() {
        let value: Value = toml::from_str(
            "[a]\nurl = \"u\"\nurl_typo = 1\nretries = \"many\"\n[a.inner]\nflag = true\nflg = 1\n\
             [b]\nretries = 2\n[c]\nurl = \"ok\"\n",
        )
        .expect("toml");
        let salvaged = salvage(&path(&["m"]), &value, &check, true);
        let kept = salvaged.value.clone().expect("kept");
        assert_eq!(
            kept["a"],
            toml::from_str::<Value>("url = \"u\"\n[inner]\nflag = true\n").expect("toml")
        );
        assert!(kept.get("b").is_none(), "b misses its url");
        assert_eq!(kept["c"]["url"].as_str(), Some("ok"));
        let faults: Vec<(Vec<String>, bool)> = salvaged
            .faults
            .iter()
            .map(|f| (f.path.clone(), f.unknown))
            .collect();
        assert_eq!(
            faults,
            vec![
                (path(&["m", "a", "inner", "flg"]), true),
                (path(&["m", "a", "retries"]), false),
                (path(&["m", "a", "url_typo"]), true),
                (path(&["m", "b"]), false),
            ]
        );
        assert!(salvaged.faults[3].reason.contains("url"), "{salvaged:?}");
    }
}
