//! Normalization: a schema reduced to what matters for compatibility.
//!
//! Annotations (`description`, `title`, `default`, `format`, `minimum`, `examples`, `$schema`,
//! `x-*`) are dropped. Equivalent spellings meet: `{allOf: [{$ref}]}` is its `$ref`;
//! `anyOf`/`oneOf` `[X, {type: null}]` and `type: [T, "null"]` are X (or T) made nullable;
//! `const: v` is `enum: [v]`; a `oneOf` of `const`s is an enum. `$ref`s stay unresolved in a
//! [`Shape`] (the walker follows them, so that it can stop at cycles), except inside an `allOf`
//! of several parts, whose object parts are merged into one object.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::{Map, Value};

use super::bundle::{Bundle, Sub};
use super::error::DiffError;

/// The schema `true`: any value. Stands for a missing `items`, `additionalProperties` or
/// property schema.
pub(super) static ANY_SCHEMA: Value = Value::Bool(true);

/// How many `$ref`s one resolution or one `allOf` merge may pass through.
const MAX_REF_CHAIN: usize = 64;

/// How deeply schemas may nest inside one schema being normalized (through `allOf`, `anyOf`,
/// `oneOf` and the `$ref`s of `allOf` parts).
pub(super) const MAX_NESTING: usize = 64;

/// What an ongoing normalization has passed through.
#[derive(Debug, Default)]
pub(super) struct Trail {
    /// The `$ref`s being followed, outermost first.
    refs: Vec<String>,
    /// How many schemas deep the normalization is.
    nesting: usize,
}

/// A JSON type other than `null` (nullability is kept apart, in [`Shape::nullable`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) enum JsonType {
    Boolean,
    Integer,
    Number,
    String,
    Object,
    Array,
}

impl JsonType {
    fn from_name(name: &str) -> Option<Option<JsonType>> {
        Some(Some(match name {
            "boolean" => JsonType::Boolean,
            "integer" => JsonType::Integer,
            "number" => JsonType::Number,
            "string" => JsonType::String,
            "object" => JsonType::Object,
            "array" => JsonType::Array,
            "null" => return Some(None),
            _ => return None,
        }))
    }

    /// The type of a JSON value (`None` for null).
    pub(super) fn of(value: &Value) -> Option<JsonType> {
        match value {
            Value::Null => None,
            Value::Bool(_) => Some(JsonType::Boolean),
            Value::Number(n) if n.is_i64() || n.is_u64() => Some(JsonType::Integer),
            Value::Number(_) => Some(JsonType::Number),
            Value::String(_) => Some(JsonType::String),
            Value::Array(_) => Some(JsonType::Array),
            Value::Object(_) => Some(JsonType::Object),
        }
    }

    /// Whether a value of type `other` is a value of this type (every integer is a number).
    pub(super) fn covers(self, other: JsonType) -> bool {
        self == other || (self == JsonType::Number && other == JsonType::Integer)
    }
}

impl fmt::Display for JsonType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            JsonType::Boolean => "boolean",
            JsonType::Integer => "integer",
            JsonType::Number => "number",
            JsonType::String => "string",
            JsonType::Object => "object",
            JsonType::Array => "array",
        })
    }
}

/// A normalized schema.
#[derive(Debug, Clone)]
pub(super) struct Shape<'a> {
    /// Where the schema is (for a resolved `$ref`: the reference).
    pub(super) ptr: String,
    /// Whether `null` is accepted besides what [`Shape::kind`] says.
    pub(super) nullable: bool,
    /// The `title`, used only to tell untagged union branches of the same type apart.
    pub(super) title: Option<&'a str>,
    /// Whether the schema itself carries `x-experimental: true`.
    pub(super) experimental: bool,
    /// What non-null values are accepted.
    pub(super) kind: Kind<'a>,
}

/// What non-null values a schema accepts.
#[derive(Debug, Clone)]
pub(super) enum Kind<'a> {
    /// Anything (`true`, `{}`, annotations only).
    Any,
    /// No non-null value (`false`, `{type: null}`).
    Nothing,
    /// A `$ref` not yet followed.
    Ref(&'a str),
    /// Any value of these types.
    Types(BTreeSet<JsonType>),
    /// Exactly these values (`enum`, `const`, a `oneOf` of `const`s).
    Enum(Vec<EnumValue<'a>>),
    /// An object.
    Object(ObjectShape<'a>),
    /// An array.
    Array(ArrayShape<'a>),
    /// A `oneOf`/`anyOf` with at least two non-null alternatives.
    Union(UnionShape<'a>),
    /// An `allOf` whose parts are not all objects.
    AllOf(Vec<Shape<'a>>),
}

/// One value of an enum.
#[derive(Debug, Clone, Copy)]
pub(super) struct EnumValue<'a> {
    /// The value.
    pub(super) value: &'a Value,
    /// Whether it came from a `const` branch marked `x-experimental`.
    pub(super) experimental: bool,
}

/// What an object schema says about members.
#[derive(Debug, Clone)]
pub(super) struct ObjectShape<'a> {
    /// Declared members (a name only listed in `required` has the schema `true`).
    pub(super) properties: BTreeMap<&'a str, Sub<'a>>,
    /// Names in `required`.
    pub(super) required: BTreeSet<&'a str>,
    /// What `additionalProperties` says.
    pub(super) additional: Additional<'a>,
    /// A `oneOf`/`anyOf` next to the properties (a variant with alternative member sets).
    pub(super) union: Option<UnionShape<'a>>,
}

/// `additionalProperties`.
#[derive(Debug, Clone)]
pub(super) enum Additional<'a> {
    /// `false`: no undeclared members.
    Forbidden,
    /// Undeclared members whose values match this schema (`true` when absent).
    Allowed(Sub<'a>),
}

/// `items`.
#[derive(Debug, Clone)]
pub(super) enum ArrayShape<'a> {
    /// A list whose elements all match this schema (`true` when absent).
    List(Sub<'a>),
    /// A tuple: one schema per position.
    Tuple(Vec<Sub<'a>>),
}

/// The alternatives of a `oneOf`/`anyOf`, with null taken out.
#[derive(Debug, Clone)]
pub(super) struct UnionShape<'a> {
    /// `oneOf` or `anyOf`, for locations.
    pub(super) keyword: &'static str,
    /// Alternatives that are single values (`const` or `enum` branches).
    pub(super) values: Vec<EnumValue<'a>>,
    /// The other alternatives, `$ref`s unresolved.
    pub(super) branches: Vec<Shape<'a>>,
}

impl<'a> Shape<'a> {
    fn new(ptr: &str, kind: Kind<'a>) -> Shape<'a> {
        Shape {
            ptr: ptr.to_owned(),
            nullable: false,
            title: None,
            experimental: false,
            kind,
        }
    }

    /// A short description of the accepted non-null values, for details (nullability is
    /// reported on its own).
    pub(super) fn describe(&self) -> String {
        match &self.kind {
            Kind::Any => "any value".to_owned(),
            Kind::Nothing if self.nullable => "null".to_owned(),
            Kind::Nothing => "no value".to_owned(),
            Kind::Ref(r) => format!("`{r}`"),
            Kind::Types(types) => types
                .iter()
                .map(JsonType::to_string)
                .collect::<Vec<_>>()
                .join(" or "),
            Kind::Enum(values) => describe_values(values),
            Kind::Object(_) => "object".to_owned(),
            Kind::Array(ArrayShape::List(_)) => "array".to_owned(),
            Kind::Array(ArrayShape::Tuple(items)) => format!("tuple of {}", items.len()),
            Kind::Union(union) => format!(
                "{} of {} alternatives",
                union.keyword,
                union.branches.len() + union.values.len()
            ),
            Kind::AllOf(parts) => format!("allOf of {} schemas", parts.len()),
        }
    }
}

/// `enum ["a", "b"]`, abbreviated after a few values.
fn describe_values(values: &[EnumValue<'_>]) -> String {
    const SHOWN: usize = 4;
    let mut shown: Vec<String> = values
        .iter()
        .take(SHOWN)
        .map(|v| v.value.to_string())
        .collect();
    if values.len() > SHOWN {
        shown.push(format!("... {} more", values.len() - SHOWN));
    }
    format!("enum [{}]", shown.join(", "))
}

/// Whether a schema carries `x-experimental: true`.
pub(super) fn is_experimental(schema: &Value) -> bool {
    schema.get("x-experimental") == Some(&Value::Bool(true))
}

/// Keywords that constrain values (as opposed to annotations), apart from `$ref` and `allOf`.
const STRUCTURAL: [&str; 9] = [
    "type",
    "enum",
    "const",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "oneOf",
    "anyOf",
];

impl<'a> Bundle<'a> {
    /// Normalizes the schema `sub`; `$ref`s stay unresolved.
    pub(super) fn normalize(&self, sub: &Sub<'a>) -> Result<Shape<'a>, DiffError> {
        self.normalize_in(sub, &mut Trail::default())
    }

    /// Follows `$ref`s until the shape is not a reference; nullability and the experimental
    /// mark of the referring schemas carry over.
    pub(super) fn resolve_shape(&self, shape: Shape<'a>) -> Result<Shape<'a>, DiffError> {
        self.resolve_in(shape, &mut Trail::default())
    }

    fn resolve_in(&self, mut shape: Shape<'a>, chain: &mut Trail) -> Result<Shape<'a>, DiffError> {
        let depth = chain.refs.len();
        while let Kind::Ref(reference) = shape.kind {
            if chain.refs.iter().any(|seen| seen == reference) || chain.refs.len() >= MAX_REF_CHAIN
            {
                return Err(DiffError::RefCycle {
                    reference: reference.to_owned(),
                    location: self.at(&shape.ptr),
                });
            }
            chain.refs.push(reference.to_owned());
            let target = self.resolve(reference, &shape.ptr)?;
            let mut next = self.normalize_in(&target, chain)?;
            next.nullable |= shape.nullable;
            next.experimental |= shape.experimental;
            if next.title.is_none() {
                next.title = shape.title;
            }
            shape = next;
        }
        chain.refs.truncate(depth);
        Ok(shape)
    }

    /// `chain` holds the `$ref`s being followed by enclosing `allOf` merges and how deeply
    /// normalization is nested.
    fn normalize_in(&self, sub: &Sub<'a>, chain: &mut Trail) -> Result<Shape<'a>, DiffError> {
        if chain.nesting >= MAX_NESTING {
            return Err(DiffError::TooDeep {
                location: self.at(&sub.ptr),
                limit: MAX_NESTING,
            });
        }
        chain.nesting += 1;
        let result = self.normalize_nested(sub, chain);
        chain.nesting -= 1;
        result
    }

    fn normalize_nested(&self, sub: &Sub<'a>, chain: &mut Trail) -> Result<Shape<'a>, DiffError> {
        let map = match sub.value {
            Value::Bool(true) => {
                let mut any = Shape::new(&sub.ptr, Kind::Any);
                any.nullable = true;
                return Ok(any);
            }
            Value::Bool(false) => return Ok(Shape::new(&sub.ptr, Kind::Nothing)),
            Value::Object(map) => map,
            other => {
                return Err(self.malformed(&sub.ptr, "a schema (a JSON object or boolean)", other));
            }
        };
        let mut shape = if let Some(reference) = map.get("$ref") {
            let Some(reference) = reference.as_str() else {
                return Err(self.malformed(&format!("{}/$ref", sub.ptr), "a string", reference));
            };
            Shape::new(&sub.ptr, Kind::Ref(reference))
        } else if let Some(all_of) = map.get("allOf") {
            self.normalize_all_of(sub, map, all_of, chain)?
        } else {
            self.normalize_plain(sub, map, chain)?
        };
        if let Some(title) = map.get("title").and_then(Value::as_str) {
            shape.title = Some(title);
        }
        shape.experimental |= is_experimental(sub.value);
        Ok(shape)
    }

    fn normalize_all_of(
        &self,
        sub: &Sub<'a>,
        map: &'a Map<String, Value>,
        all_of: &'a Value,
        chain: &mut Trail,
    ) -> Result<Shape<'a>, DiffError> {
        let Some(items) = all_of.as_array() else {
            return Err(self.malformed(
                &format!("{}/allOf", sub.ptr),
                "an array of schemas",
                all_of,
            ));
        };
        let mut parts = Vec::new();
        for (index, item) in items.iter().enumerate() {
            let part = sub.grandchild(item, "allOf", &index.to_string());
            parts.push(self.normalize_in(&part, chain)?);
        }
        if STRUCTURAL.iter().any(|keyword| map.contains_key(*keyword)) {
            parts.push(self.normalize_plain(sub, map, chain)?);
        }
        // `true` parts (annotations only) do not constrain an intersection.
        parts.retain(|part| !matches!(part.kind, Kind::Any));
        if parts.len() <= 1 {
            return Ok(parts.pop().unwrap_or_else(|| {
                let mut any = Shape::new(&sub.ptr, Kind::Any);
                any.nullable = true;
                any
            }));
        }
        let mut resolved = Vec::new();
        for part in &parts {
            resolved.push(self.resolve_in(part.clone(), chain)?);
        }
        let nullable = resolved.iter().all(|part| part.nullable);
        let mut merged: Option<ObjectShape<'a>> = None;
        for part in resolved {
            let Kind::Object(object) = part.kind else {
                let mut shape = Shape::new(&sub.ptr, Kind::AllOf(parts));
                shape.nullable = nullable;
                return Ok(shape);
            };
            merged = Some(match merged {
                None => object,
                Some(mut into) => {
                    for (name, schema) in object.properties {
                        into.properties.entry(name).or_insert(schema);
                    }
                    into.required.extend(object.required);
                    if matches!(object.additional, Additional::Forbidden) {
                        into.additional = Additional::Forbidden;
                    }
                    if into.union.is_none() {
                        into.union = object.union;
                    }
                    into
                }
            });
        }
        let mut shape = Shape::new(
            &sub.ptr,
            match merged {
                Some(object) => Kind::Object(object),
                None => Kind::Any,
            },
        );
        shape.nullable = nullable;
        Ok(shape)
    }

    /// A schema without `$ref` and `allOf`.
    fn normalize_plain(
        &self,
        sub: &Sub<'a>,
        map: &'a Map<String, Value>,
        chain: &mut Trail,
    ) -> Result<Shape<'a>, DiffError> {
        let (types, type_allows_null) = self.read_types(sub, map)?;

        if let Some(values) = self.read_enum(sub, map)? {
            let allows_null = type_allows_null.unwrap_or(true);
            let nullable = allows_null && values.iter().any(|v| v.is_null());
            let mut kept: Vec<EnumValue<'a>> = Vec::new();
            for value in values {
                if !value.is_null() && !kept.iter().any(|k| k.value == value) {
                    kept.push(EnumValue {
                        value,
                        experimental: false,
                    });
                }
            }
            let mut shape = Shape::new(
                &sub.ptr,
                if kept.is_empty() {
                    Kind::Nothing
                } else {
                    Kind::Enum(kept)
                },
            );
            shape.nullable = nullable;
            return Ok(shape);
        }

        let union = match ["oneOf", "anyOf"]
            .into_iter()
            .find_map(|keyword| map.get(keyword).map(|list| (keyword, list)))
        {
            Some((keyword, list)) => Some(self.normalize_union(sub, keyword, list, chain)?),
            None => None,
        };

        let only = |t: JsonType| {
            types
                .as_ref()
                .is_some_and(|set| set.len() == 1 && set.contains(&t))
        };
        let untyped = types.is_none();
        let is_object = only(JsonType::Object)
            || (untyped
                && ["properties", "additionalProperties", "required"]
                    .iter()
                    .any(|keyword| map.contains_key(*keyword)));
        let is_array = only(JsonType::Array) || (untyped && map.contains_key("items"));

        if is_object {
            let object = self.read_object(sub, map, union.map(|(union, _)| union))?;
            let mut shape = Shape::new(&sub.ptr, Kind::Object(object));
            shape.nullable = type_allows_null.unwrap_or(false);
            return Ok(shape);
        }
        if let Some((union, union_nullable)) = union {
            let nullable = union_nullable && type_allows_null.unwrap_or(true);
            let mut shape = match (union.values.is_empty(), union.branches.len()) {
                (true, 0) => Shape::new(&sub.ptr, Kind::Nothing),
                (false, 0) => Shape::new(&sub.ptr, Kind::Enum(union.values)),
                (true, 1) => {
                    let mut branches = union.branches;
                    match branches.pop() {
                        Some(branch) => branch,
                        None => Shape::new(&sub.ptr, Kind::Nothing),
                    }
                }
                _ => Shape::new(&sub.ptr, Kind::Union(union)),
            };
            shape.nullable |= nullable;
            return Ok(shape);
        }
        if is_array {
            let items = self.read_items(sub, map)?;
            let mut shape = Shape::new(&sub.ptr, Kind::Array(items));
            shape.nullable = type_allows_null.unwrap_or(false);
            return Ok(shape);
        }
        let mut shape = match types {
            None => Shape::new(&sub.ptr, Kind::Any),
            Some(set) if set.is_empty() => Shape::new(&sub.ptr, Kind::Nothing),
            Some(set) => Shape::new(&sub.ptr, Kind::Types(set)),
        };
        shape.nullable = type_allows_null.unwrap_or(true);
        Ok(shape)
    }

    /// `type` as a set of non-null types and whether it lists `null` (`None` without `type`).
    fn read_types(
        &self,
        sub: &Sub<'a>,
        map: &'a Map<String, Value>,
    ) -> Result<(Option<BTreeSet<JsonType>>, Option<bool>), DiffError> {
        let Some(type_value) = map.get("type") else {
            return Ok((None, None));
        };
        let bad = || {
            self.malformed(
                &format!("{}/type", sub.ptr),
                "a JSON type name or an array of them",
                type_value,
            )
        };
        let names: Vec<&Value> = match type_value {
            Value::String(_) => vec![type_value],
            Value::Array(items) => items.iter().collect(),
            _ => return Err(bad()),
        };
        let mut types = BTreeSet::new();
        let mut null = false;
        for name in names {
            match name.as_str().and_then(JsonType::from_name) {
                Some(Some(t)) => {
                    types.insert(t);
                }
                Some(None) => null = true,
                None => return Err(bad()),
            }
        }
        Ok((Some(types), Some(null)))
    }

    /// `const` (as a one-value enum) or `enum`.
    fn read_enum(
        &self,
        sub: &Sub<'a>,
        map: &'a Map<String, Value>,
    ) -> Result<Option<Vec<&'a Value>>, DiffError> {
        if let Some(value) = map.get("const") {
            return Ok(Some(vec![value]));
        }
        match map.get("enum") {
            None => Ok(None),
            Some(Value::Array(values)) => Ok(Some(values.iter().collect())),
            Some(other) => {
                Err(self.malformed(&format!("{}/enum", sub.ptr), "an array of values", other))
            }
        }
    }

    /// The alternatives of `oneOf`/`anyOf` and whether one of them is null.
    fn normalize_union(
        &self,
        sub: &Sub<'a>,
        keyword: &'static str,
        list: &'a Value,
        chain: &mut Trail,
    ) -> Result<(UnionShape<'a>, bool), DiffError> {
        let Some(items) = list.as_array() else {
            return Err(self.malformed(
                &format!("{}/{keyword}", sub.ptr),
                "an array of schemas",
                list,
            ));
        };
        let mut union = UnionShape {
            keyword,
            values: Vec::new(),
            branches: Vec::new(),
        };
        let mut nullable = false;
        for (index, item) in items.iter().enumerate() {
            let branch_sub = sub.grandchild(item, keyword, &index.to_string());
            let mut branch = self.normalize_in(&branch_sub, chain)?;
            nullable |= branch.nullable;
            branch.nullable = false;
            match branch.kind {
                Kind::Nothing => {}
                Kind::Enum(values) => union.values.extend(values.into_iter().map(|v| EnumValue {
                    experimental: v.experimental || branch.experimental,
                    ..v
                })),
                _ => union.branches.push(branch),
            }
        }
        Ok((union, nullable))
    }

    fn read_object(
        &self,
        sub: &Sub<'a>,
        map: &'a Map<String, Value>,
        union: Option<UnionShape<'a>>,
    ) -> Result<ObjectShape<'a>, DiffError> {
        let mut properties = BTreeMap::new();
        match map.get("properties") {
            None => {}
            Some(Value::Object(members)) => {
                for (name, schema) in members {
                    properties.insert(name.as_str(), sub.grandchild(schema, "properties", name));
                }
            }
            Some(other) => {
                return Err(self.malformed(
                    &format!("{}/properties", sub.ptr),
                    "an object of property schemas",
                    other,
                ));
            }
        }
        let required: BTreeSet<&'a str> = self.required_names(sub)?.into_iter().collect();
        for name in &required {
            properties
                .entry(*name)
                .or_insert_with(|| sub.child(&ANY_SCHEMA, "required"));
        }
        let additional = match map.get("additionalProperties") {
            Some(Value::Bool(false)) => Additional::Forbidden,
            None => Additional::Allowed(sub.child(&ANY_SCHEMA, "additionalProperties")),
            Some(schema) => Additional::Allowed(sub.child(schema, "additionalProperties")),
        };
        Ok(ObjectShape {
            properties,
            required,
            additional,
            union,
        })
    }

    fn read_items(
        &self,
        sub: &Sub<'a>,
        map: &'a Map<String, Value>,
    ) -> Result<ArrayShape<'a>, DiffError> {
        Ok(match map.get("items") {
            None => ArrayShape::List(sub.child(&ANY_SCHEMA, "items")),
            Some(Value::Array(items)) => ArrayShape::Tuple(
                items
                    .iter()
                    .enumerate()
                    .map(|(index, item)| sub.grandchild(item, "items", &index.to_string()))
                    .collect(),
            ),
            Some(schema) => ArrayShape::List(sub.child(schema, "items")),
        })
    }
}
