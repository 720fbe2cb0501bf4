//! What an `exec` turn is given, read and checked before any server is started: the prompt
//! (the argument, or stdin), the images to attach and the output schema.

use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// The longest prompt read from stdin.
const MAX_STDIN_PROMPT: u64 = 16 * 1024 * 1024;
/// The largest `--output-schema` file read.
const MAX_SCHEMA_BYTES: u64 = 1024 * 1024;

/// The prompt: `prompt` itself, or stdin when it is `-` or absent (absent only when stdin is
/// not a terminal, so nobody waits on a prompt they were never asked for).
pub fn prompt(prompt: Option<&str>) -> Result<String, String> {
    let text = match prompt {
        Some("-") => read_stdin()?,
        Some(text) => text.to_owned(),
        None if std::io::stdin().is_terminal() => {
            return Err(
                "no prompt: give it as an argument, or `-` to read it from stdin".to_owned(),
            );
        }
        None => read_stdin()?,
    };
    if text.trim().is_empty() {
        return Err("the prompt is empty".to_owned());
    }
    Ok(text)
}

/// The prompt on stdin, at most [`MAX_STDIN_PROMPT`] bytes of UTF-8.
fn read_stdin() -> Result<String, String> {
    // One byte more than the limit tells a prompt that fits from one that would be cut.
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(MAX_STDIN_PROMPT + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read the prompt from stdin: {e}"))?;
    if bytes.len() as u64 > MAX_STDIN_PROMPT {
        return Err(format!(
            "the prompt on stdin is over 16 MiB ({MAX_STDIN_PROMPT} bytes); nothing was sent"
        ));
    }
    String::from_utf8(bytes)
        .map_err(|e| format!("cannot read the prompt from stdin: it is not UTF-8 ({e})"))
}

/// The turn's input items: one `localImage` per `--image` (its path made absolute from this
/// process's directory, as the shell meant it), then the prompt as `text` (Codex's order).
pub fn items(prompt: &str, images: &[PathBuf]) -> Result<Vec<Value>, String> {
    let mut items = Vec::with_capacity(images.len() + 1);
    for image in images {
        let path =
            std::path::absolute(image).map_err(|e| format!("--image {}: {e}", image.display()))?;
        match std::fs::metadata(&path) {
            Ok(meta) if meta.is_file() => {}
            Ok(_) => return Err(format!("--image {}: not a file", image.display())),
            Err(e) => return Err(format!("--image {}: {e}", image.display())),
        }
        items.push(json!({"type": "localImage", "path": path.to_string_lossy()}));
    }
    items.push(json!({"type": "text", "text": prompt}));
    Ok(items)
}

/// The JSON Schema of `--output-schema FILE`: a JSON object (the server checks the rest and
/// names what it refuses).
pub fn output_schema(file: &Path) -> Result<Value, String> {
    let shown = file.display();
    let mut bytes = Vec::new();
    std::fs::File::open(file)
        .and_then(|f| f.take(MAX_SCHEMA_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| format!("--output-schema {shown}: {e}"))?;
    if bytes.len() as u64 > MAX_SCHEMA_BYTES {
        return Err(format!(
            "--output-schema {shown}: over {MAX_SCHEMA_BYTES} bytes"
        ));
    }
    let schema: Value = serde_json::from_slice(&bytes)
        .map_err(|e| format!("--output-schema {shown}: not JSON: {e}"))?;
    if !schema.is_object() {
        return Err(format!(
            "--output-schema {shown}: a JSON Schema is an object, not {schema}"
        ));
    }
    Ok(schema)
}
