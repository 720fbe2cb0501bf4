//! The MCP servers an installed plugin brings, end to end: a plugin whose `.mcp.json` runs the
//! pinned `server-everything` is installed from a local marketplace; its server is listed by
//! `mcpServerStatus/list` as `<plugin>:<server>` and its tools are offered to the model, beside
//! (not instead of) a user's server of the same plain name; a user table of the namespaced
//! name wins, and disabling the plugin takes its server away.

use std::path::Path;

use serde_json::{Value, json};

use crate::client::{Client, thread_id};
use crate::common::{home_and_workspace, scratch, server_everything};
use crate::mock_model::{MockModel, Sse};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
    std::fs::write(path, text).expect("write");
}

/// A marketplace `team` in `market` with the plugin `kit`, whose MCP server `everything` runs
/// the pinned server.
fn marketplace(market: &Path) {
    write(
        &market.join(".agents/plugins/marketplace.json"),
        &json!({"name": "team", "plugins": [
            {"name": "kit", "source": {"source": "local", "path": "./plugins/kit"}}
        ]})
        .to_string(),
    );
    let kit = market.join("plugins/kit");
    write(
        &kit.join(".codex-plugin/plugin.json"),
        &json!({"name": "kit", "version": "1.0.0", "description": "Tools"}).to_string(),
    );
    write(
        &kit.join(".mcp.json"),
        &json!({"mcpServers": {"everything": {
            "type": "stdio", "command": "node", "args": [server_everything().display().to_string()],
            "startup_timeout_sec": 60
        }}})
        .to_string(),
    );
}

fn names(client: &mut Client) -> Vec<String> {
    let listed = client.call("mcpServerStatus/list", json!({}));
    listed["data"]
        .as_array()
        .expect("data")
        .iter()
        .filter_map(|s| s["name"].as_str().map(str::to_owned))
        .collect()
}

fn status_of(client: &mut Client, name: &str) -> Value {
    client.call("mcpServerStatus/list", json!({"serverName": name}))["data"][0].clone()
}

#[test]
fn an_installed_plugins_mcp_server_is_listed_and_offered_beside_the_users() {
    let mock = MockModel::start(vec![Sse::answer("Nothing to do.")]);
    let root = scratch("plugins-mcp");
    let (home, workspace) = home_and_workspace(&root);
    let market = root.join("market");
    marketplace(&market);
    let base = format!(
        "model_provider = \"mock\"\nmodel = \"m\"\n[model_providers.mock]\nbase_url = {:?}\n\
         [mcp_servers.everything]\ncommand = \"node\"\nargs = [{:?}]\nstartup_timeout_sec = 60\n\
         enabled_tools = [\"get-sum\"]\n",
        mock.base_url(),
        server_everything().display().to_string()
    );
    std::fs::write(home.join("config.toml"), &base).expect("config");
    let mut client = Client::start_with_capabilities(&home, json!({"experimentalApi": true}));
    assert_eq!(names(&mut client), ["everything"]);

    client.call(
        "marketplace/add",
        json!({"source": market.display().to_string()}),
    );
    let manifest = market
        .canonicalize()
        .expect("canonical")
        .join(".agents/plugins/marketplace.json");
    client.call(
        "plugin/install",
        json!({"pluginName": "kit", "marketplacePath": manifest.display().to_string()}),
    );
    assert_eq!(names(&mut client), ["everything", "kit:everything"]);
    let status = status_of(&mut client, "kit:everything");
    assert_eq!(status["runtimeStatus"], json!("connected"), "{status}");
    assert!(status["tools"]["echo"].is_object(), "{status}");
    // The user's own server keeps its configuration (only `get-sum`).
    let own = status_of(&mut client, "everything");
    assert!(own["tools"]["echo"].is_null(), "{own}");
    assert!(own["tools"]["get-sum"].is_object(), "{own}");

    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));
    client.start_turn(&thread, "hi");
    client.until_turn_completed();
    let requests = mock.wait_requests(1);
    let offered: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(offered.contains(&"kit_everything__echo"), "{offered:?}");
    assert!(offered.contains(&"everything__get-sum"), "{offered:?}");
    assert!(!offered.contains(&"everything__echo"), "{offered:?}");

    // A user table of the namespaced name wins over the plugin's.
    std::fs::write(
        home.join("config.toml"),
        format!(
            "{base}[mcp_servers.\"kit:everything\"]\ncommand = \"node\"\nenabled = false\n\
             [plugins.\"kit@team\"]\nenabled = true\n"
        ),
    )
    .expect("config");
    let overridden = status_of(&mut client, "kit:everything");
    assert_eq!(
        overridden["runtimeStatus"],
        json!("disabled"),
        "{overridden}"
    );

    // A disabled plugin brings no server.
    std::fs::write(
        home.join("config.toml"),
        format!("{base}[plugins.\"kit@team\"]\nenabled = false\n"),
    )
    .expect("config");
    assert_eq!(names(&mut client), ["everything"]);
}
