//! Skills offered to the model, through the binary against the mock model: every model call
//! carries, right after the developer instructions, a list of the enabled skills (name,
//! description, the path of their `SKILL.md`); a skill disabled with `skills/config/write` is
//! not listed; a `skill` input part naming an enabled skill puts its `SKILL.md` after the
//! user's message, and one naming a disabled skill puts nothing.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::client::{Client, completed_turn, thread_id};
use crate::common::scratch;
use crate::mock_model::{MockModel, Sse};

/// Writes a skill folder `name` under `root` with a body holding `marker`; returns the path of
/// its `SKILL.md`.
fn skill(root: &Path, name: &str, description: &str, marker: &str) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).expect("skill dir");
    let file = dir.join("SKILL.md");
    std::fs::write(
        &file,
        format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n{marker}\n"),
    )
    .expect("write SKILL.md");
    file
}

/// The system message of a chat call.
fn system(body: &Value) -> String {
    body["messages"][0]["content"]
        .as_str()
        .expect("a system message")
        .to_owned()
}

fn turn(client: &mut Client, thread: &str, input: Value) {
    client.call("turn/start", json!({"threadId": thread, "input": input}));
    let seen = client.until_turn_completed();
    assert_eq!(completed_turn(&seen)["status"], json!("completed"));
}

#[test]
fn enabled_skills_are_listed_to_the_model_and_a_mentioned_one_is_read_to_it() {
    let mock = MockModel::start(["A.", "B.", "C."].into_iter().map(Sse::answer).collect());
    let root = scratch("skills-model");
    let (home, work) = (root.join("home"), root.join("work"));
    std::fs::create_dir_all(&work).expect("work");
    let pdf = skill(
        &home.join("skills"),
        "pdf-tool",
        "Extract text from PDF files.",
        "PDF-BODY-MARKER",
    );
    let off = skill(
        &home.join("skills"),
        "old-deploy",
        "Deploy the old way.",
        "OFF-BODY-MARKER",
    );
    std::fs::write(
        home.join("config.toml"),
        format!(
            "model_provider = \"mock\"\nmodel = \"mock-model\"\napproval_policy = \"never\"\n\
             developer_instructions = \"Answer briefly.\"\n\n[model_providers.mock]\n\
             base_url = \"{}\"\nwire_api = \"chat\"\nrequest_max_retries = 0\n",
            mock.base_url()
        ),
    )
    .expect("config");
    let mut client = Client::start(&home);
    client.call(
        "skills/config/write",
        json!({"path": off, "enabled": false}),
    );
    let thread = thread_id(&client.start_thread(json!({"cwd": work})));
    turn(
        &mut client,
        &thread,
        json!([{"type": "text", "text": "Hello"}]),
    );
    turn(
        &mut client,
        &thread,
        json!([
            {"type": "text", "text": "Read this PDF"},
            {"type": "skill", "name": "pdf-tool", "path": pdf},
            {"type": "skill", "name": "old-deploy", "path": off}
        ]),
    );
    // Enabled again: listed from the next call on (the cache keeps what was found, not
    // whether it is enabled).
    client.call("skills/config/write", json!({"path": off, "enabled": true}));
    turn(
        &mut client,
        &thread,
        json!([{"type": "text", "text": "Again"}]),
    );
    client.stop();

    let bodies: Vec<Value> = mock.wait_requests(3).into_iter().map(|r| r.body).collect();
    let first = system(&bodies[0]);
    let listed = format!(
        "- pdf-tool: Extract text from PDF files. (SKILL.md: {})",
        pdf.display()
    );
    assert!(first.contains("<skills_instructions>"), "{first}");
    assert!(first.contains(&listed), "{first}");
    assert!(
        !first.contains("old-deploy"),
        "a disabled skill is listed: {first}"
    );
    // After the developer instructions (one system message on the chat wire).
    let dev = first
        .find("Answer briefly.")
        .expect("developer instructions");
    assert!(
        dev < first.find("<skills_instructions>").expect("list"),
        "{first}"
    );
    assert!(
        !bodies[0]["messages"]
            .to_string()
            .contains("PDF-BODY-MARKER")
    );

    let second = bodies[1]["messages"].to_string();
    assert!(second.contains("PDF-BODY-MARKER"), "{second}");
    assert!(
        second.contains(&format!("<path>{}</path>", pdf.display())),
        "{second}"
    );
    assert!(!second.contains("OFF-BODY-MARKER"), "{second}");
    assert!(!system(&bodies[1]).contains("old-deploy"));

    let third = system(&bodies[2]);
    assert!(
        third.contains("- old-deploy: Deploy the old way."),
        "{third}"
    );
}

/// A skill folder added under a known root shows up in `skills/list` (which reads the roots
/// anew) and in the turns after that.
#[test]
fn a_new_skill_is_found_on_force_reload() {
    let mock = MockModel::start(vec![Sse::answer("A.")]);
    let root = scratch("skills-reload");
    let (home, work) = (root.join("home"), root.join("work"));
    std::fs::create_dir_all(home.join("skills")).expect("skills root");
    std::fs::create_dir_all(&work).expect("work");
    std::fs::write(
        home.join("config.toml"),
        format!(
            "model_provider = \"mock\"\nmodel = \"mock-model\"\napproval_policy = \"never\"\n\n\
             [model_providers.mock]\nbase_url = \"{}\"\nwire_api = \"chat\"\n\
             request_max_retries = 0\n",
            mock.base_url()
        ),
    )
    .expect("config");
    let mut client = Client::start(&home);
    let cwds = json!({"cwds": [work.display().to_string()]});
    let names = |answer: &Value| -> Vec<String> {
        answer["data"][0]["skills"]
            .as_array()
            .expect("skills")
            .iter()
            .map(|s| s["name"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    assert!(names(&client.call("skills/list", cwds.clone())).is_empty());
    skill(
        &home.join("skills"),
        "late",
        "Arrived later.",
        "LATE-MARKER",
    );
    let mut reload = cwds.clone();
    reload["forceReload"] = json!(true);
    assert_eq!(names(&client.call("skills/list", reload)), ["late"]);
    let thread = thread_id(&client.start_thread(json!({"cwd": work})));
    turn(
        &mut client,
        &thread,
        json!([{"type": "text", "text": "Hi"}]),
    );
    client.stop();
    let body = &mock.wait_requests(1)[0].body;
    assert!(system(body).contains("- late: Arrived later."), "{body}");
}
