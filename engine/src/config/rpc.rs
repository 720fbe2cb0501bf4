//! `config/read`, `config/value/write` and `config/batchWrite`.

use agentwire_protocol::{
    ConfigBatchWriteParams, ConfigReadParams, ConfigReadResponse, ConfigValueWriteParams,
    ConfigWriteResponse,
};
use agentwire_runtime::{HandlerError, RequestContext};

use crate::Engine;

/// Serves `config/read`.
pub(crate) async fn read(
    engine: &Engine,
    context: RequestContext,
    params: ConfigReadParams,
) -> Result<ConfigReadResponse, HandlerError> {
    let _ = (engine, context, params);
    Err(HandlerError::method_not_found("config/read"))
}

/// Serves `config/value/write`.
pub(crate) async fn value_write(
    engine: &Engine,
    context: RequestContext,
    params: ConfigValueWriteParams,
) -> Result<ConfigWriteResponse, HandlerError> {
    let _ = (engine, context, params);
    Err(HandlerError::method_not_found("config/value/write"))
}

/// Serves `config/batchWrite`.
pub(crate) async fn batch_write(
    engine: &Engine,
    context: RequestContext,
    params: ConfigBatchWriteParams,
) -> Result<ConfigWriteResponse, HandlerError> {
    let _ = (engine, context, params);
    Err(HandlerError::method_not_found("config/batchWrite"))
}
