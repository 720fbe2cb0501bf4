//! `fs/readFile`: a whole regular file, base64-encoded, up to [`MAX_FILE_BYTES`].

use std::io::Read;

use agentwire_protocol::{FsReadFileParams, FsReadFileResponse};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use super::error::{FsResult, Reason};
use super::limits::MAX_FILE_BYTES;
use super::roots::Scope;

/// Serves `fs/readFile` under `scope`.
pub(crate) fn read_file(scope: &Scope, params: &FsReadFileParams) -> FsResult<FsReadFileResponse> {
    let at = scope.locate("path", &params.path.0)?;
    let (file, stat) = at.open_regular()?;
    let too_large = || {
        at.fail(Reason::TooLarge {
            limit: MAX_FILE_BYTES,
        })
    };
    let size = u64::try_from(stat.st_size).unwrap_or(0);
    if size > MAX_FILE_BYTES {
        return Err(too_large());
    }
    // The file may grow while it is read: read one byte past the limit to notice.
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| at.fail(Reason::from_io(&e)))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large());
    }
    Ok(FsReadFileResponse::builder()
        .data_base64(STANDARD.encode(bytes))
        .build())
}
