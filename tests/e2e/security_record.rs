//! `--record FILE` writes only into a file of the server's own (issue #32, finding 4): the
//! transcript holds every message, API keys included, so a file another user created there
//! first (which would stay theirs, readable by them), a FIFO, or a second name of a file kept
//! elsewhere is refused on stderr with a non-zero exit, and left as it was.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::{scratch, text};

/// The uid that owns the planted file (`nobody`).
const OTHER_USER: u32 = 65534;

/// `agentwire app-server --record PATH` with nothing on stdin: its output once it exits (at
/// most 30 s; a server that hangs is killed and the test fails).
fn serve_recording(home: &Path, path: &Path) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .args(["app-server", "--record"])
        .arg(path)
        .env("AGENTWIRE_HOME", home)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn agentwire");
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().expect("poll agentwire").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let output = child.wait_with_output().expect("reap agentwire");
            panic!(
                "`--record {}` hung for 30 s: {:?}",
                path.display(),
                text(&output)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("agentwire output")
}

/// Asserts the server refused `path`: non-zero exit, stderr naming the path and `why`.
fn assert_refused(output: &Output, path: &Path, why: &str) {
    let (_, stderr) = text(output);
    assert!(
        !output.status.success(),
        "{} accepted: {stderr}",
        path.display()
    );
    assert!(
        stderr.contains(&format!("--record {}", path.display())) && stderr.contains(why),
        "the refusal names the path and says `{why}`: {stderr}"
    );
}

#[test]
fn a_transcript_path_the_server_did_not_make_its_own_is_refused() {
    let home = scratch("security-record");
    const THEIRS: &str = "planted by another user\n";

    // A file another user created first: refused, left theirs and untouched.
    let planted = home.join("planted.jsonl");
    std::fs::write(&planted, THEIRS).expect("plant the file");
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    if rustix::process::geteuid().is_root() {
        std::os::unix::fs::chown(&planted, Some(OTHER_USER), Some(OTHER_USER)).expect("chown");
        let output = serve_recording(&home, &planted);
        assert_refused(&output, &planted, &format!("belongs to uid {OTHER_USER}"));
        let meta = std::fs::metadata(&planted).expect("planted file");
        assert_eq!(meta.uid(), OTHER_USER);
        assert_eq!(meta.mode() & 0o777, 0o644, "its mode was changed");
        assert_eq!(std::fs::read_to_string(&planted).expect("read"), THEIRS);
    } else {
        eprintln!("not root: the file of another user cannot be planted; that case is skipped");
    }

    // A FIFO: refused at once (opening it for writing would wait for a reader forever).
    let fifo = home.join("fifo.jsonl");
    let made = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("run mkfifo");
    assert!(made.success(), "mkfifo");
    assert_refused(&serve_recording(&home, &fifo), &fifo, "FIFO");

    // A second name of a file of the user's kept elsewhere: refused, the file untouched.
    let kept = home.join("kept.txt");
    std::fs::write(&kept, "kept\n").expect("write");
    let alias = home.join("alias.jsonl");
    std::fs::hard_link(&kept, &alias).expect("hard link");
    assert_refused(&serve_recording(&home, &alias), &alias, "2 hard links");
    assert_eq!(std::fs::read_to_string(&kept).expect("read"), "kept\n");

    // The server's own file is still emptied, made private and written.
    let own = home.join("own.jsonl");
    std::fs::write(&own, "an earlier session\n").expect("write");
    let output = serve_recording(&home, &own);
    assert!(output.status.success(), "{:?}", text(&output));
    assert_eq!(std::fs::metadata(&own).expect("own").mode() & 0o777, 0o600);
    assert_eq!(std::fs::read_to_string(&own).expect("read"), "");
    let _ = std::fs::remove_dir_all(&home);
}
