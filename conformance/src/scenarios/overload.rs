//! Overload: a server with a bound on requests in flight answers the request past it with
//! -32001 at once. A server has to say it has such a bound (`--bounded-queue N`: agentwire's
//! `app-server --max-in-flight N`); otherwise the scenario is skipped.

use serde_json::json;

use super::{Ctx, Scenario};
use crate::session::{Stop, code, describe_error, fail};

pub fn scenarios() -> Vec<Scenario> {
    vec![Scenario {
        group: "overload",
        id: "bounded-queue",
        summary: "past its bound on requests in flight, a request is answered -32001",
        needs_mock: false,
        run: bounded_queue,
    }]
}

fn bounded_queue(ctx: &mut Ctx<'_, '_>) -> Result<String, Stop> {
    let Some(bound) = ctx.options.bounded_queue else {
        return Err(Stop::Skip(
            "the server advertises no bound on requests in flight (pass --bounded-queue N for one started with it, e.g. agentwire app-server --max-in-flight N)".to_owned(),
        ));
    };
    let mut conn = ctx.connect_initialized()?;
    // Each holds its slot until its command exits.
    let mut ids = Vec::new();
    for _ in 0..=bound {
        ids.push(conn.send_request(
            "command/exec",
            json!({"command": ["sleep", "2"], "cwd": ctx.work.to_string_lossy()}),
        )?);
    }
    let mut overloaded = None;
    let mut served = 0;
    for id in ids {
        match conn.answer_to(&json!(id), "command/exec")? {
            Ok(_) => served += 1,
            Err(error) if code(&error) == Some(-32001) => overloaded = Some(error),
            Err(error) => {
                return fail(format!(
                    "command/exec answered {} (neither a result nor -32001)",
                    describe_error(&error)
                ));
            }
        }
    }
    match overloaded {
        Some(error) => Ok(format!(
            "{} requests with a bound of {bound}: {served} served, the rest answered {}",
            bound + 1,
            describe_error(&error)
        )),
        None => fail(format!(
            "{} requests with a bound of {bound} in flight were all served; none answered -32001",
            bound + 1
        )),
    }
}
