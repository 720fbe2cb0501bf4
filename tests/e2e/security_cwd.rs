//! `thread/start` takes only a working directory it can use (issue #32, part of finding 8): a
//! `cwd` with a NUL byte, a relative one, one that does not exist or is not a directory is
//! refused with -32602 naming the field and the reason, and no thread is made. `turn/start`
//! refuses a `cwd` override with a NUL byte or a relative path the same way.

use serde_json::json;

use crate::client::{Client, thread_id};
use crate::common::{home_and_workspace, scratch};

#[test]
fn thread_start_refuses_a_cwd_with_nul_relative_missing_or_not_a_directory() {
    let root = scratch("security-cwd");
    let (home, workspace) = home_and_workspace(&root);
    let file = workspace.join("a-file");
    std::fs::write(&file, "not a directory").expect("write");
    let missing = workspace.join("missing");
    let mut client = Client::start(&home);

    let cases = [
        (
            format!("{}/a\u{0}b", workspace.display()),
            "must not contain a NUL byte",
        ),
        (
            "project".to_owned(),
            "must be an absolute path, got `project`",
        ),
        ("../elsewhere".to_owned(), "must be an absolute path"),
        (String::new(), "must be an absolute path"),
        (missing.display().to_string(), "does not exist"),
        (file.display().to_string(), "is not a directory"),
    ];
    for (cwd, why) in &cases {
        let error = client.call_err("thread/start", json!({"cwd": cwd}));
        assert_eq!(error["code"], json!(-32602), "{cwd:?}: {error}");
        let message = error["message"].as_str().expect("message");
        assert!(
            message.contains("thread/start: cwd: ") && message.contains(why),
            "{cwd:?}: the error names the field and says `{why}`: {message}"
        );
    }
    let listed = client.call("thread/list", json!({}));
    assert_eq!(
        listed["data"],
        json!([]),
        "a refused thread/start made a thread"
    );

    // A usable directory still starts a thread; a turn cannot move it to a relative path.
    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));
    for (cwd, why) in [
        ("relative/dir", "must be an absolute path"),
        ("/tmp/a\u{0}b", "must not contain a NUL byte"),
    ] {
        let error = client.call_err(
            "turn/start",
            json!({"threadId": thread, "cwd": cwd, "input": [{"type": "text", "text": "hi"}]}),
        );
        assert_eq!(error["code"], json!(-32602), "{cwd:?}: {error}");
        let message = error["message"].as_str().expect("message");
        assert!(
            message.contains("turn/start: cwd: ") && message.contains(why),
            "{cwd:?}: {message}"
        );
    }
    client.stop();
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn thread_resume_and_fork_refuse_a_cwd_override_as_thread_start_does() {
    let root = scratch("security-cwd-resume");
    let (home, workspace) = home_and_workspace(&root);
    let file = workspace.join("a-file");
    std::fs::write(&file, "not a directory").expect("write");
    let missing = workspace.join("missing");
    let mut client = Client::start(&home);
    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));

    let cases = [
        (
            format!("{}/a\u{0}b", workspace.display()),
            "must not contain a NUL byte",
        ),
        ("project".to_owned(), "must be an absolute path"),
        (String::new(), "must be an absolute path"),
        (missing.display().to_string(), "does not exist"),
        (file.display().to_string(), "is not a directory"),
    ];
    for method in ["thread/resume", "thread/fork"] {
        for (cwd, why) in &cases {
            let error = client.call_err(method, json!({"threadId": thread, "cwd": cwd}));
            assert_eq!(error["code"], json!(-32602), "{method} {cwd:?}: {error}");
            let message = error["message"].as_str().expect("message");
            assert!(
                message.contains(&format!("{method}: cwd: ")) && message.contains(why),
                "{method} {cwd:?}: the error names the field and says `{why}`: {message}"
            );
        }
    }
    let listed = client.call("thread/loaded/list", json!({}));
    assert_eq!(
        listed["data"],
        json!([thread]),
        "a refused thread/fork made a thread"
    );
    // A usable directory is still taken.
    let forked = client.call("thread/fork", json!({"threadId": thread, "cwd": workspace}));
    assert!(forked["thread"]["id"].is_string(), "{forked}");
    client.stop();
    let _ = std::fs::remove_dir_all(&root);
}
