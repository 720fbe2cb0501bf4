//! Configuration problems that say what is wrong and cost nothing else (docs/providers.md,
//! "Mistakes in a provider's table"): every unknown or invalid key of a provider's table is
//! reported on its own, with its table, key, line and column, in `configWarning` and by
//! `agentwire exec`; the valid rest of the table stays in effect; a typo in a table overriding
//! a built-in provider leaves the built-in provider in place.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::client::{Client, completed_turn, thread_id};
use crate::common::{home_and_workspace, scratch, text};
use crate::mock_model::{MockModel, Sse};

/// A config whose `local` provider (at `base_url`) has an unknown key (line 6) and an invalid
/// value (line 7) among valid keys, and whose `ollama` override misspells `base_url` (line 10).
fn config(base_url: &str) -> String {
    format!(
        "model_provider = \"local\"\n\
         model = \"mock-model\"\n\
         \n\
         [model_providers.local]\n\
         base_url = \"{base_url}\"\n\
         env_kye = \"LOCAL_KEY\"\n\
         wire_api = \"carrier-pigeon\"\n\
         request_max_retries = 0\n\
         [model_providers.ollama]\n\
         bsae_url = \"http://127.0.0.1:9/v1\"\n"
    )
}

/// Every `configWarning` the server sent up to the answer of a `config/read`.
fn warnings(client: &mut Client) -> Vec<Value> {
    client.call("config/read", json!({}));
    client
        .backlog()
        .into_iter()
        .filter(|n| n["method"] == json!("configWarning"))
        .map(|n| n["params"].clone())
        .collect()
}

/// The `(line, column)` a warning's range starts at.
fn start(warning: &Value) -> (u64, u64) {
    let start = &warning["range"]["start"];
    (
        start["line"].as_u64().expect("line"),
        start["column"].as_u64().expect("column"),
    )
}

/// docs/providers.md: each bad key of `[model_providers.local]` is its own `configWarning`
/// naming the table and the key at its line and column (an unknown key with the known key it
/// resembles); the table's valid keys stay in effect, so its turn runs against the server; the
/// misspelled key of `[model_providers.ollama]` is reported and the built-in `ollama` stays.
#[test]
fn every_bad_key_is_reported_where_it_is_and_the_rest_of_its_table_stays() {
    let mock = MockModel::start(vec![Sse::answer("Still here.")]);
    let (home, workspace) = home_and_workspace(&scratch("config-problems"));
    std::fs::write(home.join("config.toml"), config(&mock.base_url())).expect("config");
    let path = home.join("config.toml");
    let mut client = Client::start(&home);
    let found = warnings(&mut client);
    assert_eq!(found.len(), 3, "{found:#?}");
    let summaries: Vec<&str> = found
        .iter()
        .map(|w| w["summary"].as_str().expect("summary"))
        .collect();
    assert_eq!(
        summaries,
        [
            "unknown configuration key `env_kye` in table [model_providers.local] (did you \
             mean `env_key`?)",
            "invalid value for `wire_api` in table [model_providers.local]",
            "unknown configuration key `bsae_url` in table [model_providers.ollama] (did you \
             mean `base_url`?)",
        ]
    );
    assert_eq!(
        found.iter().map(start).collect::<Vec<_>>(),
        [(6, 1), (7, 1), (10, 1)]
    );
    assert!(
        found[1]["details"]
            .as_str()
            .is_some_and(|d| d.contains("carrier-pigeon")),
        "{}",
        found[1]
    );
    for warning in &found {
        assert_eq!(warning["path"], json!(path), "{warning}");
    }

    // The table is still there: its turn reaches the server, on the default (chat) wire.
    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));
    client.start_turn(&thread, "Hello");
    let seen = client.until_turn_completed();
    assert_eq!(
        completed_turn(&seen)["status"],
        json!("completed"),
        "{seen:#?}"
    );
    let requests = mock.wait_requests(1);
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert_eq!(requests[0].body["model"], json!("mock-model"));

    // And so is the built-in `ollama`: `model/list` knows it (its server is not running: a
    // warning, not "there is no model provider").
    let listed = client.request("model/list", json!({"modelProvider": "ollama"}));
    assert!(listed.is_ok(), "{listed:?}");
    client.stop();
}

/// docs/providers.md: `agentwire exec` prints every configuration problem on its own line,
/// `FILE:LINE:COLUMN: what: details`, and the turn still runs.
#[test]
fn exec_prints_every_problem_with_its_place() {
    let mock = MockModel::start(vec![Sse::answer("Done.")]);
    let (home, workspace) = home_and_workspace(&scratch("config-problems-exec"));
    std::fs::write(home.join("config.toml"), config(&mock.base_url())).expect("config");
    let output = exec(&home, &workspace, "Hello");
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(stdout, "Done.\n", "{stderr}");
    let file = home.join("config.toml");
    let file = file.display();
    for line in [
        format!(
            "warning: {file}:6:1: unknown configuration key `env_kye` in table \
             [model_providers.local] (did you mean `env_key`?)"
        ),
        format!(
            "warning: {file}:7:1: invalid value for `wire_api` in table [model_providers.local]: \
             unknown variant `carrier-pigeon`"
        ),
        format!(
            "warning: {file}:10:1: unknown configuration key `bsae_url` in table \
             [model_providers.ollama] (did you mean `base_url`?)"
        ),
    ] {
        assert!(
            stderr.lines().any(|l| l.starts_with(&line)),
            "no line starting {line:?} in:\n{stderr}"
        );
    }
}

/// Runs `agentwire exec --cwd WORKSPACE PROMPT` on `home`.
fn exec(home: &Path, workspace: &Path, prompt: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .arg("exec")
        .arg("--cwd")
        .arg(workspace)
        .arg(prompt)
        .env("AGENTWIRE_HOME", home)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("run agentwire exec")
}
