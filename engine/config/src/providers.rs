//! The model providers, kept in step with the configuration: when the provider tables, the
//! default provider or model, the reasoning summary, the web search endpoint or
//! `fixture_script` change (a write, or the file edited by hand), the next model call uses
//! providers built from the new settings.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use agentwire_providers::{
    Credentials, Defaults, ModelProvider, ModelRequest, ProviderEvent, ProviderTables, build,
};
use agentwire_support::lock;
use tokio::sync::mpsc;

use super::{ConfigFile, Store};

/// What the providers of `config` are built from; `fixture_script` is resolved against
/// `home`.
fn tables(home: &Path, config: &ConfigFile) -> ProviderTables {
    ProviderTables {
        default_provider: config.model_provider.clone(),
        fixture_script: config.fixture_script.as_ref().map(|path| home.join(path)),
        providers: config.model_providers.clone(),
        defaults: Defaults {
            model: config.model.clone(),
            summary: config.model_reasoning_summary.clone(),
            web_search: config.tools.web_search_endpoint.is_some(),
        },
    }
}

/// Model providers rebuilt whenever the settings they come from change.
#[derive(Debug)]
pub struct LiveProviders {
    home: PathBuf,
    store: Arc<Store>,
    /// The stored sign-in, for providers that name no `env_key`.
    credentials: Arc<dyn Credentials>,
    current: Mutex<(ProviderTables, Arc<dyn ModelProvider>)>,
}

impl LiveProviders {
    /// The providers of `store`'s configuration (without project layers), using the stored
    /// sign-in of `credentials` where a provider names no `env_key`.
    pub fn new(home: PathBuf, store: Arc<Store>, credentials: Arc<dyn Credentials>) -> Self {
        let tables = tables(&home, &store.effective(None).file);
        let providers = build(&tables, &credentials);
        Self {
            home,
            store,
            credentials,
            current: Mutex::new((tables, providers)),
        }
    }

    /// The providers for the configuration as it is now.
    fn current(&self) -> Arc<dyn ModelProvider> {
        let tables = tables(&self.home, &self.store.effective(None).file);
        let mut current = lock(&self.current);
        if current.0 != tables {
            tracing::info!("model provider settings changed; providers rebuilt");
            let providers = build(&tables, &self.credentials);
            *current = (tables, providers);
        }
        current.1.clone()
    }
}

impl ModelProvider for LiveProviders {
    fn stream(&self, request: ModelRequest) -> mpsc::Receiver<ProviderEvent> {
        self.current().stream(request)
    }
}
