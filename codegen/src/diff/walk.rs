//! The structural comparison of two schemas, position by position.
//!
//! The walker compares an old and a new schema at one location (a method's params or response,
//! or a namespace definition), follows `$ref`s on both sides, and records a [`Change`] for every
//! difference, with the severity its [`Rule`] has in the location's [`Position`]. A pair of
//! schemas that is already being compared further up is assumed equal, which stops recursive
//! types. Pairs found equal are remembered, so shared types are walked once per position.

use std::collections::{BTreeSet, HashSet};

use super::bundle::{Bundle, Sub, escape};
use super::error::DiffError;
use super::report::{Change, Severity};
use super::rules::{Position, Rule};
use super::shape::{
    Additional, ArrayShape, EnumValue, JsonType, Kind, ObjectShape, Shape, UnionShape,
    is_experimental,
};

/// How deeply comparisons may nest (properties, items, branches and `$ref`s together).
pub(super) const MAX_DEPTH: usize = 64;

/// Appended to the detail of a change that would be breaking but is on experimental surface.
const NO_GUARANTEE: &str = " (experimental: no compatibility guarantee)";

/// One step of a location path.
#[derive(Debug, Clone)]
pub(super) enum Segment {
    /// A member: `/name`.
    Field(String),
    /// The elements of a list: no text of its own.
    Items,
    /// A position in a tuple: `/0`.
    Index(usize),
    /// The values of a map (`additionalProperties`): `/*`.
    Values,
    /// A union branch: `/oneOf[type=text]`.
    Variant {
        /// `oneOf` or `anyOf`.
        keyword: &'static str,
        /// What identifies the branch.
        key: String,
    },
    /// A part of an `allOf`: `/allOf[0]`.
    AllOf(usize),
}

/// A pair of resolved schemas known to be equivalent in one position.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct EqualPair {
    old: String,
    new: String,
    position: Position,
    guaranteed: bool,
}

/// Compares schemas of an old and a new bundle and collects the changes.
pub(super) struct Walker<'a, 'b> {
    pub(super) old: &'b Bundle<'a>,
    pub(super) new: &'b Bundle<'a>,
    changes: Vec<Change>,
    /// The pairs of resolved schemas being compared, outermost first.
    stack: Vec<(String, String)>,
    /// The lowest index of `stack` that an assumed-equal pair referred to since it was reset.
    lowest_assumed: usize,
    equal: HashSet<EqualPair>,
    depth: usize,
    method: Option<String>,
    label: String,
    position: Position,
    path: Vec<Segment>,
}

impl<'a, 'b> Walker<'a, 'b> {
    pub(super) fn new(old: &'b Bundle<'a>, new: &'b Bundle<'a>) -> Walker<'a, 'b> {
        Walker {
            old,
            new,
            changes: Vec::new(),
            stack: Vec::new(),
            lowest_assumed: usize::MAX,
            equal: HashSet::new(),
            depth: 0,
            method: None,
            label: String::new(),
            position: Position::Input,
            path: Vec::new(),
        }
    }

    /// The changes found so far, in the order found.
    pub(super) fn into_changes(self) -> Vec<Change> {
        self.changes
    }

    /// Starts a new location: `label` (e.g. `thread/start params`) under `method`, whose data
    /// travels in `position`.
    pub(super) fn start(&mut self, method: Option<&str>, label: String, position: Position) {
        self.method = method.map(str::to_owned);
        self.label = label;
        self.position = position;
        self.path.clear();
    }

    /// Records a change at the current location. `guaranteed` is false on experimental surface,
    /// where nothing is breaking.
    pub(super) fn emit(&mut self, rule: Rule, guaranteed: bool, detail: impl Into<String>) {
        let mut detail = detail.into();
        let mut severity = rule.severity_at(self.position);
        if !guaranteed && severity == Severity::Breaking {
            severity = Severity::Compatible;
            detail.push_str(NO_GUARANTEE);
        }
        if matches!(self.path.last(), Some(Segment::Items)) {
            detail = format!("array items: {detail}");
        }
        self.changes.push(Change {
            severity,
            rule,
            method: self.method.clone(),
            location: self.location(),
            detail,
        });
    }

    fn location(&self) -> String {
        let mut location = self.label.clone();
        let mut separated = false;
        for segment in &self.path {
            let text = match segment {
                Segment::Field(name) => format!("/{}", escape(name)),
                Segment::Items => continue,
                Segment::Index(index) => format!("/{index}"),
                Segment::Values => "/*".to_owned(),
                Segment::Variant { keyword, key } => format!("/{keyword}[{key}]"),
                Segment::AllOf(index) => format!("/allOf[{index}]"),
            };
            if !separated {
                location.push(' ');
                separated = true;
            }
            location.push_str(&text);
        }
        location
    }

    /// Runs `f` with `segment` appended to the location path.
    pub(super) fn within<T>(
        &mut self,
        segment: Segment,
        f: impl FnOnce(&mut Self) -> Result<T, DiffError>,
    ) -> Result<T, DiffError> {
        self.path.push(segment);
        let result = f(self);
        self.path.pop();
        result
    }

    /// Compares two schemas of the bundles.
    pub(super) fn compare_subs(
        &mut self,
        old: &Sub<'a>,
        new: &Sub<'a>,
        guaranteed: bool,
    ) -> Result<(), DiffError> {
        let old = self.old.normalize(old)?;
        let new = self.new.normalize(new)?;
        self.compare_shapes(old, new, guaranteed)
    }

    /// Compares two normalized schemas, following `$ref`s.
    pub(super) fn compare_shapes(
        &mut self,
        old: Shape<'a>,
        new: Shape<'a>,
        guaranteed: bool,
    ) -> Result<(), DiffError> {
        if self.depth >= MAX_DEPTH {
            return Err(DiffError::TooDeep {
                location: self.old.at(&old.ptr),
                limit: MAX_DEPTH,
            });
        }
        self.depth += 1;
        let result = self.follow_and_compare(old, new, guaranteed);
        self.depth -= 1;
        result
    }

    fn follow_and_compare(
        &mut self,
        old: Shape<'a>,
        new: Shape<'a>,
        guaranteed: bool,
    ) -> Result<(), DiffError> {
        let follows = matches!(old.kind, Kind::Ref(_)) || matches!(new.kind, Kind::Ref(_));
        let old = self.old.resolve_shape(old)?;
        let new = self.new.resolve_shape(new)?;
        self.compare_nullability(&old, &new, guaranteed);
        if !follows {
            return self.compare_kinds(&old, &new, guaranteed);
        }
        let pair = (old.ptr.clone(), new.ptr.clone());
        if let Some(index) = self.stack.iter().position(|entry| *entry == pair) {
            self.lowest_assumed = self.lowest_assumed.min(index);
            return Ok(());
        }
        let key = EqualPair {
            old: pair.0.clone(),
            new: pair.1.clone(),
            position: self.position,
            guaranteed,
        };
        if self.equal.contains(&key) {
            return Ok(());
        }
        let index = self.stack.len();
        self.stack.push(pair);
        let outer_lowest = std::mem::replace(&mut self.lowest_assumed, usize::MAX);
        let before = self.changes.len();
        let result = self.compare_kinds(&old, &new, guaranteed);
        self.stack.pop();
        // A result that assumed an enclosing pair equal only holds inside that pair.
        let leaned_on_outer = self.lowest_assumed < index;
        self.lowest_assumed = self.lowest_assumed.min(outer_lowest);
        result?;
        if self.changes.len() == before && !leaned_on_outer {
            self.equal.insert(key);
        }
        Ok(())
    }

    fn compare_nullability(&mut self, old: &Shape<'a>, new: &Shape<'a>, guaranteed: bool) {
        match (old.nullable, new.nullable) {
            (false, true) => self.emit(Rule::NullableAdded, guaranteed, "null is now allowed"),
            (true, false) => self.emit(
                Rule::NullableRemoved,
                guaranteed,
                "null is no longer allowed",
            ),
            _ => {}
        }
    }

    /// Compares what non-null values two resolved schemas accept.
    fn compare_kinds(
        &mut self,
        old: &Shape<'a>,
        new: &Shape<'a>,
        guaranteed: bool,
    ) -> Result<(), DiffError> {
        let open = |kind: &Kind<'_>| matches!(kind, Kind::Any | Kind::Nothing);
        let old_union = matches!(old.kind, Kind::Union(_));
        let new_union = matches!(new.kind, Kind::Union(_));
        if (old_union || new_union) && !open(&old.kind) && !open(&new.kind) {
            let keyword = match (&old.kind, &new.kind) {
                (Kind::Union(union), _) | (_, Kind::Union(union)) => union.keyword,
                _ => "oneOf",
            };
            let old_union = as_union(old, keyword);
            let new_union = as_union(new, keyword);
            return self.compare_unions(&old_union, &new_union, guaranteed);
        }
        match (&old.kind, &new.kind) {
            (Kind::Any, Kind::Any) | (Kind::Nothing, Kind::Nothing) => Ok(()),
            (Kind::Types(a), Kind::Types(b)) if a == b => Ok(()),
            (Kind::Enum(a), Kind::Enum(b)) => {
                self.compare_values(a, b, guaranteed);
                Ok(())
            }
            (Kind::Object(a), Kind::Object(b)) => self.compare_objects(a, b, guaranteed),
            (Kind::Array(a), Kind::Array(b)) => self.compare_arrays(a, b, guaranteed),
            (Kind::AllOf(a), Kind::AllOf(b)) if a.len() == b.len() => {
                for (index, (a, b)) in a.iter().zip(b).enumerate() {
                    self.within(Segment::AllOf(index), |w| {
                        w.compare_shapes(a.clone(), b.clone(), guaranteed)
                    })?;
                }
                Ok(())
            }
            _ => {
                self.type_changed(old, new, guaranteed);
                Ok(())
            }
        }
    }

    /// Records a change between kinds that cannot be compared member by member.
    fn type_changed(&mut self, old: &Shape<'a>, new: &Shape<'a>, guaranteed: bool) {
        let (rule, verb) = match relation(&old.kind, &new.kind) {
            Relation::Wider => (Rule::TypeWidened, "widened"),
            Relation::Narrower => (Rule::TypeNarrowed, "narrowed"),
            Relation::Unrelated => (Rule::TypeChanged, "changed"),
            Relation::Same => return,
        };
        let detail = format!("type {verb} from {} to {}", old.describe(), new.describe());
        self.emit(rule, guaranteed, detail);
    }

    /// Reports enum values that disappeared or appeared.
    pub(super) fn compare_values(
        &mut self,
        old: &[EnumValue<'a>],
        new: &[EnumValue<'a>],
        guaranteed: bool,
    ) {
        for value in old {
            if !new.iter().any(|n| n.value == value.value) {
                self.emit(
                    Rule::EnumValueRemoved,
                    guaranteed && !value.experimental,
                    format!("enum value {} removed", value.value),
                );
            }
        }
        for value in new {
            if !old.iter().any(|o| o.value == value.value) {
                self.emit(
                    Rule::EnumValueAdded,
                    guaranteed,
                    format!(
                        "enum value {} added (clients must tolerate enum values they do not know)",
                        value.value
                    ),
                );
            }
        }
    }

    fn compare_objects(
        &mut self,
        old: &ObjectShape<'a>,
        new: &ObjectShape<'a>,
        guaranteed: bool,
    ) -> Result<(), DiffError> {
        let names: BTreeSet<&str> = old
            .properties
            .keys()
            .chain(new.properties.keys())
            .copied()
            .collect();
        for name in names {
            let old_required = old.required.contains(name);
            let new_required = new.required.contains(name);
            let old_field = old.properties.get(name);
            let new_field = new.properties.get(name);
            self.within(Segment::Field(name.to_owned()), |w| {
                w.compare_field(
                    (old_field, old_required),
                    (new_field, new_required),
                    guaranteed,
                )
            })?;
        }
        match (&old.additional, &new.additional) {
            (Additional::Forbidden, Additional::Forbidden) => {}
            (Additional::Forbidden, Additional::Allowed(_)) => self.emit(
                Rule::AdditionalPropertiesAllowed,
                guaranteed,
                "undeclared members are now allowed",
            ),
            (Additional::Allowed(_), Additional::Forbidden) => self.emit(
                Rule::AdditionalPropertiesForbidden,
                guaranteed,
                "undeclared members are now forbidden (additionalProperties: false)",
            ),
            (Additional::Allowed(a), Additional::Allowed(b)) => {
                self.within(Segment::Values, |w| w.compare_subs(a, b, guaranteed))?;
            }
        }
        match (&old.union, &new.union) {
            (Some(a), Some(b)) => self.compare_unions(a, b, guaranteed)?,
            (None, Some(b)) => self.emit(
                Rule::TypeNarrowed,
                guaranteed,
                format!(
                    "the object must now also match one of {} {} alternatives",
                    b.branches.len() + b.values.len(),
                    b.keyword
                ),
            ),
            (Some(a), None) => self.emit(
                Rule::TypeWidened,
                guaranteed,
                format!(
                    "the object no longer has to match one of {} {} alternatives",
                    a.branches.len() + a.values.len(),
                    a.keyword
                ),
            ),
            (None, None) => {}
        }
        Ok(())
    }

    /// Compares one member; the location path already ends with it.
    fn compare_field(
        &mut self,
        (old, old_required): (Option<&Sub<'a>>, bool),
        (new, new_required): (Option<&Sub<'a>>, bool),
        guaranteed: bool,
    ) -> Result<(), DiffError> {
        let requiredness = |required: bool| if required { "required" } else { "optional" };
        match (old, new) {
            (Some(old), None) => {
                let guaranteed = guaranteed && !is_experimental(old.value);
                self.emit(
                    Rule::FieldRemoved,
                    guaranteed,
                    format!("{} field removed", requiredness(old_required)),
                );
            }
            (None, Some(_)) if new_required => {
                self.emit(Rule::RequiredFieldAdded, guaranteed, "required field added");
            }
            (None, Some(_)) => {
                self.emit(Rule::OptionalFieldAdded, guaranteed, "optional field added");
            }
            (Some(old), Some(new)) => {
                let old_experimental = is_experimental(old.value);
                match (old_experimental, is_experimental(new.value)) {
                    (false, true) => self.emit(
                        Rule::FieldMadeExperimental,
                        guaranteed,
                        "field is now experimental",
                    ),
                    (true, false) => self.emit(
                        Rule::FieldMadeStable,
                        guaranteed,
                        "field is no longer experimental",
                    ),
                    _ => {}
                }
                let guaranteed = guaranteed && !old_experimental;
                match (old_required, new_required) {
                    (false, true) => self.emit(
                        Rule::OptionalFieldMadeRequired,
                        guaranteed,
                        "optional field is now required",
                    ),
                    (true, false) => self.emit(
                        Rule::RequiredFieldMadeOptional,
                        guaranteed,
                        "required field is now optional",
                    ),
                    _ => {}
                }
                self.compare_subs(old, new, guaranteed)?;
            }
            (None, None) => {}
        }
        Ok(())
    }

    fn compare_arrays(
        &mut self,
        old: &ArrayShape<'a>,
        new: &ArrayShape<'a>,
        guaranteed: bool,
    ) -> Result<(), DiffError> {
        match (old, new) {
            (ArrayShape::List(a), ArrayShape::List(b)) => {
                self.within(Segment::Items, |w| w.compare_subs(a, b, guaranteed))
            }
            (ArrayShape::Tuple(a), ArrayShape::Tuple(b)) if a.len() == b.len() => {
                for (index, (a, b)) in a.iter().zip(b).enumerate() {
                    self.within(Segment::Index(index), |w| w.compare_subs(a, b, guaranteed))?;
                }
                Ok(())
            }
            (ArrayShape::Tuple(a), ArrayShape::Tuple(b)) => {
                self.emit(
                    Rule::TypeChanged,
                    guaranteed,
                    format!(
                        "type changed from a tuple of {} to a tuple of {}",
                        a.len(),
                        b.len()
                    ),
                );
                Ok(())
            }
            (ArrayShape::List(_), ArrayShape::Tuple(b)) => {
                self.emit(
                    Rule::TypeChanged,
                    guaranteed,
                    format!("type changed from a list to a tuple of {}", b.len()),
                );
                Ok(())
            }
            (ArrayShape::Tuple(a), ArrayShape::List(_)) => {
                self.emit(
                    Rule::TypeChanged,
                    guaranteed,
                    format!("type changed from a tuple of {} to a list", a.len()),
                );
                Ok(())
            }
        }
    }
}

/// A schema as a union: itself if it is one, else a union of one alternative.
fn as_union<'a>(shape: &Shape<'a>, keyword: &'static str) -> UnionShape<'a> {
    match &shape.kind {
        Kind::Union(union) => union.clone(),
        Kind::Enum(values) => UnionShape {
            keyword,
            values: values.clone(),
            branches: Vec::new(),
        },
        _ => {
            let mut branch = shape.clone();
            branch.nullable = false;
            UnionShape {
                keyword,
                values: Vec::new(),
                branches: vec![branch],
            }
        }
    }
}

/// How the values a new schema accepts relate to those of the old one.
enum Relation {
    /// The new schema accepts everything the old one did, and more.
    Wider,
    /// The new schema accepts a subset of what the old one did.
    Narrower,
    /// Neither.
    Unrelated,
    /// The same values, spelled differently (`integer or number` and `number`).
    Same,
}

fn relation(old: &Kind<'_>, new: &Kind<'_>) -> Relation {
    match (old, new) {
        (_, Kind::Any) | (Kind::Nothing, _) => Relation::Wider,
        (Kind::Any, _) | (_, Kind::Nothing) => Relation::Narrower,
        _ => match (type_set(old), type_set(new)) {
            (Some(a), Some(b)) => match (types_within(&a, &b), types_within(&b, &a)) {
                // Same types: an enum is the narrower of the two.
                (true, true) if matches!(old, Kind::Enum(_)) => Relation::Wider,
                (true, true) if matches!(new, Kind::Enum(_)) => Relation::Narrower,
                (true, true) => Relation::Same,
                (true, false) => Relation::Wider,
                (false, true) => Relation::Narrower,
                (false, false) => Relation::Unrelated,
            },
            _ => Relation::Unrelated,
        },
    }
}

fn types_within(inner: &BTreeSet<JsonType>, outer: &BTreeSet<JsonType>) -> bool {
    inner
        .iter()
        .all(|t| outer.iter().any(|allowed| allowed.covers(*t)))
}

/// The JSON types a kind's values can have, where that is all there is to know.
fn type_set(kind: &Kind<'_>) -> Option<BTreeSet<JsonType>> {
    match kind {
        Kind::Types(types) => Some(types.clone()),
        Kind::Enum(values) => Some(
            values
                .iter()
                .filter_map(|v| JsonType::of(v.value))
                .collect(),
        ),
        Kind::Object(_) => Some(BTreeSet::from([JsonType::Object])),
        Kind::Array(_) => Some(BTreeSet::from([JsonType::Array])),
        _ => None,
    }
}
