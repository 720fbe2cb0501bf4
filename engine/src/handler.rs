//! The engine's side of the generated [`Handler`] trait: each implemented method hands its
//! typed params to the part of the engine that serves it and turns failures into JSON-RPC
//! errors.

use std::future::{Future, ready};

use agentwire_protocol::method::Method;
use agentwire_protocol::methods::{
    ThreadArchive, ThreadFork, ThreadList, ThreadRead, ThreadResume, ThreadSetName, ThreadStart,
    ThreadUnarchive, TurnInterrupt, TurnStart, TurnSteer,
};
use agentwire_protocol::{
    ThreadArchiveParams, ThreadArchiveResponse, ThreadForkParams, ThreadForkResponse,
    ThreadListParams, ThreadListResponse, ThreadLoadedListParams, ThreadLoadedListResponse,
    ThreadReadParams, ThreadReadResponse, ThreadResumeParams, ThreadResumeResponse,
    ThreadSetNameParams, ThreadSetNameResponse, ThreadStartParams, ThreadStartResponse,
    ThreadUnarchiveParams, ThreadUnarchiveResponse, TurnInterruptParams, TurnInterruptResponse,
    TurnStartParams, TurnStartResponse, TurnSteerParams, TurnSteerResponse,
};
use agentwire_runtime::{Handler, HandlerError, RequestContext};

use crate::Engine;
use crate::threads::error::ThreadError;

/// The answer for `M`, with failures mapped to its error codes. Thread operations are short
/// and synchronous (a file append with `fdatasync`, an index query), so they run in place.
fn answer<M: Method, T>(
    result: Result<T, ThreadError>,
) -> impl Future<Output = Result<T, HandlerError>> + Send
where
    T: Send,
{
    ready(result.map_err(|e| e.into_handler(M::NAME)))
}

impl Handler for Engine {
    fn thread_start(
        &self,
        context: RequestContext,
        params: ThreadStartParams,
    ) -> impl Future<Output = Result<ThreadStartResponse, HandlerError>> + Send {
        answer::<ThreadStart, _>(self.threads.start(&context, params))
    }

    fn thread_resume(
        &self,
        context: RequestContext,
        params: ThreadResumeParams,
    ) -> impl Future<Output = Result<ThreadResumeResponse, HandlerError>> + Send {
        answer::<ThreadResume, _>(self.threads.resume(&context, params))
    }

    fn thread_fork(
        &self,
        context: RequestContext,
        params: ThreadForkParams,
    ) -> impl Future<Output = Result<ThreadForkResponse, HandlerError>> + Send {
        answer::<ThreadFork, _>(self.threads.fork(&context, params))
    }

    fn thread_read(
        &self,
        _context: RequestContext,
        params: ThreadReadParams,
    ) -> impl Future<Output = Result<ThreadReadResponse, HandlerError>> + Send {
        answer::<ThreadRead, _>(self.threads.read(params))
    }

    fn thread_list(
        &self,
        _context: RequestContext,
        params: ThreadListParams,
    ) -> impl Future<Output = Result<ThreadListResponse, HandlerError>> + Send {
        answer::<ThreadList, _>(self.threads.list(params))
    }

    fn thread_loaded_list(
        &self,
        _context: RequestContext,
        params: ThreadLoadedListParams,
    ) -> impl Future<Output = Result<ThreadLoadedListResponse, HandlerError>> + Send {
        ready(Ok(self.threads.loaded_list(params)))
    }

    fn thread_archive(
        &self,
        context: RequestContext,
        params: ThreadArchiveParams,
    ) -> impl Future<Output = Result<ThreadArchiveResponse, HandlerError>> + Send {
        answer::<ThreadArchive, _>(self.threads.archive(&context, params))
    }

    fn thread_unarchive(
        &self,
        context: RequestContext,
        params: ThreadUnarchiveParams,
    ) -> impl Future<Output = Result<ThreadUnarchiveResponse, HandlerError>> + Send {
        answer::<ThreadUnarchive, _>(self.threads.unarchive(&context, params))
    }

    fn thread_set_name(
        &self,
        context: RequestContext,
        params: ThreadSetNameParams,
    ) -> impl Future<Output = Result<ThreadSetNameResponse, HandlerError>> + Send {
        answer::<ThreadSetName, _>(self.threads.set_name(&context, params))
    }

    fn turn_start(
        &self,
        context: RequestContext,
        params: TurnStartParams,
    ) -> impl Future<Output = Result<TurnStartResponse, HandlerError>> + Send {
        answer::<TurnStart, _>(self.turns.start(&context, params))
    }

    fn turn_steer(
        &self,
        _context: RequestContext,
        params: TurnSteerParams,
    ) -> impl Future<Output = Result<TurnSteerResponse, HandlerError>> + Send {
        answer::<TurnSteer, _>(self.turns.steer(params))
    }

    fn turn_interrupt(
        &self,
        _context: RequestContext,
        params: TurnInterruptParams,
    ) -> impl Future<Output = Result<TurnInterruptResponse, HandlerError>> + Send {
        answer::<TurnInterrupt, _>(self.turns.interrupt(params))
    }
}
