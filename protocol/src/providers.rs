//! Model providers as a settings screen sees them: `modelProvider/list` shows each provider the
//! configuration knows (built-in or the user's `[model_providers.<id>]`) and which one new
//! threads use, `modelProvider/config/write` adds or edits one of the user's,
//! `modelProvider/default/set` picks the default, and `modelProvider/capabilities/read` says
//! which hosted tools the default provider gets from this server.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::serde_util;

/// Params of `modelProvider/list` (none are defined yet).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ModelProviderListParams {}

/// Result of `modelProvider/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ModelProviderListResponse {
    /// Whether `modelProvider/default/set` can change the default: `false` when a layer above
    /// the user's file (a `-c` flag, a profile) or the administrator's requirements decide it.
    pub can_change_default: bool,
    /// Every provider, the user's first (by id), then the built-in ones.
    pub data: Vec<ModelProviderSummary>,
    /// The provider new threads use when they name none.
    pub default_provider_id: String,
}

/// One model provider.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ModelProviderSummary {
    /// The API root requests go to; `null` when the provider has none (the built-in fixture)
    /// or it holds what should not be shown (a user name, a password, a query).
    #[serde(default)]
    pub base_url: Option<String>,
    /// Whether `modelProvider/config/write` may edit it: a provider of the user's own
    /// `config.toml`, not a built-in one.
    pub can_edit: bool,
    /// Its id: the `model_provider` value that selects it.
    pub id: String,
    /// Its name for people.
    pub name: String,
    /// What kind of provider it is, with the settings of that kind.
    pub settings: ProviderSettings,
}

/// A provider's kind and the settings a client may show for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[non_exhaustive]
pub enum ProviderSettings {
    /// OpenAI itself (the built-in `openai` provider).
    Openai,
    /// Any other server this one sends model requests to.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    CustomGateway {
        /// How requests to it are authenticated.
        auth: GatewayAuth,
    },
    /// Amazon Bedrock.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Bedrock {
        /// The AWS profile used; `null` for the default chain.
        #[serde(default)]
        profile: Option<String>,
        /// The AWS region; `null` for the profile's.
        #[serde(default)]
        region: Option<String>,
    },
    /// Google Cloud.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Gcp {
        /// A credential file on the server's machine (its path only); `null` for the default
        /// credentials.
        #[serde(default)]
        credential_file: Option<String>,
        /// The Google Cloud location; `null` for the default.
        #[serde(default)]
        location: Option<String>,
        /// The Google Cloud project; `null` for the default.
        #[serde(default)]
        project_id: Option<String>,
    },
}

impl ProviderSettings {
    /// A custom gateway authenticated as `auth` says.
    pub fn custom_gateway(auth: GatewayAuth) -> Self {
        Self::CustomGateway { auth }
    }

    /// Amazon Bedrock with this profile and region (`None` for the defaults).
    pub fn bedrock(profile: Option<String>, region: Option<String>) -> Self {
        Self::Bedrock { profile, region }
    }

    /// Google Cloud with this credential file, location and project (`None` for the defaults).
    pub fn gcp(
        credential_file: Option<String>,
        location: Option<String>,
        project_id: Option<String>,
    ) -> Self {
        Self::Gcp {
            credential_file,
            location,
            project_id,
        }
    }
}

/// How requests to a custom gateway are authenticated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "mode", rename_all = "camelCase")]
#[non_exhaustive]
pub enum GatewayAuth {
    /// No key is sent.
    None,
    /// The key is read from an environment variable of the server.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    EnvironmentVariable {
        /// The variable's name.
        env_key: String,
    },
    /// The key comes from somewhere the form does not edit (the stored sign-in, say); edits
    /// keep it.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    ExternallyConfigured {
        /// The variable named as well, if any.
        #[serde(default)]
        env_key: Option<String>,
    },
}

impl GatewayAuth {
    /// The key is read from environment variable `env_key`.
    pub fn environment_variable(env_key: impl Into<String>) -> Self {
        Self::EnvironmentVariable {
            env_key: env_key.into(),
        }
    }

    /// The key comes from elsewhere; `env_key` names a variable as well, if any.
    pub fn externally_configured(env_key: Option<String>) -> Self {
        Self::ExternallyConfigured { env_key }
    }
}

/// Params of `modelProvider/config/write`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ModelProviderConfigWriteParams {
    /// What to change, and of which provider.
    pub settings: ProviderSettingsPatch,
}

/// A change to one provider's settings: members left out keep their value, `null` clears a
/// member that may be empty.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub enum ProviderSettingsPatch {
    /// A custom provider of the user's `config.toml`: a new one, or an edit of one.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    CustomGateway {
        /// The API root; required for a new provider, and cannot be cleared.
        #[serde(default, deserialize_with = "serde_util::present_or_null")]
        #[schemars(with = "Option<String>")]
        #[ts(as = "Option<String>", optional)]
        base_url: Option<Option<String>>,
        /// The environment variable holding the key; `null` stops sending one.
        #[serde(default, deserialize_with = "serde_util::present_or_null")]
        #[schemars(with = "Option<String>")]
        #[ts(as = "Option<String>", optional)]
        env_key: Option<Option<String>>,
        /// The name for people; required for a new provider.
        #[serde(default)]
        #[schemars(with = "String")]
        #[ts(as = "Option<String>", optional)]
        name: Option<String>,
        /// The provider to edit; absent or `null` adds a new one with an id made from `name`.
        #[serde(default)]
        #[ts(optional = nullable)]
        provider_id: Option<String>,
    },
    /// The AWS settings of a built-in Bedrock provider.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Bedrock {
        /// The AWS profile; `null` clears it.
        #[serde(default, deserialize_with = "serde_util::present_or_null")]
        #[schemars(with = "Option<String>")]
        #[ts(as = "Option<String>", optional)]
        profile: Option<Option<String>>,
        /// Which Bedrock provider.
        provider_id: BedrockProviderId,
        /// The AWS region; `null` clears it.
        #[serde(default, deserialize_with = "serde_util::present_or_null")]
        #[schemars(with = "Option<String>")]
        #[ts(as = "Option<String>", optional)]
        region: Option<Option<String>>,
    },
    /// The Google Cloud settings of the built-in Google Cloud provider.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Gcp {
        /// A credential file on the server's machine; `null` clears it.
        #[serde(default, deserialize_with = "serde_util::present_or_null")]
        #[schemars(with = "Option<String>")]
        #[ts(as = "Option<String>", optional)]
        credential_file: Option<Option<String>>,
        /// The Google Cloud location; `null` clears it.
        #[serde(default, deserialize_with = "serde_util::present_or_null")]
        #[schemars(with = "Option<String>")]
        #[ts(as = "Option<String>", optional)]
        location: Option<Option<String>>,
        /// The Google Cloud project; `null` clears it.
        #[serde(default, deserialize_with = "serde_util::present_or_null")]
        #[schemars(with = "Option<String>")]
        #[ts(as = "Option<String>", optional)]
        project_id: Option<Option<String>>,
        /// Which Google Cloud provider.
        provider_id: GcpProviderId,
    },
}

impl ProviderSettingsPatch {
    /// A change to a custom provider: `provider_id` `None` adds one; each other member `None`
    /// keeps its value, `Some(None)` clears it.
    pub fn custom_gateway(
        provider_id: Option<String>,
        name: Option<String>,
        base_url: Option<Option<String>>,
        env_key: Option<Option<String>>,
    ) -> Self {
        Self::CustomGateway {
            base_url,
            env_key,
            name,
            provider_id,
        }
    }

    /// A change to a Bedrock provider's AWS settings: `None` keeps a value, `Some(None)`
    /// clears it.
    pub fn bedrock(
        provider_id: BedrockProviderId,
        profile: Option<Option<String>>,
        region: Option<Option<String>>,
    ) -> Self {
        Self::Bedrock {
            profile,
            provider_id,
            region,
        }
    }

    /// A change to a Google Cloud provider's settings: `None` keeps a value, `Some(None)`
    /// clears it.
    pub fn gcp(
        provider_id: GcpProviderId,
        credential_file: Option<Option<String>>,
        location: Option<Option<String>>,
        project_id: Option<Option<String>>,
    ) -> Self {
        Self::Gcp {
            credential_file,
            location,
            project_id,
            provider_id,
        }
    }
}

/// The built-in Amazon Bedrock providers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[non_exhaustive]
pub enum BedrockProviderId {
    /// Bedrock's OpenAI-compatible endpoint.
    #[serde(rename = "amazon-bedrock")]
    AmazonBedrock,
    /// Bedrock's runtime endpoint.
    #[serde(rename = "amazon-bedrock-runtime")]
    AmazonBedrockRuntime,
}

/// The built-in Google Cloud providers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[non_exhaustive]
pub enum GcpProviderId {
    /// Google Cloud's Vertex AI.
    #[serde(rename = "gcp")]
    Gcp,
}

/// Result of `modelProvider/config/write`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ModelProviderConfigWriteResponse {
    /// The provider as it now is.
    pub provider: ModelProviderSummary,
}

/// Params of `modelProvider/default/set`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ModelProviderDefaultSetParams {
    /// A configured provider, to be used by new threads that name none (written as
    /// `model_provider` in the user's `config.toml`).
    pub provider_id: String,
}

/// Params of `modelProvider/capabilities/read` (none are defined yet).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ModelProviderCapabilitiesReadParams {}

/// Result of `modelProvider/capabilities/read`: the hosted tools turns on the default provider
/// can use here.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ModelProviderCapabilitiesReadResponse {
    /// Whether the model can be given an image generation tool.
    pub image_generation: bool,
    /// Whether the model can be given a web search tool.
    pub web_search: bool,
}
