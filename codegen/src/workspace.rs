//! The whole `generated/` tree, and where each part goes.

use std::path::Path;

use agentwire_protocol::PROTOCOL_VERSION;

use crate::{CodegenError, FileSet, Surface, dispatch, openrpc, schema, typescript};

/// Where the JSON Schema files of a surface live, relative to `generated/` (and to a pinned
/// version's directory, without the `schema/` prefix).
pub fn json_dir(surface: Surface) -> &'static str {
    match surface {
        Surface::Stable => "json",
        Surface::Experimental => "experimental/json",
    }
}

/// Where the TypeScript files of a surface live, like [`json_dir`].
pub fn typescript_dir(surface: Surface) -> &'static str {
    match surface {
        Surface::Stable => "typescript",
        Surface::Experimental => "experimental/typescript",
    }
}

/// Where the OpenRPC document of a surface lives, like [`json_dir`]. Pinned from 0.4.0 on.
pub fn openrpc_dir(surface: Surface) -> &'static str {
    match surface {
        Surface::Stable => "openrpc",
        Surface::Experimental => "experimental/openrpc",
    }
}

/// The directory of pinned versions under `generated/`.
pub const VERSIONS_DIR: &str = "versions";

/// The files `generate-json-schema` writes for a surface.
pub fn json_schema_files(surface: Surface) -> Result<FileSet, CodegenError> {
    schema::files(&schema::collect(surface))
}

/// The files `generate-ts` writes for a surface.
pub fn typescript_files(surface: Surface) -> Result<FileSet, CodegenError> {
    typescript::files(surface)
}

/// The files `generate-openrpc` writes for a surface.
pub fn openrpc_files(surface: Surface) -> Result<FileSet, CodegenError> {
    openrpc::files(&schema::collect(surface))
}

/// Every file under `generated/` that the current protocol crate determines: both surfaces of
/// JSON Schema, TypeScript and OpenRPC, the runtime's Rust, and the pinned copy of the current version.
///
/// Pinned directories of older versions are not part of it: they are frozen.
pub fn generate_all() -> Result<FileSet, CodegenError> {
    let mut all = FileSet::new();
    let mut release = FileSet::new();
    for surface in Surface::ALL {
        let collected = schema::collect(surface);
        let json = schema::files(&collected)?;
        let ts = typescript::files(surface)?;
        let rpc = openrpc::files(&collected)?;
        release.extend_under(json_dir(surface), json);
        release.extend_under(openrpc_dir(surface), rpc);
        release.extend_under(typescript_dir(surface), ts);
        if surface.is_experimental() {
            all.insert(
                Path::new("rust").join(dispatch::DISPATCH_FILE),
                dispatch::dispatch_source(&collected)?,
            );
            all.insert(
                Path::new("rust").join(dispatch::VALIDATORS_FILE),
                dispatch::validators_source(&collected)?,
            );
        }
    }
    all.extend_under(
        Path::new(VERSIONS_DIR).join(PROTOCOL_VERSION),
        release.clone(),
    );
    all.extend_under("schema", release);
    Ok(all)
}

/// Whether a path relative to `generated/` is owned by [`generate_all`] (so a stale file there
/// is drift), as opposed to an older pinned version.
pub fn is_managed(path: &Path) -> bool {
    match path.strip_prefix(VERSIONS_DIR) {
        Ok(rest) => rest.starts_with(PROTOCOL_VERSION),
        Err(_) => true,
    }
}
