//! The model providers, kept in step with the configuration: when `[model_providers]`,
//! `model_provider`, `model` or `fixture_script` change (a write, or the file edited by hand),
//! the next model call uses providers built from the new settings.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::mpsc;

use super::{ConfigFile, ProviderConfig, Store};
use crate::accounts::Accounts;
use crate::provider::{ModelProvider, ModelRequest, ProviderEvent, from_config};

/// The settings the providers are built from.
#[derive(Debug, Clone, PartialEq)]
struct Basis {
    model_provider: Option<String>,
    model: Option<String>,
    fixture_script: Option<PathBuf>,
    model_providers: BTreeMap<String, ProviderConfig>,
}

impl Basis {
    fn of(config: &ConfigFile) -> Self {
        Self {
            model_provider: config.model_provider.clone(),
            model: config.model.clone(),
            fixture_script: config.fixture_script.clone(),
            model_providers: config.model_providers.clone(),
        }
    }
}

/// Model providers rebuilt whenever the settings they come from change.
#[derive(Debug)]
pub(crate) struct LiveProviders {
    home: PathBuf,
    store: Arc<Store>,
    /// The stored sign-in, for providers that name no `env_key`.
    accounts: Arc<Accounts>,
    current: Mutex<(Basis, Arc<dyn ModelProvider>)>,
}

impl LiveProviders {
    /// The providers of `store`'s configuration (without project layers), using the stored
    /// sign-in of `accounts` where a provider names no `env_key`.
    pub(crate) fn new(home: PathBuf, store: Arc<Store>, accounts: Arc<Accounts>) -> Self {
        let config = store.effective(None).file.clone();
        let providers = from_config(&home, Ok((*config).clone()), &accounts);
        Self {
            home,
            store,
            accounts,
            current: Mutex::new((Basis::of(&config), providers)),
        }
    }

    /// The providers for the configuration as it is now.
    fn current(&self) -> Arc<dyn ModelProvider> {
        let config = self.store.effective(None).file.clone();
        let basis = Basis::of(&config);
        let mut current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        if current.0 != basis {
            tracing::info!("model provider settings changed; providers rebuilt");
            *current = (
                basis,
                from_config(&self.home, Ok((*config).clone()), &self.accounts),
            );
        }
        current.1.clone()
    }
}

impl ModelProvider for LiveProviders {
    fn stream(&self, request: ModelRequest) -> mpsc::Receiver<ProviderEvent> {
        self.current().stream(request)
    }
}
