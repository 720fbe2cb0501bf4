//! A JSON Schema rendered for people: type expressions with links, fields, variants, values.

use serde_json::{Map, Value};

/// How deep a type expression is followed before it is cut short with `…`.
const MAX_DEPTH: usize = 24;

/// One piece of a type expression: text, linked to a type page when `href` is not empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// What is shown.
    pub text: String,
    /// Where it links (relative to the page), or empty.
    pub href: String,
}

/// One member of an object type.
#[derive(Debug, Clone)]
pub struct Field {
    /// The wire name.
    pub name: String,
    /// Its type.
    pub ty: Vec<Part>,
    /// Whether the member must be present.
    pub required: bool,
    /// Whether `null` is allowed.
    pub nullable: bool,
    /// Whether the member is experimental.
    pub experimental: bool,
    /// Its doc string, as HTML.
    pub doc: String,
}

/// One branch of a union.
#[derive(Debug, Clone)]
pub struct Variant {
    /// The branch's title, or its position.
    pub title: String,
    /// Its type.
    pub ty: Vec<Part>,
    /// Its doc string, as HTML.
    pub doc: String,
    /// Its members, when the branch is an inline object.
    pub fields: Vec<Field>,
}

/// One value of an enumeration.
#[derive(Debug, Clone)]
pub struct EnumValue {
    /// The value, as JSON.
    pub value: String,
    /// Its doc string, as HTML.
    pub doc: String,
}

/// A definition, readably.
#[derive(Debug, Clone, Default)]
pub struct TypeView {
    /// `object`, `union`, `enum` or `alias`.
    pub kind: &'static str,
    /// Members (objects).
    pub fields: Vec<Field>,
    /// Branches (unions).
    pub variants: Vec<Variant>,
    /// Values (enumerations).
    pub values: Vec<EnumValue>,
    /// The type (anything else).
    pub alias: Vec<Part>,
}

/// The name a `$ref` points at (`#/definitions/X` → `X`).
pub fn ref_name(reference: &str) -> &str {
    reference.rsplit('/').next().unwrap_or(reference)
}

fn text(out: &mut Vec<Part>, text: impl Into<String>) {
    out.push(Part {
        text: text.into(),
        href: String::new(),
    });
}

fn branches(object: &Map<String, Value>) -> Option<&Vec<Value>> {
    object
        .get("oneOf")
        .or_else(|| object.get("anyOf"))
        .and_then(Value::as_array)
}

/// The type expression of `schema`; links to type pages are `{prefix}{Name}.html`.
pub fn expr(schema: &Value, prefix: &str) -> Vec<Part> {
    let mut out = Vec::new();
    write_expr(schema, prefix, &mut out, 0);
    out
}

fn write_expr(schema: &Value, prefix: &str, out: &mut Vec<Part>, depth: usize) {
    if depth > MAX_DEPTH {
        return text(out, "…");
    }
    let object = match schema {
        Value::Bool(true) => return text(out, "any"),
        Value::Object(object) => object,
        _ => return text(out, "never"),
    };
    if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
        let name = ref_name(reference);
        out.push(Part {
            text: name.to_owned(),
            href: format!("{prefix}{name}.html"),
        });
        return;
    }
    if let Some([only]) = object
        .get("allOf")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
    {
        return write_expr(only, prefix, out, depth + 1);
    }
    if let Some(list) = branches(object) {
        for (n, branch) in list.iter().enumerate() {
            if n > 0 {
                text(out, " | ");
            }
            write_expr(branch, prefix, out, depth + 1);
        }
        return;
    }
    if let Some(values) = object.get("enum").and_then(Value::as_array) {
        let joined: Vec<String> = values.iter().map(Value::to_string).collect();
        return text(out, joined.join(" | "));
    }
    if let Some(value) = object.get("const") {
        return text(out, value.to_string());
    }
    let types: Vec<&str> = match object.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
        _ => return text(out, "any"),
    };
    for (n, ty) in types.iter().enumerate() {
        if n > 0 {
            text(out, " | ");
        }
        match *ty {
            "array" => {
                text(out, "array<");
                match object.get("items") {
                    Some(items) => write_expr(items, prefix, out, depth + 1),
                    None => text(out, "any"),
                }
                text(out, ">");
            }
            "object" => match (object.get("properties"), object.get("additionalProperties")) {
                (Some(Value::Object(props)), _) if !props.is_empty() => {
                    let names: Vec<&str> = props.keys().map(String::as_str).collect();
                    text(out, format!("object {{ {} }}", names.join(", ")));
                }
                (_, Some(values @ Value::Object(_))) => {
                    text(out, "map<string, ");
                    write_expr(values, prefix, out, depth + 1);
                    text(out, ">");
                }
                _ => text(out, "object"),
            },
            "integer" | "number" => match object.get("format").and_then(Value::as_str) {
                Some(format) => text(out, format!("{ty} ({format})")),
                None => text(out, *ty),
            },
            other => text(out, other),
        }
    }
}

/// Whether `schema` admits `null`.
pub fn nullable(schema: &Value) -> bool {
    nullable_at(schema, 0)
}

fn nullable_at(schema: &Value, depth: usize) -> bool {
    let Some(object) = schema.as_object() else {
        return schema == &Value::Bool(true);
    };
    if depth > MAX_DEPTH {
        return false;
    }
    const CONSTRAINTS: [&str; 8] = [
        "type", "enum", "const", "$ref", "allOf", "anyOf", "oneOf", "not",
    ];
    if !CONSTRAINTS.iter().any(|key| object.contains_key(*key)) {
        return true; // `{}` admits anything, `null` included
    }
    match object.get("type") {
        Some(Value::String(t)) if t == "null" => return true,
        Some(Value::Array(list)) if list.iter().any(|t| t == "null") => return true,
        _ => {}
    }
    if let Some(values) = object.get("enum").and_then(Value::as_array)
        && values.iter().any(Value::is_null)
    {
        return true;
    }
    if let Some([only]) = object
        .get("allOf")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
    {
        return nullable_at(only, depth + 1);
    }
    branches(object).is_some_and(|list| list.iter().any(|b| nullable_at(b, depth + 1)))
}

/// The schema's description as HTML ([`super::markdown::inline`]).
fn doc(schema: &Value) -> String {
    super::markdown::inline(
        schema
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default(),
    )
}

/// The members of an object schema, in schema order.
pub fn fields(schema: &Value, prefix: &str) -> Vec<Field> {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    properties
        .iter()
        .map(|(name, property)| Field {
            name: name.clone(),
            ty: expr(property, prefix),
            required: required.contains(&name.as_str()),
            nullable: nullable(property),
            experimental: property.get("x-experimental") == Some(&Value::Bool(true)),
            doc: doc(property),
        })
        .collect()
}

/// The value of a branch that is a single `const` or one-value `enum`.
fn single_value(schema: &Value) -> Option<&Value> {
    if let Some(value) = schema.get("const") {
        return Some(value);
    }
    match schema
        .get("enum")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
    {
        Some([only]) => Some(only),
        _ => None,
    }
}

/// A branch's title: its `title`, else its tag (`type = "text"`: the first member with a single
/// value), else its position.
fn variant_title(branch: &Value, n: usize) -> String {
    if let Some(title) = branch.get("title").and_then(Value::as_str) {
        return title.to_owned();
    }
    let tag = branch
        .get("properties")
        .and_then(Value::as_object)
        .and_then(|props| {
            props
                .iter()
                .find_map(|(name, p)| Some(format!("{name} = {}", single_value(p)?)))
        });
    tag.unwrap_or_else(|| format!("#{}", n + 1))
}

/// A definition, readably; links to type pages are `{prefix}{Name}.html`.
pub fn view(schema: &Value, prefix: &str) -> TypeView {
    let mut view = TypeView {
        kind: "alias",
        ..TypeView::default()
    };
    if schema
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty())
    {
        view.kind = "object";
        view.fields = fields(schema, prefix);
        return view;
    }
    if let Some(list) = schema.as_object().and_then(branches) {
        if !list.is_empty() && list.iter().all(|b| single_value(b).is_some()) {
            view.kind = "enum";
            view.values = list
                .iter()
                .filter_map(|b| {
                    Some(EnumValue {
                        value: single_value(b)?.to_string(),
                        doc: doc(b),
                    })
                })
                .collect();
            return view;
        }
        view.kind = "union";
        view.variants = list
            .iter()
            .enumerate()
            .map(|(n, branch)| Variant {
                title: variant_title(branch, n),
                ty: expr(branch, prefix),
                doc: doc(branch),
                fields: fields(branch, prefix),
            })
            .collect();
        return view;
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        view.kind = "enum";
        view.values = values
            .iter()
            .map(|v| EnumValue {
                value: v.to_string(),
                doc: String::new(),
            })
            .collect();
        return view;
    }
    view.alias = expr(schema, prefix);
    view
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn flat(parts: &[Part]) -> String {
        parts.iter().map(|p| p.text.as_str()).collect()
    }

    #[test]
    fn expressions_link_refs_and_show_nullability() {
        let schema = json!({"anyOf": [{"$ref": "#/definitions/Turn"}, {"type": "null"}]});
        let parts = expr(&schema, "../types/");
        assert_eq!(flat(&parts), "Turn | null");
        assert_eq!(parts[0].href, "../types/Turn.html");
        assert!(nullable(&schema));
        let list =
            json!({"type": ["array", "null"], "items": {"type": "integer", "format": "uint32"}});
        assert_eq!(flat(&expr(&list, "")), "array<integer (uint32)> | null");
        assert!(!nullable(&json!({"type": "string"})));
        assert!(nullable(&json!({"description": "anything"})));
    }

    #[test]
    fn views_classify_objects_enums_and_unions() {
        let object = json!({"properties": {"a": {"type": "string"}, "b": {"type": ["string", "null"]}}, "required": ["a"]});
        let v = view(&object, "");
        assert_eq!(v.kind, "object");
        assert!(v.fields[0].required && !v.fields[0].nullable);
        assert!(!v.fields[1].required && v.fields[1].nullable);
        let values = view(
            &json!({"oneOf": [{"const": "x", "description": "X"}, {"enum": ["y"]}]}),
            "",
        );
        assert_eq!(v.fields.len(), 2);
        assert_eq!(values.kind, "enum");
        assert_eq!(values.values[0].value, "\"x\"");
        assert_eq!(values.values[0].doc, "X");
        let union = view(
            &json!({"oneOf": [{"$ref": "#/definitions/A"}, {"type": "string"}]}),
            "",
        );
        assert_eq!(union.kind, "union");
        assert_eq!(union.variants.len(), 2);
        assert_eq!(union.variants[1].title, "#2");
        let tagged = view(
            &json!({"oneOf": [{"properties": {"text": {"type": "string"}, "type": {"const": "text"}}}]}),
            "",
        );
        assert_eq!(tagged.variants[0].title, "type = \"text\"");
    }
}
