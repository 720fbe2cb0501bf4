//! This server's experimental features: `experimentalFeature/list` and
//! `experimentalFeature/enablement/set`, and the switch each feature's methods ask before they
//! serve ([`require`]).
//!
//! A feature is a group of experimental methods of the method table that a user may switch off
//! (or on again) without restarting anything: [`FEATURES`] names each feature's methods by
//! their markers' wire names, and a unit test holds every one of them to be an experimental,
//! served client request. A switched-off feature's methods answer -32600 naming the feature and
//! how to switch it back on.
//!
//! Whether a feature is on is read from the effective configuration's `[features]` table —
//! where Codex users switch features, and where `--enable X` / `--disable X` put theirs — and
//! falls back to the feature's default. `experimentalFeature/enablement/set` writes the user's
//! `config.toml` (`features.<name> = true|false`) through the configuration's write path, so a
//! switch survives a restart; names this server does not have are left out of the answer, as
//! the reference server leaves out what it does not switch.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agentwire_config::Store;
use agentwire_protocol::method::Method;
use agentwire_protocol::methods::{
    ExperimentalFeatureEnablementSet, ExperimentalFeatureList, ProcessKill, ProcessResizePty,
    ProcessSpawn, ProcessWriteStdin, ServerDiagnostics, ThreadSettingsUpdate, TurnSettingsUpdate,
};
use agentwire_protocol::{
    ConfigEdit, ExperimentalFeature, ExperimentalFeatureEnablementSetParams,
    ExperimentalFeatureEnablementSetResponse, ExperimentalFeatureListParams,
    ExperimentalFeatureListResponse, ExperimentalFeatureStage, MergeStrategy,
};
use agentwire_runtime::HandlerError;
use agentwire_tools::specs::BuiltinTools;

use crate::pool::blocking;
use crate::threads::Threads;

/// One experimental feature.
#[derive(Debug)]
pub(crate) struct Feature {
    /// Its key under `[features]`.
    pub name: &'static str,
    /// Its name for people.
    pub display_name: &'static str,
    /// What it does.
    pub description: &'static str,
    /// How far along it is.
    pub stage: ExperimentalFeatureStage,
    /// Whether it is on when nobody switched it.
    pub default_enabled: bool,
    /// The wire names of the methods it gates.
    pub methods: &'static [&'static str],
}

/// Every experimental feature, by name.
pub(crate) const FEATURES: &[Feature] = &[
    Feature {
        name: "process_api",
        display_name: "Standalone processes",
        description: "Clients start programs outside any thread (process/spawn), feed their \
                      input, resize their terminal and kill them, and receive their output \
                      and exit as notifications.",
        stage: ExperimentalFeatureStage::Beta,
        default_enabled: true,
        methods: &[
            ProcessSpawn::NAME,
            ProcessWriteStdin::NAME,
            ProcessKill::NAME,
            ProcessResizePty::NAME,
        ],
    },
    Feature {
        name: "server_diagnostics",
        display_name: "Server diagnostics",
        description: "server/diagnostics reports the server process's memory, threads, open \
                      files and connections, and the threads, turns and processes it runs.",
        stage: ExperimentalFeatureStage::Beta,
        default_enabled: true,
        methods: &[ServerDiagnostics::NAME],
    },
    Feature {
        name: "thread_settings_update",
        display_name: "Live thread settings",
        description: "Change a thread's model, reasoning effort, approval policy, sandbox or \
                      working directory between turns (thread/settings/update), and a running \
                      turn's model and effort for its remaining model calls \
                      (turn/settings/update).",
        stage: ExperimentalFeatureStage::Beta,
        default_enabled: true,
        methods: &[ThreadSettingsUpdate::NAME, TurnSettingsUpdate::NAME],
    },
];

/// The feature called `name`.
fn find(name: &str) -> Option<&'static Feature> {
    FEATURES.iter().find(|f| f.name == name)
}

/// Whether `feature` is on in the configuration as seen from `cwd` (none: the user's and the
/// session's layers only).
fn enabled(store: &Store, cwd: Option<&Path>, feature: &Feature) -> bool {
    switched_on(
        &store.effective(cwd).merged,
        feature.name,
        feature.default_enabled,
    )
}

/// Whether `name` under `[features]` of the merged configuration `merged` is on: its boolean
/// when it is one, else `default`.
fn switched_on(merged: &toml::Table, name: &str, default: bool) -> bool {
    merged
        .get("features")
        .and_then(toml::Value::as_table)
        .and_then(|features| features.get(name))
        .and_then(toml::Value::as_bool)
        .unwrap_or(default)
}

/// Which of the engine's own tools a thread whose merged configuration is `merged` offers:
/// each is withheld only by `false` under `[features]` (see [`BuiltinTools`]).
pub(crate) fn builtin_tools(merged: &toml::Table) -> BuiltinTools {
    BuiltinTools {
        shell: switched_on(merged, BuiltinTools::SHELL_FEATURE, true),
        apply_patch: switched_on(merged, BuiltinTools::APPLY_PATCH_FEATURE, true),
    }
}

/// Refuses (-32600) `M` when the feature that gates it is switched off.
pub(crate) fn require<M: Method>(config_store: &Store) -> Result<(), HandlerError> {
    let Some(feature) = FEATURES.iter().find(|f| f.methods.contains(&M::NAME)) else {
        return Ok(());
    };
    if enabled(config_store, None, feature) {
        return Ok(());
    }
    Err(HandlerError::invalid_request(format!(
        "{}: the experimental feature `{}` that serves it is switched off; switch it on with \
         experimentalFeature/enablement/set or `{} = true` under [features] in config.toml",
        M::NAME,
        feature.name,
        feature.name
    )))
}

/// The page of `items` that `cursor` (a position, as `nextCursor` gave it) and `limit` (none
/// or 0: all the rest) select, and the cursor of the next page.
pub(crate) fn page<T>(
    method: &str,
    items: Vec<T>,
    cursor: Option<&str>,
    limit: Option<u32>,
) -> Result<(Vec<T>, Option<String>), HandlerError> {
    let start = match cursor {
        None => 0,
        Some(cursor) => cursor
            .parse::<usize>()
            .ok()
            .filter(|&at| at <= items.len())
            .ok_or_else(|| {
                HandlerError::invalid_params(
                    method,
                    format!("cursor {cursor:?} is not one this method gave (pass its nextCursor)"),
                )
            })?,
    };
    let take = match limit {
        None | Some(0) => usize::MAX,
        Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
    };
    let total = items.len();
    let data: Vec<T> = items.into_iter().skip(start).take(take).collect();
    let end = start + data.len();
    Ok((data, (end < total).then(|| end.to_string())))
}

/// `experimentalFeature/list`.
pub(crate) async fn list(
    config_store: &Arc<Store>,
    threads: &Arc<Threads>,
    params: ExperimentalFeatureListParams,
) -> Result<ExperimentalFeatureListResponse, HandlerError> {
    let cwd = match params.thread_id.clone() {
        Some(id) => Some(PathBuf::from(
            crate::pool::stored::<ExperimentalFeatureList, _, _>(threads.clone(), move |t| {
                t.snapshot(&id)
                    .map(|(summary, _)| summary.meta.settings.cwd.clone())
            })
            .await?,
        )),
        None => None,
    };
    let store = config_store.clone();
    blocking::<ExperimentalFeatureList, _, _>(move || {
        let all =
            FEATURES
                .iter()
                .map(|feature| {
                    let beta = feature.stage == ExperimentalFeatureStage::Beta;
                    ExperimentalFeature::builder()
                        .name(feature.name)
                        .stage(feature.stage)
                        .default_enabled(feature.default_enabled)
                        .enabled(enabled(&store, cwd.as_deref(), feature))
                        .maybe_display_name(beta.then_some(feature.display_name))
                        .maybe_description(beta.then_some(feature.description))
                        .maybe_announcement(beta.then(|| {
                            format!("New: {}. {}", feature.display_name, feature.description)
                        }))
                        .build()
                })
                .collect();
        let (data, next_cursor) = page(
            ExperimentalFeatureList::NAME,
            all,
            params.cursor.as_deref(),
            params.limit,
        )?;
        Ok(ExperimentalFeatureListResponse::builder()
            .data(data)
            .maybe_next_cursor(next_cursor)
            .build())
    })
    .await
}

/// `experimentalFeature/enablement/set`.
pub(crate) async fn enablement_set(
    config_store: &Arc<Store>,
    params: ExperimentalFeatureEnablementSetParams,
) -> Result<ExperimentalFeatureEnablementSetResponse, HandlerError> {
    let method = ExperimentalFeatureEnablementSet::NAME;
    let store = config_store.clone();
    blocking::<ExperimentalFeatureEnablementSet, _, _>(move || {
        let mut applied = std::collections::BTreeMap::new();
        let mut edits = Vec::new();
        for (name, on) in params.enablement {
            let Some(feature) = find(&name) else {
                tracing::info!(
                    feature = name,
                    "{method}: no such experimental feature here"
                );
                continue;
            };
            edits.push(
                ConfigEdit::builder()
                    .key_path(format!("features.{}", feature.name))
                    .value(serde_json::Value::Bool(on))
                    .merge_strategy(MergeStrategy::Replace)
                    .build(),
            );
            applied.insert(name, on);
        }
        if !edits.is_empty() {
            crate::config_rpc::write(&store, method, &edits, None, None)?;
        }
        Ok(ExperimentalFeatureEnablementSetResponse::builder()
            .enablement(applied)
            .build())
    })
    .await
}

#[cfg(test)]
mod tests {
    use agentwire_protocol::Direction;

    use super::*;

    #[test]
    fn every_gated_method_is_an_experimental_served_client_request() {
        for feature in FEATURES {
            assert!(
                !feature.methods.is_empty(),
                "{} gates nothing",
                feature.name
            );
            for name in feature.methods {
                let info = agentwire_protocol::methods::find(name)
                    .unwrap_or_else(|| panic!("{name} is not in the method table"));
                assert_eq!(info.direction, Direction::ClientRequest, "{name}");
                assert!(info.experimental, "{name} is stable: nothing to switch");
                assert!(info.unavailable().is_none(), "{name} is not served");
            }
        }
        let mut names: Vec<_> = FEATURES.iter().map(|f| f.name).collect();
        let sorted = {
            let mut s = names.clone();
            s.sort_unstable();
            s.dedup();
            s
        };
        names.sort_unstable();
        assert_eq!(names, sorted, "feature names are unique");
    }

    #[test]
    fn pages_follow_their_cursor() {
        let items: Vec<u32> = (0..5).collect();
        let (first, next) = page("m", items.clone(), None, Some(2)).expect("first");
        assert_eq!((first, next.as_deref()), (vec![0, 1], Some("2")));
        let (last, next) = page("m", items.clone(), Some("4"), Some(2)).expect("last");
        assert_eq!((last, next), (vec![4], None));
        let (all, next) = page("m", items.clone(), None, None).expect("all");
        assert_eq!((all.len(), next), (5, None));
        assert!(page("m", items.clone(), Some("x"), None).is_err());
        assert!(page("m", items, Some("6"), None).is_err());
    }

    #[test]
    fn the_switch_is_read_from_features_and_defaults_otherwise() {
        let home = tempfile::tempdir().expect("home");
        let store = Store::new(
            home.path(),
            crate::ThreadDefaults::default(),
            &["features.process_api=false".to_owned()],
            None,
        );
        let process = find("process_api").expect("feature");
        let diagnostics = find("server_diagnostics").expect("feature");
        assert!(!enabled(&store, None, process));
        assert!(enabled(&store, None, diagnostics));
    }

    #[test]
    fn only_a_false_feature_withholds_a_tool() {
        let of = |text: &str| builtin_tools(&text.parse::<toml::Table>().expect("toml"));
        assert_eq!(of(""), BuiltinTools::default());
        assert_eq!(
            of("[features]\nshell_tool = false\napply_patch_tool = \"no\"\n"),
            BuiltinTools {
                shell: false,
                apply_patch: true
            }
        );
        assert_eq!(
            of("[features]\nshell_tool = true\napply_patch_tool = false\n"),
            BuiltinTools {
                shell: true,
                apply_patch: false
            }
        );
    }
}
