//! `thread/prepareApprovedPlan`: the first prompt of a fresh thread that is to carry out a plan
//! the user approved (in plan mode, say). When the client saved a copy of the plan on the
//! server (`attachmentPath`, a readable regular file), the prompt points the agent to it;
//! otherwise the prompt carries the plan itself. Nothing is recorded: the prompt becomes part
//! of the thread when the client sends it with `turn/start`.

use std::path::Path;

use agentwire_protocol::{ThreadPrepareApprovedPlanParams, ThreadPrepareApprovedPlanResponse};
use agentwire_store::error::ThreadError;

use super::Threads;

/// Longest plan accepted, in bytes.
const MAX_PLAN_BYTES: usize = 256 * 1024;
/// Largest attachment read to check it.
const MAX_ATTACHMENT_BYTES: u64 = 1024 * 1024;

impl Threads {
    /// `thread/prepareApprovedPlan`.
    pub(crate) fn prepare_approved_plan(
        &self,
        params: ThreadPrepareApprovedPlanParams,
    ) -> Result<ThreadPrepareApprovedPlanResponse, ThreadError> {
        let (_, turns) = self.snapshot(&params.thread_id)?;
        if !turns.is_empty() {
            return Err(ThreadError::Conflict(format!(
                "thread {} already has turns: an approved plan starts a fresh thread",
                params.thread_id
            )));
        }
        let plan = params.markdown.trim();
        if plan.is_empty() {
            return Err(ThreadError::InvalidParams(
                "markdown: the plan is empty".into(),
            ));
        }
        if plan.len() > MAX_PLAN_BYTES {
            return Err(ThreadError::InvalidParams(format!(
                "markdown: longer than {MAX_PLAN_BYTES} bytes"
            )));
        }
        let attachment = params
            .attachment_path
            .as_deref()
            .filter(|p| Path::new(p).is_absolute() && !p.contains('\0'))
            .filter(|p| {
                agentwire_support::regular_file::read_regular(Path::new(p), MAX_ATTACHMENT_BYTES)
                    .is_ok()
            });
        let prompt = match attachment {
            Some(path) => format!(
                "Carry out the plan I approved. It is saved at {path}; read it first, then \
                 implement it step by step."
            ),
            None => format!("Carry out the plan I approved, step by step:\n\n{plan}"),
        };
        Ok(ThreadPrepareApprovedPlanResponse::builder()
            .prompt(prompt)
            .build())
    }
}
