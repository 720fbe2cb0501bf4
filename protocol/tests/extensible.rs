//! The wire types stay extensible for Rust code outside this crate: every wire struct (a type
//! deriving `Serialize` or `Deserialize`) with named fields is `#[non_exhaustive]` and derives
//! `bon::Builder`, and every wire enum is `#[non_exhaustive]` unless it is listed below with the
//! reason its variant set is closed. So a new optional field or variant, the protocol's
//! compatible growth, is never a breaking change of the Rust API (cargo-semver-checks'
//! `constructible_struct_adds_field` and `enum_variant_added` cannot fire), and a new type
//! starts out extensible.
//!
//! The same holds for the fields of a struct-like variant of a wire enum (e.g.
//! `ThreadItemKind::AgentMessage { .. }`): every such variant is `#[non_exhaustive]` and the enum
//! has a constructor named for it in snake case (`ThreadItemKind::agent_message()`, a bon
//! builder), so a field added to a variant is not a breaking change either.
//!
//! Tuple structs are exempt: they are `#[serde(transparent)]` newtypes whose wire form is the
//! inner value, which cannot gain a member. Unit structs are listed below.

use std::path::{Path, PathBuf};

use syn::{Attribute, Fields, ImplItem, Item, Type};

/// Enums whose variant set cannot grow on the wire, with why.
const CLOSED_ENUMS: &[(&str, &str)] = &[
    ("RequestId", "JSON-RPC 2.0: an id is a string or a number"),
    (
        "JsonRpcMessage",
        "JSON-RPC 2.0: request, notification, response or error",
    ),
    ("SortDirection", "an order is ascending or descending"),
];

/// Unit structs (no members to add), with what they are.
const UNIT_STRUCTS: &[(&str, &str)] = &[
    ("NoParams", "the params of a method that takes none"),
    (
        "DisplayVersion",
        "the constant `1` of a display instruction",
    ),
];

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read protocol/src") {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn derives(attrs: &[Attribute]) -> Vec<String> {
    let mut names = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("derive")) {
        attr.parse_nested_meta(|meta| {
            let path = &meta.path;
            let text: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
            names.push(text.join("::"));
            Ok(())
        })
        .expect("a derive list");
    }
    names
}

fn is_wire(attrs: &[Attribute]) -> bool {
    derives(attrs)
        .iter()
        .any(|d| d == "Serialize" || d == "Deserialize")
}

fn non_exhaustive(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|a| a.path().is_ident("non_exhaustive"))
}

/// Every item of the file, modules included (test modules are not wire types).
fn items(items: &[Item], out: &mut Vec<Item>) {
    for item in items {
        if let Item::Mod(module) = item {
            let test = module.attrs.iter().any(|a| lists(a, "cfg", "test"));
            if let Some((_, inner)) = &module.content
                && !test
            {
                self::items(inner, out);
            }
        } else {
            out.push(item.clone());
        }
    }
}

/// Whether `attr` (`#[path(...)]`) lists the bare word `word`, e.g. `transparent` in
/// `#[serde(transparent)]` or `test` in `#[cfg(test)]`.
fn lists(attr: &Attribute, path: &str, word: &str) -> bool {
    if !attr.path().is_ident(path) {
        return false;
    }
    let mut found = false;
    let parsed = attr.parse_nested_meta(|meta| {
        found |= meta.path.is_ident(word);
        if meta.input.peek(syn::Token![=]) {
            meta.value()?.parse::<syn::Expr>()?;
        } else if meta.input.peek(syn::token::Paren) {
            let inner;
            syn::parenthesized!(inner in meta.input);
            inner.step(|cursor| {
                let mut rest = *cursor;
                while let Some((_, next)) = rest.token_tree() {
                    rest = next;
                }
                Ok(((), rest))
            })?;
        }
        Ok(())
    });
    parsed.is_ok() && found
}

/// `AgentMessage` → `agent_message`: the name of a variant's constructor.
fn snake(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// `(type, associated fn)` for every fn of an inherent `impl` block in `items`.
fn inherent_fns(items: &[Item], out: &mut Vec<(String, String)>) {
    for item in items {
        let Item::Impl(block) = item else { continue };
        if block.trait_.is_some() {
            continue;
        }
        let Type::Path(ty) = &*block.self_ty else {
            continue;
        };
        let Some(last) = ty.path.segments.last() else {
            continue;
        };
        for inner in &block.items {
            if let ImplItem::Fn(f) = inner {
                out.push((last.ident.to_string(), f.sig.ident.to_string()));
            }
        }
    }
}

#[test]
fn every_wire_struct_and_growable_enum_is_non_exhaustive() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut problems = Vec::new();
    let (mut structs, mut enums, mut variants) = (0, 0, 0);
    let mut constructors = Vec::new();
    let mut wanted_constructors = Vec::new();
    let mut closed_seen = Vec::new();
    let mut units_seen = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("read a source file");
        let parsed = syn::parse_file(&text).expect("the source parses");
        let shown = file
            .strip_prefix(&src)
            .unwrap_or(file)
            .display()
            .to_string();
        let mut all = Vec::new();
        items(&parsed.items, &mut all);
        inherent_fns(&all, &mut constructors);
        for item in &all {
            match item {
                Item::Struct(s) if is_wire(&s.attrs) => {
                    let name = s.ident.to_string();
                    match &s.fields {
                        Fields::Named(_) => {
                            structs += 1;
                            if !non_exhaustive(&s.attrs) {
                                problems.push(format!(
                                    "{shown}: struct {name} lacks #[non_exhaustive]"
                                ));
                            }
                            if !derives(&s.attrs)
                                .iter()
                                .any(|d| d == "bon::Builder" || d == "Builder")
                            {
                                problems.push(format!(
                                    "{shown}: struct {name} does not derive bon::Builder"
                                ));
                            }
                        }
                        Fields::Unnamed(fields) => {
                            let transparent =
                                s.attrs.iter().any(|a| lists(a, "serde", "transparent"));
                            if fields.unnamed.len() != 1 || !transparent {
                                problems.push(format!(
                                    "{shown}: tuple struct {name} is not a #[serde(transparent)] newtype; give it named fields"
                                ));
                            }
                        }
                        Fields::Unit => {
                            if UNIT_STRUCTS.iter().any(|(n, _)| *n == name) {
                                units_seen.push(name);
                            } else {
                                problems.push(format!(
                                    "{shown}: unit struct {name} is not in UNIT_STRUCTS"
                                ));
                            }
                        }
                    }
                }
                Item::Enum(e) if is_wire(&e.attrs) => {
                    enums += 1;
                    let name = e.ident.to_string();
                    let closed = CLOSED_ENUMS.iter().any(|(n, _)| *n == name);
                    if closed {
                        closed_seen.push(name.clone());
                    }
                    if !closed && !non_exhaustive(&e.attrs) {
                        problems.push(format!("{shown}: enum {name} lacks #[non_exhaustive] (or a reason in CLOSED_ENUMS)"));
                    }
                    for variant in &e.variants {
                        if !matches!(variant.fields, Fields::Named(_)) {
                            continue;
                        }
                        variants += 1;
                        let v = variant.ident.to_string();
                        if !non_exhaustive(&variant.attrs) {
                            problems.push(format!(
                                "{shown}: variant {name}::{v} has named fields but lacks #[non_exhaustive]"
                            ));
                        }
                        wanted_constructors.push((shown.clone(), name.clone(), v));
                    }
                    if closed && non_exhaustive(&e.attrs) {
                        problems.push(format!(
                            "{shown}: enum {name} is #[non_exhaustive] but listed in CLOSED_ENUMS"
                        ));
                    }
                }
                _ => {}
            }
        }
    }
    for (shown, name, variant) in &wanted_constructors {
        let function = snake(variant);
        if !constructors
            .iter()
            .any(|(ty, f)| ty == name && *f == function)
        {
            problems.push(format!(
                "{shown}: variant {name}::{variant} has no constructor {name}::{function}()"
            ));
        }
    }
    for (name, _) in CLOSED_ENUMS {
        if !closed_seen.iter().any(|n| n == name) {
            problems.push(format!("CLOSED_ENUMS lists {name}, which is no wire enum"));
        }
    }
    for (name, _) in UNIT_STRUCTS {
        if !units_seen.iter().any(|n| n == name) {
            problems.push(format!(
                "UNIT_STRUCTS lists {name}, which is no wire unit struct"
            ));
        }
    }
    // The walk saw the crate (a path or parsing mistake would make it vacuous).
    assert!(
        structs > 200 && enums > 100 && variants > 100,
        "only {structs} wire structs, {enums} enums and {variants} struct-like variants found"
    );
    assert!(
        problems.is_empty(),
        "wire types that are not extensible:\n{}",
        problems.join("\n")
    );
}

/// Outside the crate a wire struct is built with its builder, and the builder writes what a
/// literal wrote: optional members left out are absent (or `null` where the wire keeps them).
#[test]
fn builders_build_the_same_wire_value() {
    use agentwire_protocol::thread::{ThreadSettingsOverrides, ThreadStartParams};
    use agentwire_protocol::turn::TurnInterruptParams;

    // The settings thread/start, thread/resume and thread/fork share are one struct,
    // flattened into each: on the wire they are the params' own members.
    let settings = || {
        ThreadSettingsOverrides::builder()
            .model("gpt-test")
            .cwd("/w")
            .build()
    };
    let params = ThreadStartParams::builder().settings(settings()).build();
    assert_eq!(
        serde_json::to_value(&params).expect("serializes"),
        serde_json::json!({"model": "gpt-test", "cwd": "/w"})
    );
    assert_eq!(
        params,
        ThreadStartParams::builder()
            .settings(
                ThreadSettingsOverrides::builder()
                    .model("gpt-test".to_owned())
                    .cwd("/w")
                    .build()
            )
            .build()
    );
    let read: ThreadStartParams =
        serde_json::from_value(serde_json::json!({"model": "gpt-test", "cwd": "/w"}))
            .expect("deserializes");
    assert_eq!(read, params);
    assert_eq!(
        ThreadStartParams::default(),
        ThreadStartParams::builder().build()
    );
    let interrupt = TurnInterruptParams::builder()
        .thread_id("t")
        .turn_id("u")
        .build();
    assert_eq!(
        serde_json::to_value(&interrupt).expect("serializes"),
        serde_json::json!({"threadId": "t", "turnId": "u"})
    );
}

/// A struct-like variant is built outside the crate with its constructor, and the value is the
/// one the wire form reads back as: fields left out are `None` or the wire's default.
#[test]
fn variant_constructors_build_the_same_wire_value() {
    use agentwire_protocol::item::{PatchChangeKind, ThreadItemKind};
    use agentwire_protocol::sandbox::SandboxPolicy;

    let message = ThreadItemKind::agent_message().id("m1").text("hi").build();
    let wire = serde_json::to_value(&message).expect("serializes");
    assert_eq!(wire["type"], "agentMessage");
    assert_eq!(wire["id"], "m1");
    assert_eq!(wire["text"], "hi");
    let read: ThreadItemKind = serde_json::from_value(wire).expect("reads back");
    assert_eq!(read, message);
    match message {
        ThreadItemKind::AgentMessage {
            id, text, phase, ..
        } => {
            assert_eq!((id.as_str(), text.as_str(), phase), ("m1", "hi", None));
        }
        other => panic!("built {other:?}"),
    }

    let policy = SandboxPolicy::workspace_write()
        .network_access(true)
        .build();
    let read: SandboxPolicy = serde_json::from_value(
        serde_json::json!({"type": "workspaceWrite", "networkAccess": true}),
    )
    .expect("reads the wire form");
    assert_eq!(policy, read);

    assert_eq!(
        serde_json::to_value(PatchChangeKind::update().move_path("b.rs").build())
            .expect("serializes")["move_path"],
        "b.rs"
    );
}
