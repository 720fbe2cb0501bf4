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
use crate::common::{fixture_steps, home_and_workspace, scratch, signal};

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
    let mode = |path: &Path| {
        std::fs::metadata(path)
            .expect("metadata")
            .permissions()
            .mode()
            & 0o777
    };
    let modified = |path: &Path| {
        std::fs::metadata(path)
            .expect("metadata")
            .modified()
            .expect("mtime")
    };
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
