//! `review/start` through the binary: a review turn over a real git repository's diff (working
//! tree, base branch, one commit) or free-form instructions, answered by the mock model; its
//! `enteredReviewMode` / `exitedReviewMode` items, what the model was given, and the errors
//! for bad requests. The other turn-fidelity checks of this area live in the files below.

#[path = "compaction.rs"]
mod compaction;
#[path = "turn_details.rs"]
mod turn_details;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::client::{Client, completed_turn, params, thread_id};
use crate::common::{git, home_and_workspace, scratch};
use crate::mock_model::{MockModel, Recorded, Sse};

/// Writes `home`'s `config.toml`: the default provider `mock` (chat wire) at `mock`, and `extra`
/// top-level keys.
pub(crate) fn configure_mock(home: &Path, mock: &MockModel, extra: &str) {
    let config = format!(
        "model_provider = \"mock\"\nmodel = \"mock-model\"\n{extra}\n\n\
         [model_providers.mock]\nbase_url = \"{}\"\nrequest_max_retries = 0\n\
         model_context_window = 32768\n",
        mock.base_url()
    );
    std::fs::write(home.join("config.toml"), config).expect("write config");
}

/// A repository in `workspace`: `greet.txt` committed on `main`.
fn repository(workspace: &Path) {
    git(workspace, &["init", "-q"]);
    std::fs::write(workspace.join("greet.txt"), "hello\n").expect("write greet.txt");
    git(workspace, &["add", "greet.txt"]);
    git(workspace, &["commit", "-q", "-m", "Greet"]);
}

/// A fresh root with a home configured for `mock`, a workspace, and a server with a thread in
/// that workspace.
fn session(name: &str, mock: &MockModel) -> (PathBuf, PathBuf, Client, String) {
    let root = scratch(name);
    let (home, workspace) = home_and_workspace(&root);
    configure_mock(&home, mock, "");
    let mut client = Client::start(&home);
    let started = client.start_thread(json!({"cwd": workspace}));
    (root, workspace, client, thread_id(&started))
}

/// The text of the last user message of a recorded chat request.
fn last_user_text(request: &Recorded) -> String {
    let messages = request.body["messages"].as_array().expect("messages");
    let user = messages
        .iter()
        .rev()
        .find(|m| m["role"] == json!("user"))
        .expect("a user message");
    match &user["content"] {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// The `item/completed` items of `seen`.
fn completed_items(seen: &[Value]) -> Vec<Value> {
    params(seen, "item/completed")
        .into_iter()
        .map(|p| p["item"].clone())
        .collect()
}

/// Starts a review of `target` on `thread`; checks the answer and returns the review's turn id.
fn review(client: &mut Client, thread: &str, target: Value) -> String {
    let answer = client.call(
        "review/start",
        json!({"threadId": thread, "target": target, "delivery": "inline"}),
    );
    assert_eq!(answer["reviewThreadId"], json!(thread), "{answer}");
    assert_eq!(answer["turn"]["status"], json!("inProgress"), "{answer}");
    answer["turn"]["id"].as_str().expect("turn id").to_owned()
}

#[test]
fn a_review_of_uncommitted_changes_runs_inline_with_its_items() {
    let mock = MockModel::start(vec![
        Sse::answer("greet.txt: the second line repeats the first; drop it."),
        Sse::answer("Dropped."),
    ]);
    let (_root, workspace, mut client, thread) = session("review-uncommitted", &mock);
    repository(&workspace);
    std::fs::write(workspace.join("greet.txt"), "hello\nhello again\n").expect("edit");
    std::fs::write(workspace.join("new.txt"), "brand new\n").expect("untracked file");

    let turn_id = review(&mut client, &thread, json!({"type": "uncommittedChanges"}));
    let seen = client.until_turn_completed();
    let turn = completed_turn(&seen);
    assert_eq!(turn["id"], json!(turn_id));
    assert_eq!(turn["status"], json!("completed"), "{seen:#?}");
    let items = completed_items(&seen);
    let kinds: Vec<&Value> = items.iter().map(|i| &i["type"]).collect();
    assert_eq!(
        kinds,
        vec![
            &json!("enteredReviewMode"),
            &json!("agentMessage"),
            &json!("exitedReviewMode")
        ],
        "{seen:#?}"
    );
    assert_eq!(items[0]["review"], json!("uncommitted changes"));
    let findings = "greet.txt: the second line repeats the first; drop it.";
    assert_eq!(items[2]["review"], json!(findings));
    // Each item was announced before it completed.
    let started: Vec<&Value> = params(&seen, "item/started")
        .into_iter()
        .map(|p| &p["item"]["type"])
        .collect();
    assert_eq!(started, kinds);

    // The model got the review instructions and the diff: the edit and the untracked file.
    let request = &mock.wait_requests(1)[0];
    let prompt = last_user_text(request);
    assert!(prompt.contains("Review the code changes"), "{prompt}");
    assert!(prompt.contains("+hello again"), "{prompt}");
    assert!(
        prompt.contains("new.txt") && prompt.contains("+brand new"),
        "{prompt}"
    );

    // The review is recorded in the thread, and the next turn's model call sees it.
    let read = client.call(
        "thread/read",
        json!({"threadId": thread, "includeTurns": true}),
    );
    let recorded: Vec<&Value> = read["thread"]["turns"][0]["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| &i["type"])
        .collect();
    assert_eq!(recorded, kinds, "{read}");
    client.start_turn(&thread, "Fix it.");
    let seen = client.until_turn_completed();
    assert_eq!(completed_turn(&seen)["status"], json!("completed"));
    let next = &mock.wait_requests(2)[1];
    let conversation = next.body["messages"].to_string();
    assert!(
        conversation.contains("Review requested: uncommitted changes"),
        "{conversation}"
    );
    assert!(conversation.contains(findings), "{conversation}");
    assert!(
        !conversation.contains("+hello again"),
        "the diff is not sent again: {conversation}"
    );
    client.stop();
}

#[test]
fn commit_and_base_branch_reviews_read_their_own_changes() {
    let mock = MockModel::start(vec![
        Sse::answer("The commit looks correct."),
        Sse::answer("The branch looks correct."),
        Sse::answer("Checked."),
    ]);
    let (_root, workspace, mut client, thread) = session("review-commit", &mock);
    repository(&workspace);
    git(&workspace, &["checkout", "-q", "-b", "feature"]);
    std::fs::write(workspace.join("feature.txt"), "feature work\n").expect("feature file");
    git(&workspace, &["add", "feature.txt"]);
    git(&workspace, &["commit", "-q", "-m", "Add the feature"]);
    let sha = git(&workspace, &["rev-parse", "HEAD"]).trim().to_owned();

    review(
        &mut client,
        &thread,
        json!({"type": "commit", "sha": &sha[..10], "title": "Add the feature"}),
    );
    let seen = client.until_turn_completed();
    let items = completed_items(&seen);
    assert_eq!(
        items[0]["review"],
        json!(format!("commit {}: Add the feature", &sha[..7])),
        "{seen:#?}"
    );
    assert_eq!(
        items.last().expect("items")["type"],
        json!("exitedReviewMode")
    );
    let prompt = last_user_text(&mock.wait_requests(1)[0]);
    assert!(prompt.contains(&sha), "the full hash: {prompt}");
    assert!(prompt.contains("Add the feature"), "the message: {prompt}");
    assert!(prompt.contains("+feature work"), "the patch: {prompt}");
    assert!(
        !prompt.contains("+hello"),
        "not the earlier commit: {prompt}"
    );

    // Against main: the branch's commit and an uncommitted edit, not main's own history.
    std::fs::write(workspace.join("feature.txt"), "feature work\nmore\n").expect("edit");
    review(
        &mut client,
        &thread,
        json!({"type": "baseBranch", "branch": "main"}),
    );
    let seen = client.until_turn_completed();
    let items = completed_items(&seen);
    assert_eq!(
        items[0]["review"],
        json!("changes against main"),
        "{seen:#?}"
    );
    assert_eq!(
        items.last().expect("items")["review"],
        json!("The branch looks correct.")
    );
    let prompt = last_user_text(&mock.wait_requests(2)[1]);
    assert!(prompt.contains("+feature work"), "{prompt}");
    assert!(prompt.contains("+more"), "{prompt}");
    assert!(!prompt.contains("+hello"), "{prompt}");

    // A custom review: the instructions are the input; no repository needed.
    review(
        &mut client,
        &thread,
        json!({"type": "custom", "instructions": "Check feature.txt for typos."}),
    );
    let seen = client.until_turn_completed();
    let items = completed_items(&seen);
    assert_eq!(items[0]["review"], json!("Check feature.txt for typos."));
    assert_eq!(items.last().expect("items")["review"], json!("Checked."));
    let prompt = last_user_text(&mock.wait_requests(3)[2]);
    assert!(prompt.contains("Check feature.txt for typos."), "{prompt}");
    client.stop();
}

/// Checks `error` has `code` and a message naming `field`.
fn assert_error(error: &Value, code: i64, field: &str) {
    assert_eq!(error["code"], json!(code), "{error}");
    let message = error["message"].as_str().expect("message");
    assert!(message.contains(field), "{field} not named: {message}");
}

#[test]
fn bad_review_requests_are_refused_naming_the_field() {
    let mock = MockModel::start(vec![Sse::answer("Looks fine.")]);
    let (_root, workspace, mut client, thread) = session("review-errors", &mock);
    let uncommitted = json!({"type": "uncommittedChanges"});

    let unknown = client.call_err(
        "review/start",
        json!({"threadId": "no-such-thread", "target": uncommitted}),
    );
    assert_error(&unknown, -32600, "threadId");

    // The workspace is no repository yet.
    let no_repo = client.call_err(
        "review/start",
        json!({"threadId": thread, "target": uncommitted}),
    );
    assert_error(&no_repo, -32600, "target");
    assert!(
        no_repo["message"]
            .as_str()
            .is_some_and(|m| m.contains("not inside a git work tree")),
        "{no_repo}"
    );

    repository(&workspace);
    let bad_commit = client.call_err(
        "review/start",
        json!({"threadId": thread, "target": {"type": "commit", "sha": "0123456789abcdef"}}),
    );
    assert_error(&bad_commit, -32602, "target.sha");
    let option = client.call_err(
        "review/start",
        json!({"threadId": thread, "target": {"type": "commit", "sha": "--output=x"}}),
    );
    assert_error(&option, -32602, "target.sha");
    let bad_branch = client.call_err(
        "review/start",
        json!({"threadId": thread, "target": {"type": "baseBranch", "branch": "nowhere"}}),
    );
    assert_error(&bad_branch, -32602, "target.branch");
    let empty = client.call_err(
        "review/start",
        json!({"threadId": thread, "target": {"type": "custom", "instructions": "  "}}),
    );
    assert_error(&empty, -32602, "target.instructions");
    let detached = client.call_err(
        "review/start",
        json!({"threadId": thread, "target": uncommitted, "delivery": "detached"}),
    );
    assert_error(&detached, -32602, "delivery");
    let missing = client.call_err("review/start", json!({"threadId": thread}));
    assert_error(&missing, -32602, "target");

    // None of them started a turn: the thread still takes a review.
    review(&mut client, &thread, uncommitted);
    let seen = client.until_turn_completed();
    assert_eq!(completed_turn(&seen)["status"], json!("completed"));
    assert_eq!(params(&seen, "turn/started").len(), 1, "{seen:#?}");
    assert_eq!(mock.requests().len(), 1);
    client.stop();
}

/// The most bytes of diff a review gives the model (docs/review.md: "cut at 512 KiB").
const MAX_DIFF: usize = 512 * 1024;

/// What git shows for the working tree against `HEAD` in `workspace` (the server runs the
/// same `git diff`; no file here is untracked).
fn working_diff(workspace: &Path) -> String {
    git(
        workspace,
        &[
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "HEAD",
        ],
    )
}

/// The diff section of a review prompt: what follows its opening fence.
fn diff_section(prompt: &str) -> &str {
    let fence = "```diff\n";
    let at = prompt
        .find(fence)
        .unwrap_or_else(|| panic!("no diff fence in the prompt: {}", &prompt[..500]));
    &prompt[at + fence.len()..]
}

/// Checks `actual == expected`, showing only where two long texts part.
fn assert_same_text(actual: &str, expected: &str) {
    if actual == expected {
        return;
    }
    let at = actual
        .bytes()
        .zip(expected.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    let around = |text: &str| {
        let bytes = text.as_bytes();
        let from = at.saturating_sub(120);
        let to = (at + 200).min(bytes.len());
        String::from_utf8_lossy(&bytes[from..to]).into_owned()
    };
    panic!(
        "the texts part at byte {at} (lengths {} and {}):\nactual:   {:?}\nexpected: {:?}",
        actual.len(),
        expected.len(),
        around(actual),
        around(expected)
    );
}

/// The note a cut diff ends with.
fn cut_note(total: usize) -> String {
    format!(
        "\n\nThe diff was cut at {MAX_DIFF} bytes of {total}; read the rest of the changes from \
         the repository if you need them."
    )
}

/// docs/review.md: diffs are "cut at 512 KiB with a note". A diff of exactly 512 KiB reaches
/// the model whole, without the note; one byte more and the last byte is left out, with the
/// note giving both sizes.
#[test]
fn a_diff_of_512_kib_reaches_the_model_whole_and_one_byte_more_is_cut_with_a_note() {
    let mock = MockModel::start(vec![
        Sse::answer("The whole diff looks correct."),
        Sse::answer("The cut diff looks correct."),
    ]);
    let (root, workspace, mut client, thread) = session("review-diff-limit", &mock);
    git(&workspace, &["init", "-q"]);
    std::fs::write(workspace.join("edge.txt"), "start\n").expect("write edge.txt");
    git(&workspace, &["add", "edge.txt"]);
    git(&workspace, &["commit", "-q", "-m", "Start"]);

    // 4001 lines; the last one is sized so that git's diff is exactly 512 KiB.
    let line = format!("{}\n", "a".repeat(127));
    let body = line.repeat(4000);
    let mut last = 64;
    let mut diff = String::new();
    for _ in 0..5 {
        std::fs::write(
            workspace.join("edge.txt"),
            format!("{body}{}\n", "z".repeat(last)),
        )
        .expect("write edge.txt");
        diff = working_diff(&workspace);
        if diff.len() == MAX_DIFF {
            break;
        }
        last = (last + MAX_DIFF).checked_sub(diff.len()).expect("room");
    }
    assert_eq!(diff.len(), MAX_DIFF, "a diff of exactly 512 KiB");
    assert!(
        diff.starts_with("diff --git a/edge.txt b/edge.txt\n"),
        "{}",
        &diff[..200]
    );

    review(&mut client, &thread, json!({"type": "uncommittedChanges"}));
    let seen = client.until_turn_completed();
    assert_eq!(
        completed_turn(&seen)["status"],
        json!("completed"),
        "{seen:#?}"
    );
    let prompt = last_user_text(&mock.wait_requests(1)[0]);
    assert_same_text(diff_section(&prompt), &format!("{diff}```"));

    // One byte more: the diff's final newline is left out (the fence closes on a line of its
    // own all the same) and the note says so.
    std::fs::write(
        workspace.join("edge.txt"),
        format!("{body}{}\n", "z".repeat(last + 1)),
    )
    .expect("write edge.txt");
    let longer = working_diff(&workspace);
    assert_eq!(longer.len(), MAX_DIFF + 1);
    review(&mut client, &thread, json!({"type": "uncommittedChanges"}));
    let seen = client.until_turn_completed();
    assert_eq!(
        completed_turn(&seen)["status"],
        json!("completed"),
        "{seen:#?}"
    );
    let items = completed_items(&seen);
    assert_eq!(
        items.last().expect("items")["review"],
        json!("The cut diff looks correct.")
    );
    let prompt = last_user_text(&mock.wait_requests(2)[1]);
    let expected = format!("{}\n```{}", &longer[..MAX_DIFF], cut_note(MAX_DIFF + 1));
    assert_same_text(diff_section(&prompt), &expected);
    client.stop();
    let _ = std::fs::remove_dir_all(root);
}

/// docs/review.md: diffs are "cut at 512 KiB with a note". A 2 MiB diff whose 512 KiB mark
/// falls inside a four-byte character reaches the model as its first 512 KiB less that
/// character's first bytes (the text stays whole characters), then the note; the review turn
/// completes as usual.
#[test]
fn a_diff_of_megabytes_is_cut_at_512_kib_on_a_character_boundary_with_a_note() {
    let mock = MockModel::start(vec![Sse::answer("Too long to read in full.")]);
    let (root, workspace, mut client, thread) = session("review-diff-cut", &mock);
    git(&workspace, &["init", "-q"]);
    std::fs::write(workspace.join("big.txt"), "start\n").expect("write big.txt");
    git(&workspace, &["add", "big.txt"]);
    git(&workspace, &["commit", "-q", "-m", "Start"]);

    // Lines of four-byte characters (U+1D11E), 2 MiB in all, shifted by a few ASCII bytes
    // until the 512 KiB mark falls inside a character.
    let line = format!("{}\n", "\u{1D11E}".repeat(63));
    let lines = line.repeat(2 * 1024 * 1024 / line.len());
    let mut diff = String::new();
    for pad in 0..8 {
        let content = format!("{}{lines}", "x".repeat(pad));
        std::fs::write(workspace.join("big.txt"), content).expect("write big.txt");
        diff = working_diff(&workspace);
        if !diff.is_char_boundary(MAX_DIFF) {
            break;
        }
    }
    assert!(diff.len() > 2 * 1024 * 1024, "{}", diff.len());
    assert!(
        !diff.is_char_boundary(MAX_DIFF),
        "the mark falls inside a character"
    );
    let kept = (MAX_DIFF - 3..MAX_DIFF)
        .rev()
        .find(|&at| diff.is_char_boundary(at))
        .expect("a boundary within three bytes");

    let turn_id = review(&mut client, &thread, json!({"type": "uncommittedChanges"}));
    let seen = client.until_turn_completed();
    let turn = completed_turn(&seen);
    assert_eq!(turn["id"], json!(turn_id));
    assert_eq!(turn["status"], json!("completed"), "{seen:#?}");
    let items = completed_items(&seen);
    assert_eq!(items[0]["type"], json!("enteredReviewMode"), "{seen:#?}");
    assert_eq!(
        items.last().expect("items")["review"],
        json!("Too long to read in full.")
    );

    let prompt = last_user_text(&mock.wait_requests(1)[0]);
    assert!(
        prompt.contains("Review the code changes"),
        "{}",
        &prompt[..500]
    );
    let section = diff_section(&prompt);
    assert!(
        section.starts_with("diff --git a/big.txt b/big.txt\n"),
        "the diff's start is there: {}",
        &section[..200]
    );
    assert!(!section.contains('\u{FFFD}'), "no character was mangled");
    let fence = if diff[..kept].ends_with('\n') {
        ""
    } else {
        "\n"
    };
    let expected = format!("{}{fence}```{}", &diff[..kept], cut_note(diff.len()));
    assert_same_text(section, &expected);
    client.stop();
    let _ = std::fs::remove_dir_all(root);
}
