//! `thread/sample` and `thread/sample/cancel`: one model call on the side of a thread, and its
//! cancellation.
//!
//! A sample sees what the thread's next turn would send the model (see
//! [`crate::turns::sample`]) followed by the prompt, and is answered with the model's text and
//! token counts. Nothing is recorded and no notification is sent: the thread stays as it was.
//! No tool runs; a model that calls one gets `text: null`.
//!
//! A cancel names a `thread/sample` of its own connection by request id and is always
//! acknowledged with `{}`; the sample it stops answers with error [`CANCELLED`]. With
//! `interruptOnCancel: false` the model call is left to finish (its output is dropped);
//! otherwise it is stopped at once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use agentwire_protocol::method::Method;
use agentwire_protocol::methods::ThreadSample;
use agentwire_protocol::{
    RequestId, ThreadSampleCancelParams, ThreadSampleCancelResponse, ThreadSampleParams,
    ThreadSampleResponse,
};
use agentwire_providers::ProviderEvent;
use agentwire_runtime::{ConnectionId, HandlerError, RequestContext};
use agentwire_support::lock;
use tokio::sync::{mpsc, oneshot};

use crate::pool::blocking;
use crate::turns::Turns;

/// The error code of a sample stopped by `thread/sample/cancel` (the code LSP gives a
/// cancelled request).
pub(crate) const CANCELLED: i64 = -32800;

/// Most bytes of model text a sample keeps; the rest is cut off.
const MAX_TEXT: usize = 4 * 1024 * 1024;

type Key = (ConnectionId, RequestId);

/// The samples in flight, by connection and request id: what stops each one.
#[derive(Debug, Default)]
pub(crate) struct Samples {
    running: Mutex<HashMap<Key, oneshot::Sender<()>>>,
}

impl Samples {
    fn lock(&self) -> MutexGuard<'_, HashMap<Key, oneshot::Sender<()>>> {
        lock(&self.running)
    }
}

/// Takes a sample out of [`Samples`] however its request ends.
struct Registered<'a> {
    samples: &'a Samples,
    key: Key,
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        self.samples.lock().remove(&self.key);
    }
}

/// What the model call produced.
#[derive(Debug, Default)]
struct Collected {
    text: String,
    called_tool: bool,
    usage: Option<agentwire_protocol::TokenUsageBreakdown>,
}

/// Reads `events` to the end of the call.
async fn collect(events: &mut mpsc::Receiver<ProviderEvent>) -> Result<Collected, HandlerError> {
    let method = ThreadSample::NAME;
    let mut collected = Collected::default();
    loop {
        match events.recv().await {
            Some(ProviderEvent::TextDelta(delta)) => {
                let room = MAX_TEXT.saturating_sub(collected.text.len());
                let mut cut = delta.len().min(room);
                while !delta.is_char_boundary(cut) {
                    cut -= 1;
                }
                collected.text.push_str(&delta[..cut]);
            }
            Some(ProviderEvent::ToolCall(_)) => collected.called_tool = true,
            Some(ProviderEvent::Done { usage, .. }) => {
                collected.usage = Some(usage);
                return Ok(collected);
            }
            Some(ProviderEvent::Error {
                message, details, ..
            }) => {
                let details = details.map(|d| format!(" ({d})")).unwrap_or_default();
                return Err(HandlerError::internal(format!(
                    "{method}: the model call failed: {message}{details}"
                )));
            }
            Some(_) => {}
            None => {
                return Err(HandlerError::internal(format!(
                    "{method}: the model stream ended before the answer was complete"
                )));
            }
        }
    }
}

/// `thread/sample`.
pub(crate) async fn sample(
    turns: &Arc<Turns>,
    samples: &Samples,
    context: RequestContext,
    params: ThreadSampleParams,
) -> Result<ThreadSampleResponse, HandlerError> {
    let method = ThreadSample::NAME;
    let key = (context.peer.connection_id(), context.request_id.clone());
    let (stop_sender, mut stop) = oneshot::channel();
    samples.lock().insert(key.clone(), stop_sender);
    let _registered = Registered { samples, key };
    let interrupt_on_cancel = params.interrupt_on_cancel.unwrap_or(true);
    let sampler = turns.clone();
    let call = blocking::<ThreadSample, _, _>(move || {
        sampler
            .sample_call(&params)
            .map_err(|e| e.into_handler(method))
    })
    .await?;
    let mut events = turns.sample_stream(call.request);
    let collected = tokio::select! {
        biased;
        _ = &mut stop => {
            if !interrupt_on_cancel {
                // Left to finish; what it says is dropped.
                // Cleaned up after a panic: nothing to undo (the stream's sender sees the
                // channel closed and stops).
                let drain = async move { while events.recv().await.is_some() {} };
                agentwire_support::supervised::spawn("sample drain", drain, || {});
            }
            return Err(HandlerError::new(
                CANCELLED,
                format!("{method}: request {} was cancelled", context.request_id),
            ));
        }
        collected = collect(&mut events) => collected?,
    };
    let text = (!collected.called_tool && !collected.text.is_empty()).then_some(collected.text);
    let usage = collected.usage;
    Ok(ThreadSampleResponse::builder()
        .maybe_cached_input_tokens(usage.as_ref().map(|u| u.cached_input_tokens))
        .maybe_input_tokens(usage.as_ref().map(|u| u.input_tokens))
        .maybe_output_tokens(usage.as_ref().map(|u| u.output_tokens))
        .response_id(format!("sample-{}", agentwire_store::meta::new_id()))
        .source_turn_id(call.source_turn_id)
        .maybe_text(text)
        .build())
}

/// `thread/sample/cancel`.
pub(crate) fn cancel(
    samples: &Samples,
    context: &RequestContext,
    params: ThreadSampleCancelParams,
) -> ThreadSampleCancelResponse {
    let key = (context.peer.connection_id(), params.request_id);
    if let Some(stop) = samples.lock().remove(&key) {
        let _ = stop.send(());
    }
    ThreadSampleCancelResponse::builder().build()
}
