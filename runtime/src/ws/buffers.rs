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
//!
//! Neither buffer ever holds a whole large message: inbound frames reach the layer cut into
//! pieces ([`super::split_frames`]) and large outbound messages leave as continuation frames of
//! the same size. The layer keeps each buffer at the largest size it ever held.

use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

/// Bytes read from the socket per read call.
pub(super) const READ_BUFFER: usize = 4 * 1024;
/// Bytes of frames buffered before they are written to the socket.
pub(super) const WRITE_BUFFER: usize = 16 * 1024;

/// The websocket layer's settings: the buffer sizes above, and messages and frames of at most
/// `max_message_bytes`.
pub(super) fn config(max_message_bytes: usize) -> WebSocketConfig {
    WebSocketConfig::default()
        .read_buffer_size(READ_BUFFER)
        .write_buffer_size(WRITE_BUFFER)
        .max_message_size(Some(max_message_bytes))
        .max_frame_size(Some(max_message_bytes))
}
