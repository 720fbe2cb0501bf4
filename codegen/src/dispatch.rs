//! The Rust the runtime includes: the `Handler` trait, the dispatch functions and the schema ids
//! its validators are compiled from.

use agentwire_protocol::Direction;
use askama::Template;

use crate::schema::Collected;
use crate::{CodegenError, generated_notice};

/// File name of the dispatch table, under `generated/rust/`.
pub const DISPATCH_FILE: &str = "dispatch.rs";
/// File name of the validator ids, under `generated/rust/`.
pub const VALIDATORS_FILE: &str = "validators.rs";

struct HandlerMethod {
    name: &'static str,
    function: String,
    doc: String,
    experimental: bool,
    params: String,
    response: String,
}

#[derive(Template)]
#[template(path = "dispatch.rs.txt", escape = "none")]
struct DispatchTemplate {
    notice: String,
    requests: Vec<HandlerMethod>,
    notifications: Vec<HandlerMethod>,
}

#[derive(Template)]
#[template(path = "validators.rs.txt", escape = "none")]
struct ValidatorsTemplate {
    notice: String,
    params: Vec<(&'static str, String, bool)>,
}

/// Renders `dispatch.rs` from the experimental collection (the runtime serves every method and
/// gates experimental ones per connection).
pub fn dispatch_source(collected: &Collected) -> Result<String, CodegenError> {
    let method = |m: &crate::schema::MethodEntry| HandlerMethod {
        name: m.name,
        function: snake_case(&m.marker),
        doc: m.doc.replace('\n', "\n    /// "),
        experimental: m.experimental,
        params: match (&m.params, m.params_optional) {
            (Some(p), true) => format!("Option<{p}>"),
            (Some(p), false) => p.clone(),
            (None, _) => "NoParams".to_owned(),
        },
        response: m.response.clone().unwrap_or_default(),
    };
    let template = DispatchTemplate {
        notice: generated_notice(),
        requests: collected
            .methods
            .iter()
            .filter(|m| m.direction == Direction::ClientRequest)
            .map(method)
            .collect(),
        notifications: collected
            .methods
            .iter()
            .filter(|m| m.direction == Direction::ClientNotification)
            .map(method)
            .collect(),
    };
    template.render().map_err(|source| CodegenError::Template {
        template: "dispatch.rs.txt",
        source,
    })
}

/// Renders `validators.rs` from the experimental collection.
pub fn validators_source(collected: &Collected) -> Result<String, CodegenError> {
    let template = ValidatorsTemplate {
        notice: generated_notice(),
        params: collected
            .methods
            .iter()
            .filter_map(|m| {
                Some((
                    m.name,
                    format!("{}.json", m.params.as_ref()?),
                    m.params_optional,
                ))
            })
            .collect(),
    };
    template.render().map_err(|source| CodegenError::Template {
        template: "validators.rs.txt",
        source,
    })
}

/// `ThreadStart` → `thread_start`.
pub fn snake_case(marker: &str) -> String {
    let mut out = String::with_capacity(marker.len() + 4);
    for (i, c) in marker.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::snake_case;

    #[test]
    fn marker_names_become_snake_case_functions() {
        assert_eq!(snake_case("ThreadStart"), "thread_start");
        assert_eq!(snake_case("Initialize"), "initialize");
        assert_eq!(
            snake_case("FuzzyFileSearchSessionStart"),
            "fuzzy_file_search_session_start"
        );
    }
}
