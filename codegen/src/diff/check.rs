//! Up-front validation of a bundle: every schema under `definitions` must be well-formed and
//! every `$ref` must resolve, whether or not the comparison reaches it, so that a broken bundle
//! is reported the same way whatever changed.

use serde_json::Value;

use super::bundle::{Bundle, NAMESPACES, Sub, escape};
use super::error::DiffError;
use super::shape::MAX_NESTING;

/// Keywords whose value is one schema.
const SCHEMA_KEYWORDS: [&str; 6] = [
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "propertyNames",
];

/// Keywords whose value is an array of schemas.
const SCHEMA_LIST_KEYWORDS: [&str; 3] = ["allOf", "anyOf", "oneOf"];

impl<'a> Bundle<'a> {
    /// Checks every definition (and every definition of a namespace).
    pub(super) fn check(
        &self,
        definitions: &'a serde_json::Map<String, Value>,
    ) -> Result<(), DiffError> {
        for (name, schema) in definitions {
            let sub = Sub {
                value: schema,
                ptr: format!("#/definitions/{}", escape(name)),
            };
            if NAMESPACES.contains(&name.as_str()) {
                // A namespace is an object of definitions, not a schema.
                if let Value::Object(members) = schema {
                    for (member, member_schema) in members {
                        self.check_schema(&sub.child(member_schema, member), 0)?;
                    }
                    continue;
                }
            }
            self.check_schema(&sub, 0)?;
        }
        Ok(())
    }

    fn check_schema(&self, sub: &Sub<'a>, nesting: usize) -> Result<(), DiffError> {
        if nesting > MAX_NESTING {
            return Err(DiffError::TooDeep {
                location: self.at(&sub.ptr),
                limit: MAX_NESTING,
            });
        }
        // Normalizing checks the keywords of this schema; resolving checks its `$ref`.
        let shape = self.normalize(sub)?;
        self.resolve_shape(shape)?;
        let Value::Object(map) = sub.value else {
            return Ok(());
        };
        if map.contains_key("$ref") {
            // Siblings of `$ref` are ignored in draft-07.
            return Ok(());
        }
        let nested = nesting + 1;
        for keyword in SCHEMA_KEYWORDS {
            if let Some(child) = map.get(keyword) {
                self.check_schema(&sub.child(child, keyword), nested)?;
            }
        }
        for keyword in SCHEMA_LIST_KEYWORDS {
            match map.get(keyword) {
                None => {}
                Some(Value::Array(items)) => {
                    for (index, item) in items.iter().enumerate() {
                        self.check_schema(
                            &sub.grandchild(item, keyword, &index.to_string()),
                            nested,
                        )?;
                    }
                }
                Some(other) => {
                    return Err(self.malformed(
                        &format!("{}/{keyword}", sub.ptr),
                        "an array of schemas",
                        other,
                    ));
                }
            }
        }
        match map.get("items") {
            None => {}
            Some(Value::Array(items)) => {
                for (index, item) in items.iter().enumerate() {
                    self.check_schema(&sub.grandchild(item, "items", &index.to_string()), nested)?;
                }
            }
            Some(schema) => self.check_schema(&sub.child(schema, "items"), nested)?,
        }
        for keyword in ["properties", "patternProperties"] {
            match map.get(keyword) {
                None => {}
                Some(Value::Object(members)) => {
                    for (name, schema) in members {
                        self.check_schema(&sub.grandchild(schema, keyword, name), nested)?;
                    }
                }
                Some(other) => {
                    return Err(self.malformed(
                        &format!("{}/{keyword}", sub.ptr),
                        "an object of schemas",
                        other,
                    ));
                }
            }
        }
        Ok(())
    }
}
