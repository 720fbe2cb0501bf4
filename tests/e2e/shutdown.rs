//! Shutdown loses nothing: end of input delivers every answer and notification already due and
//! lets a running turn finish; SIGTERM interrupts running turns, records them and flushes their
//! last notifications before the server exits 0. However the server is told to stop (SIGTERM,
//! SIGINT, end of input), it kills the commands of its turns and its `command/exec` processes
//! first, even unconfined ones (`danger-full-access`) that no sandbox would end.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::client::{Client, thread_id};
use crate::common::{alive, fixture_steps, home_and_workspace, scratch, signal};
use crate::engine_turns::slow_script;

fn count(messages: &[Value], method: &str) -> usize {
    messages
        .iter()
        .filter(|m| m["method"] == json!(method))
        .count()
}

fn answers(messages: &[Value]) -> usize {
    messages
        .iter()
        .filter(|m| m.get("id").is_some() && m.get("method").is_none())
        .count()
}

/// The `turn/completed` params among `messages`.
fn completed_turns(messages: &[Value]) -> Vec<&Value> {
    messages
        .iter()
        .filter(|m| m["method"] == json!("turn/completed"))
        .map(|m| &m["params"]["turn"])
        .collect()
}

#[test]
fn end_of_input_delivers_every_notification_already_due() {
    let home = scratch("shutdown-eof-burst");
    let mut client = Client::start(&home);
    const THREADS: usize = 500;
    for id in 0..THREADS {
        client.send(&json!({"id": 1000 + id, "method": "thread/start", "params": {}}));
    }
    let rest = client.finish();
    assert_eq!(answers(&rest), THREADS, "every thread/start answered");
    assert_eq!(
        count(&rest, "thread/started"),
        THREADS,
        "every thread/started delivered before exit"
    );
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn end_of_input_lets_a_running_turn_finish() {
    let home = scratch("shutdown-eof-turn");
    slow_script(&home, 10, 50);
    let mut client = Client::start(&home);
    let thread = thread_id(&client.start_thread(json!({})));
    let turn = client.start_turn(&thread, "Talk a while.");
    let rest = client.finish();
    let completed = completed_turns(&rest);
    assert_eq!(completed.len(), 1, "one turn/completed: {rest:?}");
    assert_eq!(completed[0]["id"], json!(turn));
    assert_eq!(completed[0]["status"], json!("completed"));
    assert_eq!(count(&rest, "item/agentMessage/delta"), 10, "every delta");

    let mut again = Client::start(&home);
    let read = again.call(
        "thread/read",
        json!({"threadId": thread, "includeTurns": true}),
    );
    assert_eq!(read["thread"]["turns"][0]["status"], json!("completed"));
    again.stop();
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn sigterm_interrupts_running_turns_records_them_and_exits_cleanly() {
    let home = scratch("shutdown-sigterm");
    slow_script(&home, 1000, 50);
    let mut client = Client::start(&home);
    let thread = thread_id(&client.start_thread(json!({})));
    let turn = client.start_turn(&thread, "Talk for a long time.");
    client.notification("item/agentMessage/delta");
    signal(client.pid(), "TERM");
    // The server exits 0 on its own, having sent the turn's end.
    let rest = client.rest();
    let completed = completed_turns(&rest);
    assert_eq!(completed.len(), 1, "one turn/completed: {rest:?}");
    assert_eq!(completed[0]["id"], json!(turn));
    assert_eq!(completed[0]["status"], json!("interrupted"));
    assert!(
        count(&rest, "item/agentMessage/delta") < 999,
        "the turn was cut short, not run to its end"
    );

    let mut again = Client::start(&home);
    let read = again.call(
        "thread/read",
        json!({"threadId": thread, "includeTurns": true}),
    );
    assert_eq!(read["thread"]["turns"][0]["status"], json!("interrupted"));
    again.stop();
    let _ = std::fs::remove_dir_all(&home);
}

/// Room for a loaded machine on top of a promised time.
const SLACK: Duration = Duration::from_secs(5);

/// How a test tells the server to stop.
#[derive(Clone, Copy, Debug)]
enum Stop {
    Sigterm,
    Sigint,
    EndOfInput,
}

impl Stop {
    /// Tells the server to stop; once it has exited 0, returns every message it wrote that had
    /// not been looked at.
    fn apply(self, client: &mut Client) -> Vec<Value> {
        match self {
            Stop::Sigterm => signal(client.pid(), "TERM"),
            Stop::Sigint => signal(client.pid(), "INT"),
            Stop::EndOfInput => return client.finish(),
        }
        client.rest()
    }

    /// How long the server may take to exit: a signal interrupts at once (docs/app-server.md, `stdio://`); at
    /// end of input a running turn may go on for 10 s (same place).
    fn allowed(self) -> Duration {
        match self {
            Stop::Sigterm | Stop::Sigint => SLACK,
            Stop::EndOfInput => Duration::from_secs(10) + SLACK,
        }
    }
}

/// A shell script that starts `sleep 300` in the background (in its process group), writes its
/// own pid and the sleep's to `file` (whole, by renaming) and waits.
fn sleeper_script(file: &Path) -> String {
    let file = file.display();
    format!("sleep 300 & echo $$ $! > {file}.tmp && mv {file}.tmp {file}; wait")
}

/// The processes a [`sleeper_script`] started; killed on drop, so a failing test leaves none
/// behind.
struct Sleepers(Vec<u32>);

impl Sleepers {
    /// Waits (30 s at most) for each of `files` to appear, then reads the pids in them: the
    /// test cannot pass if the command never ran.
    fn wait_for(files: &[PathBuf]) -> Self {
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut pids = Vec::new();
        for file in files {
            while !file.exists() {
                assert!(
                    Instant::now() < deadline,
                    "{} never written",
                    file.display()
                );
                std::thread::sleep(Duration::from_millis(20));
            }
            let text = std::fs::read_to_string(file).expect("read the pid file");
            pids.extend(
                text.split_whitespace()
                    .map(|p| p.parse::<u32>().expect("pid")),
            );
        }
        assert_eq!(pids.len(), 2 * files.len(), "a shell and a sleep each");
        assert!(pids.iter().all(|&pid| alive(pid)), "{pids:?} run");
        Self(pids)
    }

    fn survivors(&self) -> Vec<u32> {
        self.0.iter().copied().filter(|&pid| alive(pid)).collect()
    }
}

impl Drop for Sleepers {
    fn drop(&mut self) {
        for pid in self.survivors() {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .stderr(Stdio::null())
                .status();
        }
    }
}

/// Stops the server `how` and checks that it exits 0 in the time allowed and that every one of
/// `sleepers` is gone by then (a few seconds for the kernel to finish them); returns the
/// messages the server wrote meanwhile.
fn stop_and_check_killed(client: &mut Client, how: Stop, sleepers: &Sleepers) -> Vec<Value> {
    let started = Instant::now();
    let rest = how.apply(client);
    let took = started.elapsed();
    assert!(
        took <= how.allowed(),
        "{how:?}: the server took {took:?} to exit, allowed {:?}",
        how.allowed()
    );
    let deadline = Instant::now() + SLACK;
    loop {
        let survivors = sleepers.survivors();
        if survivors.is_empty() {
            return rest;
        }
        assert!(
            Instant::now() < deadline,
            "{how:?}: {survivors:?} of {:?} still run {SLACK:?} after the server exited",
            sleepers.0
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A turn under `danger-full-access` (approval `never`) runs a shell that waits on a `sleep`;
/// once both run, the server is stopped `how`: it must exit in time, both processes must be
/// gone, and the turn must end `interrupted`.
fn a_stop_kills_the_command_of_a_running_turn(name: &str, how: Stop) {
    let root = scratch(name);
    let (home, workspace) = home_and_workspace(&root);
    let pids = workspace.join("pids");
    let command = sleeper_script(&pids);
    fixture_steps(
        &home,
        json!([{"type": "command", "command": command, "timeoutMs": 600_000}]),
        "",
    );
    let mut client = Client::start(&home);
    let thread = thread_id(&client.start_thread(json!({
        "cwd": workspace, "approvalPolicy": "never", "sandbox": "danger-full-access"
    })));
    let turn = client.start_turn(&thread, "Sleep.");
    let sleepers = Sleepers::wait_for(&[pids]);

    let rest = stop_and_check_killed(&mut client, how, &sleepers);
    let completed = completed_turns(&rest);
    assert_eq!(completed.len(), 1, "one turn/completed: {rest:?}");
    assert_eq!(completed[0]["id"], json!(turn));
    assert_eq!(completed[0]["status"], json!("interrupted"));
    drop(sleepers);
    let _ = std::fs::remove_dir_all(&root);
}

/// Two unconfined `command/exec` processes, one with a `processId` (streamed) and one without
/// (buffered), each a shell waiting on a `sleep`; once all run, the server is stopped `how`: it
/// must exit in time and every process must be gone.
fn a_stop_kills_command_exec_processes(name: &str, how: Stop) {
    let home = scratch(name);
    let mut client = Client::start(&home);
    let files = [home.join("streamed"), home.join("buffered")];
    let streamed = json!({"processId": "sleeper", "streamStdoutStderr": true});
    for (file, extra) in files.iter().zip([streamed, json!({})]) {
        let mut params = json!({
            "command": ["sh", "-c", sleeper_script(file)],
            "disableTimeout": true,
            "sandboxPolicy": {"type": "dangerFullAccess"},
        });
        if let (Some(params), Value::Object(extra)) = (params.as_object_mut(), extra) {
            params.extend(extra);
        }
        client.send_request("command/exec", params);
    }
    let sleepers = Sleepers::wait_for(&files);

    stop_and_check_killed(&mut client, how, &sleepers);
    drop(sleepers);
    let _ = std::fs::remove_dir_all(&home);
}

/// SIGTERM kills an unconfined command of a running turn before the server exits
/// (docs/app-server.md `stdio://`, docs/sandbox.md).
#[test]
fn sigterm_kills_the_unconfined_command_of_a_running_turn() {
    a_stop_kills_the_command_of_a_running_turn("shutdown-term-turn", Stop::Sigterm);
}

/// SIGINT kills an unconfined command of a running turn before the server exits
/// (docs/app-server.md `stdio://`, docs/sandbox.md).
#[test]
fn sigint_kills_the_unconfined_command_of_a_running_turn() {
    a_stop_kills_the_command_of_a_running_turn("shutdown-int-turn", Stop::Sigint);
}

/// End of input interrupts a running turn after its 10 s and kills its unconfined command
/// before the server exits (docs/app-server.md `stdio://`, docs/sandbox.md).
#[test]
fn end_of_input_kills_the_unconfined_command_of_a_running_turn() {
    a_stop_kills_the_command_of_a_running_turn("shutdown-eof-turn-command", Stop::EndOfInput);
}

/// SIGTERM kills unconfined `command/exec` processes before the server exits
/// (docs/app-server.md, `stdio://`).
#[test]
fn sigterm_kills_unconfined_command_exec_processes() {
    a_stop_kills_command_exec_processes("shutdown-term-exec", Stop::Sigterm);
}

/// SIGINT kills unconfined `command/exec` processes before the server exits
/// (docs/app-server.md, `stdio://`).
#[test]
fn sigint_kills_unconfined_command_exec_processes() {
    a_stop_kills_command_exec_processes("shutdown-int-exec", Stop::Sigint);
}

/// Starts a turn of `deltas` deltas `delay_ms` apart, waits for its first delta, then closes
/// stdin; returns the thread, the turn, how long the server took to exit (0) after the end of
/// input, and every message it wrote from the first delta on.
fn a_turn_at_end_of_input(
    name: &str,
    deltas: usize,
    delay_ms: u64,
) -> (String, String, Duration, Vec<Value>, PathBuf) {
    let home = scratch(name);
    slow_script(&home, deltas, delay_ms);
    let mut client = Client::start(&home);
    let thread = thread_id(&client.start_thread(json!({})));
    let turn = client.start_turn(&thread, "Talk a while.");
    let first = client.notification("item/agentMessage/delta");
    let closed = Instant::now();
    let mut rest = client.finish();
    let took = closed.elapsed();
    rest.insert(
        0,
        json!({"method": "item/agentMessage/delta", "params": first}),
    );
    (thread, turn, took, rest, home)
}

/// The status of the first turn of `thread` as recorded in `home`, read by a new server.
fn recorded_status(home: &Path, thread: &str) -> Value {
    let mut again = Client::start(home);
    let read = again.call(
        "thread/read",
        json!({"threadId": thread, "includeTurns": true}),
    );
    again.stop();
    read["thread"]["turns"][0]["status"].clone()
}

/// docs/app-server.md: at end of stdin "a running turn may finish for 10 s". A turn that still
/// needs about 3 s when stdin closes (60 deltas 50 ms apart) runs to its end: every delta,
/// `turn/completed` with `completed` (not interrupted), recorded so, and the server exits 0
/// once it is done, neither before (it waited for the turn) nor at the 10 s bound.
#[test]
fn end_of_input_lets_a_turn_needing_3_s_more_complete_then_exits_0() {
    let (thread, turn, took, rest, home) = a_turn_at_end_of_input("shutdown-eof-3s", 60, 50);
    assert!(
        (Duration::from_millis(2500)..Duration::from_secs(10)).contains(&took),
        "the server exited {took:?} after the end of input"
    );
    let completed = completed_turns(&rest);
    assert_eq!(completed.len(), 1, "one turn/completed");
    assert_eq!(completed[0]["id"], json!(turn));
    assert_eq!(completed[0]["status"], json!("completed"));
    assert_eq!(count(&rest, "item/agentMessage/delta"), 60, "every delta");
    assert_eq!(recorded_status(&home, &thread), json!("completed"));
    let _ = std::fs::remove_dir_all(&home);
}

/// docs/app-server.md: at end of stdin a running turn "may finish for 10 s and is then
/// interrupted, recorded and ends with `turn/completed`; then the server exits 0". A turn that
/// would need 50 s more keeps streaming for its 10 s (the server exits 10 to 15 s after the end
/// of input), then ends `interrupted` short of its last delta; a new server on the same home
/// reads it back as `interrupted`.
#[test]
fn end_of_input_interrupts_a_turn_after_its_10_s_and_records_it_interrupted() {
    let (thread, turn, took, rest, home) = a_turn_at_end_of_input("shutdown-eof-10s", 1000, 50);
    assert!(
        (Duration::from_millis(9500)..Duration::from_secs(10) + SLACK).contains(&took),
        "the server exited {took:?} after the end of input"
    );
    let completed = completed_turns(&rest);
    assert_eq!(completed.len(), 1, "one turn/completed");
    assert_eq!(completed[0]["id"], json!(turn));
    assert_eq!(completed[0]["status"], json!("interrupted"));
    let deltas = count(&rest, "item/agentMessage/delta");
    assert!(
        (20..1000).contains(&deltas),
        "{deltas} deltas: the turn went on after the end of input, and was cut short"
    );
    assert_eq!(recorded_status(&home, &thread), json!("interrupted"));
    let _ = std::fs::remove_dir_all(&home);
}
