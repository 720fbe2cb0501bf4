//! Accounts: who the server is signed in as, signing in and out, and usage limits.
//!
//! Used by `account/read`, `account/login/start`, `account/login/cancel`, `account/logout` and
//! `account/rateLimits/read`, and by the `account/updated` and `account/login/completed`
//! notifications. Also holds a few small enums shared with other modules (plans, sign-in
//! restrictions, moderation hints).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::*;

/// The account the server is signed in with; `type` tells the kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[non_exhaustive]
pub enum Account {
    /// Signed in with an OpenAI API key.
    ApiKey,
    /// Signed in with a ChatGPT account.
    #[serde(rename_all = "camelCase")]
    #[schemars(transform = chatgpt_account_required_nullable)]
    #[non_exhaustive]
    Chatgpt {
        /// The user's email address; always present, `null` when the sign-in did not reveal it.
        email: Option<String>,
        /// The ChatGPT plan of the account.
        plan_type: PlanType,
        /// Display name of the selected ChatGPT workspace; `null` when not known.
        #[serde(default)]
        workspace_name: Option<String>,
    },
    /// Using models hosted on Amazon Bedrock.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    AmazonBedrock {
        /// `true` when the server stores the AWS credentials itself (given through
        /// `account/login/start`); `false`, also when absent, when they come from the
        /// environment.
        #[serde(default)]
        uses_codex_managed_credentials: bool,
    },
    /// Using models on Google Cloud (Vertex AI), with credentials managed outside the server.
    Gcp,
}

#[bon::bon]
impl Account {
    /// Starts building [`Account::Chatgpt`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn chatgpt(
        email: Option<String>,
        plan_type: PlanType,
        workspace_name: Option<String>,
    ) -> Self {
        Self::Chatgpt {
            email,
            plan_type,
            workspace_name,
        }
    }

    /// Starts building [`Account::AmazonBedrock`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn amazon_bedrock(#[builder(default)] uses_codex_managed_credentials: bool) -> Self {
        Self::AmazonBedrock {
            uses_codex_managed_credentials,
        }
    }
}

/// Params of `account/login/completed`: a sign-in attempt finished.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct AccountLoginCompletedNotification {
    /// The `loginId` returned by `account/login/start`; `null` for sign-ins that have none
    /// (API key).
    #[serde(default)]
    pub login_id: Option<String>,
    /// Whether the user is now signed in.
    pub success: bool,
    /// What went wrong, for display; `null` on success.
    #[serde(default)]
    pub error: Option<String>,
    /// The desktop onboarding flow the sign-in was started from; `null` for an ordinary
    /// sign-in.
    #[serde(default)]
    pub onboarding_entrypoint: Option<DesktopOnboardingEntrypoint>,
}

/// Why `account/updated` was sent when it was not a sign-in or sign-out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum AccountUpdateReason {
    /// The server finished discovering which workspace to route requests to, for the same
    /// signed-in user.
    WorkspaceRoutingReady,
    /// A reason this version of the protocol does not name.
    Unknown,
}

/// Params of `account/updated`: the sign-in state changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct AccountUpdatedNotification {
    /// How the server is now authenticated; `null` after signing out.
    #[serde(default)]
    pub auth_mode: Option<AuthMode>,
    /// The ChatGPT plan, when signed in with ChatGPT and known; otherwise `null`.
    #[serde(default)]
    pub plan_type: Option<PlanType>,
    /// Set when the update is not a sign-in or sign-out; `null` otherwise.
    #[serde(default)]
    pub reason: Option<AccountUpdateReason>,
}

/// How the server authenticates to the model provider.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum AuthMode {
    /// An OpenAI API key the user gave, stored by the server.
    Apikey,
    /// A ChatGPT sign-in whose tokens the server stores and refreshes.
    Chatgpt,
    /// ChatGPT tokens handed over by the host application, kept in memory only; the host
    /// refreshes them (internal use).
    ChatgptAuthTokens,
    /// Credentials passed as request headers to the backend.
    Headers,
    /// A registered agent identity, for programmatic use.
    AgentIdentity,
    /// A personal access token, for programmatic use.
    PersonalAccessToken,
    /// An Amazon Bedrock API key (bearer token) stored by the server.
    BedrockApiKey,
    /// AWS access keys for Amazon Bedrock stored by the server.
    BedrockAccessKeys,
}

/// Params of `account/login/cancel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct CancelLoginAccountParams {
    /// The `loginId` returned by `account/login/start` for the sign-in to abandon.
    pub login_id: String,
}

/// Result of `account/login/cancel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct CancelLoginAccountResponse {
    /// Whether a pending sign-in was found and stopped.
    pub status: CancelLoginAccountStatus,
}

/// Outcome of `account/login/cancel`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum CancelLoginAccountStatus {
    /// The sign-in was pending and has been stopped.
    Canceled,
    /// No pending sign-in has that id (it already finished, or never existed).
    NotFound,
}

/// The account's credit balance, as part of a rate-limit snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct CreditsSnapshot {
    /// Whether any credits are left to spend.
    pub has_credits: bool,
    /// Whether the account has no credit cap.
    pub unlimited: bool,
    /// Remaining balance as a decimal string; `null` when not reported.
    #[serde(default)]
    pub balance: Option<String>,
}

/// Security-research access program a model can be used under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum CyberAccessProgram {
    /// The ordinary treatment, without a special program.
    Standard,
    /// The Daybreak "blue" program (defensive security work).
    DaybreakBlue,
    /// The Daybreak "red" program (offensive security work).
    DaybreakRed,
}

/// The `forced_chatgpt_workspace_id` setting: one workspace id, or several.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(untagged)]
#[non_exhaustive]
pub enum ForcedChatgptWorkspaceIds {
    /// A single workspace id, written as a plain string.
    Text(String),
    /// Any of several workspace ids, written as an array.
    List(Vec<String>),
}

/// The `forced_login_method` setting: the only way users may sign in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum ForcedLoginMethod {
    /// Only ChatGPT sign-in is allowed.
    Chatgpt,
    /// Only an OpenAI API key is allowed.
    Api,
}

/// Params of `account/read`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct GetAccountParams {
    /// `true` refreshes the stored ChatGPT tokens before answering (ignored when the host
    /// application supplies the tokens); absent means `false`.
    #[serde(default)]
    #[schemars(with = "bool")]
    #[ts(optional)]
    pub refresh_token: Option<bool>,
}

/// Result of `account/rateLimits/read`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct GetAccountRateLimitsResponse {
    /// The account the figures belong to; `null` when the backend does not say.
    #[serde(default)]
    pub account_id: Option<String>,
    /// The main usage bucket, in the shape older clients expect.
    pub rate_limits: RateLimitSnapshot,
    /// Every metered bucket, keyed by its `limitId` (e.g. `codex`); `null` when not reported.
    #[serde(default)]
    pub rate_limits_by_limit_id: Option<BTreeMap<String, RateLimitSnapshot>>,
    /// Whether the account may currently use its included (non-credit) usage, as decided by
    /// the backend; `null` when unknown, in which case clients must not guess it from the
    /// percentages.
    #[serde(default)]
    pub ordinary_usage_allowed: Option<bool>,
    /// The account's rate-limit reset credits; `null` when not reported.
    #[serde(default)]
    pub rate_limit_reset_credits: Option<RateLimitResetCreditsSummary>,
    /// Promotional banner to show next to the usage figures, passed through as the backend
    /// sent it (its keys are snake_case); absent when there is none to change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "serde_json::Value")]
    #[ts(optional)]
    pub rate_limit_upsell: Option<serde_json::Value>,
}

/// Result of `account/read`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct GetAccountResponse {
    /// The signed-in account; `null` when not signed in.
    #[serde(default)]
    pub account: Option<Account>,
    /// ChatGPT user id of the signed-in user; `null` when not signed in with ChatGPT or not
    /// known.
    #[serde(default)]
    pub user_id: Option<String>,
    /// Whether the configured model provider needs an OpenAI sign-in (API key or ChatGPT);
    /// `false` for providers such as local models.
    pub requires_openai_auth: bool,
}

/// What a wellbeing-helpline notice on an agent message refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum HelplineSubject {
    /// The notice is about the agent's answer.
    Answer,
    /// The notice is about the user's prompt.
    Prompt,
}

/// Params of `account/login/start`: how to sign in; `type` tells the method.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[non_exhaustive]
pub enum LoginAccountParams {
    /// Sign in with an OpenAI API key; completes immediately.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    ApiKey {
        /// The API key (`sk-…`); the server stores it.
        api_key: String,
    },
    /// Sign in with ChatGPT in a browser; the answer carries the URL to open.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Chatgpt {
        /// Which product's sign-in pages to show; absent or `null` uses the server default.
        #[serde(default)]
        #[ts(optional = nullable)]
        app_brand: Option<LoginAppBrand>,
        /// `true` uses the shorter Codex sign-in flow; absent means `false`.
        #[serde(default)]
        #[schemars(with = "bool")]
        #[ts(optional)]
        codex_streamlined_login: Option<bool>,
        /// `true` ends the browser flow on a hosted success page instead of the local one;
        /// absent means `false`.
        #[serde(default)]
        #[schemars(with = "bool")]
        #[ts(optional)]
        use_hosted_login_success_page: Option<bool>,
    },
    /// Sign in with ChatGPT by entering a one-time code on another device.
    ChatgptDeviceCode,
    /// Hand over ChatGPT tokens the host application obtained itself; the server keeps them in
    /// memory and never refreshes them (internal use).
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    ChatgptAuthTokens {
        /// The ChatGPT workspace (account) the tokens belong to.
        chatgpt_account_id: String,
        /// The access token (a JWT) used for backend calls.
        access_token: String,
        /// The plan (a `PlanType` value); absent or `null` lets the server read it from the
        /// token, falling back to `unknown`.
        #[serde(default)]
        #[ts(optional = nullable)]
        chatgpt_plan_type: Option<String>,
    },
    /// Use Amazon Bedrock with an API key (experimental).
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    AmazonBedrock {
        /// The Bedrock API key; the server stores it.
        api_key: String,
        /// AWS region to call, e.g. `us-east-1`.
        region: String,
    },
    /// Use Amazon Bedrock with AWS access keys (experimental).
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    AmazonBedrockAccessKeys {
        /// AWS region to call, e.g. `us-east-1`.
        region: String,
        /// The AWS access key id.
        access_key_id: String,
        /// The AWS secret access key.
        secret_access_key: String,
        /// Session token, for temporary credentials; absent or `null` for long-lived keys.
        #[serde(default)]
        #[ts(optional = nullable)]
        session_token: Option<String>,
    },
}

#[bon::bon]
impl LoginAccountParams {
    /// Starts building [`LoginAccountParams::ApiKey`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn api_key(api_key: String) -> Self {
        Self::ApiKey { api_key }
    }

    /// Starts building [`LoginAccountParams::Chatgpt`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn chatgpt(
        app_brand: Option<LoginAppBrand>,
        codex_streamlined_login: Option<bool>,
        use_hosted_login_success_page: Option<bool>,
    ) -> Self {
        Self::Chatgpt {
            app_brand,
            codex_streamlined_login,
            use_hosted_login_success_page,
        }
    }

    /// Starts building [`LoginAccountParams::ChatgptAuthTokens`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn chatgpt_auth_tokens(
        chatgpt_account_id: String,
        access_token: String,
        chatgpt_plan_type: Option<String>,
    ) -> Self {
        Self::ChatgptAuthTokens {
            chatgpt_account_id,
            access_token,
            chatgpt_plan_type,
        }
    }

    /// Starts building [`LoginAccountParams::AmazonBedrock`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn amazon_bedrock(api_key: String, region: String) -> Self {
        Self::AmazonBedrock { api_key, region }
    }

    /// Starts building [`LoginAccountParams::AmazonBedrockAccessKeys`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn amazon_bedrock_access_keys(
        region: String,
        access_key_id: String,
        secret_access_key: String,
        session_token: Option<String>,
    ) -> Self {
        Self::AmazonBedrockAccessKeys {
            region,
            access_key_id,
            secret_access_key,
            session_token,
        }
    }
}

/// Result of `account/login/start`; `type` matches the params. Browser and device-code
/// sign-ins finish later with `account/login/completed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[non_exhaustive]
pub enum LoginAccountResponse {
    /// The API key was accepted.
    ApiKey,
    /// A browser sign-in is waiting for the user.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Chatgpt {
        /// Id of the pending sign-in, for `account/login/cancel` and `account/login/completed`.
        login_id: String,
        /// URL to open in the user's browser; the server listens for the redirect locally.
        auth_url: String,
    },
    /// A device-code sign-in is waiting for the user.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    ChatgptDeviceCode {
        /// Id of the pending sign-in, for `account/login/cancel` and `account/login/completed`.
        login_id: String,
        /// Page the user opens, on any device, to enter the code.
        verification_url: String,
        /// The one-time code to show the user (e.g. `ABCD-1234`).
        user_code: String,
    },
    /// The handed-over tokens were accepted.
    ChatgptAuthTokens,
    /// The Bedrock credentials were accepted.
    AmazonBedrock,
}

#[bon::bon]
impl LoginAccountResponse {
    /// Starts building [`LoginAccountResponse::Chatgpt`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn chatgpt(login_id: String, auth_url: String) -> Self {
        Self::Chatgpt { login_id, auth_url }
    }

    /// Starts building [`LoginAccountResponse::ChatgptDeviceCode`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn chatgpt_device_code(
        login_id: String,
        verification_url: String,
        user_code: String,
    ) -> Self {
        Self::ChatgptDeviceCode {
            login_id,
            verification_url,
            user_code,
        }
    }
}

/// Whose branding the ChatGPT sign-in pages show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum LoginAppBrand {
    /// Codex branding.
    Codex,
    /// ChatGPT branding.
    Chatgpt,
}

/// Result of `account/logout`: an empty object. `account/updated` follows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct LogoutAccountResponse {}

/// The ChatGPT plan of an account; unrecognised plans arrive as `unknown`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum PlanType {
    /// ChatGPT Free.
    Free,
    /// ChatGPT Go.
    Go,
    /// ChatGPT Plus.
    Plus,
    /// ChatGPT Pro.
    Pro,
    /// ChatGPT Pro Lite.
    Prolite,
    /// ChatGPT Pro Max.
    Promax,
    /// ChatGPT Team.
    Team,
    /// Self-serve Business workspace on the Pro Lite tier.
    SelfServeBusinessProlite,
    /// Self-serve Business workspace billed by usage.
    SelfServeBusinessUsageBased,
    /// ChatGPT Business.
    Business,
    /// An Enterprise plan variant reported as `ent26`.
    Ent26,
    /// Enterprise, consumption-billed variant for automated use.
    EnterpriseCbpAutomation,
    /// Enterprise, consumption-billed variant billed by usage.
    EnterpriseCbpUsageBased,
    /// ChatGPT Enterprise.
    Enterprise,
    /// ChatGPT Edu.
    Edu,
    /// ChatGPT Edu Plus.
    EduPlus,
    /// ChatGPT Edu Pro.
    EduPro,
    /// The science plan.
    Sci,
    /// The science plan, Plus tier.
    SciPlus,
    /// A plan this version of the protocol does not name, or none could be determined.
    Unknown,
}

/// Which limit stopped the account, when one did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RateLimitReachedType {
    /// The user's own rate-limit window is used up.
    RateLimitReached,
    /// The workspace has run out of credits; the user is the workspace owner.
    WorkspaceOwnerCreditsDepleted,
    /// The workspace has run out of credits; the user is a member (ask the owner).
    WorkspaceMemberCreditsDepleted,
    /// The workspace's usage limit is reached; the user is the workspace owner.
    WorkspaceOwnerUsageLimitReached,
    /// The workspace's usage limit is reached; the user is a member (ask the owner).
    WorkspaceMemberUsageLimitReached,
}

/// A credit that, once redeemed, resets the account's rate limits early.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct RateLimitResetCredit {
    /// The backend's opaque id of the credit.
    pub id: String,
    /// Where the credit is in its life cycle.
    pub status: RateLimitResetCreditStatus,
    /// Which limits redeeming the credit resets.
    pub reset_type: RateLimitResetType,
    /// Display title; `null` when the backend gives none.
    #[serde(default)]
    pub title: Option<String>,
    /// Display description; `null` when the backend gives none.
    #[serde(default)]
    pub description: Option<String>,
    /// When the credit was granted, in Unix seconds.
    pub granted_at: i64,
    /// When the credit lapses, in Unix seconds; `null` if it never does.
    #[serde(default)]
    pub expires_at: Option<i64>,
}

/// Life-cycle state of a rate-limit reset credit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum RateLimitResetCreditStatus {
    /// Can be redeemed.
    Available,
    /// Redemption has started but not finished.
    Redeeming,
    /// Already used.
    Redeemed,
    /// A state this version of the protocol does not name.
    Unknown,
}

/// The account's rate-limit reset credits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct RateLimitResetCreditsSummary {
    /// How many credits can be redeemed now.
    pub available_count: i64,
    /// The available credits in detail, possibly fewer than `availableCount` (the backend may
    /// cap the list); `null` when details were not fetched, `[]` when fetched and none came
    /// back.
    #[serde(default)]
    pub credits: Option<Vec<RateLimitResetCredit>>,
}

/// Which limits a reset credit resets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum RateLimitResetType {
    /// The Codex usage windows.
    CodexRateLimits,
    /// A kind this version of the protocol does not name.
    Unknown,
}

/// Usage of one metered bucket: its windows, credits and spending caps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct RateLimitSnapshot {
    /// Id of the bucket, e.g. `codex`; `null` when not reported.
    #[serde(default)]
    pub limit_id: Option<String>,
    /// Display name of the bucket; `null` when not reported.
    #[serde(default)]
    pub limit_name: Option<String>,
    /// The account's ChatGPT plan; `null` when not reported.
    #[serde(default)]
    pub plan_type: Option<PlanType>,
    /// The shorter usage window (typically a few hours); `null` when not reported.
    #[serde(default)]
    pub primary: Option<RateLimitWindow>,
    /// The longer usage window (typically a week); `null` when not reported.
    #[serde(default)]
    pub secondary: Option<RateLimitWindow>,
    /// The credit balance; `null` when not reported.
    #[serde(default)]
    pub credits: Option<CreditsSnapshot>,
    /// The user's individual spending cap in the workspace; `null` when there is none or it is
    /// not reported.
    #[serde(default)]
    pub individual_limit: Option<SpendControlLimitSnapshot>,
    /// Whether a spending cap has been hit; `null` means unknown, not "no longer hit".
    #[serde(default)]
    pub spend_control_reached: Option<bool>,
    /// Which limit is stopping the account; `null` when none is.
    #[serde(default)]
    pub rate_limit_reached_type: Option<RateLimitReachedType>,
    /// Slug of the regular model whose name and reasoning options describe this bucket, when
    /// the bucket is an alias of one; otherwise `null`.
    #[serde(default)]
    pub normal_model_slug: Option<String>,
}

/// One usage window of a rate limit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct RateLimitWindow {
    /// Share of the window's allowance used so far, in percent (0–100).
    pub used_percent: i32,
    /// Length of the window in minutes (e.g. `300`); `null` when not reported.
    #[serde(default)]
    pub window_duration_mins: Option<i64>,
    /// When the window starts over, in Unix seconds; `null` when not reported.
    #[serde(default)]
    pub resets_at: Option<i64>,
}

/// A spending cap an administrator set for the user, and how much of it is used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct SpendControlLimitSnapshot {
    /// Amount spent in the current period, as a decimal string.
    pub used: String,
    /// The cap for the period, as a decimal string.
    pub limit: String,
    /// Share of the cap still available, in percent (0–100).
    pub remaining_percent: i32,
    /// When the period starts over, in Unix seconds.
    pub resets_at: i64,
}

/// Whether the client should run its trusted-contact safety check for a shown agent message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum TrustedContacts {
    /// Run the check.
    Check,
    /// Do not run it.
    Skip,
}

#[cfg(feature = "schema")]
/// Schema transform: the `chatgpt` account's `email` is always present, possibly `null`.
fn chatgpt_account_required_nullable(schema: &mut schemars::Schema) {
    serde_util::require_nullable(schema, &["email"]);
}

/// Params of `account/rateLimits/read`: what the client can handle; the whole member may be
/// left out.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct GetAccountRateLimitsParams {
    /// `true` skips looking up reset-credit details (cheap background polls); the count is
    /// still returned. Absent means `false`.
    #[serde(default)]
    #[schemars(with = "bool")]
    #[ts(optional)]
    pub exclude_reset_credit_details: Option<bool>,
    /// `true` says the client can fall back to the reserve pool when ordinary usage is
    /// blocked. Absent means `false`.
    #[serde(default)]
    #[schemars(with = "bool")]
    #[ts(optional)]
    pub supports_luna_reserve: Option<bool>,
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// Deserializes `value` into `T`, serializes it back and asserts nothing changed.
    fn round_trip<T: Serialize + serde::de::DeserializeOwned>(value: &Value) -> T {
        let parsed: T = serde_json::from_value(value.clone()).expect("deserialize");
        let back = serde_json::to_value(&parsed).expect("serialize");
        assert_eq!(&back, value);
        parsed
    }

    #[test]
    fn get_account_response_round_trips() {
        // Signed out, as codex 0.171.0 answers `account/read` before any sign-in.
        let signed_out = json!({"account": null, "userId": null, "requiresOpenaiAuth": true});
        let response: GetAccountResponse = round_trip(&signed_out);
        assert_eq!(response.account, None);
        assert!(response.requires_openai_auth);

        let chatgpt = json!({
            "account": {
                "type": "chatgpt",
                "email": "user@example.com",
                "planType": "pro",
                "workspaceName": null
            },
            "userId": "user-abc123",
            "requiresOpenaiAuth": true
        });
        let response: GetAccountResponse = round_trip(&chatgpt);
        assert_eq!(
            response.account,
            Some(Account::Chatgpt {
                email: Some("user@example.com".into()),
                plan_type: PlanType::Pro,
                workspace_name: None,
            })
        );

        let api_key =
            json!({"account": {"type": "apiKey"}, "userId": null, "requiresOpenaiAuth": true});
        let response: GetAccountResponse = round_trip(&api_key);
        assert_eq!(response.account, Some(Account::ApiKey));
    }

    #[test]
    fn chatgpt_account_keeps_a_null_email() {
        let value = json!({"type": "chatgpt", "email": null, "planType": "self_serve_business_prolite", "workspaceName": "Acme"});
        let account: Account = round_trip(&value);
        let Account::Chatgpt { plan_type, .. } = account else {
            panic!("expected a chatgpt account");
        };
        assert_eq!(plan_type, PlanType::SelfServeBusinessProlite);
    }

    #[test]
    fn rate_limit_snapshot_from_the_transcript_round_trips() {
        // The `rateLimits` of an `account/rateLimits/updated` notification of codex 0.171.0.
        let value = json!({
            "limitId": "codex",
            "limitName": null,
            "normalModelSlug": null,
            "primary": null,
            "secondary": null,
            "credits": null,
            "individualLimit": null,
            "spendControlReached": null,
            "planType": null,
            "rateLimitReachedType": null
        });
        let snapshot: RateLimitSnapshot = round_trip(&value);
        assert_eq!(snapshot.limit_id.as_deref(), Some("codex"));
        assert_eq!(snapshot.primary, None);
    }

    #[test]
    fn rate_limits_response_round_trips_and_leaves_out_an_absent_upsell() {
        let window = json!({"usedPercent": 25, "windowDurationMins": 300, "resetsAt": 1730947200});
        let snapshot = json!({
            "limitId": "codex",
            "limitName": null,
            "normalModelSlug": null,
            "primary": window,
            "secondary": {"usedPercent": 4, "windowDurationMins": 10080, "resetsAt": null},
            "credits": {"hasCredits": true, "unlimited": false, "balance": "12.50"},
            "individualLimit": {"used": "30", "limit": "100", "remainingPercent": 70, "resetsAt": 1731000000},
            "spendControlReached": false,
            "planType": "plus",
            "rateLimitReachedType": null
        });
        let value = json!({
            "accountId": null,
            "rateLimits": snapshot,
            "rateLimitsByLimitId": {"codex": snapshot},
            "ordinaryUsageAllowed": true,
            "rateLimitResetCredits": {
                "availableCount": 1,
                "credits": [{
                    "id": "rlc_1",
                    "status": "available",
                    "resetType": "codexRateLimits",
                    "title": null,
                    "description": null,
                    "grantedAt": 1730000000,
                    "expiresAt": null
                }]
            }
        });
        let response: GetAccountRateLimitsResponse = round_trip(&value);
        let primary = response.rate_limits.primary.as_ref().expect("primary");
        assert_eq!(primary.used_percent, 25);
        assert_eq!(primary.window_duration_mins, Some(300));
        assert_eq!(response.rate_limit_upsell, None);
        let back = serde_json::to_value(&response).expect("serialize");
        assert!(
            !back
                .as_object()
                .expect("an object")
                .contains_key("rateLimitUpsell")
        );
        let credits = response.rate_limit_reset_credits.expect("reset credits");
        assert_eq!(
            credits.credits.expect("details")[0].status,
            RateLimitResetCreditStatus::Available
        );
    }

    #[test]
    fn rate_limits_params_leave_out_unset_members() {
        let params: GetAccountRateLimitsParams = round_trip(&json!({}));
        assert_eq!(params, GetAccountRateLimitsParams::default());
        let polling = json!({"excludeResetCreditDetails": true});
        let params: GetAccountRateLimitsParams = round_trip(&polling);
        assert_eq!(params.supports_luna_reserve, None);
    }

    #[test]
    fn login_params_round_trip_without_unset_options() {
        let api_key = json!({"type": "apiKey", "apiKey": "sk-test"});
        let _: LoginAccountParams = round_trip(&api_key);

        // A bare browser sign-in: none of the optional members are written back.
        let browser = json!({"type": "chatgpt"});
        let params: LoginAccountParams = round_trip(&browser);
        assert_eq!(
            params,
            LoginAccountParams::Chatgpt {
                app_brand: None,
                codex_streamlined_login: None,
                use_hosted_login_success_page: None,
            }
        );

        let branded =
            json!({"type": "chatgpt", "appBrand": "codex", "codexStreamlinedLogin": true});
        let _: LoginAccountParams = round_trip(&branded);

        let device_code = json!({"type": "chatgptDeviceCode"});
        let params: LoginAccountParams = round_trip(&device_code);
        assert_eq!(params, LoginAccountParams::ChatgptDeviceCode);

        let keys = json!({
            "type": "amazonBedrockAccessKeys",
            "region": "us-east-1",
            "accessKeyId": "AKIAEXAMPLE",
            "secretAccessKey": "secret"
        });
        let params: LoginAccountParams = round_trip(&keys);
        let LoginAccountParams::AmazonBedrockAccessKeys { session_token, .. } = params else {
            panic!("expected access keys");
        };
        assert_eq!(session_token, None);
    }

    #[test]
    fn login_response_and_completion_round_trip() {
        let device = json!({
            "type": "chatgptDeviceCode",
            "loginId": "6f1c2a7e-0000-4000-8000-000000000001",
            "verificationUrl": "https://auth.openai.com/codex/device",
            "userCode": "ABCD-1234"
        });
        let _: LoginAccountResponse = round_trip(&device);
        let _: LoginAccountResponse = round_trip(&json!({"type": "apiKey"}));

        let completed = json!({
            "loginId": "6f1c2a7e-0000-4000-8000-000000000001",
            "success": false,
            "error": "Login was cancelled",
            "onboardingEntrypoint": null
        });
        let n: AccountLoginCompletedNotification = round_trip(&completed);
        assert!(!n.success);

        let updated = json!({"authMode": "chatgpt", "planType": "plus", "reason": null});
        let n: AccountUpdatedNotification = round_trip(&updated);
        assert_eq!(n.auth_mode, Some(AuthMode::Chatgpt));
    }

    #[test]
    fn forced_workspace_ids_take_a_string_or_a_list() {
        let one: ForcedChatgptWorkspaceIds = round_trip(&json!("ws-1"));
        assert_eq!(one, ForcedChatgptWorkspaceIds::Text("ws-1".into()));
        let several: ForcedChatgptWorkspaceIds = round_trip(&json!(["ws-1", "ws-2"]));
        assert_eq!(
            several,
            ForcedChatgptWorkspaceIds::List(vec!["ws-1".into(), "ws-2".into()])
        );
    }
}

/// Params of `account/bedrock/checkGovCloudRequirements`: none.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct BedrockCheckGovCloudRequirementsParams {}

/// Result of `account/bedrock/checkGovCloudRequirements`: whether the Amazon Bedrock set-up
/// in use signs in to an AWS GovCloud region, and whether that deserves a warning.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct BedrockCheckGovCloudRequirementsResponse {
    /// Whether the Bedrock sign-in in use resolves to a GovCloud region (`false` when no
    /// Bedrock provider is in use).
    pub is_gov_cloud: bool,
    /// Whether a GovCloud region is used without the requirements it calls for.
    pub should_warn: bool,
}
