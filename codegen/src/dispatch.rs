//! The Rust the runtime includes: the `Handler` trait, the dispatch functions and the schema ids
//! its validators are compiled from.

use agentwire_protocol::Direction;
use agentwire_protocol::method::Method;
use agentwire_protocol::methods::Initialize;
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
    /// `Unavailable::X` for a method that is refused instead of served: it gets no `Handler`
    /// method, and dispatch answers the refusal once its params decode.
    unavailable: Option<String>,
}

#[derive(Template)]
#[template(path = "dispatch.rs.txt", escape = "none")]
struct DispatchTemplate {
    notice: String,
    requests: Vec<HandlerMethod>,
    notifications: Vec<HandlerMethod>,
    /// Every client request with an ordering member: (wire name, member).
    ordered: Vec<(&'static str, &'static str)>,
    /// Every server request that declares its decline answer: (wire name, response type).
    declines: Vec<(&'static str, String)>,
}

#[derive(Template)]
#[template(path = "validators.rs.txt", escape = "none")]
struct ValidatorsTemplate {
    notice: String,
    params: Vec<(&'static str, String, bool)>,
    experimental: Vec<(&'static str, String)>,
}

/// The handshake request: answered by the runtime itself on every connection (it negotiates
/// the connection's capabilities), so the `Handler` trait has no method for it. The client's
/// `initialized` notification that follows does reach the handler.
const HANDSHAKE: [&str; 1] = [Initialize::NAME];

/// Renders `dispatch.rs` from the experimental collection (the runtime serves every method and
/// gates experimental ones per connection). The handshake is left out: see `HANDSHAKE`.
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
        unavailable: m.unavailable.map(|why| format!("Unavailable::{why:?}")),
    };
    let template = DispatchTemplate {
        notice: generated_notice(),
        requests: collected
            .methods
            .iter()
            .filter(|m| m.direction == Direction::ClientRequest && !HANDSHAKE.contains(&m.name))
            .map(method)
            .collect(),
        notifications: collected
            .methods
            .iter()
            .filter(|m| {
                m.direction == Direction::ClientNotification && !HANDSHAKE.contains(&m.name)
            })
            .map(method)
            .collect(),
        ordered: collected
            .methods
            .iter()
            .filter(|m| m.direction == Direction::ClientRequest)
            .filter_map(|m| Some((m.name, m.ordered_by?)))
            .collect(),
        declines: collected
            .methods
            .iter()
            .filter(|m| m.direction == Direction::ServerRequest && m.declines)
            .filter_map(|m| Some((m.name, m.response.clone()?)))
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
            .filter(|m| client_sent(m.direction))
            .filter_map(|m| {
                Some((
                    m.name,
                    format!("{}.json", m.params.as_ref()?),
                    m.params_optional,
                ))
            })
            .collect(),
        experimental: experimental_params(collected),
    };
    template.render().map_err(|source| CodegenError::Template {
        template: "validators.rs.txt",
        source,
    })
}

/// Every params member marked `x-experimental`, as (method, JSON pointer inside `params`).
///
/// Members are followed through `$ref`s, `allOf`/`anyOf`/`oneOf` branches and nested objects;
/// array items are not descended into (a pointer cannot name "any element").
pub fn experimental_params(collected: &Collected) -> Vec<(&'static str, String)> {
    fn walk(
        definitions: &serde_json::Map<String, serde_json::Value>,
        schema: &serde_json::Value,
        pointer: &str,
        seen: &mut Vec<String>,
        out: &mut Vec<String>,
    ) {
        if let Some(reference) = schema.get("$ref").and_then(serde_json::Value::as_str) {
            let name = reference.rsplit('/').next().unwrap_or(reference).to_owned();
            if seen.contains(&name) {
                return;
            }
            seen.push(name.clone());
            if let Some(target) = definitions.get(&name) {
                walk(definitions, target, pointer, seen, out);
            }
            seen.pop();
            return;
        }
        for key in ["allOf", "anyOf", "oneOf"] {
            if let Some(branches) = schema.get(key).and_then(serde_json::Value::as_array) {
                for branch in branches {
                    walk(definitions, branch, pointer, seen, out);
                }
            }
        }
        if let Some(properties) = schema
            .get("properties")
            .and_then(serde_json::Value::as_object)
        {
            for (name, property) in properties {
                let escaped = name.replace('~', "~0").replace('/', "~1");
                let path = format!("{pointer}/{escaped}");
                if property
                    .get(crate::schema::X_EXPERIMENTAL)
                    .and_then(serde_json::Value::as_bool)
                    == Some(true)
                {
                    out.push(path.clone());
                }
                walk(definitions, property, &path, seen, out);
            }
        }
    }
    let mut result = Vec::new();
    for method in collected
        .methods
        .iter()
        .filter(|m| client_sent(m.direction))
    {
        let Some(params) = &method.params else {
            continue;
        };
        let mut found = Vec::new();
        let root = serde_json::json!({ "$ref": format!("#/definitions/{params}") });
        walk(
            &collected.definitions,
            &root,
            "",
            &mut Vec::new(),
            &mut found,
        );
        found.sort();
        found.dedup();
        result.extend(found.into_iter().map(|pointer| (method.name, pointer)));
    }
    result
}

/// Whether the runtime receives this direction's params (and so validates them).
fn client_sent(direction: Direction) -> bool {
    matches!(
        direction,
        Direction::ClientRequest | Direction::ClientNotification
    )
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
    use super::{experimental_params, snake_case};
    use crate::Surface;

    #[test]
    fn experimental_params_are_found_through_references() {
        let mut collected = crate::schema::collect(Surface::Experimental);
        assert_eq!(
            experimental_params(&collected),
            vec![
                ("thread/start", "/dynamicTools".to_owned()),
                ("thread/resume", "/dynamicTools".to_owned()),
                ("turn/start", "/collaborationMode".to_owned())
            ],
            "the experimental params members declared today"
        );
        let sandbox = collected
            .definitions
            .get_mut("ThreadStartParams")
            .expect("params");
        sandbox["properties"]["cwd"]["x-experimental"] = serde_json::Value::Bool(true);
        let input = collected
            .definitions
            .get_mut("TurnStartParams")
            .expect("params");
        input["properties"]["model"]["x-experimental"] = serde_json::Value::Bool(true);
        let found = experimental_params(&collected);
        assert!(
            found.contains(&("thread/start", "/cwd".to_owned())),
            "{found:?}"
        );
        assert!(
            found.contains(&("turn/start", "/model".to_owned())),
            "{found:?}"
        );
    }

    /// The ordering member of each request is declared in the method table: a request whose
    /// params name a thread (`threadId`) must declare it, or the runtime would no longer run
    /// it in order with the thread's other requests; a declared member must be a string member
    /// of the params.
    #[test]
    fn requests_about_a_thread_declare_their_ordering_member() {
        let collected = crate::schema::collect(Surface::Experimental);
        let mut ordered = 0;
        for method in collected
            .methods
            .iter()
            .filter(|m| m.direction.is_request())
        {
            let properties = method
                .params
                .as_ref()
                .and_then(|p| collected.definitions.get(p))
                .and_then(|d| d.get("properties"));
            match method.ordered_by {
                Some(member) => {
                    ordered += 1;
                    let kind = properties
                        .and_then(|p| p.get(member))
                        .and_then(|m| m.get("type"))
                        .unwrap_or_else(|| {
                            panic!(
                                "{}: `ordered_by` names `{member}`, which its params do not have",
                                method.name
                            )
                        });
                    let is_string = kind == "string"
                        || kind
                            .as_array()
                            .is_some_and(|kinds| kinds.iter().any(|k| k == "string"));
                    assert!(
                        is_string,
                        "{}: `{member}` is not a string: {kind}",
                        method.name
                    );
                }
                None => assert!(
                    properties.is_none_or(|p| p.get("threadId").is_none()),
                    "{}: its params have `threadId`: declare `ordered_by: thread_id = \"threadId\",` \
                     on its row in protocol/src/methods.rs",
                    method.name
                ),
            }
        }
        assert!(ordered >= 20, "only {ordered} ordered methods");
    }

    /// Every server request the engine may have to refuse declares its decline answer.
    #[test]
    fn approval_requests_declare_their_decline_answer() {
        let collected = crate::schema::collect(Surface::Experimental);
        let declining: Vec<&str> = collected
            .methods
            .iter()
            .filter(|m| m.declines)
            .map(|m| m.name)
            .collect();
        for name in [
            "item/commandExecution/requestApproval",
            "item/fileChange/requestApproval",
            "execCommandApproval",
            "applyPatchApproval",
        ] {
            assert!(declining.contains(&name), "{name}: {declining:?}");
        }
        assert!(
            collected
                .methods
                .iter()
                .filter(|m| m.declines)
                .all(|m| m.direction == agentwire_protocol::Direction::ServerRequest)
        );
    }

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
