//! Why a patch was refused: the one error every step of reading and applying a patch gives.

/// Why a patch was refused; the message is for the model and the user (it names the file and
/// the line of the patch where it can).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct PatchError(pub String);
