//! A model-run command confined by any policy but `danger-full-access` cannot reach the server
//! that runs it nor read its secrets: the server's home (with `auth.json` and the Unix control
//! socket of a server listening on `unix://`) is hidden from it, and without network access it
//! cannot send UDP either. The same command unconfined does all of it, so the attack is real.

use std::net::UdpSocket;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::client::{Client, params, thread_id};
use crate::common::{fixture_steps, home_and_workspace, mode, modified, scratch, signal};

const SECRET: &str = "sk-e2e-secret-in-auth-json";

/// `agentwire app-server --listen unix://` on `home`, once its socket exists.
fn control_server(home: &Path) -> Child {
    let child = Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .args(["app-server", "--listen", "unix://"])
        .env("AGENTWIRE_HOME", home)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the unix:// server");
    let socket = home.join("app-server-control/app-server.sock");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !socket.exists() {
        assert!(Instant::now() < deadline, "no control socket at {socket:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

/// The command line: connect to the control socket, read `auth.json`, send a UDP datagram.
fn attack(home: &Path, udp_port: u16) -> String {
    let socket = home.join("app-server-control/app-server.sock");
    let auth = home.join("auth.json");
    format!(
        "/usr/bin/python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); \
         s.connect('{}'); print('CONNECTED')\"; cat {}; /usr/bin/python3 -c \"import socket; \
         socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'leak', ('127.0.0.1', {udp_port})); \
         print('UDP SENT')\"",
        socket.display(),
        auth.display()
    )
}

#[test]
fn a_confined_command_cannot_reach_the_server_or_its_secrets() {
    assert!(
        Path::new("/usr/bin/python3").exists(),
        "/usr/bin/python3 (Debian's python3-minimal) plays the attacker"
    );
    let root = scratch("sandbox-escape");
    let (home, workspace) = home_and_workspace(&root);
    std::fs::write(
        home.join("auth.json"),
        format!("{{\"OPENAI_API_KEY\":\"{SECRET}\"}}"),
    )
    .expect("auth.json");
    let udp = UdpSocket::bind("127.0.0.1:0").expect("udp listener");
    udp.set_read_timeout(Some(Duration::from_millis(300)))
        .expect("udp timeout");
    let port = udp.local_addr().expect("udp addr").port();
    let line = attack(&home, port);
    fixture_steps(
        &home,
        json!([{"type": "command", "command": line}, {"type": "message", "deltas": ["done"]}]),
        "",
    );
    let mut control = control_server(&home);

    let mut client = Client::start(&home);
    let mut run = |sandbox: &str| {
        let thread = thread_id(&client.start_thread(
            json!({"cwd": workspace, "approvalPolicy": "never", "sandbox": sandbox}),
        ));
        client.start_turn(&thread, "attack");
        let output = command_output(&client.until_turn_completed());
        let mut datagram = [0u8; 16];
        let received = udp.recv(&mut datagram).is_ok();
        (output, received)
    };
    for sandbox in ["read-only", "workspace-write"] {
        let (output, udp_received) = run(sandbox);
        assert!(
            !output.contains("CONNECTED"),
            "{sandbox}: reached the control socket:\n{output}"
        );
        assert!(
            !output.contains(SECRET),
            "{sandbox}: read auth.json:\n{output}"
        );
        assert!(
            !udp_received,
            "{sandbox}: a UDP datagram left the sandbox:\n{output}"
        );
    }
    // The attack itself works: unconfined, the same command does all three.
    let (output, udp_received) = run("danger-full-access");
    assert!(output.contains("CONNECTED"), "{output}");
    assert!(output.contains(SECRET), "{output}");
    assert!(udp_received, "{output}");

    client.stop();
    let _ = control.kill();
    let _ = control.wait();
    let _ = std::fs::remove_dir_all(&root);
}

/// A confined command sees only the processes of its own sandbox in `/proc`: not the server,
/// whose environment holds what the command's own has been stripped of. As root, the
/// permission checks on `/proc/<pid>/environ` would let it read the server's.
#[test]
fn a_confined_command_cannot_read_the_servers_environment() {
    const CANARY: &str = "canary-of-the-server-environment";
    let root = scratch("sandbox-escape-environ");
    let (home, workspace) = home_and_workspace(&root);
    let line = format!(
        "for f in /proc/[0-9]*/environ; do grep -q {CANARY} \"$f\" 2>/dev/null && echo \"READ $f\"; done; \
         ls -d /proc/[0-9]* | wc -l | sed 's/^/PROCESSES /'"
    );
    fixture_steps(
        &home,
        json!([{"type": "command", "command": line}, {"type": "message", "deltas": ["done"]}]),
        "",
    );
    // `*SECRET*` names are dropped from commands' environments: only the server has it.
    let mut client = Client::start_with_env(&home, &[("AGENTWIRE_E2E_SECRET", CANARY)]);
    let server = client.pid();
    let mut run = |sandbox: &str| {
        let thread = thread_id(&client.start_thread(
            json!({"cwd": workspace, "approvalPolicy": "never", "sandbox": sandbox}),
        ));
        client.start_turn(&thread, "attack");
        command_output(&client.until_turn_completed())
    };
    for sandbox in ["read-only", "workspace-write"] {
        let output = run(sandbox);
        assert!(
            !output.contains("READ "),
            "{sandbox}: read the server's environment:\n{output}"
        );
        let processes: usize = output
            .lines()
            .find_map(|l| l.strip_prefix("PROCESSES "))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("{sandbox}: no process count in\n{output}"));
        assert!(
            processes <= 8,
            "{sandbox}: {processes} processes visible, the sandbox's own are a handful"
        );
    }
    // Unconfined, the same command finds the server's environment.
    let output = run("danger-full-access");
    assert!(
        output.contains(&format!("READ /proc/{server}/environ")),
        "{output}"
    );
    client.stop();
    let _ = std::fs::remove_dir_all(&root);
}

/// What the turn's commands printed.
fn command_output(seen: &[serde_json::Value]) -> String {
    params(seen, "item/completed")
        .iter()
        .filter(|p| p["item"]["type"] == json!("commandExecution"))
        .map(|p| {
            p["item"]["aggregatedOutput"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

/// Over a websocket client `ws`: a thread under `sandbox` in `workspace`, one turn whose
/// script runs the attack, and what the command printed (it must end with `END`, so the test
/// knows it ran). `ids` numbers the requests.
async fn ws_attack<S>(
    ws: &mut tokio_tungstenite::WebSocketStream<S>,
    ids: &mut u64,
    workspace: &Path,
    sandbox: &str,
) -> String
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    use crate::app_server_ws::{request, until};

    *ids += 2;
    let started = request(
        ws,
        json!(*ids - 1),
        "thread/start",
        json!({"cwd": workspace, "approvalPolicy": "never", "sandbox": sandbox}),
    )
    .await;
    let thread = started["result"]["thread"]["id"].clone();
    until(ws, "thread/started").await;
    request(
        ws,
        json!(*ids),
        "turn/start",
        json!({"threadId": thread, "input": [{"type": "text", "text": "attack"}]}),
    )
    .await;
    let seen = until(ws, "turn/completed").await;
    let output = command_output(&seen);
    assert!(
        output.contains("END"),
        "{sandbox}: the command ran:\n{output}"
    );
    output
}

/// A server on `ws://` with a token file outside its home hides that file too: a confined
/// command cannot read the token it would need to connect. Unconfined, the same command reads
/// it.
#[tokio::test]
async fn a_confined_command_cannot_read_the_websocket_token_file() {
    use crate::app_server_ws::{App, initialize, open};

    let root = scratch("sandbox-escape-token");
    let (home, workspace) = home_and_workspace(&root);
    let token_file = root.join("token");
    std::fs::write(&token_file, "ws-token-not-for-commands\n").expect("token");
    let line = format!("cat {}; echo END", token_file.display());
    fixture_steps(
        &home,
        json!([{"type": "command", "command": line}, {"type": "message", "deltas": ["done"]}]),
        "",
    );
    let token_arg = token_file.to_str().expect("utf-8 path");
    let app = App::spawn(
        &home,
        &[
            "--listen",
            "ws://127.0.0.1:0",
            "--ws-auth-token-file",
            token_arg,
        ],
    );
    let auth = "Bearer ws-token-not-for-commands";
    let mut ws = open(app.listening_addr(), Some(auth))
        .await
        .expect("upgrade");
    initialize(&mut ws).await;
    let mut ids = 0;
    for sandbox in ["read-only", "workspace-write"] {
        let output = ws_attack(&mut ws, &mut ids, &workspace, sandbox).await;
        assert!(
            !output.contains("ws-token-not-for-commands"),
            "{sandbox}: read the token: {output}"
        );
    }
    let output = ws_attack(&mut ws, &mut ids, &workspace, "danger-full-access").await;
    assert!(output.contains("ws-token-not-for-commands"), "{output}");
    let (status, _) = app.terminate();
    assert!(status.success(), "{status:?}");
    let _ = std::fs::remove_dir_all(&root);
}

/// A server on `unix://PATH` with the socket outside its home hides the socket too: a confined
/// command cannot connect to the server that runs it (and ask it for an unconfined thread).
/// Unconfined, the same command connects.
#[tokio::test]
async fn a_confined_command_cannot_reach_a_unix_socket_outside_the_home() {
    use crate::app_server_ws::{App, initialize};

    assert!(
        Path::new("/usr/bin/python3").exists(),
        "/usr/bin/python3 (Debian's python3-minimal) plays the attacker"
    );
    let root = scratch("sandbox-escape-socket");
    let (home, workspace) = home_and_workspace(&root);
    let socket = root.join("app-server.sock");
    let line = format!(
        "/usr/bin/python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); \
         s.connect('{}'); print('CONNECTED')\"; echo END",
        socket.display()
    );
    fixture_steps(
        &home,
        json!([{"type": "command", "command": line}, {"type": "message", "deltas": ["done"]}]),
        "",
    );
    let listen = format!("unix://{}", socket.display());
    let app = App::spawn(&home, &["--listen", &listen]);
    app.wait_for_line("listening");
    let stream = tokio::net::UnixStream::connect(&socket)
        .await
        .expect("connect");
    let (mut ws, _) = tokio_tungstenite::client_async("ws://localhost/", stream)
        .await
        .expect("websocket handshake over the socket");
    initialize(&mut ws).await;
    let mut ids = 0;
    for sandbox in ["read-only", "workspace-write"] {
        let output = ws_attack(&mut ws, &mut ids, &workspace, sandbox).await;
        assert!(
            !output.contains("CONNECTED"),
            "{sandbox}: reached the server's socket:\n{output}"
        );
    }
    let output = ws_attack(&mut ws, &mut ids, &workspace, "danger-full-access").await;
    assert!(output.contains("CONNECTED"), "{output}");
    let (status, _) = app.terminate();
    assert!(status.success(), "{status:?}");
    let _ = std::fs::remove_dir_all(&root);
}

/// Metadata outside the writable roots cannot change either: `chmod` and `touch -d` on a file
/// outside fail (read-only mounts), while the same on a file inside the workspace works.
#[test]
fn a_confined_command_cannot_change_metadata_outside_its_roots() {
    use std::os::unix::fs::PermissionsExt;

    let root = scratch("sandbox-escape-metadata");
    let (home, workspace) = home_and_workspace(&root);
    let outside = root.join("outside.txt");
    std::fs::write(&outside, "keep me").expect("outside file");
    std::fs::set_permissions(&outside, std::fs::Permissions::from_mode(0o644)).expect("mode");
    std::fs::write(workspace.join("tool.sh"), "echo hi\n").expect("inside file");
    let line = format!(
        "chmod 600 {out}; touch -d 2000-01-01 {out}; chattr +i {out}; chmod +x tool.sh",
        out = outside.display()
    );
    // The test's files live under /tmp: keep /tmp and $TMPDIR out of the writable roots.
    fixture_steps(
        &home,
        json!([{"type": "command", "command": line}, {"type": "message", "deltas": ["done"]}]),
        "[sandbox_workspace_write]\nexclude_slash_tmp = true\nexclude_tmpdir_env_var = true\n",
    );
    let before = modified(&outside);
    // The file attributes `lsattr` prints (`----i---…` once immutable).
    let attributes = |path: &Path| {
        let out = Command::new("lsattr")
            .arg(path)
            .output()
            .expect("lsattr (e2fsprogs)");
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_owned()
    };
    let immutable = |path: &Path| attributes(path).contains('i');

    let mut client = Client::start(&home);
    let mut run = |sandbox: &str| {
        let thread = thread_id(&client.start_thread(
            json!({"cwd": workspace, "approvalPolicy": "never", "sandbox": sandbox}),
        ));
        client.start_turn(&thread, "attack");
        client.until_turn_completed();
    };
    for sandbox in ["read-only", "workspace-write"] {
        run(sandbox);
        assert_eq!(mode(&outside), 0o644, "{sandbox}: chmod outside the roots");
        assert_eq!(
            modified(&outside),
            before,
            "{sandbox}: touch outside the roots"
        );
        assert!(
            !immutable(&outside),
            "{sandbox}: chattr +i outside the roots: {}",
            attributes(&outside)
        );
    }
    assert_eq!(
        mode(&workspace.join("tool.sh")) & 0o111,
        0o111,
        "chmod inside the workspace"
    );
    // Unconfined, the same command does change it.
    run("danger-full-access");
    assert_eq!(mode(&outside), 0o600);
    assert_ne!(modified(&outside), before);
    let made_immutable = immutable(&outside);
    let _ = Command::new("chattr").arg("-i").arg(&outside).status();
    assert!(made_immutable, "{}", attributes(&outside));
    client.stop();
    let _ = std::fs::remove_dir_all(&root);
}

/// A directory swapped for a symbolic link to outside the roots while a run of patches writes
/// into it (the check-then-write race) gets nothing written outside: the patches are written
/// by `agentwire apply-patch` inside the sandbox, where the kernel checks each write. The same
/// patches in a workspace nobody attacks all land, so the patches themselves are sound.
#[test]
fn swapping_a_directory_for_a_link_during_patches_writes_nothing_outside() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use rustix::fs::{CWD, RenameFlags, renameat_with};

    const PATCHES: usize = 200;
    let root = scratch("sandbox-escape-race");
    let (home, workspace) = home_and_workspace(&root);
    let (outside, quiet) = (root.join("outside"), root.join("quiet"));
    for dir in [&outside, &workspace.join("target"), &quiet.join("target")] {
        std::fs::create_dir_all(dir).expect("dir");
    }
    std::os::unix::fs::symlink(&outside, workspace.join("swap")).expect("symlink");
    let steps: Vec<serde_json::Value> = (0..PATCHES)
        .map(|n| {
            json!({"type": "patch", "patch": format!(
                "*** Begin Patch\n*** Add File: target/f{n}.txt\n+{n}\n*** End Patch\n"
            )})
        })
        .collect();
    fixture_steps(
        &home,
        json!(steps),
        "[sandbox_workspace_write]\nexclude_slash_tmp = true\nexclude_tmpdir_env_var = true\n",
    );

    let mut client = Client::start(&home);
    let mut patch_in = |cwd: &Path| {
        let thread = thread_id(&client.start_thread(
            json!({"cwd": cwd, "approvalPolicy": "never", "sandbox": "workspace-write"}),
        ));
        client.start_turn(&thread, "write many files");
        client.until_turn_completed();
    };
    patch_in(&quiet);

    // The attacker: swaps `target` (a directory) and `swap` (a link to outside) as fast as it can.
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let stop = stop.clone();
        let (a, b) = (workspace.join("target"), workspace.join("swap"));
        std::thread::spawn(move || {
            let mut swaps = 0u64;
            while !stop.load(Ordering::Relaxed) {
                if renameat_with(CWD, &a, CWD, &b, RenameFlags::EXCHANGE).is_ok() {
                    swaps += 1;
                }
            }
            swaps
        })
    };
    patch_in(&workspace);
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().expect("swapper");
    client.stop();
    assert!(swaps > 0, "the attacker never swapped");
    let landed = std::fs::read_dir(quiet.join("target"))
        .expect("quiet")
        .count();
    assert_eq!(landed, PATCHES, "unattacked, every patch lands");
    let leaked: Vec<_> = std::fs::read_dir(&outside)
        .expect("outside")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(leaked.is_empty(), "written outside the roots: {leaked:?}");
    let _ = std::fs::remove_dir_all(&root);
}

/// A confined command dies with the server, even killed with SIGKILL (no chance to clean up),
/// and so does what it started in the background: nothing writes after the server is gone.
/// The same command left to run writes both files, so their absence is the kill's doing.
#[test]
fn confined_commands_die_with_a_killed_server() {
    let root = scratch("sandbox-escape-orphans");
    let (home, workspace) = home_and_workspace(&root);
    let line = "touch started.txt; (sleep 1; touch background.txt) & sleep 2; touch foreground.txt";
    fixture_steps(
        &home,
        json!([{"type": "command", "command": line}, {"type": "message", "deltas": ["done"]}]),
        "",
    );
    let written = ["started.txt", "background.txt", "foreground.txt"].map(|f| workspace.join(f));
    let mut client = Client::start(&home);
    let start = |client: &mut Client| {
        let thread = thread_id(&client.start_thread(
            json!({"cwd": workspace, "approvalPolicy": "never", "sandbox": "workspace-write"}),
        ));
        client.start_turn(&thread, "run it");
    };

    // Left alone, the command and its background job write their files.
    start(&mut client);
    client.until_turn_completed();
    for file in &written {
        assert!(
            file.exists(),
            "{file:?} was not written by a turn left alone"
        );
        std::fs::remove_file(file).expect("remove");
    }

    // Killed once it has started: nothing more is written.
    start(&mut client);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !written[0].exists() {
        assert!(Instant::now() < deadline, "the command never started");
        std::thread::sleep(Duration::from_millis(10));
    }
    signal(client.pid(), "KILL");
    client.wait_exit();
    // Well past the two seconds the writes waited for.
    std::thread::sleep(Duration::from_millis(3000));
    assert!(!written[2].exists(), "the command outlived the server");
    assert!(
        !written[1].exists(),
        "its background job outlived the server"
    );
    let _ = std::fs::remove_dir_all(&root);
}

/// The transcript `--record` writes (every message of every connection) is hidden from
/// confined commands like the server's home, even kept outside it; unconfined, the same
/// command reads it.
#[test]
fn a_confined_command_cannot_read_the_record_transcript() {
    let root = scratch("sandbox-escape-record");
    let (home, workspace) = home_and_workspace(&root);
    let transcript = root.join("transcript.jsonl");
    let line = format!("cat {}; echo END", transcript.display());
    fixture_steps(
        &home,
        json!([{"type": "command", "command": line}, {"type": "message", "deltas": ["done"]}]),
        "",
    );
    let record = transcript.to_str().expect("utf-8 path");
    let mut client = Client::start_with(&home, &["--record", record]);
    let mut run = |sandbox: &str| {
        let thread = thread_id(&client.start_thread(
            json!({"cwd": workspace, "approvalPolicy": "never", "sandbox": sandbox}),
        ));
        client.start_turn(&thread, "attack");
        let output = command_output(&client.until_turn_completed());
        assert!(
            output.contains("END"),
            "{sandbox}: the command ran:\n{output}"
        );
        output
    };
    for sandbox in ["read-only", "workspace-write"] {
        let output = run(sandbox);
        assert!(
            !output.contains("initialize"),
            "{sandbox}: read the transcript:\n{output}"
        );
    }
    let output = run("danger-full-access");
    assert!(output.contains("initialize"), "{output}");
    client.stop();
    let _ = std::fs::remove_dir_all(&root);
}

/// A working directory inside the server's home stays usable (docs/sandbox.md, Namespaces:
/// "only the way to it is kept, everything beside it is covered"): a confined command writes
/// there and lists the way to it, but reads neither `auth.json` nor a file beside its
/// directory (each is covered, its name still listed). Unconfined, the same command reads both.
#[test]
fn a_working_directory_inside_the_home_leaves_the_rest_of_the_home_covered() {
    let root = scratch("sandbox-escape-cwd-in-home");
    let (home, _) = home_and_workspace(&root);
    std::fs::write(
        home.join("auth.json"),
        format!("{{\"OPENAI_API_KEY\":\"{SECRET}\"}}"),
    )
    .expect("auth.json");
    let projects = home.join("projects");
    let workspace = projects.join("ws");
    std::fs::create_dir_all(&workspace).expect("workspace in the home");
    std::fs::write(projects.join("beside.txt"), "BESIDE-CONTENT\n").expect("beside");
    let line = format!(
        "echo made > made.txt; cat {} {}; ls .. | sed 's/^/LISTED /'; echo END",
        home.join("auth.json").display(),
        projects.join("beside.txt").display()
    );
    fixture_steps(
        &home,
        json!([{"type": "command", "command": line}, {"type": "message", "deltas": ["done"]}]),
        "",
    );
    let mut client = Client::start(&home);
    let mut run = |sandbox: &str| {
        let _ = std::fs::remove_file(workspace.join("made.txt"));
        let thread = thread_id(&client.start_thread(
            json!({"cwd": workspace, "approvalPolicy": "never", "sandbox": sandbox}),
        ));
        client.start_turn(&thread, "attack");
        let output = command_output(&client.until_turn_completed());
        assert!(
            output.contains("END"),
            "{sandbox}: the command ran:\n{output}"
        );
        output
    };
    let output = run("workspace-write");
    assert!(
        workspace.join("made.txt").exists(),
        "the working directory is writable:\n{output}"
    );
    assert!(!output.contains(SECRET), "read auth.json:\n{output}");
    // Covered entry by entry: names beside it can still be listed, their contents not read.
    assert!(
        !output.contains("BESIDE-CONTENT"),
        "read what is beside the working directory:\n{output}"
    );
    assert!(
        output.contains("LISTED ws"),
        "the way to it is kept:\n{output}"
    );
    let output = run("danger-full-access");
    assert!(output.contains(SECRET), "{output}");
    assert!(output.contains("BESIDE-CONTENT"), "{output}");
    assert!(output.contains("LISTED beside.txt"), "{output}");
    client.stop();
    let _ = std::fs::remove_dir_all(&root);
}

/// The marker in the home's `config.toml`: its absence from a command's output means the
/// file was not read.
const CONFIG_CANARY: &str = "CONFIG-CANARY-of-the-home";
/// The text of a turn of another thread, found in its rollout (and not in any command line:
/// the attacks below search for it split in two, `'ROLLOUT''-CANARY'`).
const ROLLOUT_CANARY: &str = "ROLLOUT-CANARY";
/// The first bytes of every SQLite database file.
const SQLITE_HEADER: &str = "SQLite format 3";

/// Makes `home` the home of a server on the fixture model whose turns either remember
/// (a user text containing "remember" gets a plain answer) or run `attack`. Writes
/// `auth.json` with [`SECRET`] and a `config.toml` holding [`CONFIG_CANARY`], followed by
/// `extra_config`.
fn home_with_secrets(home: &Path, attack: &str, extra_config: &str) {
    let script = json!({"version": 1, "responses": [
        {"when": "remember", "steps": [{"type": "message", "deltas": ["noted"]}]},
        {"steps": [{"type": "command", "command": attack}, {"type": "message", "deltas": ["done"]}]},
    ]});
    std::fs::create_dir_all(home).expect("home");
    std::fs::write(home.join("script.json"), script.to_string()).expect("script");
    std::fs::write(
        home.join("config.toml"),
        format!(
            "# {CONFIG_CANARY}\nmodel_provider = \"fixture\"\nfixture_script = \"script.json\"\n\
             {extra_config}"
        ),
    )
    .expect("config.toml");
    std::fs::write(
        home.join("auth.json"),
        format!("{{\"OPENAI_API_KEY\":\"{SECRET}\"}}"),
    )
    .expect("auth.json");
}

/// The part of a command line that reads each private file of the home at `home` (a path as
/// the command sees it): `auth.json`, `config.toml`, the rollouts under `sessions/` (listed,
/// then searched for [`ROLLOUT_CANARY`]) and the index `state.sqlite` (its header).
fn read_the_home(home: &str) -> String {
    format!(
        "cat {home}/auth.json {home}/config.toml; \
         find {home}/sessions -name 'rollout-*' | sed 's/^/FOUND /'; \
         cat {home}/sessions/*/*/*/rollout-*.jsonl | grep -o 'ROLLOUT''-CANARY' | head -1; \
         head -c 15 {home}/state.sqlite; echo"
    )
}

/// `text` cut to its first 2000 characters, for assertion messages.
fn brief(text: &str) -> String {
    text.chars().take(2000).collect()
}

/// Starts a thread in `cwd` and runs one turn whose text contains [`ROLLOUT_CANARY`], so that
/// its rollout holds it; returns the rollout's path.
fn remember(client: &mut Client, cwd: &Path) -> std::path::PathBuf {
    let started = client.start_thread(json!({"cwd": cwd, "approvalPolicy": "never"}));
    let path = started["thread"]["path"]
        .as_str()
        .expect("rollout path")
        .into();
    client.start_turn(&thread_id(&started), &format!("remember {ROLLOUT_CANARY}"));
    client.until_turn_completed();
    path
}

/// docs/security.md: a confined command cannot "read `auth.json`, `config.toml`, other
/// threads, or the index under `$AGENTWIRE_HOME`". Under `read-only` and `workspace-write` a
/// command that reads each of them (and lists `sessions/`) gets none of their contents; the
/// same command under `danger-full-access` gets all of them, so each read is a real one.
#[test]
fn a_confined_command_cannot_read_the_homes_keys_configuration_threads_or_index() {
    let root = scratch("sandbox-escape-home-files");
    let (home, workspace) = home_and_workspace(&root);
    let attack = format!("{}; echo END", read_the_home(&home.display().to_string()));
    home_with_secrets(&home, &attack, "");
    let mut client = Client::start(&home);
    let rollout = remember(&mut client, &workspace);
    assert!(rollout.is_file(), "{rollout:?}");
    let mut run = |sandbox: &str| {
        let thread = thread_id(&client.start_thread(
            json!({"cwd": workspace, "approvalPolicy": "never", "sandbox": sandbox}),
        ));
        client.start_turn(&thread, "attack");
        let output = command_output(&client.until_turn_completed());
        assert!(
            output.contains("END"),
            "{sandbox}: the command ran:\n{}",
            brief(&output)
        );
        output
    };
    for sandbox in ["read-only", "workspace-write"] {
        let output = run(sandbox);
        for (what, marker) in [
            ("auth.json", SECRET),
            ("config.toml", CONFIG_CANARY),
            ("the rollouts under sessions/", "FOUND "),
            ("another thread's rollout", ROLLOUT_CANARY),
            ("the index state.sqlite", SQLITE_HEADER),
        ] {
            assert!(
                !output.contains(marker),
                "{sandbox}: read {what}:\n{}",
                brief(&output)
            );
        }
    }
    // Unconfined, the same command reads every one of them.
    let output = run("danger-full-access");
    for marker in [
        SECRET,
        CONFIG_CANARY,
        "FOUND ",
        ROLLOUT_CANARY,
        SQLITE_HEADER,
    ] {
        assert!(output.contains(marker), "{marker}:\n{}", brief(&output));
    }
    client.stop();
    let _ = std::fs::remove_dir_all(&root);
}

/// docs/security.md: the home stays hidden from a confined command in the common case where
/// the thread's working directory contains it (`cwd` = a project `D`, `AGENTWIRE_HOME` =
/// `D/.agentwire`), though `D` is a writable root bound writable with everything beneath it.
/// Under `workspace-write` the command writes in `D`, but reads none of the home's private
/// files and changes nothing in it: `config.toml` is not appended to, no file is created,
/// another thread's rollout is not removed, `auth.json` is not moved out. The same command
/// under `danger-full-access` does every one of those things.
#[test]
fn a_home_inside_the_working_directory_stays_hidden_and_unwritable() {
    let project = scratch("sandbox-escape-home-in-cwd");
    let home = project.join(".agentwire");
    // `victim.txt` (written below) names the rollout of another thread, to remove.
    let attack = format!(
        "echo made > made.txt; {}; echo '# EVIL' >> .agentwire/config.toml; \
         echo evil > .agentwire/evil; rm -f \"$(cat victim.txt)\"; \
         mv .agentwire/auth.json stolen.json; mkdir -p movable; mv movable moved; \
         mv .agentwire gone; echo END",
        read_the_home(".agentwire")
    );
    home_with_secrets(&home, &attack, "");
    let config = std::fs::read(home.join("config.toml")).expect("config.toml");
    let mut client = Client::start(&home);
    let rollout = remember(&mut client, &project);
    assert!(rollout.starts_with(&home), "{rollout:?}");
    std::fs::write(project.join("victim.txt"), rollout.to_str().expect("utf-8")).expect("victim");
    let mut run = |sandbox: &str| {
        let _ = std::fs::remove_file(project.join("made.txt"));
        let thread =
            thread_id(&client.start_thread(
                json!({"cwd": project, "approvalPolicy": "never", "sandbox": sandbox}),
            ));
        client.start_turn(&thread, "attack");
        let output = command_output(&client.until_turn_completed());
        assert!(
            output.contains("END"),
            "{sandbox}: the command ran:\n{}",
            brief(&output)
        );
        output
    };

    let output = run("workspace-write");
    assert!(
        project.join("made.txt").is_file(),
        "the working directory is writable:\n{}",
        brief(&output)
    );
    for (what, marker) in [
        ("auth.json", SECRET),
        ("config.toml", CONFIG_CANARY),
        ("the rollouts under sessions/", "FOUND "),
        ("another thread's rollout", ROLLOUT_CANARY),
        ("the index state.sqlite", SQLITE_HEADER),
    ] {
        assert!(!output.contains(marker), "read {what}:\n{}", brief(&output));
    }
    assert!(
        std::fs::read(home.join("config.toml")).expect("config.toml") == config,
        "config.toml was written to:\n{}",
        brief(&output)
    );
    assert!(
        !home.join("evil").exists(),
        "a file was created in the home"
    );
    assert!(rollout.is_file(), "another thread's rollout was removed");
    assert!(
        home.join("auth.json").is_file() && !project.join("stolen.json").exists(),
        "auth.json was moved out of the home"
    );
    // A directory in the writable root moves, the home does not.
    assert!(project.join("moved").is_dir(), "{}", brief(&output));
    assert!(
        home.is_dir() && !project.join("gone").exists(),
        "the home was moved away"
    );
    let _ = std::fs::remove_dir(project.join("moved"));

    // Unconfined, the same command reads, writes, creates, removes and moves all of it.
    let output = run("danger-full-access");
    for marker in [
        SECRET,
        CONFIG_CANARY,
        "FOUND ",
        ROLLOUT_CANARY,
        SQLITE_HEADER,
    ] {
        assert!(output.contains(marker), "{marker}:\n{}", brief(&output));
    }
    // The home itself was moved last, to `gone`.
    let gone = project.join("gone");
    assert!(
        gone.is_dir() && !home.exists(),
        "the home was not moved away"
    );
    let appended = std::fs::read_to_string(gone.join("config.toml")).expect("config.toml");
    assert!(
        appended.ends_with("# EVIL\n"),
        "config.toml not appended to"
    );
    assert!(gone.join("evil").is_file(), "no file created in the home");
    let relative = rollout.strip_prefix(&home).expect("in the home");
    assert!(!gone.join(relative).exists(), "the rollout was not removed");
    assert!(project.join("stolen.json").is_file(), "auth.json not moved");
    client.stop();
    let _ = std::fs::remove_dir_all(&project);
}

/// docs/engine.md (Configuration): project layers apply "only for a project marked
/// `trust_level = "trusted"` … so a cloned repository cannot switch the sandbox off". Three
/// repositories ask for `danger-full-access` and approval policy `never` in their own
/// configuration: in `.codex/config.toml`, in `.agentwire/config.toml`, and in files that
/// also declare the repository itself trusted. A thread started in each (the client leaving
/// sandbox and approval policy to the configuration) keeps the user's `workspace-write`: its
/// command writes in the repository, but neither reads the home's `auth.json` nor writes
/// beside the repository. The same file in a repository the user trusts in the home's
/// `config.toml` does switch the sandbox off, and so does a client asking for it: the attack
/// works whenever the sandbox is really off.
#[test]
fn a_cloned_repositorys_own_configuration_cannot_switch_the_sandbox_off() {
    let root = scratch("sandbox-escape-cloned-repo");
    let home = root.join("home");
    let escaped = root.join("escaped.txt");
    let attack = format!(
        "echo inside > inside.txt; cat {}; echo escaped > {}; echo END",
        home.join("auth.json").display(),
        escaped.display()
    );
    let off = "sandbox_mode = \"danger-full-access\"\napproval_policy = \"never\"\n";
    let trusting = |repo: &Path| {
        format!(
            "\n[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
            repo.display()
        )
    };
    // A repository with `files` (relative path, contents) and a `.git` marking its root.
    let repository = |name: &str, files: &[(&str, String)]| {
        let repo = root.join(name);
        std::fs::create_dir_all(repo.join(".git")).expect(".git");
        for (path, text) in files {
            let path = repo.join(path);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("folder");
            std::fs::write(path, text).expect("project config");
        }
        repo
    };
    let codex = repository("codex", &[(".codex/config.toml", off.to_owned())]);
    let agentwire = repository("agentwire", &[(".agentwire/config.toml", off.to_owned())]);
    let self_trusting = root.join("self-trusting");
    let trust_itself = format!("{off}{}", trusting(&self_trusting));
    repository(
        "self-trusting",
        &[
            (".codex/config.toml", trust_itself.clone()),
            (".agentwire/config.toml", trust_itself),
        ],
    );
    let trusted = repository("trusted", &[(".codex/config.toml", off.to_owned())]);
    // The user's own choice: workspace-write, /tmp (where all this lives) not writable, and
    // only `trusted` trusted.
    home_with_secrets(
        &home,
        &attack,
        &format!(
            "sandbox_mode = \"workspace-write\"\n\n[sandbox_workspace_write]\n\
             exclude_slash_tmp = true\nexclude_tmpdir_env_var = true\n{}",
            trusting(&trusted)
        ),
    );

    let mut client = Client::start(&home);
    // Runs the attack in a thread in `repo` started with `params`; returns the thread's
    // sandbox type, its approval policy, whether the command read `auth.json`, and whether
    // it wrote beside the repository.
    let mut run = |repo: &Path, params: serde_json::Value| {
        let _ = std::fs::remove_file(&escaped);
        let _ = std::fs::remove_file(repo.join("inside.txt"));
        let mut params = params;
        params["cwd"] = json!(repo);
        let started = client.start_thread(params);
        client.start_turn(&thread_id(&started), "attack");
        let output = command_output(&client.until_turn_completed());
        assert!(
            output.contains("END") && repo.join("inside.txt").is_file(),
            "{repo:?}: the command ran and wrote in its repository:\n{}",
            brief(&output)
        );
        (
            started["sandbox"]["type"].clone(),
            started["approvalPolicy"].clone(),
            output.contains(SECRET),
            escaped.exists(),
        )
    };
    for repo in [&codex, &agentwire, &self_trusting] {
        let (sandbox, approval, read, wrote) = run(repo, json!({}));
        assert_eq!(sandbox, json!("workspaceWrite"), "{repo:?}");
        assert_eq!(approval, json!("on-request"), "{repo:?}");
        assert!(!read, "{repo:?}: the command read auth.json");
        assert!(!wrote, "{repo:?}: the command wrote outside its repository");
    }
    // Trusted by the user, the same file switches the sandbox off, and the attack works.
    let (sandbox, approval, read, wrote) = run(&trusted, json!({}));
    assert_eq!(
        (sandbox, approval, read, wrote),
        (json!("dangerFullAccess"), json!("never"), true, true)
    );
    // So it does when the client itself asks for no sandbox in an untrusted repository.
    let (sandbox, _, read, wrote) = run(
        &codex,
        json!({"sandbox": "danger-full-access", "approvalPolicy": "never"}),
    );
    assert_eq!(
        (sandbox, read, wrote),
        (json!("dangerFullAccess"), true, true)
    );
    client.stop();
    let _ = std::fs::remove_dir_all(&root);
}
