//! What agentwire knows of a model before it calls it: a built-in table of model families, each
//! named by the prefixes of its model slugs, with its context window, whether it takes tools
//! (and several calls at once), whether it reasons, whether it reads images, and how much of a
//! tool's output it is shown.
//!
//! # Matching
//!
//! A slug is matched in lower case, after dropping any path before its last `/`
//! (`openai/gpt-oss-20b`, `hf.co/Qwen/Qwen3-8B-GGUF`); the family with the **longest** prefix the
//! rest starts with wins, so `qwen3-coder:30b` is `qwen3-coder`, not `qwen3`, and an Ollama tag
//! (`:7b`) or a dated release (`-2025-04-14`) changes nothing.
//!
//! # Where the facts are used
//!
//! - The context window decides when a thread is compacted automatically (90% of it, see
//!   `turns::run::auto_compact`) and is reported as `modelContextWindow` with token usage.
//!   Precedence: `model_context_window` in `config.toml` (Codex's key, for whatever model the
//!   thread uses), then `model_context_window` of the provider's `[model_providers.<id>]`
//!   table, then this table.
//! - `model/list` shows the facts: the description names them, `inputModalities` has `image`
//!   for a family that reads images, and `supportedReasoningEfforts` lists the family's efforts
//!   when `config.toml` lists none. `model_supports_reasoning_summaries = true` marks the
//!   default model as one that reasons.
//!
//! A model no family matches gets [`UNKNOWN`]: tools offered one call at a time, no reasoning,
//! text only, and no known context window, so nothing is compacted automatically until
//! `model_context_window` is set. The first turn that uses such a model (per provider and
//! model, once per server) sends a `configWarning` saying so.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

use agentwire_support::lock;
use agentwire_tools::{BYTES_PER_TOKEN, MAX_OUTPUT_BYTES};

/// How much of a tool's output the model is shown (as Codex's `truncation_policy` says it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Truncation {
    /// At most this many bytes.
    Bytes(usize),
    /// At most about this many tokens.
    Tokens(usize),
}

/// One model family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Family {
    /// The slug prefixes (lower case) that name the family.
    pub prefixes: &'static [&'static str],
    /// The family's name, for people.
    pub name: &'static str,
    /// Tokens of context the model takes (input and output together); `None`: not known.
    pub context_window: Option<i64>,
    /// Whether the model calls tools.
    pub tools: bool,
    /// Whether it may call several tools in one answer.
    pub parallel_tool_calls: bool,
    /// Whether it reasons before answering.
    pub reasoning: bool,
    /// The `reasoning_effort` values it accepts (empty: no effort setting).
    pub efforts: &'static [&'static str],
    /// Whether it reads images.
    pub images: bool,
    /// How much of a tool's output it is shown.
    pub truncation: Truncation,
}

/// The truncation of most families: 10,000 bytes.
const BYTES: Truncation = Truncation::Bytes(10_000);
/// The truncation of models that count their budget in tokens (OpenAI's newer ones).
const TOKENS: Truncation = Truncation::Tokens(10_000);

/// A family with the common facts of open models (tools, one call at a time, no reasoning,
/// text only, byte truncation); the table changes what differs.
const fn open(prefixes: &'static [&'static str], name: &'static str, window: i64) -> Family {
    Family {
        prefixes,
        name,
        context_window: Some(window),
        tools: true,
        parallel_tool_calls: false,
        reasoning: false,
        efforts: &[],
        images: false,
        truncation: BYTES,
    }
}

/// The efforts of OpenAI's reasoning models.
const OPENAI_EFFORTS: &[&str] = &["low", "medium", "high"];

/// The built-in families (see the module docs for how a slug finds its family).
pub(crate) const FAMILIES: &[Family] = &[
    // OpenAI.
    Family {
        efforts: &["minimal", "low", "medium", "high"],
        reasoning: true,
        images: true,
        parallel_tool_calls: true,
        truncation: TOKENS,
        ..open(&["gpt-5"], "GPT-5", 272_000)
    },
    Family {
        efforts: OPENAI_EFFORTS,
        reasoning: true,
        images: true,
        parallel_tool_calls: true,
        truncation: TOKENS,
        ..open(&["gpt-5-codex", "gpt-5.1-codex"], "GPT-5 Codex", 272_000)
    },
    Family {
        images: true,
        parallel_tool_calls: true,
        ..open(&["gpt-4.1"], "GPT-4.1", 1_047_576)
    },
    Family {
        images: true,
        parallel_tool_calls: true,
        ..open(&["gpt-4o", "chatgpt-4o"], "GPT-4o", 128_000)
    },
    Family {
        efforts: OPENAI_EFFORTS,
        reasoning: true,
        images: true,
        parallel_tool_calls: true,
        ..open(&["o3", "o4-mini", "codex-mini"], "OpenAI o-series", 200_000)
    },
    Family {
        efforts: OPENAI_EFFORTS,
        reasoning: true,
        ..open(&["gpt-oss"], "gpt-oss", 131_072)
    },
    // Qwen.
    open(&["qwen2.5-coder", "qwen2.5"], "Qwen2.5", 32_768),
    Family {
        reasoning: true,
        ..open(&["qwen3"], "Qwen3", 40_960)
    },
    open(&["qwen3-coder"], "Qwen3-Coder", 262_144),
    // Meta.
    Family {
        tools: false,
        ..open(&["llama3", "llama-3"], "Llama 3", 8_192)
    },
    open(
        &[
            "llama3.1",
            "llama3.2",
            "llama3.3",
            "llama-3.1",
            "llama-3.2",
            "llama-3.3",
        ],
        "Llama 3.1–3.3",
        131_072,
    ),
    Family {
        tools: false,
        images: true,
        ..open(&["llama3.2-vision"], "Llama 3.2 Vision", 131_072)
    },
    Family {
        images: true,
        ..open(&["llama4", "llama-4"], "Llama 4", 1_048_576)
    },
    // DeepSeek.
    Family {
        reasoning: true,
        ..open(
            &["deepseek-r1", "deepseek-reasoner"],
            "DeepSeek-R1",
            131_072,
        )
    },
    open(
        &["deepseek-v3", "deepseek-chat", "deepseek-coder-v2"],
        "DeepSeek-V3",
        131_072,
    ),
    // Mistral.
    open(&["mistral", "codestral"], "Mistral", 32_768),
    Family {
        images: true,
        ..open(
            &["mistral-small", "mistral-medium"],
            "Mistral Small/Medium",
            131_072,
        )
    },
    open(
        &["mistral-large", "mistral-nemo"],
        "Mistral Large/Nemo",
        131_072,
    ),
    open(&["devstral"], "Devstral", 131_072),
    // Google.
    Family {
        tools: false,
        ..open(&["gemma", "gemma2"], "Gemma", 8_192)
    },
    Family {
        tools: false,
        images: true,
        ..open(&["gemma3"], "Gemma 3", 131_072)
    },
    // Others often run locally.
    Family {
        tools: false,
        ..open(&["phi4", "phi-4"], "Phi-4", 16_384)
    },
    Family {
        reasoning: true,
        ..open(&["glm-4.5", "glm-4.6"], "GLM-4.5", 131_072)
    },
    open(&["kimi-k2"], "Kimi K2", 131_072),
];

/// What a model no family matches is taken to be (see the module docs).
pub(crate) const UNKNOWN: Family = Family {
    prefixes: &[],
    name: "unknown",
    context_window: None,
    tools: true,
    parallel_tool_calls: false,
    reasoning: false,
    efforts: &[],
    images: false,
    truncation: BYTES,
};

/// The family of model `slug`, if the table has one.
pub(crate) fn family(slug: &str) -> Option<&'static Family> {
    let lower = slug.trim().to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    FAMILIES
        .iter()
        .flat_map(|family| family.prefixes.iter().map(move |p| (*p, family)))
        .filter(|(prefix, _)| name.starts_with(prefix))
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|(_, family)| family)
}

/// The facts of model `slug`: its family's, else [`UNKNOWN`].
pub(crate) fn facts(slug: &str) -> &'static Family {
    family(slug).unwrap_or(&UNKNOWN)
}

/// The context window of `model`: `configured` (`model_context_window` in `config.toml`), else
/// `reported` (the provider's table), else the family's.
pub(crate) fn context_window(
    model: &str,
    configured: Option<i64>,
    reported: Option<i64>,
) -> Option<i64> {
    configured
        .filter(|w| *w > 0)
        .or(reported)
        .or_else(|| family(model).and_then(|f| f.context_window))
}

/// How many bytes of a tool's output `model` is shown: `configured` (`tool_output_token_limit`
/// in `config.toml`, tokens) when set, else the family's truncation policy (bytes, or tokens at
/// four bytes each); at most 1 MiB.
pub(crate) fn tool_output_bytes(model: &str, configured: Option<u64>) -> usize {
    let bytes = match configured.filter(|t| *t > 0) {
        Some(tokens) => usize::try_from(tokens)
            .unwrap_or(usize::MAX)
            .saturating_mul(BYTES_PER_TOKEN),
        None => match facts(model).truncation {
            Truncation::Bytes(bytes) => bytes,
            Truncation::Tokens(tokens) => tokens.saturating_mul(BYTES_PER_TOKEN),
        },
    };
    bytes.min(MAX_OUTPUT_BYTES)
}

/// The `configWarning` summary for `model` of provider `provider` the first time it is asked
/// for in this process when no family knows it and no context window is configured for it;
/// `None` otherwise (known, configured, the fixture provider, or already warned about).
pub(crate) fn unknown_model_warning(
    provider: &str,
    model: &str,
    window_configured: bool,
) -> Option<String> {
    static WARNED: OnceLock<Mutex<HashSet<(String, String)>>> = OnceLock::new();
    if provider == agentwire_config::FIXTURE || window_configured || family(model).is_some() {
        return None;
    }
    let first =
        lock(WARNED.get_or_init(Mutex::default)).insert((provider.to_owned(), model.to_owned()));
    first.then(|| {
        format!(
            "agentwire does not know the model `{model}` (provider `{provider}`): it is offered \
             tools one call at a time, without reasoning or images, and its context window is \
             unknown, so threads are not compacted automatically; set `model_context_window` \
             (and `model_auto_compact_token_limit`) in config.toml for it."
        )
    })
}

/// The facts of `family` in one sentence, for `model/list`.
pub(crate) fn describe(family: &Family, context_window: Option<i64>, reasoning: bool) -> String {
    let mut parts = Vec::new();
    parts.push(match context_window {
        Some(window) => format!("{window}-token context"),
        None => "context window unknown".to_owned(),
    });
    parts.push(match (family.tools, family.parallel_tool_calls) {
        (true, true) => "tools (parallel calls)".to_owned(),
        (true, false) => "tools (one call at a time)".to_owned(),
        (false, _) => "no tools".to_owned(),
    });
    parts.push(
        if reasoning {
            "reasoning"
        } else {
            "no reasoning"
        }
        .to_owned(),
    );
    parts.push(if family.images { "images" } else { "text only" }.to_owned());
    parts.push(match family.truncation {
        Truncation::Bytes(n) => format!("tool output cut at {n} bytes"),
        Truncation::Tokens(n) => format!("tool output cut at {n} tokens"),
    });
    let name = if family.prefixes.is_empty() {
        "Unknown model family".to_owned()
    } else {
        format!("{} family", family.name)
    };
    format!("{name}: {}.", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(slug: &str) -> Option<&'static str> {
        family(slug).map(|f| f.name)
    }

    #[test]
    fn the_longest_prefix_wins_after_paths_tags_and_case() {
        assert_eq!(name("qwen3-coder:30b"), Some("Qwen3-Coder"));
        assert_eq!(name("qwen3:8b"), Some("Qwen3"));
        assert_eq!(name("Qwen/Qwen2.5-Coder-32B-Instruct"), Some("Qwen2.5"));
        assert_eq!(name("openai/gpt-oss-20b"), Some("gpt-oss"));
        assert_eq!(name("gpt-5-codex"), Some("GPT-5 Codex"));
        assert_eq!(name("gpt-5-mini"), Some("GPT-5"));
        assert_eq!(name("gpt-4.1-2025-04-14"), Some("GPT-4.1"));
        assert_eq!(name("llama3.2-vision:11b"), Some("Llama 3.2 Vision"));
        assert_eq!(name("llama3.1:8b"), Some("Llama 3.1–3.3"));
        assert_eq!(name("llama3:8b"), Some("Llama 3"));
        assert_eq!(name("deepseek-r1:14b"), Some("DeepSeek-R1"));
        assert_eq!(name("devstral:24b"), Some("Devstral"));
        assert_eq!(name("mistral-small3.1"), Some("Mistral Small/Medium"));
        assert_eq!(name("gemma3:12b"), Some("Gemma 3"));
        assert_eq!(name("gemma2:9b"), Some("Gemma"));
        assert_eq!(name("o4-mini"), Some("OpenAI o-series"));
        assert_eq!(name("mock-model"), None);
        assert_eq!(name(""), None);
        assert_eq!(name("/"), None);
    }

    #[test]
    fn families_say_what_they_support() {
        let oss = facts("gpt-oss:20b");
        assert_eq!(oss.context_window, Some(131_072));
        assert!(oss.tools && !oss.parallel_tool_calls && oss.reasoning && !oss.images);
        let gemma = facts("gemma3");
        assert!(!gemma.tools && gemma.images);
        assert_eq!(facts("gpt-5").truncation, Truncation::Tokens(10_000));
        assert_eq!(facts("unheard-of"), &UNKNOWN);
    }

    #[test]
    fn tool_output_budgets_follow_the_family_unless_configured() {
        assert_eq!(tool_output_bytes("gpt-5", None), 40_000);
        assert_eq!(tool_output_bytes("qwen2.5-coder:7b", None), 10_000);
        assert_eq!(tool_output_bytes("unheard-of", None), 10_000);
        assert_eq!(tool_output_bytes("qwen2.5-coder:7b", Some(500)), 2_000);
        assert_eq!(tool_output_bytes("gpt-5", Some(0)), 40_000);
        assert_eq!(tool_output_bytes("gpt-5", Some(u64::MAX)), 1024 * 1024);
    }

    #[test]
    fn every_prefix_is_lower_case_and_names_one_family() {
        let mut seen = HashSet::new();
        for family in FAMILIES {
            assert!(!family.prefixes.is_empty(), "{}", family.name);
            for prefix in family.prefixes {
                assert_eq!(*prefix, prefix.to_ascii_lowercase());
                assert!(seen.insert(*prefix), "{prefix} twice");
            }
        }
    }

    #[test]
    fn the_configured_window_wins_then_the_provider_then_the_family() {
        assert_eq!(
            context_window("qwen2.5-coder", Some(5000), Some(8000)),
            Some(5000)
        );
        assert_eq!(
            context_window("qwen2.5-coder", None, Some(8000)),
            Some(8000)
        );
        assert_eq!(context_window("qwen2.5-coder", None, None), Some(32_768));
        assert_eq!(context_window("qwen2.5-coder", Some(0), None), Some(32_768));
        assert_eq!(context_window("mock-model", None, None), None);
    }

    #[test]
    fn an_unknown_model_is_warned_about_once() {
        let first = unknown_model_warning("local", "family-test-model", false);
        assert!(first.is_some_and(|w| w.contains("model_context_window")));
        assert_eq!(
            unknown_model_warning("local", "family-test-model", false),
            None
        );
        assert_eq!(unknown_model_warning("local", "qwen3", false), None);
        assert_eq!(unknown_model_warning("fixture", "other-test", false), None);
        assert_eq!(unknown_model_warning("local", "other-test", true), None);
    }
}
