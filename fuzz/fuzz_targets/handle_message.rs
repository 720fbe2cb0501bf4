//! Arbitrary bytes through `LineFramer` into `Server::handle_message`, as the stdio transport
//! feeds them, with a recording `Outbound`.
//!
//! The first byte picks the set-up: bit 0 initializes the connection first, bit 1 asks for the
//! experimental API, the rest sets the size of the chunks the remaining bytes arrive in.
//! Checked after every input: nothing panicked, the framer never held more than its limit (plus
//! a `\r`), every request slot came back, every message sent is one JSON object without a raw
//! newline, and the bytes sent stay proportional to the bytes received.

#![no_main]

use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use agentwire_runtime::{Closed, FrameEvent, LineFramer, Outbound, RuntimeConfig, Server};
use libfuzzer_sys::fuzz_target;
use quick::Quick;

mod quick;

/// The largest line accepted; small, so the fuzzer reaches the limit.
const LIMIT: usize = 4096;

#[derive(Clone, Default)]
struct Recorder {
    sent: Arc<Mutex<Vec<Vec<u8>>>>,
}

impl Outbound for Recorder {
    fn send(&self, message: Vec<u8>) -> Result<(), Closed> {
        self.sent
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(message);
        Ok(())
    }

    fn close(&self) {}
}

struct Fuzzer {
    runtime: tokio::runtime::Runtime,
    server: Server<Quick>,
}

fn fuzzer() -> &'static Fuzzer {
    static FUZZER: OnceLock<Fuzzer> = OnceLock::new();
    FUZZER.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("build a tokio runtime");
        let mut config = RuntimeConfig::new(std::env::temp_dir());
        config.max_message_bytes = LIMIT;
        config.max_in_flight_requests = 64;
        config.server_request_timeout = Duration::from_millis(2);
        config.shutdown_grace = Duration::from_secs(10);
        let server = Server::new(Quick, config, runtime.handle().clone());
        Fuzzer { runtime, server }
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&setup, input)) = data.split_first() else {
        return;
    };
    let fuzzer = fuzzer();
    let server = &fuzzer.server;
    let recorder = Recorder::default();
    let connection = server.hub().open(Box::new(recorder.clone()));
    let mut lines = 0usize;
    if setup & 1 == 1 {
        let initialize = format!(
            r#"{{"id":"init","method":"initialize","params":{{"clientInfo":{{"name":"fuzz","version":"0"}},"capabilities":{{"experimentalApi":{}}}}}}}"#,
            setup & 2 == 2
        );
        server.handle_message(&connection, initialize.as_bytes());
        lines += 1;
    }
    let mut framer = LineFramer::new(LIMIT);
    let chunk = usize::from(setup >> 2) * 37 + 1;
    let mut handle = |event: FrameEvent<'_>| {
        lines += 1;
        match event {
            FrameEvent::Message(bytes) => server.handle_message(&connection, bytes),
            FrameEvent::TooLarge { bytes } => server.refuse_oversized(&connection, bytes),
        }
    };
    for piece in input.chunks(chunk) {
        framer.push(piece, &mut handle);
        assert!(
            framer.buffered() <= LIMIT + 1,
            "the framer held {}",
            framer.buffered()
        );
        // Let spawned requests run, so that answers later in the input can meet the server
        // requests they answer.
        fuzzer.runtime.block_on(tokio::task::yield_now());
    }
    framer.finish(&mut handle);
    let started = Instant::now();
    fuzzer.runtime.block_on(server.drain());
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "a request kept its slot"
    );
    server.hub().close(connection.id());
    assert!(server.hub().is_empty(), "a connection leaked");

    let sent = recorder.sent.lock().unwrap_or_else(PoisonError::into_inner);
    let mut total = 0usize;
    for message in sent.iter() {
        total += message.len();
        assert!(!message.contains(&b'\n'), "a message holds a raw newline");
        let value: serde_json::Value =
            serde_json::from_slice(message).expect("every message sent is JSON");
        assert!(value.is_object(), "every message sent is an object");
    }
    assert!(
        total <= 8 * data.len() + 4096 * (lines + 1),
        "{total} bytes sent for {} bytes in {lines} lines",
        data.len()
    );
});
