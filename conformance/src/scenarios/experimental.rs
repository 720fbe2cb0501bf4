//! Experimental gating: an experimental method is refused to a client that did not negotiate
//! `capabilities.experimentalApi`, and served to one that did.

use agentwire_client::wire;
use serde_json::json;

use super::{Ctx, Scenario};
use crate::session::{REPORT_QUOTE_MAX, Stop, describe_error, fail};

/// An experimental method both agentwire and codex serve, with valid params.
const METHOD: &str = "collaborationMode/list";

pub fn scenarios() -> Vec<Scenario> {
    vec![Scenario {
        group: "experimental",
        id: "gating",
        summary: "collaborationMode/list is refused without experimentalApi and served with it",
        needs_mock: false,
        run: gating,
    }]
}

fn gating(ctx: &mut Ctx<'_, '_>) -> Result<String, Stop> {
    let mut stable = ctx.connect_initialized()?;
    let refused = match stable.request(METHOD, json!({}))? {
        Ok(result) => {
            return fail(format!(
                "{METHOD} was served without experimentalApi: {}",
                wire::clip_to(&result.to_string(), REPORT_QUOTE_MAX)
            ));
        }
        Err(error) => error,
    };
    drop(stable);
    let mut experimental = ctx.connect()?;
    experimental.initialize(json!({"experimentalApi": true}))?;
    match experimental.request(METHOD, json!({}))? {
        Ok(_) => Ok(format!(
            "refused without the capability ({}), served with it",
            describe_error(&refused)
        )),
        Err(error) => fail(format!(
            "{METHOD} refused with experimentalApi too: {}",
            describe_error(&error)
        )),
    }
}
