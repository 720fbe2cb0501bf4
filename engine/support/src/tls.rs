//! TLS set-up, in one place for every HTTPS client of the engine (model providers, MCP
//! servers and their OAuth endpoints, web search, the model catalog): the HTTP client is built
//! without a crypto provider, so the process installs `ring` once before the first connection.

use std::sync::Once;

/// Makes `ring` the process's TLS crypto provider (the HTTP client is built without one).
pub fn install_crypto_provider() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        // Fails only when a provider is installed already, which is as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}
