//! What schema validation costs, measured in-process with the runtime's own validators.

use std::hint::black_box;
use std::time::Instant;

use agentwire_protocol::method::Method;
use agentwire_protocol::methods::{ThreadList, TurnStart};
use agentwire_runtime::{Envelope, Validators};
use serde_json::Value;

/// One request's params and what checking them costs.
#[derive(Debug, Clone)]
pub struct ValidationCost {
    /// The method.
    pub method: &'static str,
    /// The params, as sent.
    pub params: &'static str,
    /// Nanoseconds per `Validators::check` on already-parsed params (median of batches).
    pub check_ns: f64,
    /// Nanoseconds to read the whole request line as the server does (its envelope, params
    /// as a `Value`) and check its params.
    pub parse_and_check_ns: f64,
}

/// The params measured: the cheap benchmark request and a bigger one.
pub const CASES: [(&str, &str); 2] = [
    (ThreadList::NAME, "{}"),
    (
        TurnStart::NAME,
        r#"{"threadId":"thr_0123456789","input":[{"type":"text","text":"Summarise README.md and list the open issues, newest first."},{"type":"text","text":"Keep it short."}],"cwd":"/work/project","model":"gpt-5","effort":"medium","summary":"auto"}"#,
    ),
];

const BATCHES: usize = 7;
const PER_BATCH: u32 = 20_000;

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

fn time_per_call(mut call: impl FnMut()) -> f64 {
    let batches = (0..BATCHES)
        .map(|_| {
            let started = Instant::now();
            for _ in 0..PER_BATCH {
                call();
            }
            started.elapsed().as_nanos() as f64 / f64::from(PER_BATCH)
        })
        .collect();
    median(batches)
}

/// Measures every case; fails if a case's params are not valid (the measurement would then
/// time the error path).
pub fn measure() -> Result<Vec<ValidationCost>, String> {
    let validators = Validators::new();
    CASES
        .iter()
        .map(|&(method, params)| {
            let value: Value =
                serde_json::from_str(params).map_err(|e| format!("{method} params: {e}"))?;
            validators
                .check(method, Some(&value))
                .map_err(|e| format!("{method} params rejected: {}", e.summary()))?;
            let check_ns = time_per_call(|| {
                let _ = black_box(validators.check(black_box(method), Some(black_box(&value))));
            });
            let line = format!("{{\"id\":1,\"method\":\"{method}\",\"params\":{params}}}");
            let parse_and_check_ns = time_per_call(|| {
                if let Ok(envelope) = Envelope::read(black_box(line.as_bytes())) {
                    let _ = black_box(validators.check(method, envelope.params.as_ref()));
                }
            });
            Ok(ValidationCost {
                method,
                params,
                check_ns,
                parse_and_check_ns,
            })
        })
        .collect()
}
