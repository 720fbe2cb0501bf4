//! Notification opt-out: a method listed in `capabilities.optOutNotificationMethods` is not
//! sent to that connection (and is, to one that did not opt out).

use serde_json::json;

use super::{Ctx, Scenario};
use crate::session::{Stop, fail};

pub fn scenarios() -> Vec<Scenario> {
    vec![Scenario {
        group: "notifications",
        id: "opt-out",
        summary: "thread/started is not sent to a client that opted out of it",
        needs_mock: false,
        run: opt_out,
    }]
}

fn opt_out(ctx: &mut Ctx<'_, '_>) -> Result<String, Stop> {
    let mut conn = ctx.connect()?;
    conn.initialize(json!({"optOutNotificationMethods": ["thread/started"]}))?;
    let thread = ctx.start_thread(&mut conn, json!({}))?;
    // Anything the server sends about thread/start comes before the answer to a request sent
    // after it on the same connection.
    conn.call("thread/read", json!({"threadId": thread}))?;
    if conn.has_seen("thread/started") {
        return fail("thread/started was sent although the client opted out of it");
    }
    Ok(format!(
        "thread {thread} started without thread/started (opted out)"
    ))
}
