//! Small helpers that keep the serde, schemars and ts-rs views of a type in step.

/// Serde default for boolean fields whose absent value means `true`.
pub(crate) fn default_true() -> bool {
    true
}

/// Deserializes a member that has three states: absent (`None`, through `#[serde(default)]`),
/// `null` (`Some(None)`) and a value (`Some(Some(v))`). Plain `Option<Option<T>>` would read
/// `null` as absent.
pub(crate) fn present_or_null<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    <Option<T> as serde::Deserialize>::deserialize(deserializer).map(Some)
}

/// Adds `fields` to a schema's `required` list.
///
/// schemars leaves every `Option<T>` field out of `required`. Some response fields are always
/// present on the wire but may be `null`; this transform records that in the schema (the field
/// stays nullable).
#[cfg(feature = "schema")]
pub(crate) fn require_nullable(schema: &mut schemars::Schema, fields: &[&str]) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    let required = object
        .entry("required")
        .or_insert_with(|| serde_json::Value::Array(Vec::new()));
    if let Some(list) = required.as_array_mut() {
        for field in fields {
            if !list.iter().any(|v| v == field) {
                list.push(serde_json::Value::from(*field));
            }
        }
    }
}
