//! `agentwire app-server generate-docs`: the static protocol reference has a page for every
//! method of the table, every internal link resolves to a file (and anchor), the `turn/start`
//! page names its params and result, doc text is HTML-escaped, and bad input is refused.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use agentwire_protocol::methods::METHODS;
use serde_json::Value;

use crate::common::{agentwire, repo, scratch, text, tree};

/// Runs `generate-docs` into a fresh directory; returns it, or the failure's stderr.
fn generate(name: &str, flags: &[&str]) -> Result<PathBuf, String> {
    let dir = scratch(&format!("docs-{name}"));
    let out = dir.join("site");
    let out_arg = out.to_str().expect("utf-8 path");
    let mut args = vec!["app-server", "generate-docs", "--out", out_arg];
    args.extend_from_slice(flags);
    let output = agentwire(&args);
    let (_, stderr) = text(&output);
    if output.status.success() {
        Ok(out)
    } else {
        Err(stderr)
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

fn page_of(method: &str) -> String {
    format!("methods/{}.html", method.replace('/', "-"))
}

/// Every value of `attr="…"` in `html`.
fn attribute_values<'a>(html: &'a str, attr: &str) -> Vec<&'a str> {
    let needle = format!("{attr}=\"");
    let mut values = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find(&needle) {
        let after = &rest[start + needle.len()..];
        let Some(end) = after.find('"') else { break };
        values.push(&after[..end]);
        rest = &after[end..];
    }
    values
}

/// Checks every `href`/`src` of every HTML file of the site: a relative target must be a file
/// of the site, and a `#fragment` an `id` of its page. Returns how many links were checked.
fn check_links(site: &Path) -> usize {
    let files = tree(site);
    let mut checked = 0;
    let mut broken = Vec::new();
    for (rel, bytes) in &files {
        if rel.extension().and_then(|e| e.to_str()) != Some("html") {
            continue;
        }
        let html = String::from_utf8(bytes.clone()).expect("pages are UTF-8");
        let from = rel.parent().unwrap_or(Path::new(""));
        let links = attribute_values(&html, "href")
            .into_iter()
            .chain(attribute_values(&html, "src"));
        for link in links {
            assert!(
                !link.contains("://") && !link.starts_with("//"),
                "{}: external link {link}",
                rel.display()
            );
            let (path, fragment) = link.split_once('#').unwrap_or((link, ""));
            let target = if path.is_empty() {
                site.join(rel)
            } else {
                site.join(from).join(path)
            };
            checked += 1;
            let Ok(target) = target.canonicalize() else {
                broken.push(format!("{}: {link}", rel.display()));
                continue;
            };
            assert!(target.starts_with(site.canonicalize().expect("site")));
            if !fragment.is_empty() && !read(&target).contains(&format!("id=\"{fragment}\"")) {
                broken.push(format!("{}: {link} (no such anchor)", rel.display()));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    checked
}

#[test]
fn every_method_has_a_page_and_every_link_resolves() {
    for (name, flags, experimental) in [
        ("stable", &[][..], false),
        ("experimental", &["--experimental"][..], true),
    ] {
        let site = generate(name, flags).unwrap_or_else(|e| panic!("{name}: {e}"));
        let index = read(&site.join("index.html"));
        let mut pages = BTreeSet::new();
        for info in METHODS.iter().filter(|m| experimental || !m.experimental) {
            let page = page_of(info.name);
            let html = read(&site.join(&page));
            assert!(
                html.contains(&format!("<h1><code>{}</code></h1>", info.name)),
                "{name}: {page} does not name {}",
                info.name
            );
            assert_eq!(
                html.contains("badge experimental\">experimental</span></p>"),
                info.experimental,
                "{name}: experimental badge of {}",
                info.name
            );
            assert!(
                index.contains(&format!("href=\"{page}\"")),
                "{name}: index does not link {page}"
            );
            pages.insert(page);
        }
        let written: BTreeSet<String> = std::fs::read_dir(site.join("methods"))
            .expect("methods dir")
            .map(|e| {
                format!(
                    "methods/{}",
                    e.expect("entry").file_name().to_string_lossy()
                )
            })
            .collect();
        assert_eq!(
            written, pages,
            "{name}: method pages are exactly the table's"
        );
        if !experimental {
            let hidden: Vec<_> = METHODS.iter().filter(|m| m.experimental).collect();
            for info in hidden {
                assert!(
                    !site.join(page_of(info.name)).exists(),
                    "{} leaked",
                    info.name
                );
            }
        }
        let checked = check_links(&site);
        assert!(checked > 1000, "{name}: only {checked} links found");
        // The one script is the index's search, from files of the site; pages have none.
        for (rel, bytes) in tree(&site) {
            let body = String::from_utf8_lossy(&bytes);
            let scripts: Vec<&str> = body
                .match_indices("<script")
                .map(|(at, _)| &body[at..])
                .collect();
            if rel == Path::new("index.html") {
                assert_eq!(scripts.len(), 2, "index.html: {scripts:?}");
                assert!(
                    scripts[0].starts_with("<script src=\"search-index.js\"></script>")
                        && scripts[1].starts_with("<script src=\"search.js\"></script>"),
                    "index.html loads only the search files"
                );
            } else {
                assert!(scripts.is_empty(), "{} has a script", rel.display());
            }
        }
        let index = read(&site.join("search-index.js"));
        let entries: Value = serde_json::from_str(
            index
                .split_once("window.AGENTWIRE_SEARCH = ")
                .and_then(|(_, rest)| rest.trim_end().strip_suffix(';'))
                .expect("search-index.js assigns the index"),
        )
        .expect("the search index is JSON");
        let entries = entries.as_array().expect("an array");
        assert!(
            entries
                .iter()
                .any(|e| e[0] == "turn/start" && e[1] == "methods/turn-start.html"),
            "{name}: turn/start is in the search index"
        );
        for entry in entries {
            let page = entry[1].as_str().expect("a page");
            assert!(
                site.join(page).is_file(),
                "{name}: search index names {page}, which is not written"
            );
        }
        let _ = std::fs::remove_dir_all(site.parent().expect("scratch"));
    }
}

#[test]
fn the_turn_start_page_names_its_params_result_and_envelopes() {
    let site = generate("turn-start", &[]).expect("generate-docs");
    let html = read(&site.join("methods/turn-start.html"));
    for expected in [
        "<a href=\"../types/TurnStartParams.html\">TurnStartParams</a>",
        "<a href=\"../types/TurnStartResponse.html\">TurnStartResponse</a>",
        "<a href=\"../types/TurnStartRequestEnvelope.html\">TurnStartRequestEnvelope</a>",
        "\"method\": <code class=\"type\">&#34;turn/start&#34;</code>",
        "since 0.1.0",
        "Client request",
    ] {
        assert!(html.contains(expected), "turn/start page lacks {expected}");
    }
    let params = read(&site.join("types/TurnStartParams.html"));
    for field in ["threadId", "input"] {
        let row = params
            .lines()
            .find(|l| l.starts_with(&format!("<tr><td><code>{field}</code>")))
            .unwrap_or_else(|| panic!("TurnStartParams has no row for {field}"));
        assert!(row.contains("<td>required</td>"), "{field}: {row}");
    }
    let model = params
        .lines()
        .find(|l| l.starts_with("<tr><td><code>model</code>"))
        .expect("model row");
    assert!(
        model.contains("optional") && model.contains("<td>nullable</td>"),
        "{model}"
    );
    let changelog = read(&site.join("changelog.html"));
    for pair in [
        "0.1.0 → 0.2.0",
        "0.2.0 → 0.3.0",
        "0.3.0 → 0.4.0",
        "0.4.0 → 0.5.0",
        "0.5.0 → 0.6.0",
        "0.6.0 → 0.7.0",
        "0.7.0 → 0.8.0",
    ] {
        assert!(changelog.contains(pair), "changelog lacks {pair}");
    }
    assert!(
        changelog.contains("<tr class=\"compatible\">"),
        "no change listed"
    );
    let initialize = read(&site.join("methods/initialize.html"));
    assert!(
        initialize.contains("<h2>Example</h2>") && initialize.contains("&#34;clientInfo&#34;"),
        "initialize has its recorded example"
    );
    let _ = std::fs::remove_dir_all(site.parent().expect("scratch"));
}

#[test]
fn doc_text_is_escaped() {
    let flat = repo().join("generated/schema/json/agentwire_app_server_protocol.flat.schemas.json");
    let bundle: Value = serde_json::from_str(&read(&flat)).expect("flat bundle");
    let definitions = bundle["definitions"].as_object().expect("definitions");
    let site = generate("escape", &[]).expect("generate-docs");
    let mut seen = 0;
    for (name, schema) in definitions {
        let mut docs = vec![schema["description"].as_str().unwrap_or_default()];
        if let Some(props) = schema["properties"].as_object() {
            docs.extend(props.values().filter_map(|p| p["description"].as_str()));
        }
        // Doc strings are Markdown: whatever follows a `<` in one is shown as text, `&lt;`
        // (in a code span or not), never as a tag of the page.
        for doc in docs.into_iter().filter(|d| d.contains('<')) {
            let html = read(&site.join(format!("types/{name}.html")));
            for (at, _) in doc.match_indices('<') {
                let word: String = doc[at + 1..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '/')
                    .collect();
                if word.is_empty() {
                    continue;
                }
                assert!(
                    html.contains(&format!("&lt;{word}")),
                    "{name}: <{word} not shown as text"
                );
                assert!(
                    !html.contains(&format!("<{word} ")) && !html.contains(&format!("<{word}>"))
                        || ["p", "code", "em", "strong", "ul", "ol", "li", "pre"]
                            .contains(&word.as_str()),
                    "{name}: <{word} written as a tag"
                );
                seen += 1;
            }
        }
    }
    assert!(seen > 0, "no doc text with `<` to check");
    let _ = std::fs::remove_dir_all(site.parent().expect("scratch"));
}

#[test]
fn pinned_versions_and_bad_input() {
    let site = generate("pinned", &["--protocol-version", "0.1.0"]).expect("0.1.0");
    let index = read(&site.join("index.html"));
    assert!(index.contains("agentwire app-server protocol 0.1.0"));
    assert!(read(&site.join("changelog.html")).contains("nothing to compare"));
    assert!(site.join("methods/turn-start.html").exists());
    check_links(&site);
    let _ = std::fs::remove_dir_all(site.parent().expect("scratch"));

    let err = generate("unknown", &["--protocol-version", "9.9.9"]).expect_err("9.9.9");
    assert!(err.contains("\"9.9.9\"") && err.contains("0.1.0"), "{err}");

    let dir = scratch("docs-file-out");
    let file = dir.join("site");
    std::fs::write(&file, b"x").expect("file");
    let output = agentwire(&[
        "app-server",
        "generate-docs",
        "--out",
        file.to_str().expect("utf-8"),
    ]);
    let (_, stderr) = text(&output);
    assert!(!output.status.success());
    assert!(
        stderr.contains("--out") && stderr.contains("not a directory"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// The site's examples (`codegen/docs/exchanges.jsonl`, recorded by the `served` walk) are
/// messages of the current protocol: `contract check` passes every one, and `turn/start`'s
/// page shows its example and the notifications it started.
#[test]
fn the_recorded_examples_pass_the_contract_check_and_show_on_the_pages() {
    let examples = repo().join(crate::docs_examples::CHECKED_IN);
    let examples = examples.to_string_lossy();
    let output = agentwire(&["contract", "check", "--experimental", &examples]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains(": OK"), "{stdout}");

    let site = generate("examples", &["--experimental"]).expect("generate-docs");
    let page = read(&site.join("methods/turn-start.html"));
    assert!(
        page.contains("<h2>Example</h2>"),
        "turn/start has an example"
    );
    let starts = page
        .split_once("<h2>What it starts</h2>")
        .map(|(_, rest)| rest.split_once("</ol>").map_or(rest, |(list, _)| list))
        .expect("turn/start lists what it starts");
    for notification in [
        "turn/started",
        "item/started",
        "item/completed",
        "turn/completed",
    ] {
        assert!(
            starts.contains(&format!("<code>{notification}</code>")),
            "turn/start starts {notification}: {starts}"
        );
    }
    let methods: Vec<_> = METHODS
        .iter()
        .filter(|m| m.direction == agentwire_protocol::method::Direction::ClientRequest)
        .filter(|m| m.unavailable().is_none())
        .collect();
    let with_example = methods
        .iter()
        .filter(|m| read(&site.join(page_of(m.name))).contains("<h2>Example</h2>"))
        .count();
    assert_eq!(
        with_example,
        methods.len(),
        "every served client request's page has an example"
    );
    let _ = std::fs::remove_dir_all(site.parent().expect("scratch"));
}
