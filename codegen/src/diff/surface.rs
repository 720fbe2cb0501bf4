//! The top level of a diff: methods matched by name and direction, then the definitions of the
//! namespaces that have no methods.

use std::collections::{BTreeMap, BTreeSet};

use super::bundle::{Direction, MethodDecl, NAMESPACES, Sub};
use super::error::DiffError;
use super::rules::{Position, Rule};
use super::shape::is_experimental;
use super::walk::Walker;

/// A method's identity: `x-method` and `x-direction`.
type MethodKey = (String, Direction);

impl<'a> Walker<'a, '_> {
    /// Compares every method of the two bundles.
    pub(super) fn compare_methods(&mut self) -> Result<(), DiffError> {
        let old_methods = &self.old.methods;
        let new_methods = &self.new.methods;
        // A name that lost one direction and gained another changed direction.
        let mut gained: Vec<&MethodKey> = new_methods
            .keys()
            .filter(|key| !old_methods.contains_key(*key))
            .collect();
        let mut redirected: BTreeMap<MethodKey, Direction> = BTreeMap::new();
        for key in old_methods
            .keys()
            .filter(|key| !new_methods.contains_key(*key))
        {
            if let Some(index) = gained.iter().position(|new_key| new_key.0 == key.0) {
                let new_key = gained.remove(index);
                redirected.insert(key.clone(), new_key.1);
            }
        }
        let redirect_targets: BTreeSet<MethodKey> = redirected
            .iter()
            .map(|(key, direction)| (key.0.clone(), *direction))
            .collect();
        let keys: BTreeSet<&MethodKey> = old_methods.keys().chain(new_methods.keys()).collect();
        for key in keys {
            let (name, direction) = key;
            match (old_methods.get(key), new_methods.get(key)) {
                (Some(old), Some(new)) => self.compare_method(name, *direction, old, new)?,
                (Some(old), None) => {
                    self.start(Some(name), name.clone(), Position::Either);
                    match redirected.get(key) {
                        Some(now) => self.emit(
                            Rule::MethodDirectionChanged,
                            !old.experimental,
                            format!("was a {direction}, is now a {now}"),
                        ),
                        None => self.emit(
                            Rule::MethodRemoved,
                            !old.experimental,
                            format!("{} removed", describe(*direction, old.experimental)),
                        ),
                    }
                }
                (None, Some(new)) if !redirect_targets.contains(key) => {
                    self.start(Some(name), name.clone(), Position::Either);
                    self.emit(
                        Rule::MethodAdded,
                        true,
                        format!("{} added", describe(*direction, new.experimental)),
                    );
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn compare_method(
        &mut self,
        name: &str,
        direction: Direction,
        old: &MethodDecl<'a>,
        new: &MethodDecl<'a>,
    ) -> Result<(), DiffError> {
        let guaranteed = !old.experimental;
        self.start(Some(name), name.to_owned(), Position::Either);
        match (old.experimental, new.experimental) {
            (false, true) => self.emit(
                Rule::MethodMadeExperimental,
                guaranteed,
                format!("the {direction} is now experimental"),
            ),
            (true, false) => self.emit(
                Rule::MethodMadeStable,
                guaranteed,
                format!("the {direction} is no longer experimental"),
            ),
            _ => {}
        }

        self.start(
            Some(name),
            format!("{name} params"),
            direction.params_position(),
        );
        match (&old.params, &new.params) {
            (Some(old_params), Some(new_params)) => {
                match (old.params_required, new.params_required) {
                    (false, true) => self.emit(
                        Rule::OptionalFieldMadeRequired,
                        guaranteed,
                        "params are now required",
                    ),
                    (true, false) => self.emit(
                        Rule::RequiredFieldMadeOptional,
                        guaranteed,
                        "params are now optional",
                    ),
                    _ => {}
                }
                self.compare_subs(old_params, new_params, guaranteed)?;
            }
            (Some(_), None) => self.emit(Rule::ParamsRemoved, guaranteed, "params removed"),
            (None, Some(_)) if new.params_required => {
                self.emit(Rule::ParamsAdded, guaranteed, "required params added");
            }
            (None, Some(_)) => {
                self.emit(
                    Rule::OptionalFieldAdded,
                    guaranteed,
                    "optional params added",
                );
            }
            (None, None) => {}
        }

        if let (Some(old_result), Some(new_result)) = (&old.response, &new.response) {
            self.start(
                Some(name),
                format!("{name} response"),
                direction.response_position(),
            );
            self.compare_subs(old_result, new_result, guaranteed)?;
        }
        Ok(())
    }

    /// Compares the definitions of each namespace without methods, name by name. Their
    /// direction is unknown, so a change is breaking when it would be in either direction.
    pub(super) fn compare_namespaces(&mut self) -> Result<(), DiffError> {
        let empty = BTreeMap::new();
        for namespace in NAMESPACES {
            let old_defs = self.old.namespaces.get(namespace).unwrap_or(&empty);
            let new_defs = self.new.namespaces.get(namespace).unwrap_or(&empty);
            let names: BTreeSet<&str> = old_defs.keys().chain(new_defs.keys()).copied().collect();
            for name in names {
                let old: Option<&Sub<'a>> = old_defs.get(name);
                let new: Option<&Sub<'a>> = new_defs.get(name);
                self.start(None, format!("{namespace} {name}"), Position::Either);
                match (old, new) {
                    (Some(old), Some(new)) => {
                        self.compare_subs(old, new, !is_experimental(old.value))?;
                    }
                    (Some(old), None) => self.emit(
                        Rule::DefinitionRemoved,
                        !is_experimental(old.value),
                        format!("definition removed from the `{namespace}` namespace"),
                    ),
                    (None, Some(_)) => self.emit(
                        Rule::DefinitionAdded,
                        true,
                        format!("definition added to the `{namespace}` namespace"),
                    ),
                    (None, None) => {}
                }
            }
        }
        Ok(())
    }
}

/// `client request` or `experimental client request`.
fn describe(direction: Direction, experimental: bool) -> String {
    if experimental {
        format!("experimental {direction}")
    } else {
        direction.to_string()
    }
}
