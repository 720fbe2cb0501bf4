//! Approvals mean exactly what was approved (issue #32, finding 2): a command the client
//! accepted "for the session" runs again without asking only as it was approved: the same
//! command line, in the same directory, under the same sandbox. The model asking to run it
//! outside the sandbox (`sandbox_permissions: require_escalated`) asks again, every time.

use std::path::Path;

use serde_json::{Value, json};

use crate::client::{Client, thread_id};
use crate::common::{home_and_workspace, scratch};

const APPROVAL: &str = "item/commandExecution/requestApproval";
const COMPLETED: &str = "turn/completed";

/// The next approval request, or a failure saying what happened instead (`what` names the
/// run that should have asked).
fn expect_approval(client: &mut Client, what: &str, outside: &Path) -> (Value, Value) {
    let next = client.first_of(&[APPROVAL, COMPLETED]);
    assert_eq!(
        next["method"],
        json!(APPROVAL),
        "{what} ran without asking (the file outside the roots exists: {}): {next:#}",
        outside.join("escalated.txt").exists()
    );
    (next["id"].clone(), next["params"].clone())
}

fn answer(client: &mut Client, id: &Value, decision: &str) {
    client.send(&json!({"id": id, "result": {"decision": decision}}));
}

/// The completed `commandExecution` items of `notifications`, in order.
fn commands(notifications: &[Value]) -> Vec<Value> {
    notifications
        .iter()
        .filter(|n| {
            n["method"] == json!("item/completed")
                && n["params"]["item"]["type"] == json!("commandExecution")
        })
        .map(|n| n["params"]["item"].clone())
        .collect()
}

/// The attack of finding 2 through the binary, `untrusted` + `read-only`: the model runs C,
/// the client answers `acceptForSession`; the model then runs C with escalation. Before the
/// fix it ran outside the sandbox without asking and wrote outside the roots. Now the
/// escalation asks (declined here: nothing is written); C itself, as approved, runs again
/// without asking and stays confined; C in another directory asks. The control at the end
/// shows the attack is real: the escalation, when the client does accept it, writes the file.
#[test]
fn an_approval_for_the_session_never_covers_an_escalation_or_another_directory() {
    let root = scratch("security-escalation");
    let (home, workspace) = home_and_workspace(&root);
    let outside = root.join("outside");
    std::fs::create_dir_all(&outside).expect("outside dir");
    std::fs::create_dir_all(workspace.join("sub")).expect("sub dir");
    let line = format!("echo escaped > {}/escalated.txt", outside.display());
    let run = |escalate: bool, workdir: Option<&str>| {
        let mut step = json!({"type": "command", "command": line, "escalate": escalate});
        if escalate {
            step["justification"] = json!("needs to write outside");
        }
        if let Some(dir) = workdir {
            step["workdir"] = json!(dir);
        }
        step
    };
    let message = |text: &str| json!({"type": "message", "deltas": [text]});
    let script = json!({"version": 1, "responses": [
        {"when": "control", "steps": [run(true, None), message("control done")]},
        {"steps": [
            run(false, None),
            run(true, None),
            run(false, None),
            run(false, Some("sub")),
            message("done")
        ]}
    ]});
    std::fs::write(home.join("script.json"), script.to_string()).expect("script");
    std::fs::write(
        home.join("config.toml"),
        "model_provider = \"fixture\"\nfixture_script = \"script.json\"\n",
    )
    .expect("config");

    let mut client = Client::start(&home);
    let thread = thread_id(&client.start_thread(
        json!({"cwd": workspace, "approvalPolicy": "untrusted", "sandbox": "read-only"}),
    ));
    client.start_turn(&thread, "attack");

    // 1. C, sandboxed: asked, and accepted for the session.
    let (id, asked) = expect_approval(&mut client, "the first run of C", &outside);
    assert_eq!(asked["command"], json!(line), "{asked:#}");
    answer(&mut client, &id, "acceptForSession");

    // 2. C with escalation: asks again, whatever the session approval says.
    let (id, asked) = expect_approval(&mut client, "the escalated run of C", &outside);
    assert_eq!(asked["command"], json!(line), "{asked:#}");
    assert_eq!(
        asked["reason"],
        json!("needs to write outside"),
        "{asked:#}"
    );
    answer(&mut client, &id, "decline");

    // 3. C, sandboxed, as approved: runs without asking. 4. C in `sub`: asks.
    let (id, asked) = expect_approval(&mut client, "C in another directory", &outside);
    assert_eq!(
        asked["cwd"],
        json!(workspace.join("sub").to_str()),
        "the run of C exactly as approved asked again: {asked:#}"
    );
    answer(&mut client, &id, "decline");

    let notifications = client.until_turn_completed();
    let items = commands(&notifications);
    let statuses: Vec<&Value> = items.iter().map(|i| &i["status"]).collect();
    assert_eq!(
        statuses,
        [
            &json!("failed"),
            &json!("declined"),
            &json!("failed"),
            &json!("declined")
        ],
        "{items:#?}"
    );
    for confined in [&items[0], &items[2]] {
        assert!(
            confined["aggregatedOutput"]
                .as_str()
                .is_some_and(|o| o.contains("Read-only file system")),
            "a sandboxed run of C was not confined: {confined:#}"
        );
    }
    assert!(
        !outside.join("escalated.txt").exists(),
        "a run of C wrote outside the roots"
    );

    // Control: the escalation accepted once runs outside the sandbox and writes the file.
    client.start_turn(&thread, "control");
    let (id, asked) = expect_approval(&mut client, "the control's escalation", &outside);
    assert_eq!(asked["command"], json!(line), "{asked:#}");
    answer(&mut client, &id, "accept");
    client.until_turn_completed();
    assert_eq!(
        std::fs::read_to_string(outside.join("escalated.txt")).expect("the control's file"),
        "escaped\n"
    );
    client.stop();
    let _ = std::fs::remove_dir_all(&root);
}
