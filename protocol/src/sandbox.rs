use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::*;

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema, TS)]
#[serde(transparent)]
pub struct AbsolutePathBuf(pub String);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub enum NetworkAccess {
    #[default]
    Restricted,
    Enabled,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    ReadOnly,
    WorkspaceWrite,
    DangerFullAccess,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum SandboxPolicy {
    DangerFullAccess,
    #[serde(rename_all = "camelCase")]
    ReadOnly {
        #[serde(default)]
        #[ts(as = "Option<bool>", optional)]
        network_access: bool,
    },
    #[serde(rename_all = "camelCase")]
    ExternalSandbox {
        #[serde(default)]
        #[ts(as = "Option<NetworkAccess>", optional)]
        network_access: NetworkAccess,
    },
    #[serde(rename_all = "camelCase")]
    WorkspaceWrite {
        #[serde(default)]
        #[ts(as = "Option<bool>", optional)]
        exclude_slash_tmp: bool,
        #[serde(default)]
        #[ts(as = "Option<bool>", optional)]
        exclude_tmpdir_env_var: bool,
        #[serde(default)]
        #[ts(as = "Option<bool>", optional)]
        network_access: bool,
        #[serde(default)]
        #[ts(as = "Option<Vec<AbsolutePathBuf>>", optional)]
        writable_roots: Vec<AbsolutePathBuf>,
    },
}

