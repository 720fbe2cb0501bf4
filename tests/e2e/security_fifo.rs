//! A FIFO where an image should be (issue #32, finding 7): named as a `localImage`, or swapped
//! in for one by a model-run command, it used to block the server in `open` — over stdio the
//! whole connection stopped answering and SIGTERM or the end of input no longer stopped the
//! server. Now the file is opened without blocking and refused unless it is a regular file:
//! the request (or the image, in a later model call) is refused with the path and the reason,
//! the connection keeps answering, and the server stops on SIGTERM or at the end of input
//! within a few seconds.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::client::{Client, completed_turn, thread_id};
use crate::common::{fixture_steps, home_and_workspace, scratch, signal};
use crate::mock_model::{MockModel, Reply, Sse};

/// The first bytes of a PNG: enough for the server to take the file for one.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

/// How soon the server must be gone after SIGTERM or the end of its input.
const STOPS_WITHIN: Duration = Duration::from_secs(5);

fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("run mkfifo");
    assert!(made.success(), "mkfifo {}", path.display());
}

/// Waits for the server to exit, at most [`STOPS_WITHIN`] after `since`; fails otherwise.
fn assert_exits_soon(client: &mut Client, since: Instant, after: &str) {
    let status = client.wait_exit();
    let took = since.elapsed();
    assert!(
        took <= STOPS_WITHIN,
        "the server took {took:?} to exit after {after}\n{}",
        client.stderr()
    );
    assert!(
        status.success(),
        "exit after {after}: {status}\n{}",
        client.stderr()
    );
}

#[test]
fn a_fifo_named_as_an_image_is_refused_and_the_connection_keeps_answering() {
    let root = scratch("security-fifo-image");
    let (home, workspace) = home_and_workspace(&root);
    fixture_steps(&home, json!([{"type": "message", "deltas": ["fine"]}]), "");
    let fifo = workspace.join("pic.png");
    mkfifo(&fifo);
    let mut client = Client::start(&home);
    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));

    let error = client.call_err(
        "turn/start",
        json!({"threadId": thread, "input": [
            {"type": "text", "text": "Look."},
            {"type": "localImage", "path": fifo},
        ]}),
    );
    assert_eq!(error["code"], json!(-32602), "{error}");
    let message = error["message"].as_str().expect("message");
    for part in ["input[1].path", &*fifo.to_string_lossy(), "FIFO"] {
        assert!(message.contains(part), "`{part}` missing: {message}");
    }

    // The connection answers, and the thread still runs turns.
    let read = client.call("thread/read", json!({"threadId": thread}));
    assert_eq!(read["thread"]["id"], json!(thread), "{read}");
    client.start_turn(&thread, "Go on.");
    let seen = client.until_turn_completed();
    assert_eq!(completed_turn(&seen)["status"], json!("completed"));

    let sent = Instant::now();
    signal(client.pid(), "TERM");
    assert_exits_soon(&mut client, sent, "SIGTERM");
    let _ = std::fs::remove_dir_all(&root);
}

/// The image is a real PNG when the turn starts; the model's command swaps it for a FIFO, so
/// the next model call (which sends the whole conversation, the image read again) meets the
/// FIFO. Before the fix the call never left: the turn, and every later one, hung.
#[test]
fn a_fifo_swapped_in_for_an_image_fails_the_image_not_the_thread() {
    let mock = MockModel::start(vec![
        Reply::Stream(
            Sse::new()
                .tool_call(
                    0,
                    "call_swap",
                    "shell",
                    r#"{"command": "rm pic.png && mkfifo pic.png"}"#,
                )
                .finish("tool_calls"),
        ),
        Sse::answer("Swapped."),
    ]);
    let root = scratch("security-fifo-swap");
    let (home, workspace) = home_and_workspace(&root);
    std::fs::write(
        home.join("config.toml"),
        format!(
            "model_provider = \"mock\"\nmodel = \"mock-model\"\n\n[model_providers.mock]\n\
             name = \"mock model\"\nbase_url = \"{}\"\nrequest_max_retries = 0\n",
            mock.base_url()
        ),
    )
    .expect("config");
    let picture = workspace.join("pic.png");
    std::fs::write(&picture, PNG).expect("png");
    let mut client = Client::start(&home);
    let thread = thread_id(&client.start_thread(json!({
        "cwd": workspace, "approvalPolicy": "never", "sandbox": "workspace-write"
    })));
    client.start_turn_with(
        &thread,
        "Look.",
        json!({"input": [
            {"type": "text", "text": "Look."},
            {"type": "localImage", "path": picture},
        ]}),
    );
    let seen = client.until_turn_completed();
    assert_eq!(
        completed_turn(&seen)["status"],
        json!("completed"),
        "{seen:#?}"
    );
    let kind = std::fs::symlink_metadata(&picture).expect("the swapped file");
    assert!(
        std::os::unix::fs::FileTypeExt::is_fifo(&kind.file_type()),
        "the command did not swap the image for a FIFO"
    );
    let requests = mock.wait_requests(2);
    assert!(
        requests[0]
            .body
            .to_string()
            .contains("data:image/png;base64,"),
        "the first call carries the image"
    );
    let second = requests[1].body.to_string();
    assert!(
        second.contains(&format!(
            "[image file {} could not be attached",
            picture.display()
        )) && second.contains("FIFO"),
        "the second call says why the image is gone: {second}"
    );

    // Later turns run, and the connection answers.
    mock.push(Sse::answer("Still here."));
    client.start_turn(&thread, "Again.");
    let seen = client.until_turn_completed();
    assert_eq!(completed_turn(&seen)["status"], json!("completed"));
    client.call("thread/read", json!({"threadId": thread}));

    let closed = Instant::now();
    let _ = client.finish();
    assert_exits_soon(&mut client, closed, "the end of input");
    let _ = std::fs::remove_dir_all(&root);
}
