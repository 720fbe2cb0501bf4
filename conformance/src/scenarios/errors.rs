//! JSON-RPC error codes: -32601 for an unknown method, -32602 for bad params, -32700 for a
//! line that is not JSON (answered with `id: null`), and the session survives each.

use serde_json::{Value, json};

use super::{Ctx, Scenario};
use crate::session::{Stop, code, describe_error, fail};

pub fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario {
            group: "errors",
            id: "unknown-method",
            summary: "an unknown method is answered -32601",
            needs_mock: false,
            run: unknown_method,
        },
        Scenario {
            group: "errors",
            id: "bad-params",
            summary: "params of the wrong type are answered -32602",
            needs_mock: false,
            run: bad_params,
        },
        Scenario {
            group: "errors",
            id: "parse-error",
            summary: "a line that is not JSON is answered -32700 with id null",
            needs_mock: false,
            run: parse_error,
        },
    ]
}

fn expect_code(what: &str, error: &Value, want: i64) -> Result<String, Stop> {
    if code(error) == Some(want) {
        Ok(format!("{what}: {}", describe_error(error)))
    } else {
        fail(format!(
            "{what}: answered {}, not {want}",
            describe_error(error)
        ))
    }
}

fn unknown_method(ctx: &mut Ctx<'_, '_>) -> Result<String, Stop> {
    let mut conn = ctx.connect_initialized()?;
    let error = conn.call_err("conformance/noSuchMethod", json!({}))?;
    let detail = expect_code("conformance/noSuchMethod", &error, -32601)?;
    conn.call("thread/list", json!({}))?;
    Ok(detail)
}

fn bad_params(ctx: &mut Ctx<'_, '_>) -> Result<String, Stop> {
    let mut conn = ctx.connect_initialized()?;
    let error = conn.call_err("thread/start", json!({"cwd": 42}))?;
    let detail = expect_code("thread/start {\"cwd\": 42}", &error, -32602)?;
    conn.call("thread/list", json!({}))?;
    Ok(detail)
}

fn parse_error(ctx: &mut Ctx<'_, '_>) -> Result<String, Stop> {
    let mut conn = ctx.connect_initialized()?;
    conn.send_raw("this is not json")?;
    let id = conn.send_request("thread/list", json!({}))?;
    // The answer to the line must come before the answer to the request sent after it.
    let first = conn.wait("an answer", |m| {
        m.get("method").is_none()
            && (m.get("id") == Some(&json!(id)) || m.get("id") == Some(&Value::Null))
    })?;
    if first.get("id") == Some(&json!(id)) {
        return fail(
            "the line that is not JSON got no answer (the next request was answered first)",
        );
    }
    let error = first.get("error").cloned().unwrap_or(Value::Null);
    let detail = expect_code("\"this is not json\"", &error, -32700)?;
    if let Err(error) = conn.answer_to(&json!(id), "thread/list")? {
        return fail(format!(
            "thread/list after the bad line failed: {}",
            describe_error(&error)
        ));
    }
    Ok(format!("{detail}; thread/list then answered"))
}
