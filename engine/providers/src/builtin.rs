//! The model providers that exist without a `[model_providers.<id>]` table, as Codex defines
//! them:
//!
//! | id         | wire        | base URL                       | key                                |
//! |------------|-------------|--------------------------------|------------------------------------|
//! | `openai`   | `responses` | `https://api.openai.com/v1`¹   | stored login, else `$OPENAI_API_KEY` |
//! | `ollama`   | `chat`      | `http://localhost:11434/v1`    | none                               |
//! | `oss`      | `chat`      | `http://localhost:11434/v1`    | none (Codex's older id for Ollama) |
//! | `lmstudio` | `chat`      | `http://localhost:1234/v1`     | none                               |
//!
//! ¹ `$OPENAI_BASE_URL` when set, as Codex does. It also sends `OpenAI-Organization` and
//! `OpenAI-Project` from `$OPENAI_ORGANIZATION` and `$OPENAI_PROJECT` when they are set.
//!
//! A `[model_providers.<id>]` table with one of these ids is merged over the built-in entry
//! key by key: `[model_providers.openai] base_url = "http://proxy/v1"` keeps the Responses
//! wire and the OpenAI sign-in. `fixture` stays the default provider (`model_provider`).
//!
//! # The model of a provider nobody chose one for
//!
//! A thread of an HTTP provider whose model nobody chose (no `model` in `config.toml`, on
//! `thread/start` or `turn/start`) never asks for the fixture's model. It asks for the first
//! model the provider's `models` list in `config.toml` names, else the provider's documented
//! default ([`default_model`]: `openai` has [`OPENAI_DEFAULT_MODEL`], the reference's default;
//! the local servers have none, since which models a server holds is up to its user), else
//! the first model the server itself lists (`GET {base_url}/models`, asked at the first call:
//! see `openai::model`).

use toml::{Table, Value};

use super::settings::{FIXTURE, ProviderConfig};

/// The OpenAI provider's id.
pub const OPENAI: &str = "openai";
/// OpenAI's API root.
pub(crate) const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";

/// The model the built-in `openai` provider asks for when nobody chose one: the reference
/// server's default (codex-cli 0.171.0).
pub const OPENAI_DEFAULT_MODEL: &str = "gpt-6.2-sol";

/// The model a thread of provider `id` (whose table is `table`, if it has one) asks for when
/// nobody chose one: the first of the table's `models`, else the provider's documented
/// default; `None` when neither names one (the server's first model is asked for then), and
/// for `fixture` (whose one model is [`FIXTURE`]).
pub fn default_model(id: &str, table: Option<&ProviderConfig>) -> Option<String> {
    if id == FIXTURE {
        return None;
    }
    let listed = table
        .and_then(|t| t.models.first())
        .map(|m| m.id().to_owned())
        .filter(|m| is_named(m));
    listed.or_else(|| (id == OPENAI).then(|| OPENAI_DEFAULT_MODEL.to_owned()))
}

/// Whether `model` names a model an HTTP provider can be asked for: not empty, and not the
/// fixture's model (which stands for "none chosen" there).
pub fn is_named(model: &str) -> bool {
    !model.trim().is_empty() && model != FIXTURE
}

/// The built-in entries, each as the TOML table a user would write.
fn entries() -> Vec<(&'static str, Table)> {
    let openai_base = std::env::var("OPENAI_BASE_URL")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| OPENAI_BASE_URL.to_owned());
    let table = |pairs: &[(&str, Value)]| -> Table {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect()
    };
    let text = |s: &str| Value::String(s.to_owned());
    let local = |name: &str, port: u16| {
        table(&[
            ("name", text(name)),
            ("base_url", text(&format!("http://localhost:{port}/v1"))),
            ("wire_api", text("chat")),
        ])
    };
    vec![
        (
            OPENAI,
            table(&[
                ("name", text("OpenAI")),
                ("base_url", text(&openai_base)),
                ("wire_api", text("responses")),
                ("requires_openai_auth", Value::Boolean(true)),
                (
                    "env_http_headers",
                    Value::Table(table(&[
                        ("OpenAI-Organization", text("OPENAI_ORGANIZATION")),
                        ("OpenAI-Project", text("OPENAI_PROJECT")),
                    ])),
                ),
            ]),
        ),
        ("ollama", local("Ollama", 11434)),
        ("oss", local("gpt-oss (Ollama)", 11434)),
        ("lmstudio", local("LM Studio", 1234)),
    ]
}

/// Adds the built-in entries to `table`'s `model_providers` (creating it): an entry `table`
/// already has for a built-in id is merged over the built-in one, key by key. A
/// `model_providers` that is not a table, or an entry that is not one, is left as it is (and
/// reported as the bad value it is).
pub fn overlay(table: &mut Table) {
    let providers = table
        .entry("model_providers")
        .or_insert_with(|| Value::Table(Table::new()));
    let Some(providers) = providers.as_table_mut() else {
        return;
    };
    for (id, mut builtin) in entries() {
        match providers.get_mut(id) {
            None => {
                providers.insert(id.to_owned(), Value::Table(builtin));
            }
            Some(Value::Table(own)) => {
                builtin.extend(std::mem::take(own));
                *own = builtin;
            }
            Some(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_provider_without_a_chosen_model_has_its_listed_or_documented_default() {
        let listed = ProviderConfig {
            models: vec![crate::settings::ConfiguredModel::Id("qwen".to_owned())],
            ..ProviderConfig::default()
        };
        assert_eq!(
            default_model("local", Some(&listed)).as_deref(),
            Some("qwen")
        );
        assert_eq!(
            default_model(OPENAI, Some(&listed)).as_deref(),
            Some("qwen")
        );
        assert_eq!(
            default_model(OPENAI, None).as_deref(),
            Some(OPENAI_DEFAULT_MODEL)
        );
        assert_eq!(default_model("ollama", None), None);
        assert_eq!(default_model(FIXTURE, Some(&listed)), None);
        assert!(!is_named("fixture") && !is_named(" ") && is_named("llama3"));
    }

    #[test]
    fn builtins_are_added_and_own_tables_merge_over_them() {
        let mut table: Table = toml::from_str(
            "model = \"m\"\n[model_providers.openai]\nbase_url = \"http://proxy/v1\"\n\
             [model_providers.mine]\nbase_url = \"http://h\"\n",
        )
        .expect("toml");
        overlay(&mut table);
        let providers = table["model_providers"].as_table().expect("table");
        let openai = providers["openai"].as_table().expect("openai");
        assert_eq!(openai["base_url"].as_str(), Some("http://proxy/v1"));
        assert_eq!(openai["wire_api"].as_str(), Some("responses"));
        assert_eq!(openai["requires_openai_auth"].as_bool(), Some(true));
        assert_eq!(
            providers["ollama"]["base_url"].as_str(),
            Some("http://localhost:11434/v1")
        );
        assert_eq!(providers["oss"]["wire_api"].as_str(), Some("chat"));
        assert_eq!(
            providers["mine"].as_table().map(Table::len),
            Some(1),
            "other entries are left alone"
        );
        let mut bad: Table = toml::from_str("model_providers = 3\n").expect("toml");
        overlay(&mut bad);
        assert_eq!(bad["model_providers"].as_integer(), Some(3));
        assert_eq!(
            providers["lmstudio"]["base_url"].as_str(),
            Some("http://localhost:1234/v1")
        );
    }
}
