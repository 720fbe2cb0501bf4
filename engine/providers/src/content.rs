//! User content for a model call: text, and images as real image parts.
//!
//! `image` inputs (a URL, `data:` URLs included) are sent as they are; `localImage` inputs are
//! read from disk (at most [`MAX_IMAGE_BYTES`]), their type found from their first bytes (PNG,
//! JPEG, GIF or WebP; the file name does not count), and sent as `data:` URLs. `turn/start`
//! and `turn/steer` refuse an image file that is missing, too large or not one of those types
//! ([`check_input`]); a file that became unusable after its turn started (it is read again for
//! each model call, since the whole conversation is sent every time) reaches the model as a
//! short text saying so, so the thread stays usable. Other inputs (audio, skills, mentions) are
//! described in words. A relative `localImage` path is taken from the thread's `cwd`
//! ([`resolve_local_images`]).

use std::io::Read;

use agentwire_protocol::{ImageDetail, MediaSource, UserInput};
use base64::Engine as _;

use crate::call::user_text;

/// The largest image file attached (20 MiB, as OpenAI's image inputs allow).
pub const MAX_IMAGE_BYTES: u64 = 20 * 1024 * 1024;

/// One part of a user message as a model call sends it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Part {
    /// Text.
    Text(String),
    /// An image: a URL (`data:` URLs included) or a provider file id.
    Image {
        /// Where it is.
        source: ImageSource,
        /// The resolution asked for, if any.
        detail: Option<ImageDetail>,
    },
}

/// Where an image part comes from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ImageSource {
    /// A URL (`https:`, `data:` …).
    Url(String),
    /// A file uploaded to the provider.
    FileId(String),
}

/// An image file's type, found from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ImageType {
    Png,
    Jpeg,
    Gif,
    Webp,
}

impl ImageType {
    /// The type whose signature `bytes` start with, if any of the supported ones.
    pub(crate) fn sniff(bytes: &[u8]) -> Option<Self> {
        if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
            Some(Self::Png)
        } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
            Some(Self::Jpeg)
        } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
            Some(Self::Gif)
        } else if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
            Some(Self::Webp)
        } else {
            None
        }
    }

    /// Its MIME type.
    pub(crate) fn mime(self) -> &'static str {
        match self {
            Self::Png => "image/png",
            Self::Jpeg => "image/jpeg",
            Self::Gif => "image/gif",
            Self::Webp => "image/webp",
        }
    }
}

/// Reads the image file at `path` as a `data:` URL, or says why it cannot be attached (naming
/// the path, and the limit or the accepted types).
pub(crate) fn data_url(path: &str) -> Result<String, String> {
    let (kind, bytes) = read_image(path, true)?;
    let encoded = base64::engine::general_purpose::STANDARD.encode(bytes);
    Ok(format!("data:{};base64,{encoded}", kind.mime()))
}

/// Checks the image file at `path`; with `whole`, also returns its bytes. The file is opened
/// without blocking and must be a regular file on the open descriptor (a FIFO, a device or a
/// socket named as an image, or swapped in for one, is refused at once instead of hanging the
/// read: issue #32); at most [`MAX_IMAGE_BYTES`] of it are read.
fn read_image(path: &str, whole: bool) -> Result<(ImageType, Vec<u8>), String> {
    let (file, size) = agentwire_support::regular_file::open_regular(std::path::Path::new(path))
        .map_err(|e| format!("cannot read the image file {path}: {e}"))?;
    if size > MAX_IMAGE_BYTES {
        return Err(format!(
            "the image file {path} is {size} bytes, over the limit of {MAX_IMAGE_BYTES} bytes (20 MiB)"
        ));
    }
    let limit = if whole { MAX_IMAGE_BYTES + 1 } else { 16 };
    let mut bytes = Vec::new();
    file.take(limit)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read the image file {path}: {e}"))?;
    if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > MAX_IMAGE_BYTES {
        return Err(format!(
            "the image file {path} is over the limit of {MAX_IMAGE_BYTES} bytes (20 MiB)"
        ));
    }
    let kind = ImageType::sniff(&bytes).ok_or_else(|| {
        format!(
            "the file {path} is not a PNG, JPEG, GIF or WebP image (judged by its content), \
             the image types models accept"
        )
    })?;
    Ok((kind, bytes))
}

/// Makes the path of each `localImage` in `input` absolute, a relative one taken from `cwd` (the
/// thread's working directory, not the server's), so the turn, its recorded item and every later
/// model call read the same file.
pub fn resolve_local_images(input: &mut [UserInput], cwd: &std::path::Path) {
    for part in input {
        if let UserInput::LocalImage { path, .. } = part
            && !path.is_empty()
            && std::path::Path::new(path.as_str()).is_relative()
        {
            *path = cwd.join(path.as_str()).to_string_lossy().into_owned();
        }
    }
}

/// How long [`check_input`] waits for the image files of one request to be looked at. The
/// check runs inside a request handler, on the async worker, so the files are looked at on a
/// thread of their own: a file that cannot be read in time (a stuck network or FUSE mount) is
/// refused rather than stopping the connection.
pub const CHECK_DEADLINE: std::time::Duration = std::time::Duration::from_secs(5);

/// Checks the images of `input` (of `turn/start` or `turn/steer`): each `localImage` must be a
/// readable regular file holding a PNG, JPEG, GIF or WebP image of at most
/// [`MAX_IMAGE_BYTES`]; each `image` URL must not be empty. The error names the input's index,
/// the path and why. The files are looked at (opened without blocking, their first bytes read)
/// off the calling thread, for at most [`CHECK_DEADLINE`].
pub fn check_input(input: &[UserInput]) -> Result<(), String> {
    let mut images = Vec::new();
    for (index, part) in input.iter().enumerate() {
        match part {
            UserInput::LocalImage { path, .. } => images.push((index, path.clone())),
            UserInput::Image {
                source: MediaSource::Url { url, .. },
                ..
            } if url.trim().is_empty() => {
                return Err(format!("input[{index}].url: must not be empty"));
            }
            _ => {}
        }
    }
    if images.is_empty() {
        return Ok(());
    }
    let paths: Vec<String> = images.iter().map(|(_, path)| path.clone()).collect();
    let checked = agentwire_support::regular_file::with_deadline(CHECK_DEADLINE, move || {
        for (index, path) in images {
            read_image(&path, false).map_err(|e| format!("input[{index}].path: {e}"))?;
        }
        Ok(())
    });
    checked.unwrap_or_else(|| {
        Err(format!(
            "the image files ({}) could not be read within {} s",
            paths.join(", "),
            CHECK_DEADLINE.as_secs()
        ))
    })
}

/// Whether `content` has an image (so it needs a multi-part message).
pub(crate) fn has_image(content: &[UserInput]) -> bool {
    content
        .iter()
        .any(|p| matches!(p, UserInput::Image { .. } | UserInput::LocalImage { .. }))
}

/// The parts of `content` for a model call, in order: consecutive non-image inputs become one
/// text part (as [`user_text`] joins them), each image an image part. An image file that cannot
/// be read now becomes a text part saying why.
pub(crate) fn parts(content: &[UserInput]) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut text: Vec<UserInput> = Vec::new();
    let flush = |text: &mut Vec<UserInput>, parts: &mut Vec<Part>| {
        if !text.is_empty() {
            parts.push(Part::Text(user_text(text)));
            text.clear();
        }
    };
    for input in content {
        match input {
            UserInput::Image { source, detail, .. } => {
                flush(&mut text, &mut parts);
                let source = match source {
                    MediaSource::Url { url, .. } => ImageSource::Url(url.clone()),
                    MediaSource::FileId { file_id, .. } => ImageSource::FileId(file_id.clone()),
                    _ => {
                        parts.push(Part::Text(
                            "[an image of a source kind this server does not know]".to_owned(),
                        ));
                        continue;
                    }
                };
                parts.push(Part::Image {
                    source,
                    detail: *detail,
                });
            }
            UserInput::LocalImage { path, detail, .. } => {
                flush(&mut text, &mut parts);
                match data_url(path) {
                    Ok(url) => parts.push(Part::Image {
                        source: ImageSource::Url(url),
                        detail: *detail,
                    }),
                    Err(reason) => {
                        tracing::warn!(path, reason, "image not attached to the model call");
                        parts.push(Part::Text(format!(
                            "[image file {path} could not be attached: {reason}]"
                        )));
                    }
                }
            }
            other => text.push(other.clone()),
        }
    }
    flush(&mut text, &mut parts);
    parts
}

/// How `detail` is spelled in a request (`original` is sent as `high` where only `low`,
/// `high` and `auto` exist).
pub(crate) fn detail_name(detail: ImageDetail, original_allowed: bool) -> &'static str {
    match detail {
        ImageDetail::Auto => "auto",
        ImageDetail::Low => "low",
        ImageDetail::High => "high",
        ImageDetail::Original if original_allowed => "original",
        ImageDetail::Original => "high",
        _ => "auto",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("agentwire-content-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch dir");
        dir
    }

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

    #[test]
    fn image_types_are_found_from_content() {
        assert_eq!(ImageType::sniff(PNG), Some(ImageType::Png));
        assert_eq!(
            ImageType::sniff(&[0xFF, 0xD8, 0xFF, 0xE0]),
            Some(ImageType::Jpeg)
        );
        assert_eq!(ImageType::sniff(b"GIF89a...."), Some(ImageType::Gif));
        assert_eq!(
            ImageType::sniff(b"RIFF\0\0\0\0WEBPVP8 "),
            Some(ImageType::Webp)
        );
        assert_eq!(ImageType::sniff(b"RIFF\0\0\0\0WAVEfmt "), None);
        assert_eq!(ImageType::sniff(b"%PDF-1.7"), None);
        assert_eq!(ImageType::sniff(b""), None);
    }

    #[test]
    fn local_images_become_data_urls_and_bad_files_are_named() {
        let dir = scratch("local");
        let png = dir.join("pic.txt");
        std::fs::write(&png, PNG).expect("write");
        let url = data_url(&png.to_string_lossy()).expect("png");
        assert!(
            url.starts_with("data:image/png;base64,iVBORw0KGgo"),
            "{url}"
        );

        let text = dir.join("notes.png");
        std::fs::write(&text, "hello").expect("write");
        let path = text.to_string_lossy().into_owned();
        let error = data_url(&path).expect_err("not an image");
        assert!(
            error.contains(&path) && error.contains("not a PNG"),
            "{error}"
        );

        let input = vec![
            UserInput::text().text("look".to_owned()).build(),
            UserInput::local_image().path(path.clone()).build(),
        ];
        let error = check_input(&input).expect_err("refused");
        assert!(error.starts_with("input[1].path: "), "{error}");
        let missing = check_input(&[UserInput::local_image()
            .path("/nonexistent/x.png".to_owned())
            .build()])
        .expect_err("missing");
        assert!(missing.contains("/nonexistent/x.png"), "{missing}");

        // At request time an unusable file becomes a note for the model.
        let parts = parts(&input);
        assert_eq!(parts.len(), 2, "{parts:?}");
        assert_eq!(parts[0], Part::Text("look".to_owned()));
        let Part::Text(note) = &parts[1] else {
            panic!("{parts:?}");
        };
        assert!(note.contains("could not be attached"), "{note}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn files_over_the_limit_are_refused_by_size() {
        let dir = scratch("big");
        let big = dir.join("big.png");
        let file = std::fs::File::create(&big).expect("create");
        file.set_len(MAX_IMAGE_BYTES + 1).expect("grow");
        let path = big.to_string_lossy().into_owned();
        let error = data_url(&path).expect_err("too big");
        assert!(
            error.contains(&path) && error.contains("20971520 bytes"),
            "{error}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn text_runs_join_and_images_keep_their_place() {
        let content = vec![
            UserInput::text().text("a".to_owned()).build(),
            UserInput::text().text("b".to_owned()).build(),
            UserInput::image()
                .source(MediaSource::url().url("https://x/y.png".to_owned()).build())
                .detail(ImageDetail::Low)
                .build(),
            UserInput::image()
                .source(MediaSource::file_id().file_id("file-1".to_owned()).build())
                .build(),
        ];
        assert!(has_image(&content));
        assert_eq!(
            parts(&content),
            vec![
                Part::Text("a\nb".to_owned()),
                Part::Image {
                    source: ImageSource::Url("https://x/y.png".to_owned()),
                    detail: Some(ImageDetail::Low),
                },
                Part::Image {
                    source: ImageSource::FileId("file-1".to_owned()),
                    detail: None,
                },
            ]
        );
    }
}
