//! Our own output under contract: every message the server sends to the test clients is
//! checked against the current generated bundle with the code of `agentwire contract check`.
//! A violation fails the test with the report.

use std::sync::{Arc, Mutex, OnceLock};

use agentwire_codegen::contract::{Checker, Contract, Dir, Options, Violation};

const SESSION: &str = "e2e";

/// The current version's contract, from `generated/schema` (built once per test process).
pub fn contract() -> &'static Contract {
    static CONTRACT: OnceLock<Contract> = OnceLock::new();
    CONTRACT.get_or_init(|| {
        Contract::from_bundles(
            include_str!("../../generated/schema/json/agentwire_app_server_protocol.schemas.json"),
            include_str!(
                "../../generated/schema/experimental/json/agentwire_app_server_protocol.schemas.json"
            ),
        )
        .expect("the generated bundles load")
    })
}

struct State {
    checker: Checker<'static>,
    messages: usize,
    /// Violations by the server (the tests send bad input on purpose; the client's are ignored).
    violations: Vec<Violation>,
    reported: bool,
}

/// One connection's exchange, fed in order: what the client wrote, what the server wrote.
#[derive(Clone)]
pub struct Guard {
    state: Arc<Mutex<State>>,
}

impl Default for Guard {
    fn default() -> Self {
        Self::new()
    }
}

impl Guard {
    /// A guard for a connection that starts with the handshake.
    pub fn new() -> Self {
        // Experimental sessions are checked against the experimental surface, the others
        // against the stable one; the capability decides.
        let checker = contract().checker(Options { experimental: true });
        Self {
            state: Arc::new(Mutex::new(State {
                checker,
                messages: 0,
                violations: Vec::new(),
                reported: false,
            })),
        }
    }

    /// A guard that sees a connection only from after its handshake.
    pub fn initialized(experimental: bool) -> Self {
        let guard = Self::new();
        guard
            .lock()
            .checker
            .assume_initialized(SESSION, experimental);
        guard
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The client wrote `line`.
    pub fn client_sent(&self, line: &str) {
        let mut state = self.lock();
        state.messages += 1;
        let n = state.messages;
        let _ = state.checker.check(n, SESSION, Dir::ClientToServer, line);
    }

    /// The server wrote `line`.
    pub fn server_sent(&self, line: &str) {
        let mut state = self.lock();
        state.messages += 1;
        let n = state.messages;
        let found = state.checker.check(n, SESSION, Dir::ServerToClient, line);
        for mut violation in found {
            if violation.direction == Some(Dir::ServerToClient) {
                violation.reason = format!("{}\n      message: {}", violation.reason, short(line));
                state.violations.push(violation);
            }
        }
    }

    /// Messages checked so far (both directions).
    pub fn messages(&self) -> usize {
        self.lock().messages
    }

    /// Panics with the report if the server broke its contract (once).
    pub fn assert_clean(&self) {
        let mut state = self.lock();
        if state.violations.is_empty() || state.reported {
            return;
        }
        state.reported = true;
        let report: Vec<String> = state.violations.iter().map(|v| format!("  {v}")).collect();
        let text = format!(
            "the server broke its own schema (protocol {}):\n{}",
            contract().version(),
            report.join("\n")
        );
        drop(state);
        panic!("{text}");
    }

    /// Like [`Guard::assert_clean`], unless the thread is already panicking.
    pub fn assert_clean_on_drop(&self) {
        if !std::thread::panicking() {
            self.assert_clean();
        }
    }
}

fn short(line: &str) -> &str {
    let mut end = line.len().min(600);
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    &line[..end]
}
