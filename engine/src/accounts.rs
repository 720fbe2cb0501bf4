//! `account/*` and the legacy `getAuthStatus`: the stored API key and what the provider said of it.

use agentwire_protocol::NoParams;
use agentwire_protocol::{
    CancelLoginAccountParams, CancelLoginAccountResponse, GetAccountParams,
    GetAccountRateLimitsParams, GetAccountRateLimitsResponse, GetAccountResponse,
    GetAuthStatusParams, GetAuthStatusResponse, LoginAccountParams, LoginAccountResponse,
    LogoutAccountResponse,
};
use agentwire_runtime::{HandlerError, RequestContext};

use crate::Engine;

/// Serves `account/read`.
pub(crate) async fn read(
    engine: &Engine,
    context: RequestContext,
    params: GetAccountParams,
) -> Result<GetAccountResponse, HandlerError> {
    let _ = (engine, context, params);
    Err(HandlerError::method_not_found("account/read"))
}

/// Serves `account/login/start`.
pub(crate) async fn login_start(
    engine: &Engine,
    context: RequestContext,
    params: LoginAccountParams,
) -> Result<LoginAccountResponse, HandlerError> {
    let _ = (engine, context, params);
    Err(HandlerError::method_not_found("account/login/start"))
}

/// Serves `account/login/cancel`.
pub(crate) async fn login_cancel(
    engine: &Engine,
    context: RequestContext,
    params: CancelLoginAccountParams,
) -> Result<CancelLoginAccountResponse, HandlerError> {
    let _ = (engine, context, params);
    Err(HandlerError::method_not_found("account/login/cancel"))
}

/// Serves `account/logout`.
pub(crate) async fn logout(
    engine: &Engine,
    context: RequestContext,
    params: NoParams,
) -> Result<LogoutAccountResponse, HandlerError> {
    let _ = (engine, context, params);
    Err(HandlerError::method_not_found("account/logout"))
}

/// Serves `account/rateLimits/read`.
pub(crate) async fn rate_limits_read(
    engine: &Engine,
    context: RequestContext,
    params: Option<GetAccountRateLimitsParams>,
) -> Result<GetAccountRateLimitsResponse, HandlerError> {
    let _ = (engine, context, params);
    Err(HandlerError::method_not_found("account/rateLimits/read"))
}

/// Serves `getAuthStatus`.
pub(crate) async fn get_auth_status(
    engine: &Engine,
    context: RequestContext,
    params: GetAuthStatusParams,
) -> Result<GetAuthStatusResponse, HandlerError> {
    let _ = (engine, context, params);
    Err(HandlerError::method_not_found("getAuthStatus"))
}
