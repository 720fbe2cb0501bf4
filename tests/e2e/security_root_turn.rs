//! A root server's confinement end to end (issue 32, finding 1 as it was found): `agentwire
//! app-server` on its stdio, run as root, with a thread under `read-only` and one under
//! `workspace-write` (approval policy `never`), whose scripted model runs a hostile probe. The
//! probe prints its capability sets, reads `auth.json` from the server's home, connects to the
//! Unix control socket of a server on the same home, opens `auth.json` by a file handle made
//! outside (`open_by_handle_at`), sets the host name, makes a device node, makes a copy of the
//! shell set-user-ID with `chmod 4755` and creates a set-user-ID file with `openat2` (whose mode
//! the seccomp filter cannot see), and writes outside the roots. The test checks what the
//! commands printed, every line the server wrote, and the file system afterwards.
//!
//! The control is the same probe under `danger-full-access`: as root it does every one of those
//! things (the host name only in a UTS namespace of its own: the machine keeps its name), so
//! each assertion can fail. Then the same, reduced to what an unprivileged user could do at all,
//! with the server run as uid 65534 and its home owned by that user.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{Killed, scratch, unconfined};
use crate::sandbox_unprivileged::{USER, as_user, give, unprivileged_scratch};

/// The Python that plays the attacker.
const PYTHON: &str = "/usr/bin/python3";

/// What the server's `auth.json` holds: no confined command may ever print it.
const SECRET: &str = "sk-e2e-secret-the-turn-must-never-read";

/// The name the probe tries to give the host.
const PROBE_HOST_NAME: &str = "agentwire-turn-probe";

/// The probe's Python half: `make PATH` prints a file handle of `PATH` (`TYPE HEX`); `connect
/// SOCKET` prints `CONNECT ok|ERRNO`; `handle DIR HANDLE` opens the handle on `DIR`'s file
/// system and prints `HANDLE READ <text>` or `HANDLE ERRNO`; `openat2 NAME` creates `NAME` with
/// mode 04755 by `openat2` and prints `OPENAT2 ok mode=OCTAL` or `OPENAT2 ERRNO`.
const PROBE_PY: &str = r#"
import ctypes, errno, os, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
def name(e):
    return errno.errorcode.get(e, str(e))
class Handle(ctypes.Structure):
    _fields_ = [("bytes", ctypes.c_uint), ("type", ctypes.c_int), ("f", ctypes.c_ubyte * 128)]
class OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]
what = sys.argv[1]
if what == "make":
    h = Handle(); h.bytes = 128
    mount = ctypes.c_int()
    if libc.name_to_handle_at(-100, sys.argv[2].encode(), ctypes.byref(h), ctypes.byref(mount), 0) != 0:
        sys.exit("name_to_handle_at: " + name(ctypes.get_errno()))
    print(h.type, bytes(h.f[:h.bytes]).hex())
elif what == "connect":
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(sys.argv[2])
        print("CONNECT ok")
    except OSError as e:
        print("CONNECT", name(e.errno))
elif what == "handle":
    kind, data = sys.argv[3].split()
    raw = bytes.fromhex(data)
    h = Handle(); h.bytes = len(raw); h.type = int(kind)
    for i, b in enumerate(raw):
        h.f[i] = b
    mount_fd = os.open(sys.argv[2], os.O_RDONLY | os.O_DIRECTORY)
    fd = libc.open_by_handle_at(mount_fd, ctypes.byref(h), os.O_RDONLY)
    if fd < 0:
        print("HANDLE", name(ctypes.get_errno()))
    else:
        print("HANDLE READ", os.read(fd, 200).decode(errors="replace"))
elif what == "openat2":
    # SYS_openat2 is 437 on x86_64 and aarch64; struct open_how is 24 bytes.
    how = OpenHow(os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o4755, 0)
    fd = libc.syscall(437, -100, sys.argv[2].encode(), ctypes.byref(how), ctypes.c_size_t(24))
    if fd < 0:
        print("OPENAT2", name(ctypes.get_errno()))
    else:
        print("OPENAT2 ok mode=%o" % os.fstat(fd).st_mode)
"#;

/// The paths of one attack: the scratch root, the server's home, the thread's working
/// directory, a directory outside every root, and the probe's two halves.
struct Scene {
    root: PathBuf,
    home: PathBuf,
    work: PathBuf,
    outside: PathBuf,
}

impl Scene {
    /// `root` with `home/auth.json` holding [`SECRET`], `work/`, `outside/`, the probe's
    /// Python half, and a fixture model whose turns run the probe: `sh probe.sh control` for a
    /// turn whose text says `control`, `sh probe.sh confined` otherwise (see
    /// [`Scene::write_probe`]).
    fn new(root: PathBuf) -> Self {
        let scene = Self {
            home: root.join("home"),
            work: root.join("work"),
            outside: root.join("outside"),
            root,
        };
        for dir in [&scene.home, &scene.work, &scene.outside] {
            std::fs::create_dir_all(dir).expect("mkdir");
        }
        std::fs::write(scene.auth(), format!("{{\"OPENAI_API_KEY\":\"{SECRET}\"}}"))
            .expect("auth.json");
        std::fs::write(scene.root.join("probe.py"), PROBE_PY).expect("probe.py");
        let run = |mode: &str| {
            let line = format!("sh {} {mode}", scene.root.join("probe.sh").display());
            json!([{"type": "command", "command": line}, {"type": "message", "deltas": ["done"]}])
        };
        let script = json!({"version": 1, "responses": [
            {"when": "control", "steps": run("control")},
            {"steps": run("confined")}
        ]});
        std::fs::write(scene.home.join("script.json"), script.to_string()).expect("script");
        std::fs::write(
            scene.home.join("config.toml"),
            "model_provider = \"fixture\"\nfixture_script = \"script.json\"\n\
             [sandbox_workspace_write]\nexclude_slash_tmp = true\nexclude_tmpdir_env_var = true\n",
        )
        .expect("config.toml");
        scene
    }

    fn auth(&self) -> PathBuf {
        self.home.join("auth.json")
    }

    fn socket(&self) -> PathBuf {
        self.home.join("app-server-control/app-server.sock")
    }

    /// Writes the probe's shell half, which opens `auth.json` by `handle` (made outside) if
    /// there is one. Its first argument is `control` or `confined`: the control sets the host
    /// name in a UTS namespace of its own (never the machine's).
    fn write_probe(&self, handle: Option<&str>) {
        let py = format!("{PYTHON} {}", self.root.join("probe.py").display());
        let by_handle = handle.map_or(String::new(), |handle| {
            format!("{py} handle '{}' '{handle}'\n", self.work.display())
        });
        let probe = format!(
            "grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb):' /proc/self/status\n\
             echo \"AUTH $(cat '{auth}' 2>&1)\"\n\
             {py} connect '{socket}'\n\
             {by_handle}\
             if [ \"$1\" = control ]; then\n\
             \tunshare --uts sh -c 'hostname {PROBE_HOST_NAME} && echo HOSTNAME-SET'\n\
             else\n\
             \thostname {PROBE_HOST_NAME} && echo HOSTNAME-SET\n\
             fi\n\
             mknod probe-char c 1 3 && echo MKNOD-MADE\n\
             cp /bin/sh sh-copy && chmod 4755 sh-copy && echo SETUID-MADE\n\
             {py} openat2 probe-openat2\n\
             echo leak > '{outside}/leak.txt' && echo OUTSIDE-WRITTEN\n\
             echo PROBE-END\n",
            auth = self.auth().display(),
            socket = self.socket().display(),
            outside = self.outside.display(),
        );
        std::fs::write(self.root.join("probe.sh"), probe).expect("probe.sh");
    }

    /// A file handle of `auth.json`, made unconfined (`TYPE HEX`).
    fn handle_of_auth(&self) -> String {
        let (ok, handle) = unconfined(
            &self.root,
            &[
                PYTHON,
                self.root.join("probe.py").to_str().expect("utf-8"),
                "make",
                self.auth().to_str().expect("utf-8"),
            ],
        );
        assert!(ok, "cannot make a handle of auth.json: {handle}");
        handle.trim().to_owned()
    }

    /// Files the probe left in the working directory that are set-user-ID or set-group-ID, or
    /// device nodes.
    fn dangerous_files(&self) -> Vec<String> {
        std::fs::read_dir(&self.work)
            .expect("read the working directory")
            .filter_map(|entry| {
                let entry = entry.expect("entry");
                let meta = entry.path().symlink_metadata().expect("metadata");
                let kind = meta.file_type();
                let dangerous =
                    meta.mode() & 0o6000 != 0 || kind.is_char_device() || kind.is_block_device();
                dangerous.then(|| format!("{} ({:o})", entry.path().display(), meta.mode()))
            })
            .collect()
    }

    /// Empties the working directory and `outside/` (after a control run).
    fn clean(&self) {
        for dir in [&self.work, &self.outside] {
            for entry in std::fs::read_dir(dir).expect("read dir") {
                std::fs::remove_file(entry.expect("entry").path()).expect("remove");
            }
        }
    }
}

/// `command` (`agentwire` or a wrapper running it) as `app-server --listen unix://` on `home`,
/// once its socket exists: the control socket the probe tries to reach.
fn control_server(mut command: Command, scene: &Scene) -> Killed {
    let child = command
        .args(["app-server", "--listen", "unix://"])
        .env("AGENTWIRE_HOME", &scene.home)
        .env("HOME", &scene.home)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the unix:// server");
    let server = Killed(child);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !scene.socket().exists() {
        assert!(
            Instant::now() < deadline,
            "no control socket at {}",
            scene.socket().display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    server
}

/// `agentwire app-server` on its stdio, every line it writes kept.
struct Server {
    _child: Killed,
    stdin: ChildStdin,
    lines: Receiver<String>,
    next_id: i64,
}

impl Server {
    /// Starts `command` (`agentwire` or a wrapper running it) as `app-server` on `home` and
    /// completes the handshake.
    fn start(mut command: Command, home: &Path) -> Self {
        let mut child = command
            .arg("app-server")
            .env("AGENTWIRE_HOME", home)
            .env("HOME", home)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn agentwire app-server");
        let stdout = child.stdout.take().expect("stdout is piped");
        let stdin = child.stdin.take().expect("stdin is piped");
        let (sender, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let mut server = Self {
            _child: Killed(child),
            stdin,
            lines,
            next_id: 0,
        };
        let mut seen = Vec::new();
        server.call(
            "initialize",
            json!({"clientInfo": {"name": "e2e", "version": "0.0.1"}}),
            &mut seen,
        );
        server.send(&json!({"method": "initialized"}));
        server
    }

    fn send(&mut self, message: &Value) {
        let mut line = serde_json::to_vec(message).expect("serialize");
        line.push(b'\n');
        self.stdin.write_all(&line).expect("write to the server");
    }

    /// The next line the server writes (within 60 s), kept in `seen`, as JSON.
    fn next(&self, seen: &mut Vec<String>) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(60))
            .expect("the server writes within 60 s");
        let value = serde_json::from_str(&line).expect("a JSON line");
        seen.push(line);
        value
    }

    /// Sends request `method` and returns its result; every line meanwhile is kept in `seen`.
    fn call(&mut self, method: &str, params: Value, seen: &mut Vec<String>) -> Value {
        self.next_id += 1;
        let id = json!(self.next_id);
        self.send(&json!({"id": id, "method": method, "params": params}));
        loop {
            let message = self.next(seen);
            if message["id"] == id && message.get("method").is_none() {
                assert!(message.get("error").is_none(), "{method}: {message}");
                return message["result"].clone();
            }
        }
    }

    /// A thread in `work` under `sandbox` (approval policy `never`) and one turn of `text`:
    /// every line the server wrote meanwhile, and what the turn's commands printed.
    fn turn(&mut self, work: &Path, sandbox: &str, text: &str) -> (Vec<String>, String) {
        let mut seen = Vec::new();
        let started = self.call(
            "thread/start",
            json!({"cwd": work, "approvalPolicy": "never", "sandbox": sandbox}),
            &mut seen,
        );
        let thread = started["thread"]["id"].clone();
        self.call(
            "turn/start",
            json!({"threadId": thread, "input": [{"type": "text", "text": text}]}),
            &mut seen,
        );
        let mut output = String::new();
        loop {
            let message = self.next(&mut seen);
            let item = &message["params"]["item"];
            if message["method"] == json!("item/completed")
                && item["type"] == json!("commandExecution")
            {
                output.push_str(item["aggregatedOutput"].as_str().unwrap_or_default());
            }
            if message["method"] == json!("turn/completed") {
                break;
            }
        }
        assert!(
            output.contains("PROBE-END"),
            "{sandbox}: the probe did not run to its end:\n{output}"
        );
        (seen, output)
    }
}

/// The capability lines of the probe's output (`CapInh:\t…` …).
fn capability_sets(output: &str) -> Vec<&str> {
    output.lines().filter(|l| l.starts_with("Cap")).collect()
}

/// The line of `output` that starts with `prefix`, or a failure naming the run.
fn line<'a>(output: &'a str, prefix: &str, run: &str) -> &'a str {
    output
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("{run}: no `{prefix}` line in:\n{output}"))
}

/// What must hold of a confined run, for any server: the probe holds no capability in any set,
/// never reads the secret (nowhere in what the server wrote: items, deltas, notifications),
/// neither reaches the control socket nor opens the home by handle, creates no set-user-ID file
/// (`openat2` is answered `ENOSYS`), and writes nothing outside the roots.
fn assert_confined(scene: &Scene, sandbox: &str, seen: &[String], output: &str) {
    let sets = capability_sets(output);
    assert_eq!(sets.len(), 5, "{sandbox}: {output}");
    for set in sets {
        assert!(
            set.ends_with("\t0000000000000000"),
            "{sandbox}: the command holds a capability: {set}\n{output}"
        );
    }
    for line in seen {
        assert!(
            !line.contains(SECRET),
            "{sandbox}: the secret reached the client: {line}"
        );
    }
    assert!(
        line(output, "CONNECT ", sandbox) != "CONNECT ok",
        "{sandbox}: reached the control socket:\n{output}"
    );
    assert_eq!(
        line(output, "OPENAT2 ", sandbox),
        "OPENAT2 ENOSYS",
        "{sandbox}: openat2 was not answered ENOSYS:\n{output}"
    );
    for made in ["MKNOD-MADE", "SETUID-MADE", "OUTSIDE-WRITTEN"] {
        assert!(!output.contains(made), "{sandbox}: {made}:\n{output}");
    }
    assert_eq!(
        scene.dangerous_files(),
        Vec::<String>::new(),
        "{sandbox}: set-user-ID files or device nodes were left:\n{output}"
    );
    assert!(
        !scene.outside.join("leak.txt").exists(),
        "{sandbox}: written outside the roots:\n{output}"
    );
}

/// Promise (docs/security.md, A root server; issue 32, finding 1 through a turn): a root
/// server's `read-only` and `workspace-write` commands hold no capability in any set, read no
/// secret of the server's home (neither by path nor by a file handle), cannot reach its control
/// socket, set the host name, make a device node, leave a set-user-ID file (`chmod 4755`, or
/// `openat2`, answered `ENOSYS`) or write outside the roots. Unconfined, the same probe does
/// every one of these as root.
#[test]
fn a_root_servers_turn_cannot_escape_its_sandbox() {
    if !rustix::process::geteuid().is_root() {
        eprintln!(
            "SKIPPED a_root_servers_turn_cannot_escape_its_sandbox: it checks a root server and \
             the tests do not run as root"
        );
        return;
    }
    assert!(Path::new(PYTHON).exists(), "{PYTHON} plays the attacker");
    let root = scratch("root-turn");
    // Only root may enter: the control leaves a set-user-ID-root shell in `work/` for a moment.
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let scene = Scene::new(root);
    scene.write_probe(Some(&scene.handle_of_auth()));
    let host_name = std::fs::read_to_string("/proc/sys/kernel/hostname").expect("hostname");
    let _control = control_server(Command::new(env!("CARGO_BIN_EXE_agentwire")), &scene);
    let mut server = Server::start(Command::new(env!("CARGO_BIN_EXE_agentwire")), &scene.home);

    for sandbox in ["read-only", "workspace-write"] {
        let (seen, output) = server.turn(&scene.work, sandbox, "attack");
        assert_confined(&scene, sandbox, &seen, &output);
        assert!(
            line(&output, "HANDLE ", sandbox) == "HANDLE EPERM",
            "{sandbox}: open_by_handle_at was not refused:\n{output}"
        );
        assert!(!output.contains("HOSTNAME-SET"), "{sandbox}: {output}");
        assert_eq!(
            std::fs::read_to_string("/proc/sys/kernel/hostname").expect("hostname"),
            host_name,
            "{sandbox}: the host name changed"
        );
    }

    // The control: unconfined, root does every one of these.
    let (seen, output) = server.turn(&scene.work, "danger-full-access", "control");
    let effective = line(&output, "CapEff:", "control");
    assert_ne!(
        effective, "CapEff:\t0000000000000000",
        "control: root holds no capability, so the test proves nothing:\n{output}"
    );
    assert!(
        line(&output, "AUTH ", "control").contains(SECRET),
        "control: {output}"
    );
    assert!(seen.iter().any(|l| l.contains(SECRET)), "control: {output}");
    assert_eq!(line(&output, "CONNECT ", "control"), "CONNECT ok");
    let by_handle = line(&output, "HANDLE ", "control");
    assert!(
        by_handle.starts_with("HANDLE READ ") && by_handle.contains(SECRET),
        "control: {output}"
    );
    assert!(
        line(&output, "OPENAT2 ", "control").starts_with("OPENAT2 ok mode=104755"),
        "control: {output}"
    );
    for made in [
        "HOSTNAME-SET",
        "MKNOD-MADE",
        "SETUID-MADE",
        "OUTSIDE-WRITTEN",
    ] {
        assert!(output.contains(made), "control: no {made}:\n{output}");
    }
    assert_eq!(
        scene.dangerous_files().len(),
        3,
        "control: the device node, the set-user-ID shell and the openat2 file: {:?}",
        scene.dangerous_files()
    );
    assert!(scene.outside.join("leak.txt").exists(), "control: {output}");
    assert_eq!(
        std::fs::read_to_string("/proc/sys/kernel/hostname").expect("hostname"),
        host_name,
        "the control renamed the machine"
    );
    scene.clean();
    drop(server);
    let _ = std::fs::remove_dir_all(&scene.root);
}

/// Promise (docs/security.md, What a model-run command can and cannot do, and A root server's
/// filter for any user): with the server run as uid 65534 and its home owned by that user, a
/// turn's `read-only` and `workspace-write` commands hold no capability, never read
/// `auth.json`, cannot reach the control socket nor make a set-user-ID file (`chmod 4755`, or
/// `openat2`, answered `ENOSYS`) and write nothing outside the roots. Unconfined, the same
/// user reads the secret, connects, makes both set-user-ID files (its own) and writes outside.
#[test]
fn an_unprivileged_servers_turn_cannot_escape_its_sandbox() {
    let Some(root) = unprivileged_scratch("unprivileged-turn-probe") else {
        return;
    };
    assert!(Path::new(PYTHON).exists(), "{PYTHON} plays the attacker");
    let scene = Scene::new(root);
    // No file handle: opening one needs `CAP_DAC_READ_SEARCH`, which this user never has.
    scene.write_probe(None);
    give(&scene.root);
    let _control = control_server(as_user(env!("CARGO_BIN_EXE_agentwire")), &scene);
    let mut server = Server::start(as_user(env!("CARGO_BIN_EXE_agentwire")), &scene.home);

    for sandbox in ["read-only", "workspace-write"] {
        let (seen, output) = server.turn(&scene.work, sandbox, "attack");
        assert_confined(&scene, sandbox, &seen, &output);
    }

    let (seen, output) = server.turn(&scene.work, "danger-full-access", "control");
    assert!(
        line(&output, "AUTH ", "control").contains(SECRET),
        "control: {output}"
    );
    assert!(seen.iter().any(|l| l.contains(SECRET)), "control: {output}");
    assert_eq!(line(&output, "CONNECT ", "control"), "CONNECT ok");
    assert!(
        line(&output, "OPENAT2 ", "control").starts_with("OPENAT2 ok mode=104755"),
        "control: {output}"
    );
    for made in ["SETUID-MADE", "OUTSIDE-WRITTEN"] {
        assert!(output.contains(made), "control: no {made}:\n{output}");
    }
    let copy = std::fs::metadata(scene.work.join("sh-copy")).expect("the control's copy");
    let user = if rustix::process::geteuid().is_root() {
        USER
    } else {
        rustix::process::geteuid().as_raw()
    };
    assert!(
        copy.mode() & 0o4000 != 0 && copy.uid() == user,
        "control: the copy is not set-user-ID for {user}: {:o}, uid {}",
        copy.mode(),
        copy.uid()
    );
    assert!(scene.outside.join("leak.txt").exists(), "control: {output}");
    scene.clean();
    drop(server);
    let _ = std::fs::remove_dir_all(&scene.root);
}
