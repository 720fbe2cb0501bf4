//! Signing in from the terminal, through the binary: `agentwire login [--with-api-key]` reads
//! the key from stdin and stores `auth.json` (0600) exactly as `account/login/start` does,
//! `agentwire login status` prints the sign-in with the key masked (exit 0 signed in, 1 not),
//! `agentwire logout` removes it; a provider's 401 names the command to run.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::json;

use crate::client::{Client, completed_turn, thread_id};
use crate::common::{mode, run_fed, scratch};
use crate::mock_model::{MockModel, Reply, Sse};

/// The key the tests sign in with.
const KEY: &str = "sk-test-login-0123456789abcdef";
/// How `login status` shows it.
const MASKED: &str = "sk-test-***bcdef";

/// Runs `agentwire args` on `home` with `stdin` piped in.
fn run(home: &Path, args: &[&str], stdin: &str) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agentwire"));
    command.args(args).env("AGENTWIRE_HOME", home);
    run_fed(command, stdin)
}

/// stdout and stderr of `output`, as text.
fn texts(output: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A `config.toml` for `mock` (no `env_key`: the stored key is its bearer token).
fn configure(home: &Path, mock: &MockModel) {
    let config = format!(
        "model_provider = \"mock\"\nmodel = \"mock-model\"\n\n[model_providers.mock]\n\
         name = \"Mock\"\nbase_url = \"{}\"\nrequest_max_retries = 0\n",
        mock.base_url()
    );
    std::fs::write(home.join("config.toml"), config).expect("write config");
}

#[test]
fn login_stores_the_key_as_the_protocol_does_and_status_and_logout_follow() {
    let root = scratch("login-cli");
    let (cli_home, rpc_home) = (root.join("cli"), root.join("rpc"));
    std::fs::create_dir_all(&cli_home).expect("home");
    std::fs::create_dir_all(&rpc_home).expect("home");

    // Signed out: status says so and exits 1.
    let status = run(&cli_home, &["login", "status"], "");
    let (out, _) = texts(&status);
    assert_eq!(status.status.code(), Some(1), "{out}");
    assert!(out.contains("Not signed in"), "{out}");
    assert!(out.contains("agentwire login"), "{out}");

    // Codex's spelling, the key piped in with its newline.
    let login = run(&cli_home, &["login", "--with-api-key"], &format!("{KEY}\n"));
    let (out, err) = texts(&login);
    assert!(login.status.success(), "{out}{err}");
    assert!(out.contains(MASKED), "{out}");
    assert!(
        !out.contains(KEY) && !err.contains(KEY),
        "the key was printed: {out}{err}"
    );
    let auth = cli_home.join("auth.json");
    assert_eq!(mode(&auth), 0o600);

    // The same file `account/login/start` writes.
    let mut client = Client::start(&rpc_home);
    client.call(
        "account/login/start",
        json!({"type": "apiKey", "apiKey": KEY}),
    );
    client.stop();
    assert_eq!(
        std::fs::read(&auth).expect("cli auth.json"),
        std::fs::read(rpc_home.join("auth.json")).expect("rpc auth.json")
    );

    let status = run(&cli_home, &["login", "status"], "");
    let (out, _) = texts(&status);
    assert_eq!(status.status.code(), Some(0), "{out}");
    assert!(out.contains("API key") && out.contains(MASKED), "{out}");
    assert!(!out.contains(KEY), "{out}");

    // A server on the home sees the sign-in and sends the key.
    let mock = MockModel::start(vec![Sse::answer("Hi.")]);
    configure(&cli_home, &mock);
    let mut client = Client::start(&cli_home);
    let account = client.call("account/read", json!({}));
    assert_eq!(account["account"]["type"], json!("apiKey"), "{account}");
    let thread = thread_id(&client.start_thread(json!({})));
    client.start_turn(&thread, "Hello");
    let seen = client.until_turn_completed();
    assert_eq!(completed_turn(&seen)["status"], json!("completed"));
    client.stop();
    let requests = mock.wait_requests(1);
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );

    // `agentwire login` without the flag reads stdin too, replacing the key.
    let login = run(&cli_home, &["login"], "sk-test-second-key-99999\n");
    assert!(login.status.success(), "{:?}", texts(&login));
    let status = run(&cli_home, &["login", "status"], "");
    assert!(texts(&status).0.contains("sk-test-***99999"), "{status:?}");

    let logout = run(&cli_home, &["logout"], "");
    let (out, _) = texts(&logout);
    assert!(logout.status.success(), "{out}");
    assert!(out.contains("Signed out"), "{out}");
    assert!(!auth.exists());
    let status = run(&cli_home, &["login", "status"], "");
    assert_eq!(status.status.code(), Some(1), "{status:?}");
    let logout = run(&cli_home, &["logout"], "");
    assert!(logout.status.success());
    assert!(texts(&logout).0.contains("Not signed in"), "{logout:?}");
}

#[test]
fn a_bad_key_on_stdin_is_refused_without_being_quoted() {
    let home = scratch("login-cli-bad");
    let empty = run(&home, &["login", "--with-api-key"], "\n");
    let (_, err) = texts(&empty);
    assert_eq!(empty.status.code(), Some(1), "{err}");
    assert!(err.contains("no API key on stdin"), "{err}");
    let spaced = run(&home, &["login", "--with-api-key"], "sk secret words\n");
    let (out, err) = texts(&spaced);
    assert_eq!(spaced.status.code(), Some(1), "{err}");
    assert!(err.contains("spaces"), "{err}");
    assert!(
        !err.contains("secret") && !out.contains("secret"),
        "{out}{err}"
    );
    assert!(!home.join("auth.json").exists());
}

#[test]
fn a_refused_key_names_the_command_that_signs_in() {
    let mock = MockModel::start(vec![Reply::status(
        401,
        r#"{"error":{"message":"Incorrect API key provided"}}"#,
    )]);
    let home = scratch("login-cli-401");
    configure(&home, &mock);
    let mut client = Client::start(&home);
    let thread = thread_id(&client.start_thread(json!({})));
    client.start_turn(&thread, "Hello");
    let seen = client.until_turn_completed();
    let turn = completed_turn(&seen);
    assert_eq!(turn["status"], json!("failed"), "{turn}");
    let message = turn["error"]["message"].as_str().expect("message");
    assert!(message.contains("agentwire login"), "{message}");
    client.stop();
}
