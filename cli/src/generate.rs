//! `app-server generate-json-schema`, `app-server generate-ts`, `app-server generate-openrpc` and
//! `app-server generate-docs`.

use std::path::Path;
use std::process::ExitCode;

use agentwire_codegen::schema::FLAT_BUNDLE_FILE;
use agentwire_codegen::{FileSet, Surface, workspace};
use agentwire_protocol::PROTOCOL_VERSION;

use crate::pinned;

/// What to generate.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// The JSON Schema files.
    JsonSchema,
    /// The TypeScript files.
    TypeScript,
}

/// Generates the files of `kind` into `out`; with `zod` (TypeScript only), also the zod
/// validators of the same version and surface ([`agentwire_codegen::zod::ZOD_FILE`]).
pub fn run(
    kind: Kind,
    out: &Path,
    experimental: bool,
    version: Option<&str>,
    zod: bool,
) -> Result<ExitCode, String> {
    let surface = if experimental {
        Surface::Experimental
    } else {
        Surface::Stable
    };
    let mut files = match version {
        None => current(kind, surface)?,
        Some(v) if v == PROTOCOL_VERSION => current(kind, surface)?,
        Some(v) => {
            let part = match kind {
                Kind::JsonSchema => workspace::json_dir(surface),
                Kind::TypeScript => workspace::typescript_dir(surface),
            };
            pinned::files(v, part).ok_or_else(|| unknown_version(v))?
        }
    };
    if zod {
        let version = version.unwrap_or(PROTOCOL_VERSION);
        let json = json_files(surface, version)?;
        let bundle = parse_json(&json, FLAT_BUNDLE_FILE, version)?;
        let validators = agentwire_codegen::zod::files(&bundle).map_err(|e| e.to_string())?;
        for (path, contents) in validators.iter() {
            files.insert(path, contents);
        }
    }
    prepare_out(out)?;
    files.write_to(out).map_err(|e| e.to_string())?;
    eprintln!("wrote {} files to {}", files.len(), out.display());
    Ok(ExitCode::SUCCESS)
}

fn unknown_version(v: &str) -> String {
    format!(
        "unknown protocol version {v:?}: this binary knows {} (current: {PROTOCOL_VERSION})",
        pinned::versions().join(", ")
    )
}

/// The JSON Schema files of a surface of `version` (current or pinned).
fn json_files(surface: Surface, version: &str) -> Result<FileSet, String> {
    if version == PROTOCOL_VERSION {
        return current(Kind::JsonSchema, surface);
    }
    pinned::files(version, workspace::json_dir(surface)).ok_or_else(|| unknown_version(version))
}

/// Writes the OpenRPC document of a surface to the file `out` (`-`: stdout, ending as a filter
/// does when its reader goes), declaring `openrpc_version` (default 1.2.6). A pinned release's document is derived from its pinned bundle.
pub fn openrpc(
    out: &Path,
    experimental: bool,
    version: Option<&str>,
    openrpc_version: Option<&str>,
) -> Result<ExitCode, String> {
    use agentwire_codegen::openrpc::{self, OpenrpcVersion};

    let surface = if experimental {
        Surface::Experimental
    } else {
        Surface::Stable
    };
    let declared = match openrpc_version {
        None => OpenrpcVersion::default(),
        Some(text) => OpenrpcVersion::parse(text).ok_or_else(|| {
            let known: Vec<&str> = OpenrpcVersion::ALL.iter().map(|v| v.as_str()).collect();
            format!(
                "--openrpc-version {text:?}: this binary writes OpenRPC {}",
                known.join(" or ")
            )
        })?,
    };
    if out.is_dir() {
        return Err(format!(
            "--out {} is a directory; give a file name",
            out.display()
        ));
    }
    let version = version.unwrap_or(PROTOCOL_VERSION);
    let files = if version == PROTOCOL_VERSION {
        let collected = agentwire_codegen::schema::collect(surface);
        let document = openrpc::document(&collected, declared).map_err(|e| e.to_string())?;
        let mut files = FileSet::new();
        files.insert(
            openrpc::OPENRPC_FILE,
            agentwire_codegen::schema::to_bytes(&document, openrpc::OPENRPC_FILE)
                .map_err(|e| e.to_string())?,
        );
        files
    } else {
        let json = json_files(surface, version)?;
        let bundle = parse_json(&json, FLAT_BUNDLE_FILE, version)?;
        let meta = parse_json(&json, "meta.json", version)?;
        openrpc::files_from_bundle(&bundle, &meta, declared).map_err(|e| e.to_string())?
    };
    let contents = files
        .get(openrpc::OPENRPC_FILE)
        .ok_or_else(|| "the OpenRPC document is missing from the generated files".to_owned())?;
    if out == Path::new("-") {
        let text = std::str::from_utf8(contents)
            .map_err(|e| format!("the OpenRPC document is not UTF-8: {e}"))?;
        crate::stdout::print(text);
        return Ok(ExitCode::SUCCESS);
    }
    match std::fs::write(out, contents) {
        Ok(()) => {}
        // `--out /dev/stdout | head`: the reader has gone, as for `-`.
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => {
            crate::stdout::end_as_broken_pipe()
        }
        Err(error) => return Err(format!("cannot write --out {}: {error}", out.display())),
    }
    eprintln!("wrote {}", out.display());
    Ok(ExitCode::SUCCESS)
}

fn current(kind: Kind, surface: Surface) -> Result<FileSet, String> {
    let files = match kind {
        Kind::JsonSchema => workspace::json_schema_files(surface),
        Kind::TypeScript => workspace::typescript_files(surface),
    };
    files.map_err(|e| e.to_string())
}

/// Creates `out` if needed and checks that it is a writable directory, so that a bad `--out`
/// fails before anything is written.
fn prepare_out(out: &Path) -> Result<(), String> {
    if out.exists() && !out.is_dir() {
        return Err(format!(
            "--out {} exists and is not a directory",
            out.display()
        ));
    }
    std::fs::create_dir_all(out)
        .map_err(|e| format!("cannot create --out directory {}: {e}", out.display()))?;
    let probe = out.join(".agentwire-write-probe");
    std::fs::write(&probe, b"")
        .map_err(|e| format!("--out directory {} is not writable: {e}", out.display()))?;
    let _ = std::fs::remove_file(probe);
    Ok(())
}

fn parse_json(files: &FileSet, name: &str, version: &str) -> Result<serde_json::Value, String> {
    let bytes = files
        .get(name)
        .ok_or_else(|| format!("protocol version {version} has no {name}"))?;
    serde_json::from_slice(bytes).map_err(|e| format!("{name} of protocol version {version}: {e}"))
}

/// Writes the static HTML protocol reference of a surface into the directory `out`.
pub fn docs(out: &Path, experimental: bool, version: Option<&str>) -> Result<ExitCode, String> {
    use agentwire_codegen::docs::{SiteInput, site};
    use agentwire_codegen::schema::BUNDLE_FILE;

    let surface = if experimental {
        Surface::Experimental
    } else {
        Surface::Stable
    };
    let version = version.unwrap_or(PROTOCOL_VERSION);
    let files_of = |v: &str| -> Result<FileSet, String> {
        if v == PROTOCOL_VERSION {
            return current(Kind::JsonSchema, surface);
        }
        pinned::files(v, workspace::json_dir(surface)).ok_or_else(|| {
            format!(
                "unknown protocol version {v:?}: this binary knows {} (current: {PROTOCOL_VERSION})",
                pinned::versions().join(", ")
            )
        })
    };
    let files = files_of(version)?;
    let mut history = Vec::new();
    for older in pinned::versions()
        .into_iter()
        .take_while(|v| *v != version && *v != PROTOCOL_VERSION)
    {
        let older_files = files_of(older)?;
        history.push((
            older.to_owned(),
            parse_json(&older_files, BUNDLE_FILE, older)?,
        ));
    }
    history.push((
        version.to_owned(),
        parse_json(&files, BUNDLE_FILE, version)?,
    ));
    let flat_bundle = parse_json(&files, FLAT_BUNDLE_FILE, version)?;
    let meta = parse_json(&files, "meta.json", version)?;
    let input = SiteInput {
        version,
        experimental,
        flat_bundle: &flat_bundle,
        meta: &meta,
        history: &history,
        // The examples were recorded with the current version.
        exchanges: (version == PROTOCOL_VERSION).then_some(agentwire_codegen::openrpc::EXCHANGES),
    };
    let site = site(&input).map_err(|e| e.to_string())?;
    prepare_out(out)?;
    site.write_to(out)
        .map_err(|e| format!("cannot write into --out {}: {e}", out.display()))?;
    eprintln!("wrote {} files to {}", site.len(), out.display());
    Ok(ExitCode::SUCCESS)
}
