//! Overrides given as dotted key paths: `-c key=value` flags and the `config` map of
//! `thread/start`, and merging tables layer over layer.

use std::collections::BTreeMap;

use super::keys::split_key_path;

/// Parses one `-c key=value` flag as Codex does: the text before the first `=` is a dotted key
/// path, the rest a TOML value; a value that is not valid TOML is taken as a string (so
/// `-c model=gpt-x` works without quotes).
pub fn parse_override(flag: &str) -> Result<(Vec<String>, toml::Value), String> {
    let Some((key, value)) = flag.split_once('=') else {
        return Err(format!("`{flag}`: expected key=value"));
    };
    let path = split_key_path(key.trim())?;
    let value = value.trim();
    let parsed = format!("value = {value}")
        .parse::<toml::Table>()
        .ok()
        .and_then(|mut t| t.remove("value"));
    let value = parsed.unwrap_or_else(|| {
        toml::Value::String(value.trim_matches(|c| c == '"' || c == '\'').to_owned())
    });
    Ok((path, value))
}

/// Sets `value` at `path` in `table`, creating the tables on the way (replacing a non-table
/// in the way).
pub(crate) fn set_path(table: &mut toml::Table, path: &[String], value: toml::Value) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut current = table;
    for segment in parents {
        let entry = current
            .entry(segment.clone())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        if !entry.is_table() {
            *entry = toml::Value::Table(toml::Table::new());
        }
        let toml::Value::Table(next) = entry else {
            return;
        };
        current = next;
    }
    current.insert(last.clone(), value);
}

/// Merges `upper` into `lower`: tables key by key, any other value replaces.
pub(crate) fn merge(lower: &mut toml::Table, upper: &toml::Table) {
    for (key, value) in upper {
        match (lower.get_mut(key), value) {
            (Some(toml::Value::Table(below)), toml::Value::Table(above)) => merge(below, above),
            _ => {
                lower.insert(key.clone(), value.clone());
            }
        }
    }
}

/// The table of `-c` style overrides: each dotted path set in order.
pub(crate) fn table_of(overrides: &[(Vec<String>, toml::Value)]) -> toml::Table {
    let mut table = toml::Table::new();
    for (path, value) in overrides {
        set_path(&mut table, path, value.clone());
    }
    table
}

/// The `config` map of `thread/start` (dotted key paths to JSON values) as a table; `null`
/// values and paths that do not split are left out.
pub(crate) fn table_of_json(config: &BTreeMap<String, serde_json::Value>) -> toml::Table {
    let mut table = toml::Table::new();
    for (key, value) in config {
        if let (Ok(path), Some(value)) = (split_key_path(key), json_to_toml(value)) {
            set_path(&mut table, &path, value);
        }
    }
    table
}

/// `merged` (a merged configuration table) with a thread's own `config` overrides (dotted key
/// paths) over it.
pub fn with_overrides(
    merged: &toml::Table,
    overrides: Option<&BTreeMap<String, serde_json::Value>>,
) -> toml::Table {
    let mut merged = merged.clone();
    if let Some(overrides) = overrides.filter(|o| !o.is_empty()) {
        merge(&mut merged, &table_of_json(overrides));
    }
    merged
}

/// A JSON value as TOML; `None` for `null` (TOML has none; inside arrays and objects the
/// `null` members are left out).
pub(crate) fn json_to_toml(value: &serde_json::Value) -> Option<toml::Value> {
    use serde_json::Value as J;
    Some(match value {
        J::Null => return None,
        J::Bool(b) => toml::Value::Boolean(*b),
        J::Number(n) => match n.as_i64() {
            Some(i) => toml::Value::Integer(i),
            None => toml::Value::Float(n.as_f64()?),
        },
        J::String(s) => toml::Value::String(s.clone()),
        J::Array(items) => toml::Value::Array(items.iter().filter_map(json_to_toml).collect()),
        J::Object(members) => toml::Value::Table(
            members
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), json_to_toml(v)?)))
                .collect(),
        ),
    })
}

/// A TOML value as JSON (dates become their TOML text).
pub fn toml_to_json(value: &toml::Value) -> serde_json::Value {
    use serde_json::Value as J;
    match value {
        toml::Value::String(s) => J::String(s.clone()),
        toml::Value::Integer(i) => J::from(*i),
        toml::Value::Float(f) => serde_json::Number::from_f64(*f).map_or(J::Null, J::Number),
        toml::Value::Boolean(b) => J::Bool(*b),
        toml::Value::Datetime(d) => J::String(d.to_string()),
        toml::Value::Array(items) => J::Array(items.iter().map(toml_to_json).collect()),
        toml::Value::Table(table) => table_to_json(table),
    }
}

/// A TOML table as a JSON object.
pub fn table_to_json(table: &toml::Table) -> serde_json::Value {
    serde_json::Value::Object(
        table
            .iter()
            .map(|(k, v)| (k.clone(), toml_to_json(v)))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_parse_like_codex() {
        let (path, value) =
            parse_override("sandbox_workspace_write.network_access=true").expect("flag");
        assert_eq!(path, vec!["sandbox_workspace_write", "network_access"]);
        assert_eq!(value, toml::Value::Boolean(true));
        let (_, value) = parse_override("model=gpt-x").expect("bare string");
        assert_eq!(value, toml::Value::String("gpt-x".to_owned()));
        let (_, value) = parse_override("model = \"a b\"").expect("quoted");
        assert_eq!(value, toml::Value::String("a b".to_owned()));
        let (_, value) =
            parse_override("shell_environment_policy.exclude=[\"A*\"]").expect("array");
        assert!(value.is_array());
        assert!(parse_override("model").is_err());
        assert!(parse_override("=x").is_err());
    }

    #[test]
    fn tables_merge_key_by_key() {
        let mut lower: toml::Table = "a = 1\n[t]\nx = 1\ny = 2\n".parse().expect("toml");
        let upper: toml::Table = "b = 2\n[t]\ny = 3\n".parse().expect("toml");
        merge(&mut lower, &upper);
        let expected: toml::Table = "a = 1\nb = 2\n[t]\nx = 1\ny = 3\n".parse().expect("toml");
        assert_eq!(lower, expected);
    }
}
