//! `agentwire app-server daemon start|stop|status` and `agentwire app-server proxy`: one
//! background server, shared by stdio clients through proxies.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::client::{Client, thread_id};
use crate::common::{alive, fixture_steps, home_and_workspace, scratch, signal, text};

fn daemon(home: &Path, action: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .args(["app-server", "daemon", action])
        .env("AGENTWIRE_HOME", home)
        .env("RUST_LOG", "info")
        .output()
        .expect("run agentwire app-server daemon")
}

/// Stops the daemon of `home` when the test ends, passed or not.
struct Running<'a>(&'a Path);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        let _ = daemon(self.0, "stop");
    }
}

#[test]
fn two_proxies_on_one_daemon_follow_the_same_thread() {
    let (home, workspace) = home_and_workspace(&scratch("daemon-proxies"));
    fixture_steps(
        &home,
        json!([{"type": "message", "deltas": ["shared ", "turn"]}]),
        "",
    );
    let started = daemon(&home, "start");
    let _running = Running(&home);
    let (stdout, stderr) = text(&started);
    assert!(started.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("started (pid"), "{stdout}");
    let control = home.join("app-server-control");
    let pid: u32 = std::fs::read_to_string(control.join("daemon.pid"))
        .expect("pid file")
        .trim()
        .parse()
        .expect("a pid");
    assert!(stdout.contains(&format!("pid {pid}")), "{stdout}");

    let status = daemon(&home, "status");
    assert!(status.status.success(), "{:?}", text(&status));
    assert!(
        text(&status).0.contains("is running"),
        "{:?}",
        text(&status)
    );

    // A second start is refused and leaves the first alone.
    let again = daemon(&home, "start");
    assert_eq!(again.status.code(), Some(1));
    assert!(
        text(&again).1.contains("already running"),
        "{:?}",
        text(&again)
    );
    assert!(daemon(&home, "status").status.success());

    // Two stdio clients, each through its own proxy, on the one server.
    let mut first = Client::start_with(&home, &["proxy"]);
    let mut second = Client::start_with(&home, &["proxy"]);
    let thread = thread_id(&first.start_thread(json!({"cwd": workspace})));
    let resumed = second.call("thread/resume", json!({"threadId": thread}));
    assert_eq!(thread_id(&resumed), thread);
    second.notifications.clear();

    let turn = first.start_turn(&thread, "hello");
    let seen = second.until_turn_completed();
    let methods: Vec<&str> = seen.iter().filter_map(|n| n["method"].as_str()).collect();
    assert!(methods.contains(&"turn/started"), "{methods:?}");
    let text_seen: String = seen
        .iter()
        .filter(|n| n["method"] == json!("item/agentMessage/delta"))
        .filter_map(|n| n["params"]["delta"].as_str())
        .collect();
    assert_eq!(text_seen, "shared turn");
    let done = seen.last().expect("turn/completed");
    assert_eq!(done["params"]["turn"]["id"], json!(turn));
    assert_eq!(done["params"]["turn"]["status"], json!("completed"));
    first.until_turn_completed();

    // Closing a proxy's stdin ends that proxy (exit 0); the daemon keeps serving the other.
    first.finish();
    let listed = second.call("thread/loaded/list", json!({}));
    assert!(
        listed["data"]
            .as_array()
            .expect("data")
            .contains(&json!(thread)),
        "{listed}"
    );
    second.finish();

    let stopped = daemon(&home, "stop");
    assert!(stopped.status.success(), "{:?}", text(&stopped));
    assert!(text(&stopped).0.contains("stopped"), "{:?}", text(&stopped));
    assert!(!control.join("daemon.pid").exists());
    assert!(
        !control.join("app-server.sock").exists(),
        "the socket was left behind"
    );
    let status = daemon(&home, "status");
    assert_eq!(status.status.code(), Some(1));
    assert!(text(&status).0.contains("not running"));
    let log = std::fs::read_to_string(control.join("daemon.log")).expect("the log file");
    assert!(log.contains("listening"), "{log}");
}

#[test]
fn a_stale_pid_file_is_replaced_and_a_proxy_without_daemon_says_so() {
    let home = scratch("daemon-stale");
    let control = home.join("app-server-control");
    std::fs::create_dir_all(&control).expect("control dir");
    // The pid of a process that has exited.
    let mut gone = Command::new("true").spawn().expect("spawn true");
    let dead = gone.id();
    gone.wait().expect("wait");
    std::fs::write(control.join("daemon.pid"), format!("{dead}\n")).expect("pid file");

    let status = daemon(&home, "status");
    assert_eq!(status.status.code(), Some(1));
    assert!(
        text(&status).1.contains("stale pid file"),
        "{:?}",
        text(&status)
    );
    assert!(!control.join("daemon.pid").exists());

    let proxy = Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .args(["app-server", "proxy"])
        .env("AGENTWIRE_HOME", &home)
        .output()
        .expect("run the proxy");
    assert_eq!(proxy.status.code(), Some(1));
    assert!(
        text(&proxy).1.contains("is the daemon running"),
        "{:?}",
        text(&proxy)
    );

    std::fs::write(control.join("daemon.pid"), format!("{dead}\n")).expect("pid file");
    let started = daemon(&home, "start");
    let _running = Running(&home);
    assert!(started.status.success(), "{:?}", text(&started));
    assert!(
        text(&started).1.contains("stale pid file"),
        "{:?}",
        text(&started)
    );
    let pid = std::fs::read_to_string(control.join("daemon.pid")).expect("pid file");
    assert_ne!(pid.trim(), dead.to_string());
    assert!(daemon(&home, "stop").status.success());
    // Stopping what is not running is not an error.
    let again = daemon(&home, "stop");
    assert!(again.status.success());
    assert!(text(&again).0.contains("not running"));
}

/// Kills process `pid` when the test ends, passed or not, if it still runs.
struct KillOnDrop(u32);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if alive(self.0) {
            signal(self.0, "KILL");
        }
    }
}

/// docs/client.md: `daemon stop` sends SIGTERM, "waits up to 15 s (then SIGKILL), removes the
/// pid file". A stopped (SIGSTOP) daemon cannot act on SIGTERM: `stop` gives up after about
/// 15 s, kills it, says so, removes the pid file and exits 0. (Takes about 16 s.)
#[test]
fn stop_kills_a_daemon_that_ignores_sigterm_after_15_seconds() {
    let home = scratch("daemon-stopped");
    let started = daemon(&home, "start");
    let _running = Running(&home);
    assert!(started.status.success(), "{:?}", text(&started));
    let pid_file = home.join("app-server-control").join("daemon.pid");
    let pid: u32 = std::fs::read_to_string(&pid_file)
        .expect("pid file")
        .trim()
        .parse()
        .expect("a pid");
    let _kill = KillOnDrop(pid);
    signal(pid, "STOP");

    let asked = Instant::now();
    let stopped = daemon(&home, "stop");
    let took = asked.elapsed();
    let (stdout, stderr) = text(&stopped);
    assert!(stopped.status.success(), "{stdout}{stderr}");
    assert!(
        (Duration::from_secs(14)..Duration::from_secs(30)).contains(&took),
        "stop took {took:?}"
    );
    assert!(stderr.contains("killed it"), "{stderr}");
    assert!(stdout.contains(&format!("stopped (pid {pid})")), "{stdout}");
    assert!(!pid_file.exists(), "the pid file was left behind");
    // SIGKILL ends even a stopped process (it may stay a zombie until its parent reaps it).
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(pid) {
        assert!(Instant::now() < deadline, "pid {pid} still runs");
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = daemon(&home, "status");
    assert_eq!(status.status.code(), Some(1), "{:?}", text(&status));
    // The killed server left its socket file; the next start replaces it.
    let socket = home.join("app-server-control").join("app-server.sock");
    assert!(socket.exists());
    let again = daemon(&home, "start");
    assert!(again.status.success(), "{:?}", text(&again));
    assert!(daemon(&home, "stop").status.success());
    assert!(!socket.exists(), "the socket was left behind");
}

/// client.md (`daemon start|stop`): the recorded process counts only when it is this home's
/// daemon. A pid file naming another program that happens to carry `app-server` in its command
/// line (a recycled pid), or another home's daemon, is stale: `stop` removes it and signals
/// nothing, and `start` goes on.
#[test]
fn a_pid_file_naming_another_app_server_is_stale_and_that_process_is_left_alone() {
    let home = scratch("daemon-foreign");
    let other = scratch("daemon-foreign-other");
    let control = home.join("app-server-control");
    std::fs::create_dir_all(&control).expect("control dir");
    // A process whose command line says `app-server`, serving no socket of this home.
    let mut foreign = Command::new("bash")
        .args(["-c", "exec -a app-server sleep 60"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn sh");
    let _foreign_guard = KillOnDrop(foreign.id());
    // And another home's daemon.
    assert!(daemon(&other, "start").status.success());
    let _other_running = Running(&other);
    let other_pid = std::fs::read_to_string(other.join("app-server-control/daemon.pid"))
        .expect("the other daemon's pid file");
    for pid in [foreign.id().to_string(), other_pid.trim().to_owned()] {
        std::fs::write(control.join("daemon.pid"), format!("{pid}\n")).expect("pid file");
        let stopped = daemon(&home, "stop");
        assert!(stopped.status.success(), "{:?}", text(&stopped));
        assert!(
            text(&stopped).0.contains("not running") && text(&stopped).1.contains("stale pid file"),
            "{:?}",
            text(&stopped)
        );
        assert!(!control.join("daemon.pid").exists());
        let pid: u32 = pid.parse().expect("a pid");
        assert!(
            alive(pid),
            "pid {pid}, not this home's daemon, was signalled"
        );
    }
    assert!(foreign.try_wait().expect("poll").is_none());
    // The other home's daemon still serves.
    let status = daemon(&other, "status");
    assert!(status.status.success(), "{:?}", text(&status));
    // This home starts a daemon of its own, and stops it.
    std::fs::write(control.join("daemon.pid"), format!("{}\n", foreign.id())).expect("pid file");
    let started = daemon(&home, "start");
    let _running = Running(&home);
    assert!(started.status.success(), "{:?}", text(&started));
    assert!(daemon(&home, "stop").status.success());
    assert!(alive(foreign.id()));
}

/// The pids of this home's servers still alive: the processes whose environment says
/// `AGENTWIRE_HOME=home` and whose command line has `--listen` (what `daemon start` runs).
fn servers_of(home: &Path) -> Vec<u32> {
    let wanted = format!("AGENTWIRE_HOME={}", home.display()).into_bytes();
    let mut pids: Vec<u32> = std::fs::read_dir("/proc")
        .expect("read /proc")
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
                return false;
            };
            let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
                return false;
            };
            cmdline.split(|b| *b == 0).any(|arg| arg == b"--listen")
                && environ
                    .split(|b| *b == 0)
                    .any(|var| var == wanted.as_slice())
                && alive(*pid)
        })
        .collect();
    pids.sort_unstable();
    pids
}

/// When the test ends, passed or not: stops the daemon of `home`, kills any server of `home`
/// left running, and removes `scratch`.
struct Cleanup<'a> {
    home: &'a Path,
    scratch: &'a Path,
}

impl Drop for Cleanup<'_> {
    fn drop(&mut self) {
        let _ = daemon(self.home, "stop");
        for pid in servers_of(self.home) {
            signal(pid, "KILL");
        }
        let _ = std::fs::remove_dir_all(self.scratch);
    }
}

/// The pid in the pid file of `home`.
fn recorded_pid(home: &Path) -> u32 {
    std::fs::read_to_string(home.join("app-server-control").join("daemon.pid"))
        .expect("pid file")
        .trim()
        .parse()
        .expect("a pid")
}

/// client.md (`daemon start`): "A second start is refused while the recorded process is alive
/// and is this home's daemon … The pid file is created exclusively, so of two concurrent
/// starts one wins." Four starts at once, three rounds: each round exactly one start
/// succeeds, the others are refused, one server runs (the one the pid file names), and `stop`
/// leaves none.
#[test]
fn of_several_concurrent_starts_exactly_one_daemon_runs() {
    const STARTS: usize = 4;
    let home = scratch("daemon-race");
    let _cleanup = Cleanup {
        home: &home,
        scratch: &home,
    };
    let control = home.join("app-server-control");
    let socket = control.join("app-server.sock");
    for round in 0..3 {
        let barrier = std::sync::Barrier::new(STARTS);
        let outputs: Vec<Output> = std::thread::scope(|scope| {
            let starts: Vec<_> = (0..STARTS)
                .map(|_| {
                    scope.spawn(|| {
                        barrier.wait();
                        daemon(&home, "start")
                    })
                })
                .collect();
            starts
                .into_iter()
                .map(|start| start.join().expect("a start thread"))
                .collect()
        });
        let report: Vec<(Option<i32>, String, String)> = outputs
            .iter()
            .map(|output| {
                let (stdout, stderr) = text(output);
                (output.status.code(), stdout, stderr)
            })
            .collect();
        let winners: Vec<&(Option<i32>, String, String)> = report
            .iter()
            .filter(|(code, ..)| *code == Some(0))
            .collect();
        assert_eq!(winners.len(), 1, "round {round}: {report:#?}");
        let pid = recorded_pid(&home);
        let (_, stdout, _) = winners[0];
        assert!(
            stdout.contains(&format!("started (pid {pid})"))
                && stdout.contains(&socket.display().to_string())
                && stdout.contains(&control.join("daemon.log").display().to_string()),
            "round {round}: pid file says {pid}; {report:#?}"
        );
        for (code, _, stderr) in report.iter().filter(|(code, ..)| *code != Some(0)) {
            assert!(code.is_some(), "round {round}: a start died: {report:#?}");
            assert!(
                stderr.contains("already running") || stderr.contains("in progress"),
                "round {round}: {report:#?}"
            );
        }
        assert_eq!(servers_of(&home), vec![pid], "round {round}: {report:#?}");
        assert!(socket.exists(), "round {round}: the socket was removed");
        // `daemon ACTION` succeeds and says `expected`.
        let says = |action: &str, expected: String| {
            let output = daemon(&home, action);
            assert!(
                output.status.success() && text(&output).0.contains(&expected),
                "round {round}: {action}: {:?}",
                text(&output)
            );
        };
        says("status", format!("is running (pid {pid})"));
        says("stop", format!("stopped (pid {pid})"));
        assert_eq!(servers_of(&home), Vec::<u32>::new(), "round {round}");
        assert!(!control.join("daemon.pid").exists(), "round {round}");
        assert!(
            !socket.exists(),
            "round {round}: the socket was left behind"
        );
    }
}

/// client.md (`app-server proxy`): "Lines are framed with the runtime's bounded line framer (a
/// longer line is dropped and reported on stderr). The end of stdin closes the websocket; the
/// daemon closing it ends the proxy."
#[test]
fn the_proxy_drops_a_line_over_the_limit_says_so_and_serves_the_next() {
    let home = scratch("daemon-proxy-limit");
    let _cleanup = Cleanup {
        home: &home,
        scratch: &home,
    };
    let started = daemon(&home, "start");
    assert!(started.status.success(), "{:?}", text(&started));

    // The handshake, through the proxy.
    let mut proxy = Client::start_with(&home, &["proxy", "--max-message-bytes", "1024"]);
    // A valid request of about 4 KB: over the limit, dropped.
    let params = json!({"cursor": "x".repeat(4000)});
    let long = proxy.send_request("thread/list", params.clone());
    let long_bytes =
        serde_json::to_vec(&json!({"id": long, "method": "thread/list", "params": params}))
            .expect("serializes")
            .len();
    assert!(long_bytes > 1024);
    // The next line is served, and so is the one after it.
    let listed = proxy.call("thread/list", json!({}));
    assert!(listed["data"].is_array(), "{listed}");
    let listed = proxy.call("thread/loaded/list", json!({}));
    assert!(listed["data"].is_array(), "{listed}");
    // The dropped line is reported on stderr, with its size.
    let deadline = Instant::now() + Duration::from_secs(5);
    let reported = format!("a line of {long_bytes} bytes from stdin is over the limit");
    while !proxy.stderr().contains(&reported) {
        assert!(
            Instant::now() < deadline,
            "no report of the dropped line; stderr: {}",
            proxy.stderr()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // The end of stdin ends the proxy (exit 0), and the long request never got an answer.
    let closed = Instant::now();
    let mut seen = proxy.finish();
    let took = closed.elapsed();
    assert!(
        took < Duration::from_secs(5),
        "the proxy took {took:?} to exit"
    );
    seen.extend(proxy.notifications.drain(..));
    let answered: Vec<&serde_json::Value> = seen.iter().filter(|m| m["id"] == long).collect();
    assert!(
        answered.is_empty(),
        "the dropped request was answered: {answered:?}"
    );

    // The daemon closing the websocket ends a connected proxy.
    let mut other = Client::start_with(&home, &["proxy"]);
    other.call("thread/list", json!({}));
    let stopped = daemon(&home, "stop");
    assert!(stopped.status.success(), "{:?}", text(&stopped));
    let deadline = Instant::now() + Duration::from_secs(20);
    while alive(other.pid()) {
        assert!(
            Instant::now() < deadline,
            "the proxy still runs 20 s after the daemon stopped; stderr: {}",
            other.stderr()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = other.wait_exit();
    assert!(
        status.success(),
        "the proxy exited with {status}; stderr: {}",
        other.stderr()
    );
}
