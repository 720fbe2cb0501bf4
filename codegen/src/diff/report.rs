//! The result of a diff: one [`Change`] per difference, printable for people and as JSON.

use std::fmt;

use serde_json::{Value, json};

use super::rules::Rule;

/// Whether a change can break a peer written against the old bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    /// A peer built against the old bundle can fail against the new one.
    Breaking,
    /// A peer built against the old bundle keeps working.
    Compatible,
}

impl Severity {
    /// `breaking` or `compatible`, as written in JSON output.
    pub fn name(&self) -> &'static str {
        match self {
            Severity::Breaking => "breaking",
            Severity::Compatible => "compatible",
        }
    }

    /// The label at the start of a report line: `BREAKING` stands out, `compatible` does not.
    fn label(self) -> &'static str {
        match self {
            Severity::Breaking => "BREAKING",
            Severity::Compatible => "compatible",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One difference between the old and the new bundle.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Change {
    /// How severe the change is where it happens.
    pub severity: Severity,
    /// What kind of change it is.
    pub rule: Rule,
    /// The `x-method` of the method the change was found under; `None` for definitions reached
    /// without a method (the `mcp` namespace).
    pub method: Option<String>,
    /// Where: the method, the part (`params` or `response`) and a JSON-pointer-like path, e.g.
    /// `thread/start params /cwd`. Array elements add no segment, map values add `/*`, union
    /// branches add `/oneOf[<key>]` (or `anyOf`), where the key is `tag=value`, the single
    /// property of an externally tagged variant, or the branch's type.
    pub location: String,
    /// What changed, in words.
    pub detail: String,
}

impl Change {
    /// The change as a JSON object: `severity`, `rule`, `method` (or null), `location`, `detail`.
    pub fn to_json(&self) -> Value {
        json!({
            "severity": self.severity.name(),
            "rule": self.rule.name(),
            "method": self.method,
            "location": self.location,
            "detail": self.detail,
        })
    }
}

impl fmt::Display for Change {
    /// `BREAKING  field-removed  thread/start params /cwd: optional field removed`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}  {}  {}: {}",
            self.severity.label(),
            self.rule.name(),
            self.location,
            self.detail
        )
    }
}

/// Every change between two bundles, in a stable order (methods by name and direction, then
/// namespace definitions by name; within one, in schema order), without duplicate entries.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DiffReport {
    /// The changes found.
    pub changes: Vec<Change>,
    /// `x-protocol-version` of the old bundle, when it has one.
    pub old_version: Option<String>,
    /// `x-protocol-version` of the new bundle, when it has one.
    pub new_version: Option<String>,
}

impl DiffReport {
    /// Whether any change is breaking.
    pub fn has_breaking(&self) -> bool {
        self.breaking().next().is_some()
    }

    /// The breaking changes.
    pub fn breaking(&self) -> impl Iterator<Item = &Change> {
        self.changes
            .iter()
            .filter(|change| change.severity == Severity::Breaking)
    }

    /// The compatible changes.
    pub fn compatible(&self) -> impl Iterator<Item = &Change> {
        self.changes
            .iter()
            .filter(|change| change.severity == Severity::Compatible)
    }

    /// Whether the bundles are equivalent (no change at all).
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// The report for `--format json`:
    /// `{"oldVersion", "newVersion", "breaking": N, "compatible": M, "changes": [...]}`, each
    /// change as [`Change::to_json`] writes it.
    pub fn to_json(&self) -> Value {
        json!({
            "oldVersion": self.old_version,
            "newVersion": self.new_version,
            "breaking": self.breaking().count(),
            "compatible": self.compatible().count(),
            "changes": self.changes.iter().map(Change::to_json).collect::<Vec<_>>(),
        })
    }
}

impl fmt::Display for DiffReport {
    /// One line per change, then `N breaking, M compatible changes (OLD -> NEW)`; a bundle
    /// without `x-protocol-version` shows as `unknown`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for change in &self.changes {
            writeln!(f, "{change}")?;
        }
        write!(
            f,
            "{} breaking, {} compatible changes ({} -> {})",
            self.breaking().count(),
            self.compatible().count(),
            self.old_version.as_deref().unwrap_or("unknown"),
            self.new_version.as_deref().unwrap_or("unknown"),
        )
    }
}
