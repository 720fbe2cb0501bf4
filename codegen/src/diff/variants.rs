//! Unions: matching the branches of an old and a new `oneOf`/`anyOf`.
//!
//! A branch is identified, in this order of preference, by
//! - its tag: a property that every object branch requires with a single constant value
//!   (`type: {const: "text"}`), giving the key `type=text`;
//! - for externally tagged unions, the single required property that is its only member
//!   (`{granular: {...}}`), giving the key `granular`;
//! - otherwise its normalized type (`string`, `object`, `array`, ...). Branches of the same type
//!   are told apart by their `title` when all of them have a distinct one (`object:UrlInput`),
//!   else by order (`object`, `object#2`).
//!
//! Single-value branches (`const`, `enum`) are compared as enum values. A schema that is not a
//! union is compared with one as a union of one branch, so `string` → `oneOf [string, integer]`
//! is an added variant.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::bundle::Bundle;
use super::error::DiffError;
use super::rules::Rule;
use super::shape::{Kind, ObjectShape, Shape, UnionShape};
use super::walk::{Segment, Walker};

impl<'a> Walker<'a, '_> {
    /// Compares two unions branch by branch.
    pub(super) fn compare_unions(
        &mut self,
        old: &UnionShape<'a>,
        new: &UnionShape<'a>,
        guaranteed: bool,
    ) -> Result<(), DiffError> {
        self.compare_values(&old.values, &new.values, guaranteed);
        let (old_keys, new_keys) = self.key_both(&old.branches, &new.branches)?;
        let keyword = old.keyword;
        let mut matched = BTreeSet::new();
        for (branch, key) in old.branches.iter().zip(&old_keys) {
            let segment = Segment::Variant {
                keyword,
                key: key.clone(),
            };
            let guaranteed = guaranteed && !branch.experimental;
            match new_keys.iter().position(|new_key| new_key == key) {
                Some(index) => {
                    matched.insert(index);
                    let Some(new_branch) = new.branches.get(index) else {
                        continue;
                    };
                    self.within(segment, |w| {
                        w.compare_shapes(branch.clone(), new_branch.clone(), guaranteed)
                    })?;
                }
                None => self.within(segment, |w| {
                    w.emit(Rule::VariantRemoved, guaranteed, "variant removed");
                    Ok(())
                })?,
            }
        }
        for (index, key) in new_keys.iter().enumerate() {
            if !matched.contains(&index) {
                let segment = Segment::Variant {
                    keyword,
                    key: key.clone(),
                };
                self.within(segment, |w| {
                    w.emit(
                        Rule::VariantAdded,
                        guaranteed,
                        "variant added (clients must tolerate variants they do not know)",
                    );
                    Ok(())
                })?;
            }
        }
        Ok(())
    }

    /// Keys for the branches of both sides, using the same tag property where both have one.
    fn key_both(
        &self,
        old: &[Shape<'a>],
        new: &[Shape<'a>],
    ) -> Result<(Vec<String>, Vec<String>), DiffError> {
        // The side with more branches tells the tag more reliably; the other side follows it.
        if old.len() >= new.len() {
            let (mut old_keys, old_tag) = key_branches(self.old, old, None)?;
            let (new_keys, new_tag) = key_branches(self.new, new, old_tag.as_deref())?;
            if old_tag.is_none() && new_tag.is_some() {
                old_keys = key_branches(self.old, old, new_tag.as_deref())?.0;
            }
            Ok((old_keys, new_keys))
        } else {
            let (mut new_keys, new_tag) = key_branches(self.new, new, None)?;
            let (old_keys, old_tag) = key_branches(self.old, old, new_tag.as_deref())?;
            if new_tag.is_none() && old_tag.is_some() {
                new_keys = key_branches(self.new, new, old_tag.as_deref())?.0;
            }
            Ok((old_keys, new_keys))
        }
    }
}

/// One key per branch, and the tag property used (if any).
fn key_branches<'a>(
    bundle: &Bundle<'a>,
    branches: &[Shape<'a>],
    preferred_tag: Option<&str>,
) -> Result<(Vec<String>, Option<String>), DiffError> {
    let mut resolved = Vec::with_capacity(branches.len());
    for branch in branches {
        resolved.push(bundle.resolve_shape(branch.clone())?);
    }
    let mut constants: Vec<Option<BTreeMap<&'a str, String>>> = Vec::new();
    for shape in &resolved {
        constants.push(match &shape.kind {
            Kind::Object(object) => Some(tag_constants(bundle, object)?),
            _ => None,
        });
    }
    let tag = choose_tag(&constants, preferred_tag);

    let mut keys = Vec::with_capacity(resolved.len());
    for (shape, constants) in resolved.iter().zip(&constants) {
        let tagged = match (&tag, constants) {
            (Some(tag), Some(constants)) => constants
                .get(tag.as_str())
                .map(|value| format!("{tag}={value}")),
            _ => None,
        };
        let key = tagged.unwrap_or_else(|| match &shape.kind {
            Kind::Object(object) => match external_tag(object) {
                Some(name) => name.to_owned(),
                None => "object".to_owned(),
            },
            other => type_key(other),
        });
        keys.push(key);
    }
    disambiguate(&mut keys, &resolved);
    Ok((keys, tag))
}

/// The required properties of an object whose schema is a single constant, with that constant.
fn tag_constants<'a>(
    bundle: &Bundle<'a>,
    object: &ObjectShape<'a>,
) -> Result<BTreeMap<&'a str, String>, DiffError> {
    let mut constants = BTreeMap::new();
    for name in &object.required {
        let Some(schema) = object.properties.get(name) else {
            continue;
        };
        let shape = bundle.resolve_shape(bundle.normalize(schema)?)?;
        if let (Kind::Enum(values), false) = (&shape.kind, shape.nullable)
            && let [only] = values.as_slice()
        {
            constants.insert(*name, render_constant(only.value));
        }
    }
    Ok(constants)
}

/// The property that every object branch has as a constant, with distinct values; `preferred`
/// when it qualifies, else `type` when it qualifies, else the first by name.
fn choose_tag(
    constants: &[Option<BTreeMap<&str, String>>],
    preferred: Option<&str>,
) -> Option<String> {
    let objects: Vec<&BTreeMap<&str, String>> = constants.iter().flatten().collect();
    let first = objects.first()?;
    let qualifies = |name: &str| {
        let mut seen = BTreeSet::new();
        objects
            .iter()
            .all(|object| object.get(name).is_some_and(|value| seen.insert(value)))
    };
    let candidates: Vec<&str> = first
        .keys()
        .copied()
        .filter(|name| qualifies(name))
        .collect();
    [preferred, Some("type")]
        .into_iter()
        .flatten()
        .find(|name| candidates.contains(name))
        .or_else(|| candidates.first().copied())
        .map(str::to_owned)
}

/// The single member of an object that has exactly one property, which is required.
fn external_tag<'a>(object: &ObjectShape<'a>) -> Option<&'a str> {
    match object.properties.keys().collect::<Vec<_>>().as_slice() {
        [only] if object.required.contains(*only) => Some(only),
        _ => None,
    }
}

/// The key of a branch that is identified by its type.
fn type_key(kind: &Kind<'_>) -> String {
    match kind {
        Kind::Any => "any".to_owned(),
        Kind::Nothing => "null".to_owned(),
        Kind::Ref(reference) => (*reference).to_owned(),
        Kind::Types(types) => types
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("|"),
        Kind::Enum(_) => "enum".to_owned(),
        Kind::Object(_) => "object".to_owned(),
        Kind::Array(_) => "array".to_owned(),
        Kind::Union(union) => union.keyword.to_owned(),
        Kind::AllOf(_) => "allOf".to_owned(),
    }
}

/// Makes repeated keys unique: by title when every branch sharing the key has its own, else
/// by order.
fn disambiguate(keys: &mut [String], shapes: &[Shape<'_>]) {
    let mut groups: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (index, key) in keys.iter().enumerate() {
        groups.entry(key.clone()).or_default().push(index);
    }
    for (key, indices) in groups {
        if indices.len() < 2 {
            continue;
        }
        let titles: Vec<Option<&str>> = indices
            .iter()
            .map(|index| shapes.get(*index).and_then(|shape| shape.title))
            .collect();
        let distinct: BTreeSet<&str> = titles.iter().flatten().copied().collect();
        let by_title = distinct.len() == indices.len();
        for (ordinal, (index, title)) in indices.iter().zip(titles).enumerate() {
            let Some(slot) = keys.get_mut(*index) else {
                continue;
            };
            *slot = match title {
                Some(title) if by_title => format!("{key}:{title}"),
                _ if ordinal == 0 => key.clone(),
                _ => format!("{key}#{}", ordinal + 1),
            };
        }
    }
}

/// A tag value as written in a key: strings bare, anything else as JSON.
fn render_constant(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}
