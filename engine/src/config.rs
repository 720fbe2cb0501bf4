//! The engine's part of `$AGENTWIRE_HOME/config.toml`.
//!
//! Keys read so far (others are ignored, so the file may hold settings for other parts):
//!
//! ```toml
//! model_provider = "fixture"            # the only provider of this build (and the default)
//! fixture_script = "scripts/demo.json"  # the fixture script; relative to $AGENTWIRE_HOME;
//!                                       # the built-in script when left out
//! ```

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The keys of `config.toml` the engine reads.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub(crate) struct ConfigFile {
    /// Which model provider runs turns.
    #[serde(default)]
    pub model_provider: Option<String>,
    /// The fixture provider's script.
    #[serde(default)]
    pub fixture_script: Option<PathBuf>,
}

impl ConfigFile {
    /// Reads `home/config.toml`: the defaults when it does not exist, the reason when it cannot
    /// be read or parsed.
    pub(crate) fn load(home: &Path) -> Result<Self, String> {
        let path = home.join("config.toml");
        match std::fs::read_to_string(&path) {
            Ok(text) => Self::parse(&text).map_err(|e| format!("{}: {e}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(e) => Err(format!("cannot read {}: {e}", path.display())),
        }
    }

    fn parse(text: &str) -> Result<Self, String> {
        toml::from_str(text).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_provider_keys_and_ignores_others() {
        let config = ConfigFile::parse(
            "model = \"x\"\nmodel_provider = \"fixture\"\nfixture_script = \"s.json\"\n[other]\nk = 1\n",
        )
        .expect("parses");
        assert_eq!(config.model_provider.as_deref(), Some("fixture"));
        assert_eq!(config.fixture_script, Some(PathBuf::from("s.json")));
        assert_eq!(ConfigFile::parse("").expect("empty"), ConfigFile::default());
        assert!(ConfigFile::parse("model_provider = ").is_err());
    }
}
