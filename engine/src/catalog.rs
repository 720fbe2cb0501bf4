//! `model/list`, `collaborationMode/list` and `app/list`: what the user can pick from.

use agentwire_protocol::{
    AppsListParams, AppsListResponse, CollaborationModeListParams, CollaborationModeListResponse,
    ModelListParams, ModelListResponse,
};
use agentwire_runtime::{HandlerError, RequestContext};

use crate::Engine;

/// Serves `model/list`.
pub(crate) async fn model_list(
    engine: &Engine,
    context: RequestContext,
    params: ModelListParams,
) -> Result<ModelListResponse, HandlerError> {
    let _ = (engine, context, params);
    Err(HandlerError::method_not_found("model/list"))
}

/// Serves `collaborationMode/list`.
pub(crate) async fn collaboration_mode_list(
    engine: &Engine,
    context: RequestContext,
    params: CollaborationModeListParams,
) -> Result<CollaborationModeListResponse, HandlerError> {
    let _ = (engine, context, params);
    Err(HandlerError::method_not_found("collaborationMode/list"))
}

/// Serves `app/list`.
pub(crate) async fn app_list(
    engine: &Engine,
    context: RequestContext,
    params: AppsListParams,
) -> Result<AppsListResponse, HandlerError> {
    let _ = (engine, context, params);
    Err(HandlerError::method_not_found("app/list"))
}
