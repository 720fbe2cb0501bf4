//! The protocol reference site (`agentwire app-server generate-docs`): static HTML (a search
//! box on the index is the only script), rendered with askama from a surface's JSON Schema
//! files (the flat bundle and `meta.json`) and the bundles of the pinned versions before it;
//! doc strings are Markdown (`markdown.rs`).
//!
//! Layout of the site (every link is relative, so it works from `file://`):
//! - `index.html`: every method by direction, every type, a link to the changelog;
//! - `methods/<name with / as ->.html`: direction, badges, doc, params and result, the
//!   JSON-RPC envelopes, the notifications its recorded request started and the recorded
//!   example where one exists;
//! - `types/<Name>.html`: one per definition of the flat bundle;
//! - `changelog.html`: `schema diff` between each pair of consecutive versions;
//! - `search-index.js` and `search.js`: the index page's search over method and type names
//!   and summaries;
//! - `style.css`.

mod examples;
mod markdown;
pub mod schema_view;

use std::collections::BTreeMap;

use askama::Template;
use serde_json::Value;

use self::examples::Recorded;
use self::schema_view::{Part, TypeView};
use crate::diff::{Severity, diff_bundles};
use crate::{CodegenError, FileSet};

/// What the site is built from.
pub struct SiteInput<'a> {
    /// The protocol version documented.
    pub version: &'a str,
    /// Whether it is the experimental surface.
    pub experimental: bool,
    /// The flat bundle (`agentwire_app_server_protocol.flat.schemas.json`).
    pub flat_bundle: &'a Value,
    /// `meta.json` of the same surface.
    pub meta: &'a Value,
    /// The full bundles of every version up to and including this one, oldest first, for the
    /// changelog.
    pub history: &'a [(String, Value)],
    /// A recorded transcript to take examples from (only meaningful for the version it was
    /// recorded with).
    pub exchanges: Option<&'a str>,
}

const STYLE: &str = include_str!("../../templates/docs/style.css");
/// The index page's search (over `search-index.js`).
const SEARCH: &str = include_str!("../../templates/docs/search.js");
/// The examples recorded from the end-to-end walk over every method (`tests/e2e/served.rs`,
/// `scripts/record-docs-examples.sh`): shown for the current version, before the OpenRPC
/// document's examples.
pub const DOCS_EXCHANGES: &str = include_str!("../../docs/exchanges.jsonl");

fn site_error(message: impl Into<String>) -> CodegenError {
    CodegenError::Site {
        message: message.into(),
    }
}

/// The file (under `methods/`) of a method's page.
pub fn method_file(method: &str) -> Result<String, CodegenError> {
    if method.is_empty()
        || !method
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '/' || c == '_')
    {
        return Err(site_error(format!(
            "method name {method:?} cannot name a page (letters, digits, `/` and `_` only)"
        )));
    }
    Ok(format!("{}.html", method.replace('/', "-")))
}

fn check_type_name(name: &str) -> Result<(), CodegenError> {
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(site_error(format!(
            "definition name {name:?} cannot name a page (letters, digits and `_` only)"
        )));
    }
    Ok(())
}

struct Badges {
    since: String,
    experimental: bool,
}

struct MethodRow {
    name: String,
    href: String,
    summary: String,
    badges: Badges,
}

struct Section {
    title: &'static str,
    id: &'static str,
    methods: Vec<MethodRow>,
}

struct TypeRow {
    name: String,
    summary: String,
}

#[derive(Template)]
#[template(path = "docs/index.html")]
struct IndexPage<'a> {
    root: &'a str,
    title: String,
    version: &'a str,
    surface: &'a str,
    sections: Vec<Section>,
    types: Vec<TypeRow>,
}

struct Member {
    key: String,
    value: Vec<Part>,
}

struct Envelope {
    title: &'static str,
    name: String,
    members: Vec<Member>,
}

#[derive(Template)]
#[template(path = "docs/method.html")]
struct MethodPage<'a> {
    root: &'a str,
    title: String,
    version: &'a str,
    surface: &'a str,
    name: String,
    direction: &'static str,
    badges: Badges,
    doc: String,
    params: Vec<Part>,
    params_optional: bool,
    result: Vec<Part>,
    envelopes: Vec<Envelope>,
    /// The notifications the recorded example request was followed by.
    starts: Vec<Started>,
    example: Recorded,
}

/// A notification a method's request starts, linked to its page.
struct Started {
    name: String,
    file: String,
}

#[derive(Template)]
#[template(path = "docs/type.html")]
struct TypePage<'a> {
    root: &'a str,
    title: String,
    version: &'a str,
    surface: &'a str,
    name: String,
    doc: String,
    view: TypeView,
    used_by: Vec<MethodRow>,
}

struct ChangeRow {
    breaking: bool,
    rule: String,
    method: String,
    method_href: String,
    location: String,
    detail: String,
}

struct Release {
    old: String,
    new: String,
    breaking: usize,
    changes: Vec<ChangeRow>,
}

#[derive(Template)]
#[template(path = "docs/changelog.html")]
struct ChangelogPage<'a> {
    root: &'a str,
    title: String,
    version: &'a str,
    surface: &'a str,
    releases: Vec<Release>,
}

fn render(template: &impl Template, name: &'static str) -> Result<String, CodegenError> {
    template.render().map_err(|source| CodegenError::Template {
        template: name,
        source,
    })
}

/// The first paragraph of `doc` as plain text (code spans unmarked), at most 160 characters.
fn plain_summary(doc: &str) -> String {
    let text = doc
        .split("\n\n")
        .next()
        .unwrap_or_default()
        .replace('\n', " ")
        .replace('`', "");
    match text.char_indices().nth(160) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

/// The first paragraph of `doc`, as inline HTML.
fn summary(doc: &str) -> String {
    markdown::inline(
        &doc.split("\n\n")
            .next()
            .unwrap_or_default()
            .replace('\n', " "),
    )
}

fn direction_label(direction: &str) -> &'static str {
    match direction {
        "clientRequest" => "Client request (client → server, answered by the server)",
        "serverRequest" => "Server request (server → client, answered by the client)",
        "serverNotification" => "Server notification (server → client, no answer)",
        "clientNotification" => "Client notification (client → server, no answer)",
        _ => "Unknown direction",
    }
}

const SECTIONS: [(&str, &str, &str); 4] = [
    ("clientRequest", "Client requests", "client-requests"),
    (
        "serverNotification",
        "Server notifications",
        "server-notifications",
    ),
    ("serverRequest", "Server requests", "server-requests"),
    (
        "clientNotification",
        "Client notifications",
        "client-notifications",
    ),
];

fn str_field<'v>(value: &'v Value, key: &str) -> &'v str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// The site of one surface and version.
pub fn site(input: &SiteInput<'_>) -> Result<FileSet, CodegenError> {
    let definitions = input
        .flat_bundle
        .get("definitions")
        .and_then(Value::as_object)
        .ok_or_else(|| site_error("the flat bundle has no `definitions` object"))?;
    let methods = input
        .meta
        .get("methods")
        .and_then(Value::as_array)
        .ok_or_else(|| site_error("meta.json has no `methods` array"))?;
    let surface = if input.experimental {
        "experimental surface"
    } else {
        "stable surface"
    };
    let recorded = input
        .exchanges
        .map(|openrpc| examples::recorded_all(&[DOCS_EXCHANGES, openrpc]))
        .unwrap_or_default();
    let on_this_surface: std::collections::BTreeSet<&str> = methods
        .iter()
        .filter_map(|m| m.get("method").and_then(Value::as_str))
        .collect();
    // [name, page, plain summary] of every method and type, for search.js.
    let mut search: Vec<[String; 3]> = Vec::new();
    let mut files = FileSet::new();
    files.insert("style.css", STYLE);

    let mut sections: Vec<Section> = SECTIONS
        .iter()
        .map(|(_, title, id)| Section {
            title,
            id,
            methods: Vec::new(),
        })
        .collect();
    // type name -> methods whose params or result it is
    let mut used_by: BTreeMap<String, Vec<MethodRow>> = BTreeMap::new();
    let mut seen_files = BTreeMap::new();
    for (n, method) in methods.iter().enumerate() {
        let name = str_field(method, "method");
        let direction = str_field(method, "direction");
        let file = method_file(name)
            .map_err(|e| site_error(format!("meta.json /methods/{n}/method: {e}")))?;
        if let Some(other) = seen_files.insert(file.clone(), name.to_owned()) {
            return Err(site_error(format!(
                "methods {other:?} and {name:?} would share the page methods/{file}"
            )));
        }
        let doc = str_field(method, "doc").to_owned();
        let badges = || Badges {
            since: str_field(method, "since").to_owned(),
            experimental: method.get("experimental") == Some(&Value::Bool(true)),
        };
        let row = |prefix: &str| MethodRow {
            name: name.to_owned(),
            href: format!("{prefix}methods/{file}"),
            summary: summary(&doc),
            badges: badges(),
        };
        let section = SECTIONS
            .iter()
            .position(|(d, _, _)| *d == direction)
            .ok_or_else(|| {
                site_error(format!(
                    "meta.json /methods/{n}/direction: unknown direction {direction:?}"
                ))
            })?;
        sections[section].methods.push(row(""));
        search.push([
            name.to_owned(),
            format!("methods/{file}"),
            plain_summary(&doc),
        ]);

        let reference = |key: &str| -> Result<Option<String>, CodegenError> {
            let Some(target) = method.get(key).and_then(Value::as_str) else {
                return Ok(None);
            };
            let type_name = schema_view::ref_name(target);
            if !definitions.contains_key(type_name) {
                return Err(site_error(format!(
                    "meta.json /methods/{n}/{key}: {target:?} is not a definition of the flat bundle"
                )));
            }
            Ok(Some(type_name.to_owned()))
        };
        let link = |type_name: &Option<String>| -> Vec<Part> {
            type_name
                .iter()
                .map(|t| Part {
                    text: t.clone(),
                    href: format!("../types/{t}.html"),
                })
                .collect()
        };
        let params = reference("params")?;
        let result = reference("response")?;
        for type_name in params.iter().chain(result.iter()) {
            used_by
                .entry(type_name.clone())
                .or_default()
                .push(row("../"));
        }
        let mut envelopes = Vec::new();
        for (key, title) in [
            (
                "envelope",
                if direction.ends_with("Request") {
                    "Request"
                } else {
                    "Notification"
                },
            ),
            ("responseEnvelope", "Response"),
        ] {
            let Some(envelope) = reference(key)? else {
                continue;
            };
            let members = definitions
                .get(&envelope)
                .and_then(|e| e.get("properties"))
                .and_then(Value::as_object)
                .map(|props| {
                    props
                        .iter()
                        .map(|(k, v)| Member {
                            key: k.clone(),
                            value: schema_view::expr(v, "../types/"),
                        })
                        .collect()
                })
                .unwrap_or_default();
            envelopes.push(Envelope {
                title,
                name: envelope,
                members,
            });
        }
        let page = MethodPage {
            root: "../",
            title: name.to_owned(),
            version: input.version,
            surface,
            name: name.to_owned(),
            direction: direction_label(direction),
            badges: badges(),
            doc: markdown::block(&doc),
            params: link(&params),
            params_optional: method.get("paramsOptional") == Some(&Value::Bool(true)),
            result: link(&result),
            envelopes,
            starts: recorded
                .get(name)
                .map(|example| {
                    example
                        .notifications
                        .iter()
                        .filter(|n| on_this_surface.contains(n.as_str()))
                        .map(|n| {
                            Ok(Started {
                                name: n.clone(),
                                file: method_file(n)?,
                            })
                        })
                        .collect::<Result<Vec<_>, CodegenError>>()
                })
                .transpose()?
                .unwrap_or_default(),
            example: recorded.get(name).cloned().unwrap_or_default(),
        };
        files.insert(
            format!("methods/{file}"),
            render(&page, "docs/method.html")?,
        );
    }

    let mut types = Vec::new();
    for (name, schema) in definitions {
        check_type_name(name)?;
        let doc = str_field(schema, "description").to_owned();
        types.push(TypeRow {
            name: name.clone(),
            summary: summary(&doc),
        });
        search.push([
            name.clone(),
            format!("types/{name}.html"),
            plain_summary(&doc),
        ]);
        let page = TypePage {
            root: "../",
            title: name.clone(),
            version: input.version,
            surface,
            name: name.clone(),
            doc: markdown::block(&doc),
            view: schema_view::view(schema, ""),
            used_by: used_by.remove(name).unwrap_or_default(),
        };
        files.insert(
            format!("types/{name}.html"),
            render(&page, "docs/type.html")?,
        );
    }

    let index = IndexPage {
        root: "",
        title: format!("agentwire app-server protocol {}", input.version),
        version: input.version,
        surface,
        sections,
        types,
    };
    files.insert("index.html", render(&index, "docs/index.html")?);
    let index =
        serde_json::to_string(&search).map_err(|e| site_error(format!("the search index: {e}")))?;
    files.insert(
        "search-index.js",
        format!("// Methods and types of this site for search.js: [name, page, summary].\nwindow.AGENTWIRE_SEARCH = {index};\n"),
    );
    files.insert("search.js", SEARCH);

    let changelog = ChangelogPage {
        root: "",
        title: "Changelog".to_owned(),
        version: input.version,
        surface,
        releases: releases(input.history, &seen_files)?,
    };
    files.insert("changelog.html", render(&changelog, "docs/changelog.html")?);
    Ok(files)
}

/// `schema diff` between consecutive versions, newest first.
fn releases(
    history: &[(String, Value)],
    pages: &BTreeMap<String, String>,
) -> Result<Vec<Release>, CodegenError> {
    let documented: BTreeMap<&str, &str> = pages
        .iter()
        .map(|(file, method)| (method.as_str(), file.as_str()))
        .collect();
    let mut releases = Vec::new();
    for pair in history.windows(2) {
        let [(old_version, old), (new_version, new)] = pair else {
            continue;
        };
        let report = diff_bundles(old, new)
            .map_err(|e| site_error(format!("schema diff {old_version} → {new_version}: {e}")))?;
        let changes: Vec<ChangeRow> = report
            .changes
            .iter()
            .map(|change| {
                let method = change.method.clone().unwrap_or_default();
                ChangeRow {
                    breaking: change.severity == Severity::Breaking,
                    rule: change.rule.name().to_owned(),
                    method_href: documented
                        .get(method.as_str())
                        .map(|file| format!("methods/{file}"))
                        .unwrap_or_default(),
                    method,
                    location: change.location.clone(),
                    detail: change.detail.clone(),
                }
            })
            .collect();
        releases.push(Release {
            old: old_version.clone(),
            new: new_version.clone(),
            breaking: changes.iter().filter(|c| c.breaking).count(),
            changes,
        });
    }
    releases.reverse();
    Ok(releases)
}
