//! Plugins and marketplaces end to end through the binary: a marketplace from a local folder
//! and one from a git repository made in the test (a bare repository added by its path), each
//! added, listed, read, searched, installed from, upgraded, reconciled and removed; installed
//! plugins' skills in `skills/list`; state kept across a restart.

use std::path::Path;

use serde_json::{Value, json};

use crate::client::Client;
use crate::common::{git, scratch};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
    std::fs::write(path, text).expect("write");
}

/// A plugin folder: a manifest, one skill (`<name>/skills/<skill>/SKILL.md`) and an MCP file.
fn plugin(dir: &Path, name: &str, skill: &str, description: &str) {
    write(
        &dir.join(".codex-plugin/plugin.json"),
        &json!({
            "name": name, "version": "1.0.0", "description": format!("The {name} plugin"),
            "keywords": ["quality"],
            "interface": {"displayName": name.to_uppercase(), "capabilities": ["Read"]}
        })
        .to_string(),
    );
    write(
        &dir.join(format!("skills/{skill}/SKILL.md")),
        &format!("---\nname: {skill}\ndescription: {description}\n---\nBody of {skill}.\n"),
    );
    write(
        &dir.join(".mcp.json"),
        &json!({"mcpServers": {format!("{name}-server"): {"command": "true"}}}).to_string(),
    );
}

fn marketplace(root: &Path, name: &str, plugins: Value) {
    write(
        &root.join(".agents/plugins/marketplace.json"),
        &json!({"name": name, "interface": {"displayName": "Team tools"}, "plugins": plugins})
            .to_string(),
    );
}

fn start(home: &Path) -> Client {
    Client::start_with_capabilities(home, json!({"experimentalApi": true}))
}

fn canonical(path: &Path) -> String {
    path.canonicalize()
        .expect("canonical")
        .display()
        .to_string()
}

/// The skills of `cwd` that came with a plugin, as (name, pluginId, description, path).
fn plugin_skills(client: &mut Client, cwd: &Path) -> Vec<(String, String, String, String)> {
    let answer = client.call("skills/list", json!({"cwds": [cwd.display().to_string()]}));
    answer["data"][0]["skills"]
        .as_array()
        .expect("skills")
        .iter()
        .filter(|s| !s["pluginId"].is_null())
        .map(|s| {
            let text = |k: &str| s[k].as_str().unwrap_or_default().to_owned();
            (
                text("name"),
                text("pluginId"),
                text("description"),
                text("path"),
            )
        })
        .collect()
}

fn error_message(error: &Value) -> String {
    error["message"].as_str().unwrap_or_default().to_owned()
}

#[test]
fn a_local_marketplace_is_added_listed_read_installed_reconciled_and_removed() {
    let root = scratch("plugins-local");
    let home = root.join("home");
    let market = root.join("market");
    marketplace(
        &market,
        "team",
        json!([
            {"name": "lint", "source": {"source": "local", "path": "./plugins/lint"},
             "policy": {"installation": "AVAILABLE", "authentication": "ON_USE"}, "category": "Coding"},
            {"name": "locked", "source": "./plugins/locked",
             "policy": {"installation": "NOT_AVAILABLE"}}
        ]),
    );
    plugin(
        &market.join("plugins/lint"),
        "lint",
        "style",
        "Check the style",
    );
    plugin(
        &market.join("plugins/locked"),
        "locked",
        "secret",
        "Never installed",
    );
    let manifest = format!("{}/.agents/plugins/marketplace.json", canonical(&market));
    let mut client = start(&home);

    // Bad sources are refused with the reason.
    let empty = root.join("empty");
    std::fs::create_dir_all(&empty).expect("empty");
    let error = client.call_err(
        "marketplace/add",
        json!({"source": empty.display().to_string()}),
    );
    assert_eq!(error["code"], -32600);
    assert!(
        error_message(&error).contains("no marketplace manifest"),
        "{error}"
    );
    let error = client.call_err(
        "marketplace/add",
        json!({"source": market.display().to_string(), "sparsePaths": ["plugins"]}),
    );
    assert!(error_message(&error).contains("sparsePaths"), "{error}");

    let added = client.call(
        "marketplace/add",
        json!({"source": market.display().to_string()}),
    );
    assert_eq!(
        added,
        json!({"alreadyAdded": false, "installedRoot": canonical(&market), "marketplaceName": "team"})
    );
    let again = client.call(
        "marketplace/add",
        json!({"source": market.display().to_string()}),
    );
    assert_eq!(again["alreadyAdded"], true);

    let listed = client.call("plugin/list", json!({}));
    assert_eq!(listed["marketplaces"].as_array().map(Vec::len), Some(1));
    let entry = &listed["marketplaces"][0];
    assert_eq!(entry["name"], "team");
    assert_eq!(entry["path"], manifest.as_str());
    assert_eq!(entry["interface"]["displayName"], "Team tools");
    let lint = &entry["plugins"][0];
    assert_eq!(lint["id"], "lint@team");
    assert_eq!(lint["installed"], false);
    assert_eq!(lint["enabled"], false);
    assert_eq!(lint["authPolicy"], "ON_USE");
    assert_eq!(lint["localVersion"], "1.0.0");
    assert_eq!(lint["interface"]["displayName"], "LINT");
    assert_eq!(lint["interface"]["category"], "Coding");
    assert_eq!(lint["source"]["type"], "local");
    assert_eq!(entry["plugins"][1]["installPolicy"], "NOT_AVAILABLE");
    let other_kinds = client.call("plugin/list", json!({"marketplaceKinds": ["vertical"]}));
    assert_eq!(other_kinds["marketplaces"], json!([]));

    let read = client.call(
        "plugin/read",
        json!({"pluginName": "lint", "marketplacePath": manifest}),
    );
    let detail = &read["plugin"];
    assert_eq!(detail["marketplaceName"], "team");
    assert_eq!(detail["description"], "The lint plugin");
    assert_eq!(detail["mcpServers"], json!(["lint-server"]));
    assert_eq!(detail["skills"][0]["name"], "lint:style");
    assert_eq!(detail["skills"][0]["description"], "Check the style");
    // Found without a marketplacePath too: one known marketplace has it.
    let by_name = client.call("plugin/read", json!({"pluginName": "lint"}));
    assert_eq!(by_name["plugin"]["summary"]["id"], "lint@team");
    let missing = client.call_err("plugin/read", json!({"pluginName": "nope"}));
    assert!(error_message(&missing).contains("nope"), "{missing}");
    let remote = client.call_err(
        "plugin/read",
        json!({"pluginName": "lint", "remoteMarketplaceName": "openai-curated"}),
    );
    assert_eq!(remote["code"], -32004);

    let found = client.call("plugin/search", json!({"searchTerm": "LIN"}));
    assert_eq!(found["data"][0]["plugin"]["id"], "lint@team");
    assert_eq!(found["data"][0]["marketplacePath"], manifest.as_str());
    let by_keyword = client.call(
        "plugin/search",
        json!({"searchTerm": "quality", "limit": 1}),
    );
    assert_eq!(by_keyword["data"].as_array().map(Vec::len), Some(1));
    assert_eq!(by_keyword["nextCursor"], "1");

    let locked = client.call_err(
        "plugin/install",
        json!({"pluginName": "locked", "marketplacePath": manifest}),
    );
    assert!(error_message(&locked).contains("not available"), "{locked}");
    let installed = client.call(
        "plugin/install",
        json!({"pluginName": "lint", "marketplacePath": manifest, "installAttemptId": "a1"}),
    );
    assert_eq!(
        installed,
        json!({"appsNeedingAuth": [], "authPolicy": "ON_USE"})
    );
    client.notification("skills/changed");
    let copy = home.join("plugins/team/lint");
    assert!(copy.join(".codex-plugin/plugin.json").is_file());
    let config = std::fs::read_to_string(home.join("config.toml")).expect("config");
    assert!(config.contains("[plugins.\"lint@team\"]"), "{config}");

    let skills = plugin_skills(&mut client, &root);
    assert_eq!(skills.len(), 1);
    assert_eq!(skills[0].0, "lint:style");
    assert_eq!(skills[0].1, "lint@team");
    assert!(
        skills[0].3.starts_with(&copy.display().to_string()),
        "{skills:?}"
    );

    let text = client.call(
        "plugin/skill/read",
        json!({"remoteMarketplaceName": "team", "remotePluginId": "lint@team", "skillName": "style"}),
    );
    assert!(
        text["contents"]
            .as_str()
            .is_some_and(|t| t.contains("Body of style."))
    );
    let none = client.call(
        "plugin/skill/read",
        json!({"remoteMarketplaceName": "team", "remotePluginId": "lint", "skillName": "nope"}),
    );
    assert_eq!(none["contents"], Value::Null);
    drop(client);

    // After a restart: installed, with its time; the marketplace still added.
    let mut client = start(&home);
    let answer = client.call("plugin/installed", json!({}));
    let plugins = &answer["marketplaces"][0]["plugins"];
    assert_eq!(plugins.as_array().map(Vec::len), Some(1));
    assert_eq!(plugins[0]["id"], "lint@team");
    assert_eq!(plugins[0]["installed"], true);
    assert_eq!(plugins[0]["enabled"], true);
    assert!(plugins[0]["installedAt"].as_i64().is_some_and(|t| t > 0));
    assert_eq!(answer["marketplaces"][0]["path"], manifest.as_str());
    let suggested = client.call(
        "plugin/installed",
        json!({"installSuggestionPluginNames": ["locked"]}),
    );
    assert_eq!(
        suggested["marketplaces"][0]["plugins"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );

    // Reconcile: nothing to do, then the marketplace's copy changes and is taken again.
    let quiet = client.call("plugin/reconcile", json!({"reason": "test"}));
    assert_eq!(
        quiet,
        json!({"changedPlugins": [], "failedMaterializationRemotePluginIds": [], "failedRemotePluginIds": []})
    );
    plugin(
        &market.join("plugins/lint"),
        "lint",
        "style",
        "Check the style, strictly",
    );
    let changed = client.call("plugin/reconcile", json!({}));
    assert_eq!(
        changed["changedPlugins"],
        json!([{"hasApps": false, "hasHooks": false, "hasMcps": true, "hasSkills": true, "id": "lint@team"}])
    );
    assert_eq!(
        plugin_skills(&mut client, &root)[0].2,
        "Check the style, strictly"
    );

    // Disabled in config.toml: its skills are no longer offered.
    client.call(
        "config/value/write",
        json!({"keyPath": "plugins.\"lint@team\".enabled", "value": false, "mergeStrategy": "replace"}),
    );
    assert!(plugin_skills(&mut client, &root).is_empty());
    let listed = client.call("plugin/list", json!({}));
    assert_eq!(listed["marketplaces"][0]["plugins"][0]["enabled"], false);
    assert_eq!(listed["marketplaces"][0]["plugins"][0]["installed"], true);

    let bad = client.call_err("plugin/uninstall", json!({"pluginId": "lint"}));
    assert!(error_message(&bad).contains("pluginId"), "{bad}");
    assert_eq!(
        client.call("plugin/uninstall", json!({"pluginId": "lint@team"})),
        json!({})
    );
    assert!(!copy.exists());
    let config = std::fs::read_to_string(home.join("config.toml")).expect("config");
    assert!(!config.contains("lint@team"), "{config}");
    assert!(plugin_skills(&mut client, &root).is_empty());
    assert_eq!(
        client.call("plugin/installed", json!({}))["marketplaces"],
        json!([])
    );

    let removed = client.call("marketplace/remove", json!({"marketplaceName": "team"}));
    assert_eq!(
        removed,
        json!({"installedRoot": null, "marketplaceName": "team"})
    );
    assert!(market.join(".agents/plugins/marketplace.json").is_file());
    assert_eq!(
        client.call("plugin/list", json!({}))["marketplaces"],
        json!([])
    );
    let again = client.call_err("marketplace/remove", json!({"marketplaceName": "team"}));
    assert!(error_message(&again).contains("not added"), "{again}");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_git_marketplace_is_cloned_upgraded_and_its_plugins_follow() {
    let root = scratch("plugins-git");
    let home = root.join("home");

    // A plugin kept in a repository of its own, named by the marketplace as a git source.
    let tool = root.join("tool");
    plugin(&tool, "tool", "fetch", "Fetch things");
    git(&tool, &["init", "--quiet"]);
    git(&tool, &["add", "."]);
    git(&tool, &["commit", "--quiet", "-m", "tool"]);
    let tool_bare = root.join("tool.git");
    git(&root, &["clone", "--quiet", "--bare", "tool", "tool.git"]);

    let work = root.join("work");
    marketplace(
        &work,
        "gitmarket",
        json!([
            {"name": "fmt", "source": "./plugins/fmt"},
            {"name": "tool", "source": {"source": "url", "url": tool_bare.display().to_string()}}
        ]),
    );
    plugin(&work.join("plugins/fmt"), "fmt", "tidy", "Tidy the code");
    git(&work, &["init", "--quiet"]);
    git(&work, &["add", "."]);
    git(&work, &["commit", "--quiet", "-m", "first"]);
    git(&root, &["clone", "--quiet", "--bare", "work", "market.git"]);
    git(&work, &["remote", "add", "origin", "../market.git"]);
    let bare = root.join("market.git");

    let mut client = start(&home);
    let added = client.call(
        "marketplace/add",
        json!({"source": bare.display().to_string()}),
    );
    let clone = home.join("marketplaces/gitmarket");
    assert_eq!(added["marketplaceName"], "gitmarket");
    assert_eq!(added["alreadyAdded"], false);
    assert_eq!(added["installedRoot"], clone.display().to_string());
    assert!(clone.join(".agents/plugins/marketplace.json").is_file());
    let registry = std::fs::read_to_string(home.join("marketplaces.toml")).expect("registry");
    assert!(registry.contains("source_type = \"git\""), "{registry}");
    assert!(registry.contains("last_revision"), "{registry}");

    let unchanged = client.call("marketplace/upgrade", json!({}));
    assert_eq!(unchanged["selectedMarketplaces"], json!(["gitmarket"]));
    assert_eq!(unchanged["upgradedRoots"], json!([]));
    assert_eq!(unchanged["errors"], json!([]));

    let manifest = clone
        .join(".agents/plugins/marketplace.json")
        .display()
        .to_string();
    let listed = client.call("plugin/list", json!({}));
    let plugins = &listed["marketplaces"][0]["plugins"];
    assert_eq!(plugins[1]["source"]["type"], "git");
    assert_eq!(plugins[1]["source"]["url"], tool_bare.display().to_string());
    for name in ["fmt", "tool"] {
        client.call(
            "plugin/install",
            json!({"pluginName": name, "marketplacePath": manifest}),
        );
    }
    assert!(
        home.join("plugins/gitmarket/tool/skills/fetch/SKILL.md")
            .is_file()
    );
    assert!(!home.join("plugins/gitmarket/tool/.git").exists());
    let names: Vec<String> = plugin_skills(&mut client, &root)
        .into_iter()
        .map(|s| s.0)
        .collect();
    assert_eq!(names, ["fmt:tidy", "tool:fetch"]);
    let read = client.call(
        "plugin/read",
        json!({"pluginName": "tool", "marketplacePath": manifest}),
    );
    assert_eq!(read["plugin"]["skills"][0]["name"], "tool:fetch");

    // The repository moves on; upgrade fetches it, reconcile refreshes the installed copy.
    plugin(
        &work.join("plugins/fmt"),
        "fmt",
        "tidy",
        "Tidy the code, twice",
    );
    git(&work, &["commit", "--quiet", "-am", "second"]);
    git(&work, &["push", "--quiet", "origin", "main"]);
    let upgraded = client.call(
        "marketplace/upgrade",
        json!({"marketplaceName": "gitmarket"}),
    );
    assert_eq!(
        upgraded["upgradedRoots"],
        json!([clone.display().to_string()])
    );
    let before = plugin_skills(&mut client, &root);
    assert_eq!(before[0].2, "Tidy the code");
    let changed = client.call("plugin/reconcile", json!({}));
    assert_eq!(changed["changedPlugins"][0]["id"], "fmt@gitmarket");
    assert_eq!(changed["changedPlugins"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        plugin_skills(&mut client, &root)[0].2,
        "Tidy the code, twice"
    );

    let unknown = client.call_err("marketplace/upgrade", json!({"marketplaceName": "nope"}));
    assert!(error_message(&unknown).contains("nope"), "{unknown}");
    let again = client.call(
        "marketplace/add",
        json!({"source": bare.display().to_string()}),
    );
    assert_eq!(again["alreadyAdded"], true);

    let removed = client.call(
        "marketplace/remove",
        json!({"marketplaceName": "gitmarket"}),
    );
    assert_eq!(removed["installedRoot"], clone.display().to_string());
    assert!(!clone.exists());
    // Its plugins stay installed, listed from their own manifests.
    let installed = client.call("plugin/installed", json!({}));
    assert_eq!(installed["marketplaces"][0]["name"], "gitmarket");
    assert_eq!(installed["marketplaces"][0]["path"], Value::Null);
    assert_eq!(
        installed["marketplaces"][0]["plugins"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );
    let _ = std::fs::remove_dir_all(&root);
}
