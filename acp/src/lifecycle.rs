//! `session/list`, `session/resume` and `session/close`: the sessions as the store's threads.
//!
//! | ACP              | engine                                                                 |
//! |------------------|------------------------------------------------------------------------|
//! | `session/list`   | `thread/list` (`cwd` filter, `cursor` → `nextCursor`): every stored thread, newest first, titled by its name or its first message |
//! | `session/resume` | `thread/resume` without its turns (`excludeTurns`): nothing is replayed |
//! | `session/close`  | cancels the running prompt, stops the session's MCP servers, forgets the session and `thread/unsubscribe`s (the engine unloads a thread no one follows) |

use agent_client_protocol::v1::schema::{
    CloseSessionRequest, CloseSessionResponse, ListSessionsRequest, ListSessionsResponse,
    ResumeSessionRequest, ResumeSessionResponse, SessionInfo,
};
use agent_client_protocol::{Error, ErrorCode};
use agentwire_protocol::method::Method;
use agentwire_protocol::methods::{ThreadList, ThreadUnsubscribe};
use agentwire_protocol::{ThreadListParams, ThreadUnsubscribeParams};
use serde_json::json;

use crate::agent::{AcpAgent, engine_error, engine_params, error};

/// Most sessions one `session/list` page holds.
const PAGE: u32 = 50;

impl AcpAgent {
    /// `session/list`: the store's threads (in `cwd` when given), a page at a time.
    pub async fn list_sessions(
        &self,
        request: ListSessionsRequest,
    ) -> Result<ListSessionsResponse, Error> {
        let mut params = json!({"limit": PAGE});
        if let Some(cwd) = &request.cwd {
            if !cwd.is_absolute() {
                return Err(error(
                    ErrorCode::INVALID_PARAMS,
                    format!("cwd must be an absolute path, not {}", cwd.display()),
                ));
            }
            params["cwd"] = json!(cwd.display().to_string());
        }
        if let Some(cursor) = &request.cursor {
            params["cursor"] = json!(cursor);
        }
        let params: ThreadListParams = engine_params(ThreadList::NAME, params)?;
        let listed = self
            .link()?
            .request::<ThreadList>(&params)
            .await
            .map_err(|e| engine_error("session/list", &e))?;
        let sessions = listed
            .data
            .into_iter()
            .map(|thread| {
                let title = thread
                    .name
                    .clone()
                    .filter(|n| !n.is_empty())
                    .or_else(|| Some(thread.preview.clone()).filter(|p| !p.is_empty()));
                SessionInfo::new(thread.id, thread.cwd.0)
                    .title(title)
                    .updated_at(agentwire_engine::rfc3339(thread.updated_at))
            })
            .collect();
        Ok(ListSessionsResponse::new(sessions).next_cursor(listed.next_cursor))
    }

    /// `session/resume`: the thread resumed in `cwd` without replaying its history.
    pub async fn resume_session(
        &self,
        request: ResumeSessionRequest,
    ) -> Result<ResumeSessionResponse, Error> {
        let (_, mode, options) = self
            .resume_thread(
                &request.session_id,
                &request.cwd,
                &request.mcp_servers,
                true,
            )
            .await?;
        Ok(ResumeSessionResponse::new()
            .modes(mode.state())
            .config_options(options))
    }

    /// `session/close`: the running prompt cancelled, the session forgotten (its MCP servers
    /// stopped) and the thread left to the engine to unload.
    pub async fn close_session(
        &self,
        request: CloseSessionRequest,
    ) -> Result<CloseSessionResponse, Error> {
        let closed = self.sessions().remove(request.session_id.0.as_ref());
        let Some(session) = closed else {
            return Err(agent_client_protocol::v1::schema::Error::session_not_found(
                request.session_id.clone(),
            )
            .into());
        };
        if let Some(cancel) = &session.cancel {
            cancel.cancel();
        }
        drop(session);
        let params: ThreadUnsubscribeParams = engine_params(
            ThreadUnsubscribe::NAME,
            json!({"threadId": request.session_id.0.as_ref()}),
        )?;
        if let Err(e) = self.link()?.request::<ThreadUnsubscribe>(&params).await {
            tracing::info!(session = %request.session_id.0, error = %e, "thread/unsubscribe after session/close failed");
        }
        Ok(CloseSessionResponse::new())
    }
}
