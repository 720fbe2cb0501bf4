//! A root server's confinement (issue 32, finding 1 and the sandbox half of finding 8), through
//! `agentwire sandbox-exec` as the engine runs it.
//!
//! CI runs the tests as root, so `sandbox-exec` here is what a root server starts: each test
//! runs an attack confined and checks it fails, then runs the same attack unconfined (where
//! that is safe for the machine) and checks it succeeds there, so that the test can fail. The
//! attacks are made with `python3` (ctypes for calls Python does not wrap). A test that does
//! not run as root says so and checks nothing of root.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::common::{outcome, scratch, unconfined};

/// The Python that plays the attacker.
const PYTHON: &str = "/usr/bin/python3";

/// Whether the tests run as root; when not, prints why `test` checks nothing.
fn as_root(test: &str) -> bool {
    let root = rustix::process::geteuid().is_root();
    if !root {
        eprintln!(
            "SKIPPED {test}: it checks a root server's sandbox and the tests do not run as root"
        );
    }
    assert!(Path::new(PYTHON).exists(), "{PYTHON} plays the attacker");
    root
}

/// `agentwire sandbox-exec --policy POLICY --cwd CWD [--hide PATH]… [EXTRA…] -- ARGV…`.
fn sandbox_exec(
    policy: &Value,
    cwd: &Path,
    hide: &[&Path],
    extra: &[&str],
    argv: &[&str],
) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agentwire"));
    command
        .arg("sandbox-exec")
        .arg("--policy")
        .arg(policy.to_string())
        .arg("--cwd")
        .arg(cwd);
    for path in hide {
        command.arg("--hide").arg(path);
    }
    command
        .args(extra)
        .arg("--")
        .args(argv)
        .stdin(Stdio::null())
        .output()
        .expect("spawn agentwire")
}

/// `argv` confined under `policy` in `cwd`.
fn confined(policy: &Value, cwd: &Path, argv: &[&str]) -> (bool, String) {
    outcome(&sandbox_exec(policy, cwd, &[], &[], argv))
}

/// `workspace-write` with only the working directory writable, the network as asked.
fn workspace(network: bool) -> Value {
    json!({"type": "workspaceWrite", "networkAccess": network,
           "excludeSlashTmp": true, "excludeTmpdirEnvVar": true})
}

/// The confining policies, named: `readOnly`, and `workspaceWrite` with the network.
fn policies() -> [(&'static str, Value); 2] {
    [
        ("readOnly", json!({"type": "readOnly"})),
        ("workspaceWrite with network", workspace(true)),
    ]
}

/// `/proc/self/status` lines of every capability set and of `NoNewPrivs`, as `name value`.
const STATUS: &str = "grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs):' /proc/self/status";

/// Promise (docs/security.md, A root server): a confined command holds no capability in any
/// set (inheritable, permitted, effective, bounding, ambient), has `no_new_privs`, runs as uid
/// 0 mapped to root and cannot get a capability back, neither from a new user namespace nor
/// through `setpriv`. Unconfined, root holds them, and the same two commands succeed.
#[test]
fn a_root_servers_confined_command_holds_no_capability_in_any_set() {
    if !as_root("a_root_servers_confined_command_holds_no_capability_in_any_set") {
        return;
    }
    let work = scratch("root-caps");
    let script = format!(
        "{STATUS}; id -u; unshare --user --map-root-user true && echo NEW-USER-NAMESPACE; \
         setpriv --reuid=65534 true && echo SETUID"
    );
    for (name, policy) in policies() {
        let (_, out) = confined(&policy, &work, &["sh", "-c", &script]);
        let sets: Vec<&str> = out.lines().filter(|l| l.starts_with("Cap")).collect();
        assert_eq!(sets.len(), 5, "under {name}: {out}");
        for set in sets {
            assert!(
                set.ends_with("\t0000000000000000"),
                "under {name}: the command holds a capability: {set}\n{out}"
            );
        }
        assert!(out.contains("NoNewPrivs:\t1"), "under {name}: {out}");
        assert!(
            out.lines().any(|l| l == "0"),
            "under {name}: not uid 0: {out}"
        );
        assert!(!out.contains("NEW-USER-NAMESPACE"), "under {name}: {out}");
        assert!(!out.contains("SETUID"), "under {name}: {out}");
    }
    let (_, out) = unconfined(&work, &["sh", "-c", &script]);
    assert!(
        out.contains("CapEff:\t000001ff") || out.contains("CapEff:\t0000003f"),
        "unconfined, root holds no capability, so the test proves nothing: {out}"
    );
    assert!(
        out.contains("NEW-USER-NAMESPACE") && out.contains("SETUID"),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(work);
}

/// The namespace `kind` of the test process (`user:[4026531837]`).
fn own_namespace(kind: &str) -> String {
    std::fs::read_link(format!("/proc/self/ns/{kind}"))
        .expect("read /proc/self/ns")
        .display()
        .to_string()
}

/// Promise: a confined command runs in user, mount, PID, UTS, IPC and time namespaces of its
/// own, and a network one without network access; it cannot set the host name (the host's
/// stays), nor even its own UTS namespace's. The control: in a UTS namespace of its own,
/// unconfined root sets a host name.
#[test]
fn a_root_servers_confined_command_has_namespaces_of_its_own_and_cannot_set_the_host_name() {
    if !as_root("a_root_servers_confined_command_has_namespaces_of_its_own") {
        return;
    }
    let work = scratch("root-namespaces");
    let kinds = ["user", "mnt", "pid", "uts", "ipc", "time", "net"];
    let script = format!(
        "for k in {}; do echo \"$k $(readlink /proc/self/ns/$k)\"; done; \
         hostname agentwire-confined && echo HOSTNAME-SET",
        kinds.join(" ")
    );
    let host_name = std::fs::read_to_string("/proc/sys/kernel/hostname").expect("hostname");
    for (network, policy) in [(false, workspace(false)), (true, workspace(true))] {
        let (_, out) = confined(&policy, &work, &["sh", "-c", &script]);
        for kind in kinds {
            let line = out
                .lines()
                .find(|l| l.starts_with(&format!("{kind} ")))
                .unwrap_or_else(|| panic!("no {kind} namespace in: {out}"));
            let theirs = line.split_once(' ').map(|(_, ns)| ns).unwrap_or_default();
            let same = theirs == own_namespace(kind);
            let shared = kind == "net" && network;
            assert_eq!(
                same,
                shared,
                "network {network}: the {kind} namespace is {theirs}, the server's is {}",
                own_namespace(kind)
            );
        }
        assert!(!out.contains("HOSTNAME-SET"), "network {network}: {out}");
    }
    assert_eq!(
        std::fs::read_to_string("/proc/sys/kernel/hostname").expect("hostname"),
        host_name
    );
    let (ok, out) = unconfined(
        &work,
        &[
            "unshare",
            "--uts",
            "sh",
            "-c",
            "hostname agentwire-control && echo HOSTNAME-SET",
        ],
    );
    assert!(ok && out.contains("HOSTNAME-SET"), "control: {out}");
    let _ = std::fs::remove_dir_all(work);
}

/// A Python script that makes each system call named on its command line and prints
/// `NAME ok` or `NAME ERRNO-NAME` for each. The calls Python does not wrap go through ctypes.
pub(crate) const PROBES: &str = r#"
import ctypes, errno, os, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
ARCH = os.uname().machine
NR = {"x86_64": {"perf_event_open": 298, "keyctl": 250, "bpf": 321, "settimeofday": 164,
                 "clock_adjtime": 305, "add_key": 248, "request_key": 249,
                 "io_uring_setup": 425, "clone3": 435},
      "aarch64": {"perf_event_open": 241, "keyctl": 219, "bpf": 280, "settimeofday": 170,
                  "clock_adjtime": 266, "add_key": 217, "request_key": 218,
                  "io_uring_setup": 425, "clone3": 435}}[ARCH]
def call(fn, *args):
    r = fn(*args)
    return "ok" if r >= 0 else errno.errorcode.get(ctypes.get_errno(), "?")
def sock(family, kind):
    try:
        socket.socket(family, kind).close()
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, "?")
def mknod(kind):
    try:
        os.mknod("probe-node", kind | 0o600, os.makedev(1, 3))
        os.unlink("probe-node")
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, "?")
def create_set_uid():
    try:
        os.close(os.open("probe-suid", os.O_CREAT | os.O_WRONLY, 0o4755))
        os.unlink("probe-suid")
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, "?")
def chmod_set_uid():
    try:
        open("probe-chmod", "w").close()
        os.chmod("probe-chmod", 0o4755)
        os.unlink("probe-chmod")
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, "?")
class OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]
def openat2_set_uid():
    # SYS_openat2 is 437 on x86_64 and aarch64: its mode is in memory, out of a filter's sight.
    how = OpenHow(os.O_CREAT | os.O_WRONLY, 0o4755, 0)
    fd = libc.syscall(437, -100, b"probe-openat2", ctypes.byref(how), ctypes.c_size_t(24))
    if fd < 0:
        return errno.errorcode.get(ctypes.get_errno(), "?")
    mode = os.fstat(fd).st_mode
    os.close(fd)
    os.unlink("probe-openat2")
    return "ok" if mode & 0o4000 else "ok-without-the-bit"
class Timespec(ctypes.Structure):
    _fields_ = [("sec", ctypes.c_long), ("nsec", ctypes.c_long)]
def clock_settime():
    # CLOCK_MONOTONIC cannot be set: the kernel answers EINVAL, unless refused first.
    return call(libc.clock_settime, 1, ctypes.byref(Timespec(1, 0)))
def adjtimex():
    buf = ctypes.create_string_buffer(512)  # struct timex, modes 0: only reads
    return call(libc.adjtimex, buf)
def perf_event_open():
    attr = ctypes.create_string_buffer(128)
    ctypes.c_uint32.from_buffer(attr, 0).value = 1    # PERF_TYPE_SOFTWARE
    ctypes.c_uint32.from_buffer(attr, 4).value = 128  # size; config 0: cpu clock
    return call(libc.syscall, NR["perf_event_open"], attr, 0, -1, -1, 0)
def keyctl():
    # KEYCTL_GET_KEYRING_ID of the session keyring, not created.
    return call(libc.syscall, NR["keyctl"], 0, -3, 0)
def bpf():
    # An unknown command: EINVAL for root, unless refused first.
    return call(libc.syscall, NR["bpf"], 0x7fff, None, 0)
def settimeofday():
    # Neither a time nor a zone: sets nothing.
    return call(libc.syscall, NR["settimeofday"], None, None)
def clock_adjtime():
    buf = ctypes.create_string_buffer(512)  # struct timex of CLOCK_REALTIME, modes 0: only reads
    return call(libc.syscall, NR["clock_adjtime"], 0, buf)
def add_key():
    # A key type that does not exist: ENODEV, unless refused first.
    return call(libc.syscall, NR["add_key"], b"agentwire-no-such-type", b"d", None, 0, -2)
def request_key():
    # A key nobody made: ENOKEY, unless refused first.
    return call(libc.syscall, NR["request_key"], b"user", b"agentwire-no-such-key", None, 0)
def io_uring_setup():
    # No parameters: EFAULT, unless refused first.
    return call(libc.syscall, NR["io_uring_setup"], 0, None)
def clone3():
    # No arguments: EINVAL, unless answered ENOSYS first.
    return call(libc.syscall, NR["clone3"], None, 0)
def sethostname():
    return call(libc.sethostname, b"agentwire-probe", 15)
PROBE = {
    "vsock": lambda: sock(socket.AF_VSOCK, socket.SOCK_STREAM),
    "packet": lambda: sock(socket.AF_PACKET, socket.SOCK_RAW),
    "unix": lambda: sock(socket.AF_UNIX, socket.SOCK_STREAM),
    "inet": lambda: sock(socket.AF_INET, socket.SOCK_STREAM),
    "mknod-char": lambda: mknod(0o020000),
    "mknod-block": lambda: mknod(0o060000),
    "mkfifo": lambda: mknod(0o010000),
    "create-setuid": create_set_uid,
    "chmod-setuid": chmod_set_uid,
    "openat2-setuid": openat2_set_uid,
    "clock_settime": clock_settime,
    "adjtimex": adjtimex,
    "perf_event_open": perf_event_open,
    "keyctl": keyctl,
    "bpf": bpf,
    "sethostname": sethostname,
    "settimeofday": settimeofday,
    "clock_adjtime": clock_adjtime,
    "add_key": add_key,
    "request_key": request_key,
    "io_uring_setup": io_uring_setup,
    "clone3": clone3,
}
for name in sys.argv[1:]:
    print(name, PROBE[name]())
"#;

/// What each probe of [`PROBES`] answered, from its output.
fn answers(out: &str) -> Vec<(String, String)> {
    out.lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(name, answer)| (name.to_owned(), answer.to_owned()))
        .collect()
}

/// The answer of probe `name` in `out`.
fn answer<'a>(answers: &'a [(String, String)], name: &str, out: &str) -> &'a str {
    answers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, a)| a.as_str())
        .unwrap_or_else(|| panic!("probe {name} did not answer: {out}"))
}

/// Promise: the seccomp filter refuses, with `EPERM`, sockets of the `AF_VSOCK` family (the
/// hypervisor) and of families outside Unix, IPv4, IPv6 and netlink (`AF_PACKET`), device
/// nodes (FIFOs are still made), a set-user-ID bit by `chmod` or at creation, setting the
/// clocks (`clock_settime`, `adjtimex`, `clock_adjtime`, `settimeofday`), performance counters
/// (`perf_event_open`), keyrings (`keyctl`, `add_key`, `request_key`), io_uring, BPF and
/// `sethostname`, under both confining policies; and it answers `openat2` (whose mode it
/// cannot see) and `clone3` (whose flags it cannot see) with `ENOSYS`, so no set-user-ID file
/// is made through the one, and the C library falls back to `clone` from the other. Unix and
/// IPv4 sockets and FIFOs still work. Unconfined, root gets each (a set-user-ID file from
/// `openat2` too; or, where the kernel refuses the call for its arguments, another answer than
/// `EPERM`: `clock_settime` of the monotonic clock, an unknown BPF command and `clone3` without
/// arguments give `EINVAL`, `add_key` of an unknown type `ENODEV`, `request_key` of a missing
/// key `ENOKEY`, `io_uring_setup` without parameters `EFAULT`), so the refusal is the
/// sandbox's.
#[test]
fn a_root_servers_confined_command_cannot_make_the_calls_the_filter_refuses() {
    if !as_root("a_root_servers_confined_command_cannot_make_the_calls_the_filter_refuses") {
        return;
    }
    let work = scratch("root-seccomp");
    std::fs::set_permissions(&work, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let refused = [
        "vsock",
        "packet",
        "mknod-char",
        "mknod-block",
        "create-setuid",
        "chmod-setuid",
        "clock_settime",
        "adjtimex",
        "perf_event_open",
        "keyctl",
        "bpf",
        "sethostname",
        "settimeofday",
        "clock_adjtime",
        "add_key",
        "request_key",
        "io_uring_setup",
    ];
    let allowed = ["unix", "inet", "mkfifo"];
    let mut argv = vec![PYTHON, "-c", PROBES];
    argv.extend(refused);
    argv.extend(allowed);
    argv.extend(["openat2-setuid", "clone3"]);
    for (name, policy) in [
        ("workspaceWrite", workspace(true)),
        ("readOnly", json!({"type": "readOnly"})),
    ] {
        let (ok, out) = confined(&policy, &work, &argv);
        assert!(ok, "under {name}: {out}");
        let got = answers(&out);
        for probe in refused {
            let answer = answer(&got, probe, &out);
            // Under readOnly nothing is created in the working directory anyway.
            let creates = probe.starts_with("mknod") || probe.contains("setuid");
            if creates && name == "readOnly" {
                assert_ne!(answer, "ok", "under {name}: {probe}: {out}");
            } else {
                assert_eq!(answer, "EPERM", "under {name}: {probe}: {out}");
            }
        }
        for probe in ["openat2-setuid", "clone3"] {
            assert_eq!(
                answer(&got, probe, &out),
                "ENOSYS",
                "under {name}: {probe}: {out}"
            );
        }
        if name == "workspaceWrite" {
            for probe in allowed {
                assert_eq!(
                    answer(&got, probe, &out),
                    "ok",
                    "under {name}: {probe}: {out}"
                );
            }
        }
    }
    // Never `sethostname` outside: it would rename the machine (the namespaces test has its
    // control).
    argv.retain(|arg| *arg != "sethostname");
    let (ok, out) = unconfined(&work, &argv);
    assert!(ok, "control: {out}");
    let got = answers(&out);
    for probe in refused.into_iter().filter(|p| *p != "sethostname") {
        let expected = match probe {
            "clock_settime" | "bpf" => "EINVAL",
            "add_key" => "ENODEV",
            "request_key" => "ENOKEY",
            "io_uring_setup" => "EFAULT",
            _ => "ok",
        };
        assert_eq!(
            answer(&got, probe, &out),
            expected,
            "unconfined, {probe} did not do what the sandbox refuses, so the test proves nothing: {out}"
        );
    }
    assert_eq!(
        answer(&got, "openat2-setuid", &out),
        "ok",
        "unconfined, openat2 made no set-user-ID file, so the test proves nothing: {out}"
    );
    assert_eq!(answer(&got, "clone3", &out), "EINVAL", "control: {out}");
    let _ = std::fs::remove_dir_all(work);
}

/// A Python script that reads a file by its handle: `open_by_handle_at` on the filesystem of
/// `argv[1]` (a directory), with the handle `argv[2]` (type, then hex bytes) that
/// `name_to_handle_at` gave for the file outside. Prints `READ <text>` or `REFUSED <errno>`;
/// then `NAME ok|<errno>` for `name_to_handle_at` on `argv[3]`.
const BY_HANDLE: &str = r#"
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
class Handle(ctypes.Structure):
    _fields_ = [("bytes", ctypes.c_uint), ("type", ctypes.c_int), ("f", ctypes.c_ubyte * 128)]
def handle_of(path):
    h = Handle(); h.bytes = 128
    mount = ctypes.c_int()
    r = libc.name_to_handle_at(-100, path.encode(), ctypes.byref(h), ctypes.byref(mount), 0)
    return h if r == 0 else errno.errorcode.get(ctypes.get_errno(), "?")
if sys.argv[1] == "make":
    h = handle_of(sys.argv[2])
    print(h.type, bytes(h.f[:h.bytes]).hex())
    sys.exit(0)
kind, data = sys.argv[2].split()
raw = bytes.fromhex(data)
h = Handle(); h.bytes = len(raw); h.type = int(kind)
for i, b in enumerate(raw): h.f[i] = b
mount_fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
fd = libc.open_by_handle_at(mount_fd, ctypes.byref(h), os.O_RDONLY)
if fd < 0:
    print("REFUSED", errno.errorcode.get(ctypes.get_errno(), "?"))
else:
    print("READ", os.read(fd, 100).decode())
h = handle_of(sys.argv[3])
print("NAME", "ok" if isinstance(h, Handle) else h)
"#;

/// Promise: a confined command cannot open a file by its handle (`open_by_handle_at`), the way
/// past the covering of the server's home that read `auth.json` (issue 32, finding 1), nor
/// get a handle (`name_to_handle_at`): both `EPERM`. The handle is made outside for a secret in
/// a hidden home on the working directory's filesystem. Unconfined, root reads the secret with
/// it.
#[test]
fn a_root_servers_confined_command_cannot_open_the_hidden_home_by_handle() {
    if !as_root("a_root_servers_confined_command_cannot_open_the_hidden_home_by_handle") {
        return;
    }
    const SECRET: &str = "secret-read-by-handle";
    let root = scratch("root-by-handle");
    let (home, work) = (root.join("home"), root.join("work"));
    std::fs::create_dir_all(&home).expect("mkdir home");
    std::fs::create_dir_all(&work).expect("mkdir work");
    let auth = home.join("auth.json");
    std::fs::write(&auth, SECRET).expect("write the secret");
    let (ok, handle) = unconfined(
        &root,
        &[
            PYTHON,
            "-c",
            BY_HANDLE,
            "make",
            auth.to_str().expect("utf-8"),
        ],
    );
    assert!(ok, "cannot make a handle: {handle}");
    let handle = handle.trim().to_owned();
    let work_text = work.to_str().expect("utf-8");
    let argv = [
        PYTHON,
        "-c",
        BY_HANDLE,
        work_text,
        handle.as_str(),
        work_text,
    ];
    for (name, policy) in policies() {
        let (_, out) = outcome(&sandbox_exec(&policy, &work, &[&home], &[], &argv));
        assert!(
            !out.contains(SECRET),
            "under {name}: read the hidden home: {out}"
        );
        assert!(out.contains("REFUSED EPERM"), "under {name}: {out}");
        assert!(out.contains("NAME EPERM"), "under {name}: {out}");
    }
    let (ok, out) = unconfined(&work, &argv);
    assert!(
        ok && out.contains(&format!("READ {SECRET}")) && out.contains("NAME ok"),
        "unconfined, root did not read the file by its handle, so the test proves nothing: {out}"
    );
    let _ = std::fs::remove_dir_all(root);
}

/// Promise: a writable root is mounted `nosuid,nodev` in the sandbox (its `mountinfo` line
/// says so), so a set-user-ID file in it runs with the runner's ids: a copy of `id` owned by
/// 65534 and set-user-ID, run by the confined root, reports uid 0 (the bit was ignored);
/// unconfined it reports 65534. And a shell copied inside cannot be made set-user-ID (the
/// filter refuses `chmod 4755`), so no set-user-ID-root shell is left for the host's users.
#[test]
fn a_root_servers_writable_roots_are_nosuid_and_nodev() {
    if !as_root("a_root_servers_writable_roots_are_nosuid_and_nodev") {
        return;
    }
    let work = scratch("root-nosuid");
    std::fs::set_permissions(&work, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let id = work.join("id-setuid");
    std::fs::copy("/usr/bin/id", &id).expect("copy id");
    std::os::unix::fs::chown(&id, Some(65534), Some(65534)).expect("chown");
    std::fs::set_permissions(&id, std::fs::Permissions::from_mode(0o4755)).expect("chmod u+s");
    let script = format!(
        "grep ' {} ' /proc/self/mountinfo; ./id-setuid -u; cp /bin/sh ./sh-copy; \
         chmod 4755 ./sh-copy || echo CHMOD-REFUSED",
        work.display()
    );
    let (_, out) = confined(&workspace(false), &work, &["sh", "-c", &script]);
    let mount = out.lines().next().unwrap_or_default();
    assert!(
        mount.contains("nosuid") && mount.contains("nodev"),
        "the writable root is not nosuid,nodev: {out}"
    );
    assert!(
        out.lines().any(|l| l == "0"),
        "the set-user-ID bit was honoured: {out}"
    );
    assert!(out.contains("CHMOD-REFUSED"), "{out}");
    let copy = std::fs::metadata(work.join("sh-copy")).expect("the copy was made");
    assert_eq!(
        copy.mode() & 0o6000,
        0,
        "a set-user-ID shell was left behind"
    );
    let (ok, out) = unconfined(&work, &["./id-setuid", "-u"]);
    assert!(ok && out.trim() == "65534", "control: {out}");
    let _ = std::fs::remove_dir_all(work);
}

/// Python that allocates and touches `argv[1]` MiB, then prints `ALLOCATED`.
const ALLOCATE: &str = "import sys\nb = bytearray(int(sys.argv[1]) << 20)\nprint('ALLOCATED')";

/// Promise: `--max-memory-bytes` (from `[sandbox_limits] max_memory_bytes`, 8 GiB by default)
/// limits each process's address space: under 256 MiB, a 512 MiB allocation fails and a 16 MiB
/// one succeeds; `/proc/self/limits` shows both limits. Unconfined the 512 MiB allocation
/// succeeds.
#[test]
fn a_root_servers_confined_command_has_an_address_space_limit() {
    if !as_root("a_root_servers_confined_command_has_an_address_space_limit") {
        return;
    }
    let work = scratch("root-memory");
    let limits = ["--max-memory-bytes", "268435456", "--max-processes", "64"];
    let policy = workspace(false);
    let output = sandbox_exec(
        &policy,
        &work,
        &[],
        &limits,
        &[PYTHON, "-c", ALLOCATE, "512"],
    );
    let (ok, out) = outcome(&output);
    assert!(
        !ok && !out.contains("ALLOCATED") && out.contains("MemoryError"),
        "{out}"
    );
    let output = sandbox_exec(
        &policy,
        &work,
        &[],
        &limits,
        &[PYTHON, "-c", ALLOCATE, "16"],
    );
    let (ok, out) = outcome(&output);
    assert!(ok && out.contains("ALLOCATED"), "{out}");
    let output = sandbox_exec(&policy, &work, &[], &limits, &["cat", "/proc/self/limits"]);
    let (_, out) = outcome(&output);
    let line = |name: &str| {
        out.lines()
            .find(|l| l.starts_with(name))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_default()
    };
    assert!(
        line("Max address space").contains("268435456 268435456"),
        "{out}"
    );
    assert!(line("Max processes").contains("64 64"), "{out}");
    // The defaults.
    let (_, out) = confined(&policy, &work, &["cat", "/proc/self/limits"]);
    assert!(out.contains("8589934592"), "{out}");
    let (ok, out) = unconfined(&work, &[PYTHON, "-c", ALLOCATE, "512"]);
    assert!(ok && out.contains("ALLOCATED"), "control: {out}");
    let _ = std::fs::remove_dir_all(work);
}

/// Python that starts up to 40 `sleep` processes, printing `STARTED n` and, when one is
/// refused, `REFUSED <errno>`; then kills them.
pub(crate) const SPAWN: &str = r"
import errno, subprocess
ps = []
try:
    for i in range(40):
        ps.append(subprocess.Popen(['sleep', '20']))
except OSError as e:
    print('REFUSED', errno.errorcode.get(e.errno, '?'))
print('STARTED', len(ps))
for p in ps:
    p.kill()
    p.wait()
";

/// How many processes [`SPAWN`] started, from its output.
pub(crate) fn started(out: &str) -> usize {
    out.lines()
        .find_map(|l| l.strip_prefix("STARTED "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no count in: {out}"))
}

/// Promise: `--max-processes` (`[sandbox_limits] max_processes`, 1024 by default) bounds the
/// processes of a root server's sandbox, though the kernel exempts uid 0 from `RLIMIT_NPROC`:
/// the sandbox runs in a `pids` cgroup of its own, removed afterwards. With a limit of 16, a
/// command that starts 40 processes is refused (`EAGAIN`) before the 16th; unconfined all 40
/// start. Without a fork bomb: 40 `sleep`s at most, killed at once.
#[test]
fn a_root_servers_sandbox_has_a_process_limit() {
    if !as_root("a_root_servers_sandbox_has_a_process_limit") {
        return;
    }
    let work = scratch("root-processes");
    let child = Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .arg("sandbox-exec")
        .arg("--policy")
        .arg(workspace(false).to_string())
        .arg("--cwd")
        .arg(&work)
        .args(["--max-processes", "16", "--", PYTHON, "-c", SPAWN])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn agentwire");
    let pid = child.id();
    let (_, out) = outcome(&child.wait_with_output().expect("wait"));
    assert!(out.contains("REFUSED EAGAIN"), "{out}");
    let count = started(&out);
    assert!(
        count < 16,
        "{count} processes started under a limit of 16: {out}"
    );
    let cgroups = std::fs::read_to_string("/proc/self/mountinfo").expect("mountinfo");
    for line in cgroups.lines().filter(|l| l.contains(" - cgroup")) {
        let point = line.split(' ').nth(4).unwrap_or_default();
        let left = Path::new(point).join(format!("agentwire-sandbox-{pid}"));
        assert!(
            !left.exists(),
            "the sandbox's cgroup was left: {}",
            left.display()
        );
    }
    let (ok, out) = unconfined(&work, &[PYTHON, "-c", SPAWN]);
    assert!(ok && started(&out) == 40, "control: {out}");
    let _ = std::fs::remove_dir_all(work);
}
