//! An approved patch lands where it was approved (issue #32, finding 3): the server writes
//! it, outside the sandbox, so a directory swapped for a symbolic link while the approval
//! waited must not carry the write elsewhere. The patch fails instead; nothing is written
//! outside the roots, and an approved patch nobody raced is written as usual.

use std::path::Path;

use serde_json::{Value, json};

use crate::client::{Client, thread_id};
use crate::common::{home_and_workspace, scratch};

const APPROVAL: &str = "item/fileChange/requestApproval";

fn add(path: &str) -> Value {
    json!({"type": "patch",
           "patch": format!("*** Begin Patch\n*** Add File: {path}\n+approved\n*** End Patch\n")})
}

fn accept(client: &mut Client, id: &Value) {
    client.send(&json!({"id": id, "result": {"decision": "accept"}}));
}

/// The completed `fileChange` items of `notifications`, in order.
fn file_changes(notifications: &[Value]) -> Vec<Value> {
    notifications
        .iter()
        .filter(|n| {
            n["method"] == json!("item/completed")
                && n["params"]["item"]["type"] == json!("fileChange")
        })
        .map(|n| n["params"]["item"].clone())
        .collect()
}

#[test]
fn a_link_swapped_in_while_a_patch_waits_for_approval_does_not_redirect_it() {
    let root = scratch("security-patch-swap");
    let (home, workspace) = home_and_workspace(&root);
    let outside = root.join("outside");
    std::fs::create_dir_all(&outside).expect("outside");
    std::fs::create_dir_all(workspace.join("sub")).expect("sub");
    let script = json!({"version": 1, "responses": [{"steps": [
        add("sub/notes.txt"),
        add("kept/ok.txt"),
        {"type": "message", "deltas": ["done"]}
    ]}]});
    std::fs::write(home.join("script.json"), script.to_string()).expect("script");
    std::fs::write(
        home.join("config.toml"),
        "model_provider = \"fixture\"\nfixture_script = \"script.json\"\n",
    )
    .expect("config");

    let mut client = Client::start(&home);
    let thread = thread_id(&client.start_thread(
        json!({"cwd": workspace, "approvalPolicy": "untrusted", "sandbox": "workspace-write"}),
    ));
    // Only the workspace is writable (the scratch directory is under /tmp).
    client.start_turn_with(
        &thread,
        "patch",
        json!({"sandboxPolicy": {"type": "workspaceWrite", "excludeSlashTmp": true,
                                 "excludeTmpdirEnvVar": true}}),
    );

    // The approval of `sub/notes.txt` waits; meanwhile `sub` becomes a link to `outside`.
    let (id, _) = client.server_request(APPROVAL);
    std::fs::rename(workspace.join("sub"), workspace.join("sub-old")).expect("move sub");
    std::os::unix::fs::symlink(&outside, workspace.join("sub")).expect("link sub");
    accept(&mut client, &id);

    // The control: an approved patch nobody raced is written.
    let (id, _) = client.server_request(APPROVAL);
    accept(&mut client, &id);
    let notifications = client.until_turn_completed();

    let written = |path: &Path| path.exists();
    assert!(
        !written(&outside.join("notes.txt")),
        "the approved patch followed the link out of the roots"
    );
    assert!(!written(&workspace.join("sub-old/notes.txt")));
    let items = file_changes(&notifications);
    assert_eq!(items.len(), 2, "{notifications:#?}");
    assert_eq!(items[0]["status"], json!("failed"), "{:#}", items[0]);
    assert_eq!(
        items[0]["changes"][0]["path"],
        json!(workspace.join("sub/notes.txt").to_str()),
        "{:#}",
        items[0]
    );
    assert_eq!(items[1]["status"], json!("completed"), "{:#}", items[1]);
    assert_eq!(
        std::fs::read_to_string(workspace.join("kept/ok.txt")).expect("the control's file"),
        "approved\n"
    );
    client.stop();
    let _ = std::fs::remove_dir_all(&root);
}
