//! `agentwire sandbox-exec`: what each sandbox policy lets a command do.
//!
//! The scratch directories live under the temporary directory, so the tests that need a
//! directory to stay read-only exclude `/tmp` and `$TMPDIR` from the writable roots.

use std::ffi::OsStr;
use std::io::ErrorKind;
use std::net::TcpListener;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{SocketAddr, UnixListener};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{outcome, scratch, text, unconfined};

/// `agentwire sandbox-exec --policy POLICY --cwd CWD -- ARGV…`, not started yet.
fn sandbox_command(policy: &Value, cwd: &Path, argv: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agentwire"));
    command
        .arg("sandbox-exec")
        .arg("--policy")
        .arg(policy.to_string())
        .arg("--cwd")
        .arg(cwd)
        .arg("--")
        .args(argv);
    command
}

/// Runs `agentwire sandbox-exec --policy POLICY --cwd CWD -- ARGV…`, with `envs` set.
fn sandbox_exec_with(policy: &Value, cwd: &Path, argv: &[&str], envs: &[(&str, &Path)]) -> Output {
    let mut command = sandbox_command(policy, cwd, argv);
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
    outcome(&sandbox_exec(policy, cwd, &["sh", "-c", script]))
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

/// The Python that plays the attacker where `sh` cannot (sockets, ioctls, shared memory).
const PYTHON: &str = "/usr/bin/python3";

fn assert_python() {
    assert!(
        Path::new(PYTHON).exists(),
        "{PYTHON} (Debian's python3-minimal) plays the attacker"
    );
}

/// Runs `argv` in `cwd` under `policy`.
fn confined(policy: &Value, cwd: &Path, argv: &[&str]) -> (bool, String) {
    outcome(&sandbox_exec(policy, cwd, argv))
}

/// The confining policies, named for messages: `readOnly`, and `workspaceWrite` at its most
/// permissive (network allowed, `/tmp` and `$TMPDIR` writable).
fn confining_policies() -> [(&'static str, Value); 2] {
    [
        ("readOnly", json!({"type": "readOnly"})),
        (
            "workspaceWrite with network, /tmp and $TMPDIR",
            json!({"type": "workspaceWrite", "networkAccess": true}),
        ),
    ]
}

/// docs/sandbox.md line 36: "`/dev/shm` is not writable, so POSIX shared memory and named
/// semaphores fail", under `readOnly` and `workspaceWrite`. Each attack prints `WRITTEN` once it
/// has created something in `/dev/shm`; unconfined, each one does.
#[test]
fn dev_shm_is_not_writable_so_shared_memory_and_named_semaphores_fail() {
    assert_python();
    let work = scratch("sandbox-dev-shm");
    let shm_file = Path::new("/dev/shm").join(format!("agentwire-e2e-{}-shm", std::process::id()));
    let _ = std::fs::remove_file(&shm_file);
    let write_file = format!("echo x > {} && echo WRITTEN", shm_file.display());
    let attacks = [
        ("a file in /dev/shm", ["sh", "-c", write_file.as_str()]),
        (
            "POSIX shared memory (shm_open)",
            [
                PYTHON,
                "-c",
                "from multiprocessing import shared_memory\n\
                 m = shared_memory.SharedMemory(create=True, size=16)\n\
                 m.close()\n\
                 m.unlink()\n\
                 print('WRITTEN')",
            ],
        ),
        (
            "a named semaphore (sem_open)",
            [
                PYTHON,
                "-c",
                "import multiprocessing\nmultiprocessing.Semaphore(1)\nprint('WRITTEN')",
            ],
        ),
    ];
    for (name, attack) in &attacks {
        for (policy_name, policy) in confining_policies() {
            let (ok, out) = confined(&policy, &work, attack);
            assert!(
                !ok && !out.contains("WRITTEN"),
                "{name} under {policy_name}: the confined command wrote to /dev/shm: {out}"
            );
            assert!(
                !shm_file.exists(),
                "{name} under {policy_name}: {} was created",
                shm_file.display()
            );
        }
        let (ok, out) = unconfined(&work, attack);
        let _ = std::fs::remove_file(&shm_file);
        assert!(
            ok && out.contains("WRITTEN"),
            "{name}: unconfined, the attack failed, so it proves nothing: {out}"
        );
    }
    let _ = std::fs::remove_dir_all(work);
}

/// docs/sandbox.md line 38: "Mounting (`mount`, `pivot_root`) is denied, as Landlock does for
/// every confined process", and line 105: the covering mounts "cannot be undone, as Landlock
/// refuses `umount`". The confined command is root in a mount namespace of its own, so only
/// Landlock stands in its way: each attack must fail with `EPERM` (as util-linux words it).
/// Unconfined, in a mount namespace of its own too (`unshare`, so nothing reaches the host's
/// mounts and nothing is left to unmount) with the working directory bound onto itself as the
/// sandbox binds a writable root, the same commands succeed.
#[test]
fn mount_umount_and_pivot_root_are_denied() {
    let root = scratch("sandbox-mount");
    let work = root.join("work");
    for dir in [work.join("target"), work.join("old")] {
        std::fs::create_dir_all(dir).expect("mkdir");
    }
    let read_only = json!({"type": "readOnly"});
    let workspace = json!({"type": "workspaceWrite", "networkAccess": true});
    // (attack, script, how the refusal reads, whether to try it under `readOnly` too: the new
    // root of `pivot_root` must be a mount point, which a working directory is only when it
    // is a writable root)
    let attacks = [
        (
            "mount a tmpfs",
            "mount -t tmpfs tmpfs target && mountpoint -q target && echo MOUNTED",
            "permission denied",
            true,
        ),
        (
            "bind-mount a directory",
            "mount --bind old target && echo MOUNTED",
            "permission denied",
            true,
        ),
        (
            "umount the sandbox's own /proc",
            "umount -l /proc && echo MOUNTED",
            "must be superuser",
            true,
        ),
        (
            "pivot_root into the working directory",
            "pivot_root . old && echo MOUNTED",
            "Operation not permitted",
            false,
        ),
    ];
    for (name, script, refusal, under_read_only) in attacks {
        let mut policies = vec![("workspaceWrite", &workspace)];
        if under_read_only {
            policies.push(("readOnly", &read_only));
        }
        for (policy_name, policy) in policies {
            let (ok, out) = confined(policy, &work, &["sh", "-c", script]);
            assert!(
                !ok && !out.contains("MOUNTED"),
                "{name} under {policy_name} succeeded: {out}"
            );
            assert!(
                out.contains(refusal),
                "{name} under {policy_name}: not refused with EPERM ({refusal:?}): {out}"
            );
        }
        let control = format!("mount --bind {0} {0} && cd {0} && {script}", work.display());
        let (ok, out) = unconfined(
            &root,
            &[
                "unshare",
                "--mount",
                "--propagation",
                "private",
                "sh",
                "-c",
                &control,
            ],
        );
        assert!(
            ok && out.contains("MOUNTED"),
            "{name}: unconfined, the attack failed, so it proves nothing: {out}"
        );
    }
    let _ = std::fs::remove_dir_all(root);
}

/// docs/sandbox.md line 40: "`no_new_privs` is set: set-user-ID programs such as `sudo` do not
/// gain privileges". The command (root, as the tests run, but holding no capability: it cannot
/// switch users itself) reports its `NoNewPrivs` and runs a set-user-ID copy of `id` owned by
/// `nobody` (outside the working directory, so under `readOnly` no `nosuid` mount is involved):
/// confined, `id -u` says 0 (the bit was ignored); unconfined, the copy runs as 65534.
#[test]
fn no_new_privs_is_set_so_set_user_id_programs_gain_nothing() {
    let root = scratch("sandbox-setuid");
    let work = root.join("work");
    std::fs::create_dir_all(&work).expect("mkdir work");
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let id = root.join("id-setuid");
    std::fs::copy("/usr/bin/id", &id).expect("copy /usr/bin/id");
    std::os::unix::fs::chown(&id, Some(65534), Some(65534)).expect("chown");
    std::fs::set_permissions(&id, std::fs::Permissions::from_mode(0o4755)).expect("chmod u+s");
    let script = format!("grep NoNewPrivs /proc/self/status && {} -u", id.display());
    let attack = ["sh", "-c", script.as_str()];
    for (policy_name, policy) in confining_policies() {
        let (ok, out) = confined(&policy, &work, &attack);
        assert!(ok, "under {policy_name}: {out}");
        assert!(
            out.contains("NoNewPrivs:\t1"),
            "under {policy_name}: no_new_privs is not set: {out}"
        );
        assert_eq!(
            out.lines().last(),
            Some("0"),
            "under {policy_name}: the set-user-ID copy of `id` changed the user: {out}"
        );
    }
    let (ok, out) = unconfined(&work, &attack);
    assert!(ok, "unconfined: {out}");
    assert!(out.contains("NoNewPrivs:\t0"), "unconfined: {out}");
    assert_eq!(
        out.lines().last(),
        Some("65534"),
        "unconfined, the set-user-ID copy did not change the user, so the attack proves nothing: {out}"
    );
    let _ = std::fs::remove_dir_all(root);
}

/// Runs, in `work` under `policy`, a command that waits for `later` (which the test creates once
/// the command has started) and then writes `later/f`.
fn write_into_a_directory_created_after_start(
    policy: &Value,
    work: &Path,
    later: &Path,
) -> (bool, String) {
    let started = work.join("started");
    let _ = std::fs::remove_file(&started);
    let script = format!(
        "touch started && i=0 && while [ ! -d {0} ] && [ $i -lt 600 ]; do sleep 0.05; \
         i=$((i + 1)); done; echo x > {0}/f && echo WROTE",
        later.display()
    );
    let mut child = sandbox_command(policy, work, &["sh", "-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn agentwire");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !started.exists() {
        if child.try_wait().expect("poll the command").is_some() || Instant::now() > deadline {
            let _ = child.kill();
            let output = child.wait_with_output().expect("wait for the command");
            panic!("the command never started waiting: {:?}", outcome(&output));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    std::fs::create_dir(later).expect("create the root");
    outcome(&child.wait_with_output().expect("wait for the command"))
}

/// docs/sandbox.md line 31: "A root counts when it exists at the moment the command starts; a
/// root created later stays read-only for that command." A `writableRoots` entry that does not
/// exist yet is created (by the test, outside) once the command runs; the command then cannot
/// write in it. The same root existing at the start is writable, and unconfined the late
/// directory is written to.
#[test]
fn a_writable_root_created_after_the_command_started_stays_read_only() {
    let root = scratch("sandbox-late-root");
    let work = root.join("work");
    std::fs::create_dir_all(&work).expect("mkdir work");
    let later = root.join("later");
    let policy = workspace_only(&[&later]);

    let (ok, out) = write_into_a_directory_created_after_start(&policy, &work, &later);
    assert!(
        !ok && !out.contains("WROTE"),
        "a root created after the start was writable: {out}"
    );
    assert!(!later.join("f").exists(), "{out}");

    // Existing at the start, the same root is writable: the policy does name it.
    let (ok, out) = sh(
        &policy,
        &work,
        &format!("echo x > {}/f && echo WROTE", later.display()),
    );
    assert!(ok && later.join("f").exists(), "an existing root: {out}");

    std::fs::remove_dir_all(&later).expect("remove the root");
    let (ok, out) = write_into_a_directory_created_after_start(
        &json!({"type": "dangerFullAccess"}),
        &work,
        &later,
    );
    assert!(
        ok && out.contains("WROTE") && later.join("f").exists(),
        "unconfined, the late directory was not written to, so the attack proves nothing: {out}"
    );
    let _ = std::fs::remove_dir_all(root);
}

/// docs/sandbox.md lines 27-30 and 35: `ioctl` on device files is writing, denied outside the
/// writable roots, allowed on the few devices listed (`/dev/urandom`…). The command opens each
/// device read-only (reading is allowed everywhere), prints `OPENED`, then asks it something
/// harmless: `/dev/ptmx` the number of the terminal it made (`TIOCGPTN`), a random device its
/// entropy count (`RNDGETENTCNT`) — `/dev/urandom` itself, and nodes of the same device (1, 9)
/// that the test makes outside the roots and in the workspace. Under `workspaceWrite` with
/// only the workspace writable (`/tmp` holds the scratch directory); the workspace is bound
/// `nodev`, so the node made there is not even opened. Unconfined, every ioctl succeeds.
#[test]
fn ioctl_on_devices_outside_the_writable_roots_is_refused() {
    assert_python();
    let root = scratch("sandbox-ioctl");
    let work = root.join("work");
    let outside = root.join("outside");
    for dir in [&work, &outside] {
        std::fs::create_dir_all(dir).expect("mkdir");
    }
    let outside_node = outside.join("urandom");
    let inside_node = work.join("urandom");
    for node in [&outside_node, &inside_node] {
        let status = Command::new("mknod")
            .arg(node)
            .args(["c", "1", "9"])
            .status()
            .expect("run mknod");
        assert!(status.success(), "mknod {}", node.display());
    }
    let (outside_node, inside_node) = (
        outside_node.display().to_string(),
        inside_node.display().to_string(),
    );
    const TIOCGPTN: &str = "0x80045430";
    const RNDGETENTCNT: &str = "0x80045200";
    let probe = "import fcntl, os, sys\n\
                 fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NOCTTY)\n\
                 print('OPENED', flush=True)\n\
                 fcntl.ioctl(fd, int(sys.argv[2], 16), bytes(4))\n\
                 print('IOCTL DONE')";
    let read_only = json!({"type": "readOnly"});
    let workspace = workspace_only(&[]);
    // (device, its path, the request, allowed under readOnly, allowed under workspaceWrite)
    let cases = [
        ("/dev/ptmx", "/dev/ptmx", TIOCGPTN, false, false),
        (
            "a random device node outside the roots",
            outside_node.as_str(),
            RNDGETENTCNT,
            false,
            false,
        ),
        // A writable root is `nodev` (issue 32): the node there is not even opened.
        (
            "a random device node in the working directory",
            inside_node.as_str(),
            RNDGETENTCNT,
            false,
            false,
        ),
        (
            "/dev/urandom, writable everywhere",
            "/dev/urandom",
            RNDGETENTCNT,
            true,
            true,
        ),
    ];
    for (device, path, request, read_only_allows, workspace_allows) in cases {
        let attack = [PYTHON, "-c", probe, path, request];
        for (policy_name, policy, allowed) in [
            ("readOnly", &read_only, read_only_allows),
            ("workspaceWrite", &workspace, workspace_allows),
        ] {
            let (ok, out) = confined(policy, &work, &attack);
            if allowed {
                assert!(
                    ok && out.contains("IOCTL DONE"),
                    "ioctl on {device} under {policy_name} was refused: {out}"
                );
            } else {
                assert!(
                    !ok && !out.contains("IOCTL DONE"),
                    "ioctl on {device} under {policy_name} went through: {out}"
                );
                let nodev = path == inside_node && policy_name == "workspaceWrite";
                assert!(
                    out.contains("OPENED") != nodev && out.contains("Permission denied"),
                    "ioctl on {device} under {policy_name}: not refused with EACCES: {out}"
                );
            }
        }
        let (ok, out) = unconfined(&work, &attack);
        assert!(
            ok && out.contains("IOCTL DONE"),
            "ioctl on {device}: unconfined, it failed, so the attack proves nothing: {out}"
        );
    }
    let _ = std::fs::remove_dir_all(root);
}

/// docs/sandbox.md line 53: without `networkAccess`, "abstract Unix sockets created outside the
/// sandbox are refused". The test listens on an abstract socket; a confined `python3` cannot
/// connect to it and the listener sees nothing. Unconfined, it connects.
#[test]
fn abstract_unix_sockets_created_outside_cannot_be_reached() {
    assert_python();
    let work = scratch("sandbox-abstract");
    let name = format!("agentwire-e2e-{}-abstract", std::process::id());
    let address = SocketAddr::from_abstract_name(name.as_bytes()).expect("abstract address");
    let listener = UnixListener::bind_addr(&address).expect("listen on the abstract socket");
    listener.set_nonblocking(true).expect("nonblocking");
    let attack = [
        PYTHON,
        "-c",
        "import socket, sys\n\
         s = socket.socket(socket.AF_UNIX)\n\
         s.connect(b'\\0' + sys.argv[1].encode())\n\
         print('CONNECTED')",
        name.as_str(),
    ];
    for (policy_name, policy) in [
        ("readOnly", json!({"type": "readOnly"})),
        ("workspaceWrite", json!({"type": "workspaceWrite"})),
    ] {
        let (ok, out) = confined(&policy, &work, &attack);
        assert!(
            !ok && !out.contains("CONNECTED"),
            "under {policy_name}: the confined command connected to @{name}: {out}"
        );
        let accepted = listener.accept();
        assert!(
            matches!(&accepted, Err(e) if e.kind() == ErrorKind::WouldBlock),
            "under {policy_name}: the listener saw {accepted:?}: {out}"
        );
    }
    let (ok, out) = unconfined(&work, &attack);
    assert!(
        ok && out.contains("CONNECTED"),
        "unconfined, the connection failed, so the attack proves nothing: {out}"
    );
    let accepted = listener.accept();
    assert!(
        accepted.is_ok(),
        "unconfined: the listener saw {accepted:?}"
    );
    let _ = std::fs::remove_dir_all(work);
}

/// The launcher that plays a kernel refusing one system call: `python3 -c LAUNCHER NR ERRNO --
/// ARGV…` sets `no_new_privs`, installs a seccomp filter under which system call `NR` (x86_64
/// numbering; any other architecture is let through) fails with `ERRNO` and every other one is
/// allowed, then executes `ARGV`. The filter is inherited by every process `ARGV` starts, so
/// `sandbox-init` and the command are under it too.
const SECCOMP_LAUNCHER: &str = r#"
import ctypes, os, sys
nr, errno = int(sys.argv[1]), int(sys.argv[2])
if len(sys.argv) < 5 or sys.argv[3] != '--':
    sys.exit('usage: NR ERRNO -- ARGV...')
argv = sys.argv[4:]

class SockFilter(ctypes.Structure):
    _fields_ = [('code', ctypes.c_ushort), ('jt', ctypes.c_ubyte), ('jf', ctypes.c_ubyte),
                ('k', ctypes.c_uint)]

class SockFprog(ctypes.Structure):
    _fields_ = [('len', ctypes.c_ushort), ('filter', ctypes.POINTER(SockFilter))]

BPF_LD_W_ABS, BPF_JEQ_K, BPF_RET_K = 0x20, 0x15, 0x06
AUDIT_ARCH_X86_64 = 0xC000003E
SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO = 0x7FFF0000, 0x00050000
# struct seccomp_data: int nr at offset 0, __u32 arch at offset 4.
program = [
    (BPF_LD_W_ABS, 0, 0, 4),
    (BPF_JEQ_K, 0, 3, AUDIT_ARCH_X86_64),
    (BPF_LD_W_ABS, 0, 0, 0),
    (BPF_JEQ_K, 0, 1, nr),
    (BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | errno),
    (BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW),
]
filters = (SockFilter * len(program))(*[SockFilter(*insn) for insn in program])
fprog = SockFprog(len(program), filters)
libc = ctypes.CDLL(None, use_errno=True)
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
    sys.exit('launcher: prctl(PR_SET_NO_NEW_PRIVS): ' + os.strerror(ctypes.get_errno()))
if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
    sys.exit('launcher: prctl(PR_SET_SECCOMP): ' + os.strerror(ctypes.get_errno()))
os.execvp(argv[0], argv)
"#;

/// x86_64 system call numbers the sandbox depends on.
const SYS_LANDLOCK_CREATE_RULESET: u32 = 444;
const SYS_LANDLOCK_RESTRICT_SELF: u32 = 446;
const SYS_UNSHARE: u32 = 272;
const SYS_MOUNT: u32 = 165;
/// `acct`, which nothing here calls: denying it changes nothing.
const SYS_ACCT: u32 = 163;

const EPERM: u32 = 1;
const ENOSYS: u32 = 38;
const EOPNOTSUPP: u32 = 95;

/// Runs `argv` (`program` then `args`) under a seccomp filter that makes system call `nr` fail
/// with `errno`.
fn denying<'a>(
    nr: u32,
    errno: u32,
    program: &'a OsStr,
    args: impl IntoIterator<Item = &'a OsStr>,
) -> Output {
    assert_python();
    assert!(
        std::env::consts::ARCH == "x86_64",
        "the seccomp filter numbers system calls as x86_64 does"
    );
    Command::new(PYTHON)
        .arg("-c")
        .arg(SECCOMP_LAUNCHER)
        .arg(nr.to_string())
        .arg(errno.to_string())
        .arg("--")
        .arg(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("spawn the seccomp launcher")
}

/// `agentwire sandbox-exec --policy POLICY --cwd CWD -- ARGV…` under a seccomp filter that makes
/// system call `nr` fail with `errno`.
fn sandbox_exec_denying(nr: u32, errno: u32, policy: &Value, cwd: &Path, argv: &[&str]) -> Output {
    let command = sandbox_command(policy, cwd, argv);
    denying(nr, errno, command.get_program(), command.get_args())
}

/// The command the refusal tests try to run: it prints `RAN` and creates `marker` (in a
/// writable root under `workspaceWrite`), so running it at all shows.
fn ran_script(marker: &Path) -> String {
    format!("echo RAN; touch {}", marker.display())
}

/// Asserts that `output` is `sandbox-exec` refusing to run the command: exit 125, the reason
/// (`reason`) and "the command was not run" on stderr, and no trace of the command.
fn assert_not_run(output: &Output, marker: &Path, case: &str, reason: &str) {
    let (stdout, stderr) = text(output);
    assert!(
        !stdout.contains("RAN") && !marker.exists(),
        "{case}: the command ran (exit {:?}): {stdout}{stderr}",
        output.status.code()
    );
    assert_eq!(
        output.status.code(),
        Some(125),
        "{case}: not the documented exit code: {stdout}{stderr}"
    );
    assert!(
        stderr.contains(reason) && stderr.contains("the command was not run"),
        "{case}: stderr does not give the reason ({reason:?}): {stderr}"
    );
}

/// docs/engine.md: "A kernel without Landlock makes confined commands fail rather than
/// run unconfined"; docs/sandbox.md lines 76-78: "On a kernel without Landlock at all, or with it
/// disabled, nothing runs: `sandbox-exec` exits 125 with the reason. There is no fallback to
/// running unconfined", and line 89 (125: "the sandbox could not be applied (no Landlock, …)").
/// A seccomp filter plays each kernel: `landlock_create_ruleset` failing with `ENOSYS` (no
/// Landlock), with `EOPNOTSUPP` (built in but not enabled), and `landlock_restrict_self`
/// refused with `EPERM`. Under `readOnly` and `workspaceWrite` the command never runs,
/// `sandbox-exec` exits 125 and stderr names Landlock. The control that this attack is real is
/// `the_seccomp_launcher_denies_only_the_system_call_it_names`.
#[test]
fn a_kernel_without_landlock_runs_no_confined_command() {
    let work = scratch("sandbox-no-landlock");
    let cases = [
        (
            "landlock_create_ruleset fails with ENOSYS (no Landlock)",
            SYS_LANDLOCK_CREATE_RULESET,
            ENOSYS,
            "this kernel has no Landlock support",
        ),
        (
            "landlock_create_ruleset fails with EOPNOTSUPP (Landlock disabled)",
            SYS_LANDLOCK_CREATE_RULESET,
            EOPNOTSUPP,
            "Landlock is built into this kernel but not enabled",
        ),
        (
            "landlock_restrict_self fails with EPERM",
            SYS_LANDLOCK_RESTRICT_SELF,
            EPERM,
            "cannot enforce the Landlock ruleset",
        ),
    ];
    runs_nothing_on_these_kernels(&work, &cases);
}

/// docs/sandbox.md lines 96-99: `sandbox-exec` enters namespaces of its own, and "a kernel that
/// refuses makes the command fail, never run unisolated"; line 89: exit 125. The namespaces are
/// made with `unshare(2)` (`CLONE_NEWNS | CLONE_NEWPID`, and `CLONE_NEWNET` without network
/// access), then set up with `mount(2)`: a seccomp filter makes `unshare`, then `mount`, fail
/// with `EPERM`. Under `readOnly` and `workspaceWrite` the command never runs, `sandbox-exec`
/// exits 125 and stderr says why. The control is
/// `the_seccomp_launcher_denies_only_the_system_call_it_names`.
#[test]
fn a_kernel_that_refuses_namespaces_runs_no_confined_command() {
    let work = scratch("sandbox-no-namespaces");
    let cases = [
        (
            "unshare fails with EPERM",
            SYS_UNSHARE,
            EPERM,
            "cannot create the sandbox's namespaces",
        ),
        (
            "mount fails with EPERM",
            SYS_MOUNT,
            EPERM,
            "cannot make the sandbox's mounts private",
        ),
    ];
    runs_nothing_on_these_kernels(&work, &cases);
}

/// For each `(kernel, system call, errno, reason)` of `cases`, under each confining policy:
/// `sandbox-exec` with that call failing with that errno runs nothing in `work` (see
/// [`assert_not_run`]) and says `reason`. Removes `work`.
fn runs_nothing_on_these_kernels(work: &Path, cases: &[(&str, u32, u32, &str)]) {
    let marker = work.join("marker");
    let script = ran_script(&marker);
    for &(kernel, nr, errno, reason) in cases {
        for (policy_name, policy) in confining_policies() {
            let output = sandbox_exec_denying(nr, errno, &policy, work, &["sh", "-c", &script]);
            let case = format!("{kernel}, under {policy_name}");
            assert_not_run(&output, &marker, &case, reason);
        }
    }
    let _ = std::fs::remove_dir_all(work);
}

/// The control of the two tests above. Under the same launcher denying a system call nothing
/// here makes (`acct`), `sandbox-exec` runs the command under both confining policies (exit 0,
/// `RAN`, and the marker under `workspaceWrite`): the launcher itself breaks nothing. And the
/// filter does what the tests rely on: `landlock_create_ruleset` (asked for the ABI version)
/// answers on this kernel, and fails with `ENOSYS` under the filter; `unshare --mount` works, and
/// fails with `EPERM` under the filter. A kernel refusing `landlock_create_ruleset` still runs
/// `dangerFullAccess` commands, which confine nothing.
#[test]
fn the_seccomp_launcher_denies_only_the_system_call_it_names() {
    let work = scratch("sandbox-seccomp-control");
    let marker = work.join("marker");
    let script = ran_script(&marker);
    for (policy_name, policy) in confining_policies() {
        let _ = std::fs::remove_file(&marker);
        // `readOnly` cannot create the marker: there the command only prints.
        let writes = policy["type"] == "workspaceWrite";
        let script = if writes { script.as_str() } else { "echo RAN" };
        let output = sandbox_exec_denying(SYS_ACCT, EPERM, &policy, &work, &["sh", "-c", script]);
        let (ok, out) = outcome(&output);
        assert!(
            ok && out.contains("RAN") && (marker.exists() || !writes),
            "under {policy_name} with acct denied, the command did not run: {out}"
        );
    }
    let _ = std::fs::remove_file(&marker);
    let output = sandbox_exec_denying(
        SYS_LANDLOCK_CREATE_RULESET,
        ENOSYS,
        &json!({"type": "dangerFullAccess"}),
        &work,
        &["sh", "-c", &script],
    );
    let (ok, out) = outcome(&output);
    assert!(
        ok && out.contains("RAN") && marker.exists(),
        "dangerFullAccess without Landlock: {out}"
    );

    // landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION) gives the ABI version.
    let probe = format!(
        "import ctypes\n\
         libc = ctypes.CDLL(None, use_errno=True)\n\
         print(libc.syscall({SYS_LANDLOCK_CREATE_RULESET}, None, 0, 1), ctypes.get_errno())"
    );
    let python = OsStr::new(PYTHON);
    let probe_args = [OsStr::new("-c"), OsStr::new(&probe)];
    let output = denying(SYS_ACCT, EPERM, python, probe_args);
    let (ok, out) = outcome(&output);
    let abi: i64 = out
        .split_whitespace()
        .next()
        .and_then(|abi| abi.parse().ok())
        .unwrap_or(-1);
    assert!(
        ok && abi >= 1,
        "this kernel has no Landlock, so the attack proves nothing: {out}"
    );
    let output = denying(SYS_LANDLOCK_CREATE_RULESET, ENOSYS, python, probe_args);
    let (ok, out) = outcome(&output);
    assert!(
        ok && out.trim() == format!("-1 {ENOSYS}"),
        "the filter did not make landlock_create_ruleset fail with ENOSYS: {out}"
    );

    let unshare = OsStr::new("unshare");
    let unshare_args = ["--mount", "true"].map(OsStr::new);
    let output = denying(SYS_ACCT, EPERM, unshare, unshare_args);
    assert!(output.status.success(), "unshare: {:?}", outcome(&output));
    let output = denying(SYS_UNSHARE, EPERM, unshare, unshare_args);
    let (ok, out) = outcome(&output);
    assert!(
        !ok && out.contains("Operation not permitted"),
        "the filter did not make unshare fail with EPERM: {out}"
    );
    let _ = std::fs::remove_dir_all(work);
}

/// docs/sandbox.md line 89: 125 when "`--cwd` is unusable; the command was not run". A
/// working directory that does not exist, and one that is a regular file: under every policy
/// (`dangerFullAccess` too) `sandbox-exec` exits 125 naming the directory, and the command (which
/// would print `RAN` and create a marker outside the working directory) never runs.
#[test]
fn an_unusable_cwd_exits_125_without_running_the_command() {
    let root = scratch("sandbox-bad-cwd");
    let marker = root.join("marker");
    let script = ran_script(&marker);
    let file = root.join("a-file");
    std::fs::write(&file, "not a directory").expect("write the file");
    let policies = [
        ("readOnly", json!({"type": "readOnly"})),
        ("workspaceWrite", json!({"type": "workspaceWrite"})),
        ("dangerFullAccess", json!({"type": "dangerFullAccess"})),
    ];
    for (cwd_name, cwd) in [
        ("a missing directory", root.join("missing")),
        ("a regular file", file),
    ] {
        for (policy_name, policy) in &policies {
            let output = sandbox_exec(policy, &cwd, &["sh", "-c", &script]);
            let case = format!("--cwd {cwd_name}, under {policy_name}");
            let (stdout, stderr) = text(&output);
            assert!(
                !stdout.contains("RAN") && !marker.exists(),
                "{case}: the command ran: {stdout}{stderr}"
            );
            assert_eq!(output.status.code(), Some(125), "{case}: {stdout}{stderr}");
            assert!(
                stderr.contains(&cwd.display().to_string()),
                "{case}: stderr does not name the directory: {stderr}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(root);
}
