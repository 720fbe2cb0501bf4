//! agentwire-config: the layered `config.toml` settings, with Codex's key names and meanings,
//! the administrator's requirements ([`requirements`]) and the settings new threads get
//! ([`defaults`]). The engine serves `config/*` over it. It is an internal crate of agentwire,
//! whose API follows the engine's needs, not semver.
//!
//! # Layers
//!
//! Lowest precedence first; a table merges key by key into the ones below it, any other value
//! replaces:
//!
//! 1. built-in defaults (not reported as a layer: `config/read` shows `null` for a key no layer
//!    sets, and `thread/start` answers with the value in effect);
//! 2. the user file, `$AGENTWIRE_HOME/config.toml` (`ConfigLayerSource::User`), the only file
//!    `config/value/write` and `config/batchWrite` edit;
//! 3. project layers: for each directory from the repository root (the nearest ancestor of
//!    `cwd` holding `.git`; `cwd` alone when there is none) down to `cwd`, the files
//!    `.codex/config.toml` (so existing Codex projects work) and then `.agentwire/config.toml`
//!    (`ConfigLayerSource::Project`, `dotCodexFolder` naming the folder). A project layer is in
//!    effect only when the user file or a `-c` flag marks the project trusted, as Codex does:
//!    `[projects."/abs/path"] trust_level = "trusted"` for the repository root, `cwd` or a
//!    directory between them; otherwise it is listed with a `disabledReason` (a cloned
//!    repository must not be able to turn the sandbox off);
//! 4. the selected profile: `[profiles.<name>]` of the merged layers, selected by the `profile`
//!    key (from any layer, `-c profile=<name>` or `--profile <name>`), reported as a `User`
//!    layer with `profile` set;
//! 5. `-c key=value` flags of the command line (`SessionFlags`): a dotted key path and a TOML
//!    value (a value that is not valid TOML is taken as a string, as Codex does);
//! 6. the thread's own overrides: the `config` map of `thread/start` (dotted key paths), then
//!    its explicit params (`model`, `approvalPolicy`, `sandbox`, …).
//!
//! # Keys
//!
//! Read and used: `model`, `model_provider`, `model_reasoning_effort`,
//! `model_reasoning_summary`, `approval_policy`, `sandbox_mode`, `[sandbox_workspace_write]`
//! (`writable_roots`, `network_access`, `exclude_tmpdir_env_var`, `exclude_slash_tmp`),
//! `instructions` (replaces the base instructions), `model_instructions_file` (a file whose
//! text replaces them, relative to `$AGENTWIRE_HOME`; it wins over `instructions`),
//! `include_environment_context` (default true), `developer_instructions`,
//! `project_doc_max_bytes`, `model_auto_compact_token_limit` (see `turns::run::auto_compact`),
//! `model_context_window` and `model_supports_reasoning_summaries` (over the built-in model
//! families, see `catalog::families`),
//! `[shell_environment_policy]` (see [`shell_env`]), `profile`, `[profiles.<name>]`, `[projects.<path>]` (`trust_level`), `[model_providers.<id>]`,
//! `[mcp_servers.<name>]` and `fixture_script`:
//!
//! ```toml
//! model_provider = "local"              # default provider of new threads ("fixture" if absent)
//! model = "qwen2.5-coder"               # default model of new threads
//! approval_policy = "never"             # untrusted | on-request | never | { granular = … }
//! sandbox_mode = "workspace-write"      # read-only | workspace-write | danger-full-access
//! fixture_script = "scripts/demo.json"  # the fixture script; relative to $AGENTWIRE_HOME;
//!                                       # the built-in script when left out
//!
//! [model_providers.local]               # an OpenAI-compatible chat-completions server
//! name = "llama.cpp on this machine"    # display name (optional)
//! base_url = "http://127.0.0.1:8080/v1"
//! env_key = "LOCAL_API_KEY"             # variable holding the bearer token (optional)
//! wire_api = "chat"                     # optional; "chat" (default) or "responses"
//! request_max_retries = 4               # optional
//! stream_idle_timeout_ms = 300000       # optional
//! request_timeout_ms = 600000           # optional: connect + response headers
//! model_context_window = 32768          # optional, reported with token usage
//! http_headers = { "X-Org" = "a" }      # optional extra request headers
//! ```
//!
//! Also `requires_openai_auth = true` (the key is the stored sign-in, else `$OPENAI_API_KEY`)
//! and `env_http_headers = { "Header" = "VARIABLE" }` (headers whose values are read from the
//! environment, left out when the variable is unset).
//! Built-in entries exist without a table: `openai` (Responses API), `ollama` / `oss`
//! (`http://localhost:11434/v1`) and `lmstudio` (`http://localhost:1234/v1`); a table with one
//! of their ids is merged over the entry key by key (see [`agentwire_providers::builtin`]).
//!
//! `fixture` is the built-in provider id; it needs (and takes) no table. Every key takes effect
//! without a restart: new threads get the new defaults, and the next model call uses providers
//! rebuilt from changed provider settings (see [`providers`]).
//!
//! ```toml
//! [store]                               # where threads are kept; read at start-up
//! url = "postgres://agentwire@db.internal/agentwire"   # default "embedded"
//! compress_after_days = 7               # rollout/compress: gzip rollouts untouched this long
//! ```
//!
//! Keys of Codex's `config.toml` that agentwire does not use (`features`, `history`, `tui`,
//! `notify`, …; see [`keys::CODEX_ONLY`]) are accepted without a word and passed through by
//! `config/read`, so one file can serve both programs. Any other key is a problem: reported as a
//! `configWarning` (with file, line and column) and left out of the effective configuration, and
//! refused by the write methods. So are a value of the wrong type and unknown keys inside the
//! tables agentwire reads (`[model_providers.*]`, `[sandbox_workspace_write]`, …): each such
//! key is reported on its own with its table, and only it is left out ([`salvage`]), so the
//! valid rest of its table stays in effect and a misspelled key in a table overriding a
//! built-in provider leaves that provider in place. A broken file never stops the server: the
//! keys that can be read are used.

pub mod defaults;
pub mod edit;
mod file;
pub mod keys;
pub mod layers;
pub mod overrides;
pub mod providers;
pub mod requirements;
pub mod salvage;
pub mod shell_env;
pub mod store;

// The providers' settings live with the providers.
pub use agentwire_providers::settings::{FIXTURE, ProviderConfig};
pub use file::*;
pub use store::Store;
