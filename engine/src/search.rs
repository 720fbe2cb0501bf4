//! `fuzzyFileSearch` and its session methods: file names ranked against a query.

use agentwire_protocol::{
    FuzzyFileSearchParams, FuzzyFileSearchResponse, FuzzyFileSearchSessionStartParams,
    FuzzyFileSearchSessionStartResponse, FuzzyFileSearchSessionStopParams,
    FuzzyFileSearchSessionStopResponse, FuzzyFileSearchSessionUpdateParams,
    FuzzyFileSearchSessionUpdateResponse,
};
use agentwire_runtime::{HandlerError, RequestContext};

use crate::Engine;

/// Serves `fuzzyFileSearch`.
pub(crate) async fn fuzzy_file_search(
    engine: &Engine,
    context: RequestContext,
    params: FuzzyFileSearchParams,
) -> Result<FuzzyFileSearchResponse, HandlerError> {
    let _ = (engine, context, params);
    Err(HandlerError::method_not_found("fuzzyFileSearch"))
}

/// Serves `fuzzyFileSearch/sessionStart`.
pub(crate) async fn session_start(
    engine: &Engine,
    context: RequestContext,
    params: FuzzyFileSearchSessionStartParams,
) -> Result<FuzzyFileSearchSessionStartResponse, HandlerError> {
    let _ = (engine, context, params);
    Err(HandlerError::method_not_found(
        "fuzzyFileSearch/sessionStart",
    ))
}

/// Serves `fuzzyFileSearch/sessionUpdate`.
pub(crate) async fn session_update(
    engine: &Engine,
    context: RequestContext,
    params: FuzzyFileSearchSessionUpdateParams,
) -> Result<FuzzyFileSearchSessionUpdateResponse, HandlerError> {
    let _ = (engine, context, params);
    Err(HandlerError::method_not_found(
        "fuzzyFileSearch/sessionUpdate",
    ))
}

/// Serves `fuzzyFileSearch/sessionStop`.
pub(crate) async fn session_stop(
    engine: &Engine,
    context: RequestContext,
    params: FuzzyFileSearchSessionStopParams,
) -> Result<FuzzyFileSearchSessionStopResponse, HandlerError> {
    let _ = (engine, context, params);
    Err(HandlerError::method_not_found(
        "fuzzyFileSearch/sessionStop",
    ))
}
