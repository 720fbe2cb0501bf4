//! `agentwire sandbox-exec`: what each sandbox policy lets a command do.
//!
//! The scratch directories live under the temporary directory, so the tests that need a
//! directory to stay read-only exclude `/tmp` and `$TMPDIR` from the writable roots.

use std::io::ErrorKind;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{scratch, text};

/// Runs `agentwire sandbox-exec --policy POLICY --cwd CWD -- ARGV…`, with `envs` set.
fn sandbox_exec_with(policy: &Value, cwd: &Path, argv: &[&str], envs: &[(&str, &Path)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agentwire"));
    command
        .arg("sandbox-exec")
        .arg("--policy")
        .arg(policy.to_string())
        .arg("--cwd")
        .arg(cwd)
        .arg("--")
        .args(argv);
    for (name, value) in envs {
        command.env(name, value);
    }
    command.output().expect("spawn agentwire")
}

fn sandbox_exec(policy: &Value, cwd: &Path, argv: &[&str]) -> Output {
    sandbox_exec_with(policy, cwd, argv, &[])
}

/// Runs `script` with `sh -c` under `policy` in `cwd`; returns whether it succeeded, and its
/// output for messages.
fn sh(policy: &Value, cwd: &Path, script: &str) -> (bool, String) {
    let output = sandbox_exec(policy, cwd, &["sh", "-c", script]);
    let (stdout, stderr) = text(&output);
    (output.status.success(), format!("{stdout}{stderr}"))
}

/// `workspace-write` with only `cwd` (and `extra`) writable: `/tmp` and `$TMPDIR` excluded.
fn workspace_only(extra: &[&Path]) -> Value {
    json!({
        "type": "workspaceWrite",
        "writableRoots": extra.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
        "excludeSlashTmp": true,
        "excludeTmpdirEnvVar": true,
    })
}

#[test]
fn read_only_reads_everywhere_and_writes_nowhere() {
    let dir = scratch("sandbox-read-only");
    std::fs::write(dir.join("data.txt"), "readable\n").expect("write data");
    let policy = json!({"type": "readOnly"});

    let output = sandbox_exec(&policy, &dir, &["cat", "data.txt"]);
    assert!(output.status.success(), "{:?}", text(&output));
    assert_eq!(text(&output).0, "readable\n");
    // Executing programs and writing to /dev/null still work.
    let (ok, out) = sh(&policy, &dir, "ls / > /dev/null && echo fine");
    assert!(ok, "{out}");

    for target in [
        dir.join("new.txt"),
        std::env::temp_dir().join(format!("agentwire-e2e-{}-ro", std::process::id())),
    ] {
        let output = sandbox_exec(&policy, &dir, &["touch", target.to_str().expect("utf-8")]);
        assert!(
            !output.status.success(),
            "touch {} succeeded",
            target.display()
        );
        assert!(!target.exists(), "{} was created", target.display());
    }
    // Existing files can be neither changed nor removed.
    let (ok, out) = sh(&policy, &dir, "echo more >> data.txt || rm data.txt");
    assert!(!ok, "{out}");
    assert_eq!(
        std::fs::read_to_string(dir.join("data.txt")).expect("read"),
        "readable\n"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn workspace_write_allows_the_workspace_only() {
    let root = scratch("sandbox-workspace");
    let work = root.join("work");
    let sibling = root.join("sibling");
    std::fs::create_dir_all(&work).expect("mkdir work");
    std::fs::create_dir_all(&sibling).expect("mkdir sibling");
    std::fs::write(sibling.join("target.txt"), "outside\n").expect("write target");
    std::os::unix::fs::symlink(&sibling, work.join("dir-link")).expect("symlink dir");
    std::os::unix::fs::symlink(sibling.join("target.txt"), work.join("file-link"))
        .expect("symlink file");
    let policy = workspace_only(&[]);

    let (ok, out) = sh(
        &policy,
        &work,
        "echo hi > inside.txt && mkdir sub && echo x > sub/y && mv sub/y sub/z && rm sub/z",
    );
    assert!(ok, "{out}");
    assert_eq!(
        std::fs::read_to_string(work.join("inside.txt")).expect("read"),
        "hi\n"
    );

    let sibling_file = sibling.join("new.txt");
    let escapes = [
        format!("echo x > {}", sibling_file.display()),
        "echo x > ../sibling/new.txt".to_owned(),
        "echo x > dir-link/new.txt".to_owned(),
        "mv inside.txt ../sibling/new.txt".to_owned(),
        "ln inside.txt ../sibling/new.txt".to_owned(),
    ];
    for script in &escapes {
        let (ok, out) = sh(&policy, &work, script);
        assert!(!ok, "`{script}` succeeded: {out}");
        assert!(
            !sibling_file.exists(),
            "`{script}` created {}",
            sibling_file.display()
        );
    }
    for script in [
        "echo x >> file-link",
        "echo x > file-link",
        "rm dir-link/target.txt",
    ] {
        let (ok, out) = sh(&policy, &work, script);
        assert!(!ok, "`{script}` succeeded: {out}");
        assert_eq!(
            std::fs::read_to_string(sibling.join("target.txt")).expect("read target"),
            "outside\n",
            "`{script}` changed the file"
        );
    }
    // The link itself lives in the workspace, so it can be removed.
    let (ok, out) = sh(&policy, &work, "rm file-link");
    assert!(ok, "{out}");
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn workspace_write_temporary_directories_and_extra_roots() {
    let root = scratch("sandbox-roots");
    let work = root.join("work");
    let extra = root.join("extra");
    let tmpdir = root.join("tmpdir");
    for dir in [&work, &extra, &tmpdir] {
        std::fs::create_dir_all(dir).expect("mkdir");
    }
    let slash_tmp_file =
        Path::new("/tmp").join(format!("agentwire-e2e-{}-slash-tmp", std::process::id()));
    let _ = std::fs::remove_file(&slash_tmp_file);
    let touch_tmp = format!("touch {}", slash_tmp_file.display());

    // /tmp is writable unless excluded.
    let policy = json!({"type": "workspaceWrite", "excludeTmpdirEnvVar": true});
    let (ok, out) = sh(&policy, &work, &touch_tmp);
    assert!(ok, "{out}");
    assert!(slash_tmp_file.exists());
    std::fs::remove_file(&slash_tmp_file).expect("remove");
    let (ok, out) = sh(&workspace_only(&[]), &work, &touch_tmp);
    assert!(!ok, "{out}");
    assert!(!slash_tmp_file.exists());

    // `writableRoots` adds a root.
    let (ok, out) = sh(&workspace_only(&[]), &work, "touch ../extra/a");
    assert!(!ok, "{out}");
    let (ok, out) = sh(&workspace_only(&[&extra]), &work, "touch ../extra/a");
    assert!(ok, "{out}");
    assert!(extra.join("a").exists());

    // `$TMPDIR` is writable unless excluded.
    let with_tmpdir = json!({"type": "workspaceWrite", "excludeSlashTmp": true});
    let script = ["sh", "-c", "touch \"$TMPDIR/b\""];
    let output = sandbox_exec_with(&with_tmpdir, &work, &script, &[("TMPDIR", &tmpdir)]);
    assert!(output.status.success(), "{:?}", text(&output));
    assert!(tmpdir.join("b").exists());
    std::fs::remove_file(tmpdir.join("b")).expect("remove");
    let output = sandbox_exec_with(&workspace_only(&[]), &work, &script, &[("TMPDIR", &tmpdir)]);
    assert!(!output.status.success(), "{:?}", text(&output));
    assert!(!tmpdir.join("b").exists());
    let _ = std::fs::remove_dir_all(root);
}

/// Whether `bash` in the sandbox can open a TCP connection to a listener on loopback, and
/// whether the listener saw it.
fn connects(network_access: bool) -> (bool, bool, String) {
    let dir = scratch(&format!("sandbox-net-{network_access}"));
    let listener = TcpListener::bind("127.0.0.1:0").expect("listen");
    let port = listener.local_addr().expect("addr").port();
    let policy = json!({"type": "readOnly", "networkAccess": network_access});
    let script = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
    let output = sandbox_exec(&policy, &dir, &["bash", "-c", &script]);
    listener.set_nonblocking(true).expect("nonblocking");
    let deadline = Instant::now() + Duration::from_secs(2);
    let accepted = loop {
        match listener.accept() {
            Ok(_) => break true,
            Err(e) if e.kind() == ErrorKind::WouldBlock && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(_) => break false,
        }
    };
    let (stdout, stderr) = text(&output);
    let _ = std::fs::remove_dir_all(dir);
    (
        output.status.success(),
        accepted,
        format!("{stdout}{stderr}"),
    )
}

#[test]
fn network_access_false_refuses_tcp_connections() {
    let (ok, accepted, out) = connects(false);
    assert!(!ok, "connected: {out}");
    assert!(!accepted, "the listener accepted a connection: {out}");
    assert!(out.contains("Permission denied"), "{out}");
}

#[test]
fn network_access_true_allows_tcp_connections() {
    let (ok, accepted, out) = connects(true);
    assert!(ok, "{out}");
    assert!(accepted, "{out}");
}

#[test]
fn confined_commands_cannot_signal_processes_outside() {
    let work = scratch("sandbox-signal");
    let mut outside = Command::new("sleep")
        .arg("30")
        .spawn()
        .expect("spawn a process outside the sandbox");
    let probe = format!("kill -0 {}", outside.id());
    let (ok, out) = sh(&json!({"type": "readOnly"}), &work, &probe);
    assert!(
        !ok,
        "a confined command could signal pid {}: {out}",
        outside.id()
    );
    // Within the sandbox, signals still work (a command can stop its own children).
    let (ok, out) = sh(&json!({"type": "readOnly"}), &work, "sleep 30 & kill $!");
    assert!(ok, "{out}");
    // Unconfined, the same probe succeeds: it was the sandbox that refused.
    let (ok, out) = sh(&json!({"type": "dangerFullAccess"}), &work, &probe);
    assert!(ok, "{out}");
    let _ = outside.kill();
    let _ = outside.wait();
    let _ = std::fs::remove_dir_all(work);
}

#[test]
fn danger_full_access_writes_anywhere() {
    let root = scratch("sandbox-danger");
    let work = root.join("work");
    std::fs::create_dir_all(&work).expect("mkdir");
    let target = root.join("outside.txt");
    let script = format!("echo x > {}", target.display());
    let (ok, out) = sh(&json!({"type": "dangerFullAccess"}), &work, &script);
    assert!(ok, "{out}");
    assert!(target.exists());
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn bad_policies_and_missing_programs_have_their_own_exit_codes() {
    let dir = scratch("sandbox-errors");
    let output = Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .args(["sandbox-exec", "--policy", "{not json", "--cwd"])
        .arg(&dir)
        .args(["--", "true"])
        .output()
        .expect("spawn agentwire");
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output).1.contains("invalid --policy"),
        "{:?}",
        text(&output)
    );

    let output = sandbox_exec(&json!({"type": "nope"}), &dir, &["true"]);
    assert_eq!(output.status.code(), Some(2), "{:?}", text(&output));

    let output = sandbox_exec(
        &json!({"type": "readOnly"}),
        &dir,
        &["agentwire-no-such-program"],
    );
    assert_eq!(output.status.code(), Some(127));
    assert!(
        text(&output).1.contains("agentwire-no-such-program"),
        "{:?}",
        text(&output)
    );

    std::fs::write(dir.join("plain.txt"), "not a program").expect("write");
    let output = sandbox_exec(&json!({"type": "readOnly"}), &dir, &["./plain.txt"]);
    assert_eq!(output.status.code(), Some(126), "{:?}", text(&output));

    // The command's own exit code comes through.
    let output = sandbox_exec(&json!({"type": "readOnly"}), &dir, &["sh", "-c", "exit 7"]);
    assert_eq!(output.status.code(), Some(7));

    // The subcommand is hidden.
    let help = Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .arg("--help")
        .output()
        .expect("spawn agentwire");
    assert!(!text(&help).0.contains("sandbox-exec"));
    let _ = std::fs::remove_dir_all(dir);
}
