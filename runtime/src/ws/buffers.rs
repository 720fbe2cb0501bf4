//! The websocket layer's buffers, sized for many idle connections.
//!
//! tungstenite's defaults (a 128 KiB read buffer, zero-filled in full before the first read,
//! and a 128 KiB write buffer target) cost every connection over 128 KB of resident memory as
//! soon as its first frame arrives, idle or not. Requests are small and answers stream as many
//! small notifications, so neither direction gains from that much:
//! - reads take up to [`READ_BUFFER`] bytes per call; a larger frame still arrives whole (its
//!   buffer grows to the frame's announced length, within `max_message_bytes`);
//! - frames queued by the writer go to the socket once [`WRITE_BUFFER`] bytes are pending
//!   (and at every flush, after each batch), so a batch of notifications still leaves in a few
//!   writes.

use axum::extract::ws::WebSocketUpgrade;

/// Bytes read from the socket per read call.
pub(super) const READ_BUFFER: usize = 4 * 1024;
/// Bytes of frames buffered before they are written to the socket.
pub(super) const WRITE_BUFFER: usize = 16 * 1024;

/// `upgrade` with the buffer sizes above.
pub(super) fn sized<F>(upgrade: WebSocketUpgrade<F>) -> WebSocketUpgrade<F> {
    upgrade
        .read_buffer_size(READ_BUFFER)
        .write_buffer_size(WRITE_BUFFER)
}
