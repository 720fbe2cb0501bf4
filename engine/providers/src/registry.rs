//! The model providers by id, built from the configuration's provider tables: a call goes to
//! the one it names, or to the configured default.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agentwire_protocol::CodexErrorInfo;
use tokio::sync::mpsc;

use crate::call::{ModelProvider, ModelRequest, ProviderEvent};
use crate::credentials::Credentials;
use crate::fixture::FixtureProvider;
use crate::openai::{Defaults, OpenAiProvider};
use crate::schema;
use crate::script::Script;
use crate::settings::{FIXTURE, ProviderConfig};

/// What the providers are built from: the configuration's `model_provider`, `fixture_script`,
/// `[model_providers]` (the built-in entries overlaid) and the defaults calls fall back on.
/// Equal tables build equal providers, so a caller rebuilds only when they change.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProviderTables {
    /// The provider of calls that name none (`model_provider`; `fixture` when unset or empty).
    pub default_provider: Option<String>,
    /// The fixture provider's script (`fixture_script`, resolved against the home directory);
    /// the built-in script when `None`.
    pub fixture_script: Option<PathBuf>,
    /// Every `[model_providers.<id>]` table, by id.
    pub providers: BTreeMap<String, ProviderConfig>,
    /// What calls fall back on when they do not say.
    pub defaults: Defaults,
}

/// The model providers by id; a call goes to the one its `provider` names (the configured
/// default when it names none).
#[derive(Debug)]
struct Providers {
    /// The provider of calls that name none (`model_provider`, else `fixture`).
    default: String,
    /// Every provider: `fixture` and each `[model_providers.<id>]`.
    by_id: BTreeMap<String, Arc<dyn ModelProvider>>,
}

impl Providers {
    /// The providers `tables` describe. A provider whose table (or fixture script) is
    /// unusable is kept as one whose calls fail with the reason, so the others still work.
    fn new(tables: &ProviderTables, credentials: &Arc<dyn Credentials>) -> Self {
        let mut by_id: BTreeMap<String, Arc<dyn ModelProvider>> = BTreeMap::new();
        let fixture: Arc<dyn ModelProvider> = match fixture_script(tables.fixture_script.as_deref())
        {
            Ok(script) => Arc::new(FixtureProvider::new(script)),
            Err(reason) => unavailable(FIXTURE, reason),
        };
        by_id.insert(FIXTURE.to_owned(), fixture);
        for (id, table) in &tables.providers {
            let provider: Arc<dyn ModelProvider> = match OpenAiProvider::new(
                id,
                table,
                tables.defaults.clone(),
                credentials.clone(),
            ) {
                Ok(provider) => Arc::new(provider),
                Err(reason) => unavailable(id, reason),
            };
            by_id.insert(id.clone(), provider);
        }
        Self {
            default: tables
                .default_provider
                .clone()
                .filter(|p| !p.is_empty())
                .unwrap_or_else(|| FIXTURE.to_owned()),
            by_id,
        }
    }
}

impl ModelProvider for Providers {
    fn stream(&self, request: ModelRequest) -> mpsc::Receiver<ProviderEvent> {
        let id = if request.provider.is_empty() {
            self.default.as_str()
        } else {
            request.provider.as_str()
        };
        if let Some(provider) = self.by_id.get(id) {
            return match request.output.schema.clone() {
                Some(schema) => schema::checked(provider.stream(request), schema),
                None => provider.stream(request),
            };
        }
        let known = self
            .by_id
            .keys()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ");
        Unavailable {
            reason: format!(
                "there is no model provider `{id}`; the configured ones are {known} (add a \
                 [model_providers.{id}] table to config.toml, or pick one of those)."
            ),
        }
        .stream(request)
    }
}

/// A provider whose calls fail because of `reason`; the reason is logged once now.
fn unavailable(id: &str, reason: String) -> Arc<dyn ModelProvider> {
    tracing::error!(
        provider = id,
        reason,
        "model provider unusable; its turns will fail"
    );
    Arc::new(Unavailable { reason })
}

/// The fixture provider's script: the one at `path`, else the built-in one.
fn fixture_script(path: Option<&Path>) -> Result<Script, String> {
    match path {
        None => Ok(Script::built_in()),
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read fixture_script {}: {e}", path.display()))?;
            Script::parse(&text).map_err(|e| format!("fixture_script {}: {e}", path.display()))
        }
    }
}

/// The providers `tables` describe (see [`ProviderTables`]); they take the stored API key
/// from, and report rate limits to, `credentials`. A provider whose table is unusable fails
/// its calls with the reason (logged once, now); the others still work.
pub fn build(
    tables: &ProviderTables,
    credentials: &Arc<dyn Credentials>,
) -> Arc<dyn ModelProvider> {
    Arc::new(Providers::new(tables, credentials))
}

/// A provider that cannot run: every call fails with `reason` (a bad configuration).
#[derive(Debug)]
struct Unavailable {
    reason: String,
}

impl ModelProvider for Unavailable {
    fn stream(&self, _request: ModelRequest) -> mpsc::Receiver<ProviderEvent> {
        let (sender, receiver) = mpsc::channel(1);
        let _ = sender.try_send(ProviderEvent::Error {
            message: format!("The model provider is not available: {}", self.reason),
            details: Some(self.reason.clone()),
            info: Some(CodexErrorInfo::BadRequest),
        });
        receiver
    }
}

#[cfg(test)]
mod tests {
    use agentwire_protocol::{RateLimitSnapshot, UserInput};
    use agentwire_tools::specs;

    use super::*;
    use crate::call::{HistoryEntry, OutputOptions};
    use crate::credentials::StoredKey;

    /// No stored key, and nowhere rate limits go.
    #[derive(Debug)]
    struct NoCredentials;

    impl Credentials for NoCredentials {
        fn stored_key(&self) -> StoredKey<'_> {
            Box::pin(async { Ok(None) })
        }

        fn record_rate_limits(&self, _: &str, _: RateLimitSnapshot) {}
    }

    fn tables(provider: Option<&str>, script: Option<PathBuf>) -> ProviderTables {
        ProviderTables {
            default_provider: provider.map(str::to_owned),
            fixture_script: script,
            ..ProviderTables::default()
        }
    }

    fn request(provider: &str) -> ModelRequest {
        ModelRequest {
            provider: provider.to_owned(),
            model: String::new(),
            effort: None,
            instructions: None,
            history: vec![HistoryEntry::User {
                content: vec![UserInput::text().text("hi".to_owned()).build()],
            }],
            steered: false,
            output: OutputOptions::default(),
            mcp_tools: Vec::new(),
            client_tools: Vec::new(),
            builtins: specs::BuiltinTools::default(),
        }
    }

    /// The first event of a call to `provider` through `providers`.
    async fn first(providers: &dyn ModelProvider, provider: &str) -> ProviderEvent {
        providers
            .stream(request(provider))
            .recv()
            .await
            .expect("an event")
    }

    fn error_text(event: &ProviderEvent) -> String {
        match event {
            ProviderEvent::Error {
                message, details, ..
            } => format!("{message} | {details:?}"),
            other => panic!("not an error: {other:?}"),
        }
    }

    #[tokio::test]
    async fn calls_go_to_the_provider_they_name_or_the_default() {
        let home = std::env::temp_dir().join(format!("agentwire-provider-{}", std::process::id()));
        std::fs::create_dir_all(&home).expect("create home");
        let credentials: Arc<dyn Credentials> = Arc::new(NoCredentials);
        let mut with_table = tables(Some("local"), None);
        with_table.providers.insert(
            "local".to_owned(),
            ProviderConfig {
                base_url: "ftp://nowhere".to_owned(),
                ..ProviderConfig::default()
            },
        );
        let providers = Providers::new(&with_table, &credentials);
        // The default (`local`) is unusable: its calls say why.
        let bad = error_text(&first(&providers, "").await);
        assert!(bad.contains("http:// or https://"), "{bad}");
        // `fixture` still works.
        assert!(!matches!(
            first(&providers, "fixture").await,
            ProviderEvent::Error { .. }
        ));
        // An unknown id names itself and the known ones.
        let unknown = error_text(&first(&providers, "nope").await);
        assert!(unknown.contains("`nope`"), "{unknown}");
        assert!(unknown.contains("`fixture`, `local`"), "{unknown}");

        // Without a configuration, the fixture answers.
        let plain = Providers::new(&tables(None, None), &credentials);
        assert!(!matches!(
            first(&plain, "").await,
            ProviderEvent::Error { .. }
        ));

        // A broken fixture script fails fixture calls with the reason.
        let missing = Providers::new(&tables(None, Some(home.join("nope.json"))), &credentials);
        let text = error_text(&first(&missing, "fixture").await);
        assert!(text.contains("cannot read fixture_script"), "{text}");
        std::fs::write(home.join("bad.json"), "{\"version\": 7}").expect("write");
        let bad = Providers::new(&tables(None, Some(home.join("bad.json"))), &credentials);
        let text = error_text(&first(&bad, "").await);
        assert!(text.contains("version 7"), "{text}");

        let _ = std::fs::remove_dir_all(&home);
    }
}
