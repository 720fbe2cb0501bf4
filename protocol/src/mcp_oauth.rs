//! Signing in to an MCP server that is reached over streamable HTTP and protected by OAuth:
//! `mcpServer/oauth/login` starts an authorization-code sign-in and answers the address the
//! user opens in a browser; `mcpServer/oauthLogin/completed` reports how it ended.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// How the server obtains an OAuth client for the MCP server's authorization server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum McpServerOauthClientRegistration {
    /// Use the configured client id, else register dynamically when the authorization server
    /// allows it.
    Auto,
    /// Use a client id metadata document (a URL as the client id); not offered by this server.
    Cimd,
    /// Always register a new client dynamically (RFC 7591).
    Dcr,
}

/// Params of `mcpServer/oauth/login`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct McpServerOauthLoginParams {
    /// The configured name of the MCP server (`[mcp_servers.<name>]`) to sign in to.
    pub name: String,
    /// How to obtain the OAuth client for this sign-in; absent lets the server choose.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub client_registration: Option<McpServerOauthClientRegistration>,
    /// The environment whose registration of the server is meant; absent means the one
    /// configured by name.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub environment_id: Option<String>,
    /// The OAuth scopes to ask for; absent uses the server's configured `scopes`, else those
    /// the protected resource advertises.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub scopes: Option<Vec<String>>,
    /// The thread the sign-in was started from, echoed in the completion notification.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub thread_id: Option<String>,
    /// How long to wait for the browser to come back, in seconds; absent means five minutes.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub timeout_secs: Option<i64>,
}

/// Result of `mcpServer/oauth/login`: where the user signs in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct McpServerOauthLoginResponse {
    /// The authorization server's address to open in a browser; it comes back to a loopback
    /// listener of this server.
    pub authorization_url: String,
    /// Names this sign-in attempt in `mcpServer/oauthLogin/completed`.
    #[serde(default)]
    pub login_id: Option<String>,
}

/// Params of `mcpServer/oauthLogin/completed`: an MCP server sign-in ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct McpServerOauthLoginCompletedNotification {
    /// The configured name of the MCP server.
    pub name: String,
    /// Whether tokens were obtained and stored.
    pub success: bool,
    /// Why the sign-in failed, for display; `null` on success.
    #[serde(default)]
    pub error: Option<String>,
    /// The `loginId` of the `mcpServer/oauth/login` answer.
    #[serde(default)]
    pub login_id: Option<String>,
    /// The thread the sign-in was started from, if one was named.
    #[serde(default)]
    pub thread_id: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn login_params_leave_out_absent_members() {
        let params = McpServerOauthLoginParams::builder().name("docs").build();
        let value = serde_json::to_value(&params).expect("serialize");
        assert_eq!(value, serde_json::json!({"name": "docs"}));
        let back: McpServerOauthLoginParams = serde_json::from_value(serde_json::json!({
            "name": "docs", "clientRegistration": "dcr", "scopes": null, "timeoutSecs": 5
        }))
        .expect("deserialize");
        assert_eq!(
            back.client_registration,
            Some(McpServerOauthClientRegistration::Dcr)
        );
        assert_eq!(back.timeout_secs, Some(5));
    }

    #[test]
    fn completion_sends_nulls() {
        let done = McpServerOauthLoginCompletedNotification::builder()
            .name("docs")
            .success(true)
            .build();
        let value = serde_json::to_value(&done).expect("serialize");
        assert_eq!(value["error"], serde_json::Value::Null);
        assert!(value.as_object().is_some_and(|o| o.contains_key("loginId")));
    }
}
