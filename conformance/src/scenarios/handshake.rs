//! The handshake: nothing but `initialize` before `initialize`, and only one `initialize`.

use serde_json::{Value, json};

use super::{Ctx, Scenario};
use crate::session::{Stop, describe_error};

pub fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario {
            group: "handshake",
            id: "request-before-initialize",
            summary: "a request before initialize is refused; initialize still works after it",
            needs_mock: false,
            run: request_before_initialize,
        },
        Scenario {
            group: "handshake",
            id: "double-initialize",
            summary: "a second initialize is refused; the session goes on",
            needs_mock: false,
            run: double_initialize,
        },
    ]
}

fn request_before_initialize(ctx: &mut Ctx<'_, '_>) -> Result<String, Stop> {
    let mut conn = ctx.connect()?;
    let error = conn.call_err("thread/list", json!({}))?;
    conn.initialize(Value::Null)?;
    conn.call("thread/list", json!({}))?;
    Ok(format!(
        "refused with {}; initialize and thread/list then succeed",
        describe_error(&error)
    ))
}

fn double_initialize(ctx: &mut Ctx<'_, '_>) -> Result<String, Stop> {
    let mut conn = ctx.connect_initialized()?;
    let error = conn.call_err(
        "initialize",
        json!({"clientInfo": {"name": "agentwire_conformance", "version": "0.0.1"}}),
    )?;
    conn.call("thread/list", json!({}))?;
    Ok(format!(
        "second initialize refused with {}; thread/list then succeeds",
        describe_error(&error)
    ))
}
