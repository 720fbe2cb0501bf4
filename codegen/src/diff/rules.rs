//! The kinds of change the classifier knows, and how severe each one is where it happens.
//!
//! Severity depends on which way the changed data travels. Data the client sends (*input*) may
//! become more permissive but not stricter; data the server sends (*output*) may become stricter
//! but not more permissive, because a client written against the old schema has to keep
//! understanding it. Removals, enum values and union variants are the exception: removing one is
//! breaking either way, adding one is compatible either way. Clients must therefore tolerate enum
//! values and union variants they do not know.

use std::fmt;

use super::report::Severity;

/// Which way the data at a compared location travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Position {
    /// Data the client sends: client-request params, server-request results and
    /// client-notification params.
    Input,
    /// Data the server sends: client-request results, server-request params and
    /// server-notification params.
    Output,
    /// Data whose direction the bundle does not state (definitions of the `mcp` namespace): a
    /// change is breaking when it would be breaking in either direction.
    Either,
}

/// The kind of a change between two bundles. [`Rule::name`] is its stable kebab-case name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rule {
    /// A method (matched by name and direction) is gone. Breaking.
    MethodRemoved,
    /// A new method. Compatible.
    MethodAdded,
    /// A stable method became experimental. Breaking.
    MethodMadeExperimental,
    /// An experimental method became stable. Compatible.
    MethodMadeStable,
    /// A method kept its name but is now sent the other way (or became a notification). Breaking.
    MethodDirectionChanged,
    /// A method without params now has params. Breaking in input, compatible in output.
    ParamsAdded,
    /// A method with params has none any more. Breaking.
    ParamsRemoved,
    /// An object member is gone. Breaking.
    FieldRemoved,
    /// A new member that may be left out. Compatible.
    OptionalFieldAdded,
    /// A new member that must be present. Breaking in input, compatible in output.
    RequiredFieldAdded,
    /// A member that could be left out must now be present (also used for the envelope's
    /// `params` member). Breaking in input, compatible in output.
    OptionalFieldMadeRequired,
    /// A member that had to be present may now be left out. Compatible in input, breaking in
    /// output.
    RequiredFieldMadeOptional,
    /// A stable member is now marked `x-experimental`. Breaking.
    FieldMadeExperimental,
    /// A member lost its `x-experimental` mark. Compatible.
    FieldMadeStable,
    /// `null` is now allowed. Compatible in input, breaking in output.
    NullableAdded,
    /// `null` is no longer allowed. Breaking in input, compatible in output.
    NullableRemoved,
    /// An enum (or `const`) value is gone. Breaking.
    EnumValueRemoved,
    /// A new enum value. Compatible: clients must tolerate enum values they do not know.
    EnumValueAdded,
    /// A union branch (identified by its tag, its single property or its type) is gone. Breaking.
    VariantRemoved,
    /// A new union branch. Compatible: clients must tolerate variants they do not know.
    VariantAdded,
    /// The type changed to one that neither contains nor is contained in the old one (string to
    /// integer, object to array, a list to a tuple, ...). Breaking.
    TypeChanged,
    /// The new type accepts everything the old one did and more (integer to number, an enum to
    /// its string type, a single type to several). Compatible in input, breaking in output.
    TypeWidened,
    /// The new type accepts a subset of what the old one did. Breaking in input, compatible in
    /// output.
    TypeNarrowed,
    /// An object that allowed members beyond its declared ones now forbids them
    /// (`additionalProperties: false`). Breaking in input, compatible in output.
    AdditionalPropertiesForbidden,
    /// An object that forbade undeclared members now allows them. Compatible.
    AdditionalPropertiesAllowed,
    /// A definition of a namespace without methods (`mcp`) is gone. Breaking.
    DefinitionRemoved,
    /// A new definition in a namespace without methods (`mcp`). Compatible.
    DefinitionAdded,
}

impl Rule {
    /// Every rule, in declaration order.
    pub const ALL: [Rule; 27] = [
        Rule::MethodRemoved,
        Rule::MethodAdded,
        Rule::MethodMadeExperimental,
        Rule::MethodMadeStable,
        Rule::MethodDirectionChanged,
        Rule::ParamsAdded,
        Rule::ParamsRemoved,
        Rule::FieldRemoved,
        Rule::OptionalFieldAdded,
        Rule::RequiredFieldAdded,
        Rule::OptionalFieldMadeRequired,
        Rule::RequiredFieldMadeOptional,
        Rule::FieldMadeExperimental,
        Rule::FieldMadeStable,
        Rule::NullableAdded,
        Rule::NullableRemoved,
        Rule::EnumValueRemoved,
        Rule::EnumValueAdded,
        Rule::VariantRemoved,
        Rule::VariantAdded,
        Rule::TypeChanged,
        Rule::TypeWidened,
        Rule::TypeNarrowed,
        Rule::AdditionalPropertiesForbidden,
        Rule::AdditionalPropertiesAllowed,
        Rule::DefinitionRemoved,
        Rule::DefinitionAdded,
    ];

    /// The rule's stable kebab-case name, as printed in reports and JSON output.
    pub fn name(&self) -> &'static str {
        match self {
            Rule::MethodRemoved => "method-removed",
            Rule::MethodAdded => "method-added",
            Rule::MethodMadeExperimental => "method-made-experimental",
            Rule::MethodMadeStable => "method-made-stable",
            Rule::MethodDirectionChanged => "method-direction-changed",
            Rule::ParamsAdded => "params-added",
            Rule::ParamsRemoved => "params-removed",
            Rule::FieldRemoved => "field-removed",
            Rule::OptionalFieldAdded => "optional-field-added",
            Rule::RequiredFieldAdded => "required-field-added",
            Rule::OptionalFieldMadeRequired => "optional-field-made-required",
            Rule::RequiredFieldMadeOptional => "required-field-made-optional",
            Rule::FieldMadeExperimental => "field-made-experimental",
            Rule::FieldMadeStable => "field-made-stable",
            Rule::NullableAdded => "nullable-added",
            Rule::NullableRemoved => "nullable-removed",
            Rule::EnumValueRemoved => "enum-value-removed",
            Rule::EnumValueAdded => "enum-value-added",
            Rule::VariantRemoved => "variant-removed",
            Rule::VariantAdded => "variant-added",
            Rule::TypeChanged => "type-changed",
            Rule::TypeWidened => "type-widened",
            Rule::TypeNarrowed => "type-narrowed",
            Rule::AdditionalPropertiesForbidden => "additional-properties-forbidden",
            Rule::AdditionalPropertiesAllowed => "additional-properties-allowed",
            Rule::DefinitionRemoved => "definition-removed",
            Rule::DefinitionAdded => "definition-added",
        }
    }

    /// The rule called `name` (as returned by [`Rule::name`]), if there is one.
    pub fn from_name(name: &str) -> Option<Rule> {
        Rule::ALL.into_iter().find(|rule| rule.name() == name)
    }

    /// How severe the change is in input position (data the client sends) and in output
    /// position (data the server sends), for a surface that carries a compatibility guarantee.
    pub fn severities(&self) -> (Severity, Severity) {
        use Severity::{Breaking as B, Compatible as C};
        match self {
            Rule::MethodRemoved
            | Rule::MethodMadeExperimental
            | Rule::MethodDirectionChanged
            | Rule::ParamsRemoved
            | Rule::FieldRemoved
            | Rule::FieldMadeExperimental
            | Rule::EnumValueRemoved
            | Rule::VariantRemoved
            | Rule::TypeChanged
            | Rule::DefinitionRemoved => (B, B),
            Rule::MethodAdded
            | Rule::MethodMadeStable
            | Rule::OptionalFieldAdded
            | Rule::FieldMadeStable
            | Rule::EnumValueAdded
            | Rule::VariantAdded
            | Rule::AdditionalPropertiesAllowed
            | Rule::DefinitionAdded => (C, C),
            Rule::ParamsAdded
            | Rule::RequiredFieldAdded
            | Rule::OptionalFieldMadeRequired
            | Rule::NullableRemoved
            | Rule::TypeNarrowed
            | Rule::AdditionalPropertiesForbidden => (B, C),
            Rule::RequiredFieldMadeOptional | Rule::NullableAdded | Rule::TypeWidened => (C, B),
        }
    }

    /// How severe the change is at `position`.
    pub(super) fn severity_at(self, position: Position) -> Severity {
        let (input, output) = self.severities();
        match position {
            Position::Input => input,
            Position::Output => output,
            Position::Either if input == Severity::Breaking || output == Severity::Breaking => {
                Severity::Breaking
            }
            Position::Either => Severity::Compatible,
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
