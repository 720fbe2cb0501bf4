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

/// Where the OpenRPC document of a surface lives, like [`json_dir`]. Every pinned version has
/// one: from 0.4.0 on written with the release, for all of them derived again from the pinned
/// bundle ([`pinned_openrpc_files`]).
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

/// The OpenRPC documents of the older pinned releases under `generated_root/versions/` (every
/// version but the current one), each derived from the pinned flat bundle and `meta.json` of
/// its surface ([`openrpc::document_from_bundle`]), keyed like [`generate_all`]'s files.
pub fn pinned_openrpc_files(generated_root: &Path) -> Result<FileSet, CodegenError> {
    let versions = generated_root.join(VERSIONS_DIR);
    let read = |path: &Path| -> Result<serde_json::Value, CodegenError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| CodegenError::Bundle(format!("{}: {e}", path.display())))?;
        serde_json::from_str(&text)
            .map_err(|e| CodegenError::Bundle(format!("{}: {e}", path.display())))
    };
    let mut names: Vec<String> = match std::fs::read_dir(&versions) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .filter(|e| e.path().is_dir())
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|name| name != PROTOCOL_VERSION)
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(CodegenError::Bundle(format!("{}: {e}", versions.display()))),
    };
    names.sort();
    let mut all = FileSet::new();
    for version in names {
        for surface in Surface::ALL {
            let json = versions.join(&version).join(json_dir(surface));
            let flat = json.join(schema::FLAT_BUNDLE_FILE);
            if !flat.exists() {
                continue;
            }
            let document = openrpc::files_from_bundle(
                &read(&flat)?,
                &read(&json.join(crate::meta::META_FILE))?,
                openrpc::OpenrpcVersion::default(),
            )?;
            all.extend_under(
                Path::new(VERSIONS_DIR)
                    .join(&version)
                    .join(openrpc_dir(surface)),
                document,
            );
        }
    }
    Ok(all)
}

/// Every file under `generated/` that the current protocol crate determines: both surfaces of
/// JSON Schema, TypeScript and OpenRPC, the runtime's Rust, and the pinned copy of the current
/// version; plus the OpenRPC documents of the older pinned versions, derived from their frozen
/// bundles ([`pinned_openrpc_files`]).
///
/// The rest of the pinned directories of older versions is not part of it: it is frozen.
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
    for (path, contents) in pinned_openrpc_files(&crate::drift::generated_dir())?.iter() {
        all.insert(path, contents);
    }
    Ok(all)
}

/// Whether a path relative to `generated/` is owned by [`generate_all`] (so a stale file there
/// is drift), as opposed to an older pinned version.
pub fn is_managed(path: &Path) -> bool {
    match path.strip_prefix(VERSIONS_DIR) {
        Ok(rest) => {
            let inside: std::path::PathBuf = rest.iter().skip(1).collect();
            rest.starts_with(PROTOCOL_VERSION)
                || Surface::ALL
                    .iter()
                    .any(|surface| inside.starts_with(openrpc_dir(*surface)))
        }
        Err(_) => true,
    }
}
