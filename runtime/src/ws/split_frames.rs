//! Inbound websocket data frames re-cut into pieces of at most [`PIECE`] payload bytes.
//!
//! tungstenite reserves its read buffer to the whole length a frame announces and keeps that
//! allocation for the connection's life. Sitting between the socket and tungstenite,
//! [`SplitFrames`] turns a data frame of L > [`PIECE`] bytes into ceil(L / PIECE) fragments of
//! the same message (RFC 6455 §5.4), which tungstenite reassembles; its read buffer then never
//! grows past a piece. Everything else, and every write, passes through byte for byte.

use std::io;
use std::mem;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, ReadBuf};

/// Largest payload of a data frame handed to the websocket layer.
pub(super) const PIECE: usize = 16 * 1024;
const PIECE_BYTES: u64 = PIECE as u64;
// Every piece but the last is PIECE bytes long, so each starts at a payload offset that is a
// multiple of 4: the masking key rotated to that offset, key[(j + offset) % 4], is the key.
const _: () = assert!(PIECE.is_multiple_of(4));

/// The longest frame header: 2 bytes, a 64-bit length, a 4-byte masking key.
const MAX_HEADER: usize = 14;
/// Byte 0: the frame ends its message.
const FIN: u8 = 0x80;
/// Byte 0: the three bits reserved for extensions.
const RSV: u8 = 0x70;
/// Byte 0: 0 continuation, 1 text, 2 binary (the data frames); 8 and up are control frames.
const OPCODE: u8 = 0x0f;
/// Byte 1: a 4-byte masking key follows the length (the rest of byte 1 is the length: 0-125,
/// or 126 for a 16-bit length that follows, or 127 for a 64-bit one).
const MASK: u8 = 0x80;

/// A stream whose inbound websocket data frames are re-cut into pieces of at most PIECE bytes.
pub(super) struct SplitFrames<S> {
    inner: S,
    limit: usize,
    /// The header of the next frame, as much of it as has arrived (`head[..head_len]`).
    head: [u8; MAX_HEADER],
    head_len: usize,
    /// A header not yet handed to the reader (`out[out_start..out_end]`).
    out: [u8; MAX_HEADER],
    out_start: usize,
    out_end: usize,
    /// The frame whose payload is being handed on; `None` while reading a header.
    frame: Option<Frame>,
}

struct Frame {
    /// Payload bytes of the frame not handed on yet.
    left: u64,
    /// Of those, the ones under the header handed on last (all of them if the frame is uncut).
    piece_left: u64,
    /// Byte 0 of the next piece's header: the original FIN bit and opcode (opcode 0, i.e.
    /// continuation, after the first piece); FIN is only set on the last piece.
    first: u8,
    /// The original masking key, if the frame is masked.
    key: Option<[u8; 4]>,
}

impl Frame {
    /// Starts the frame's next piece and returns its header: up to PIECE bytes, the original
    /// opcode on the first piece only, FIN only on the last (and only if the frame had it).
    fn next_piece(&mut self) -> ([u8; MAX_HEADER], usize) {
        let piece = self.left.min(PIECE_BYTES);
        let last = if piece == self.left { FIN } else { 0 };
        let piece_header = header(self.first & (OPCODE | last), self.key, piece);
        self.first &= FIN;
        self.piece_left = piece;
        piece_header
    }
}

impl<S> SplitFrames<S> {
    /// `limit`: a data frame announcing more than this many payload bytes is passed on uncut,
    /// so that the websocket layer refuses it from its header alone (its max_frame_size check),
    /// before any of it is buffered.
    pub(super) fn new(inner: S, limit: usize) -> Self {
        Self {
            inner,
            limit,
            head: [0; MAX_HEADER],
            head_len: 0,
            out: [0; MAX_HEADER],
            out_start: 0,
            out_end: 0,
            frame: None,
        }
    }

    /// Queues `out[..len]` for the reader.
    fn emit(&mut self, out: [u8; MAX_HEADER], len: usize) {
        (self.out, self.out_start, self.out_end) = (out, 0, len.min(MAX_HEADER));
    }

    /// `head[..size]` is a whole header: starts its frame, and says whether the frame is cut
    /// (a data frame without RSV bits of more than PIECE bytes, up to `limit`). The header of a
    /// frame cut is not handed on: its pieces get headers of their own.
    fn open_frame(&mut self, size: usize) -> bool {
        let len = payload_len(&self.head[..size]);
        let first = self.head[0];
        let cut = first & RSV == 0
            && first & OPCODE <= 2
            && len > PIECE_BYTES
            && len >> 63 == 0
            && usize::try_from(len).is_ok_and(|len| len <= self.limit);
        let key = (self.head[1] & MASK != 0)
            .then(|| self.head[..size].last_chunk().copied())
            .flatten();
        self.frame = Some(Frame {
            left: len,
            piece_left: if cut { 0 } else { len },
            first,
            key,
        });
        self.head_len = 0;
        cut
    }

    /// Walks `data`, just read into the reader's buffer, where no header is due: passes whole
    /// frames and payload on in place, rewrites in place the header of a frame to cut into its
    /// first piece's, and keeps a header the read cut short for the next call. Returns how much
    /// of `data`, from its start, is handed on.
    ///
    /// `data` is at most PIECE bytes, so past a frame's header it never reaches the end of a
    /// first piece: no header has to be inserted, only replaced by one no longer (the original
    /// announces more than PIECE bytes, hence a 16- or 64-bit length; a piece's is 16-bit).
    fn scan(&mut self, data: &mut [u8]) -> usize {
        let mut at = 0;
        loop {
            if let Some(frame) = &mut self.frame {
                let here = data.len() - at;
                let taken = u64::try_from(here).map_or(frame.left, |n| n.min(frame.left));
                frame.left -= taken;
                frame.piece_left -= taken;
                if frame.left > 0 {
                    return data.len();
                }
                // At most `here`, as `taken` is.
                at += usize::try_from(taken).unwrap_or(here);
                self.frame = None;
            }
            let rest = &data[at..];
            if rest.is_empty() {
                return at;
            }
            let size = header_size(rest);
            let Some(whole) = rest.get(..size) else {
                self.head[..rest.len()].copy_from_slice(rest);
                self.head_len = rest.len();
                return at;
            };
            self.head[..size].copy_from_slice(whole);
            if !self.open_frame(size) {
                at += size;
                continue;
            }
            let Some(frame) = &mut self.frame else {
                return at;
            };
            // A whole piece (the frame is longer), of which `payload` bytes are here.
            let (piece, piece_size) = frame.next_piece();
            let payload = data.len() - at - size;
            let taken = u64::try_from(payload).unwrap_or(PIECE_BYTES);
            frame.piece_left -= taken;
            frame.left -= taken;
            data[at..at + piece_size].copy_from_slice(&piece[..piece_size]);
            data.copy_within(at + size.., at + piece_size);
            return at + piece_size + payload;
        }
    }
}

/// A frame header with the shortest length encoding.
fn header(first: u8, key: Option<[u8; 4]>, len: u64) -> ([u8; MAX_HEADER], usize) {
    let mut head = [0; MAX_HEADER];
    head[0] = first;
    head[1] = if key.is_some() { MASK } else { 0 };
    let mut end = 2;
    if let Ok(short @ 0..=125) = u8::try_from(len) {
        head[1] |= short;
    } else if let Ok(medium) = u16::try_from(len) {
        head[1] |= 126;
        head[2..4].copy_from_slice(&medium.to_be_bytes());
        end = 4;
    } else {
        head[1] |= 127;
        head[2..10].copy_from_slice(&len.to_be_bytes());
        end = 10;
    }
    if let Some(key) = key {
        head[end..end + 4].copy_from_slice(&key);
        end += 4;
    }
    (head, end)
}

/// The size of the header that starts with `head` (2 until its second byte is known).
fn header_size(head: &[u8]) -> usize {
    let Some(&second) = head.get(1) else { return 2 };
    let extended = match second & !MASK {
        126 => 2,
        127 => 8,
        _ => 0,
    };
    2 + extended + if second & MASK != 0 { 4 } else { 0 }
}

/// The payload length a whole header announces.
fn payload_len(head: &[u8]) -> u64 {
    match *head {
        [_, second, a, b, ..] if second & !MASK == 126 => u64::from(u16::from_be_bytes([a, b])),
        [_, second, a, b, c, d, e, f, g, h, ..] if second & !MASK == 127 => {
            u64::from_be_bytes([a, b, c, d, e, f, g, h])
        }
        [_, second, ..] => u64::from(second & !MASK),
        _ => 0,
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for SplitFrames<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        // Each call hands on a header of ours, or else what one read of `inner` into `buf`
        // brought. Nothing is filled before `inner` is polled, so its errors and Pending pass
        // as they are, and so does its EOF (0 bytes), wherever it comes.
        loop {
            if this.out_start < this.out_end || buf.remaining() == 0 {
                let n = (this.out_end - this.out_start).min(buf.remaining());
                buf.put_slice(&this.out[this.out_start..this.out_start + n]);
                this.out_start += n;
                return Poll::Ready(Ok(()));
            }
            match &mut this.frame {
                // The rest of a header an earlier read cut short: read exactly that much.
                None if this.head_len > 0 => {
                    let size = header_size(&this.head[..this.head_len]);
                    if this.head_len == size {
                        if !this.open_frame(size) {
                            this.emit(this.head, size);
                        }
                        continue;
                    }
                    let mut part = ReadBuf::new(&mut this.head[this.head_len..size]);
                    ready!(Pin::new(&mut this.inner).poll_read(cx, &mut part))?;
                    let n = part.filled().len();
                    if n == 0 {
                        // EOF: hand on what came of the header, then the EOF.
                        let came = mem::take(&mut this.head_len);
                        this.emit(this.head, came);
                    }
                    this.head_len += n;
                }
                // A frame being cut, with a piece's header still to come: its payload is
                // read up to the end of the current piece.
                Some(frame) if frame.piece_left < frame.left => {
                    if frame.piece_left == 0 {
                        let (out, len) = frame.next_piece();
                        this.emit(out, len);
                        continue;
                    }
                    let room = usize::try_from(frame.piece_left)
                        .map_or(buf.remaining(), |left| left.min(buf.remaining()));
                    let mut part = ReadBuf::new(buf.initialize_unfilled_to(room));
                    ready!(Pin::new(&mut this.inner).poll_read(cx, &mut part))?;
                    let n = part.filled().len();
                    buf.advance(n);
                    let n = u64::try_from(n).map_or(frame.piece_left, |n| n.min(frame.piece_left));
                    frame.piece_left -= n;
                    frame.left -= n;
                    return Poll::Ready(Ok(()));
                }
                // Between frames, or in a payload with no header left to add: one read of up
                // to a piece, handed on in place, many small frames at once.
                _ => {
                    let room = buf.remaining().min(PIECE);
                    let mut part = ReadBuf::new(buf.initialize_unfilled_to(room));
                    ready!(Pin::new(&mut this.inner).poll_read(cx, &mut part))?;
                    if part.filled().is_empty() {
                        return Poll::Ready(Ok(()));
                    }
                    let kept = this.scan(part.filled_mut());
                    buf.advance(kept);
                    if kept > 0 {
                        return Poll::Ready(Ok(()));
                    }
                    // All of it was the start of a header, now in `head`: read the rest.
                }
            }
        }
    }
}

super::forward_write::forward_write!(SplitFrames);

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::task::Waker;
    use std::time::Duration;

    use futures_util::StreamExt;
    use proptest::prelude::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream, duplex};
    use tokio::time::timeout;
    use tokio_tungstenite::WebSocketStream;
    use tokio_tungstenite::tungstenite::error::{CapacityError, Error};
    use tokio_tungstenite::tungstenite::protocol::{Message, Role, WebSocketConfig};

    use super::*;

    const KEY: [u8; 4] = [0x37, 0xfa, 0x21, 0x3d];

    /// A client frame: `first` is byte 0 (FIN | RSV | opcode), the payload masked with `key`.
    fn frame(first: u8, key: Option<[u8; 4]>, payload: &[u8]) -> Vec<u8> {
        let (head, n) = header(first, key, payload.len().try_into().expect("fits"));
        let masked = payload.iter().enumerate();
        let masked = masked.map(|(i, b)| b ^ key.map_or(0, |k| k[i % 4]));
        head[..n].iter().copied().chain(masked).collect()
    }

    /// How many frames, the longest data frame payload, and the messages as (opcode, unmasked
    /// payload) and control frames as (opcode, bytes) in order.
    fn events(mut bytes: &[u8]) -> (usize, usize, Vec<(u8, Vec<u8>)>) {
        let (mut frames, mut longest, mut events, mut message) = (0, 0, Vec::new(), None);
        while !bytes.is_empty() {
            let size = header_size(bytes);
            let end = size + usize::try_from(payload_len(&bytes[..size])).expect("fits");
            frames += 1;
            let key = bytes[..size]
                .last_chunk::<4>()
                .filter(|_| bytes[1] & MASK != 0);
            let payload = bytes[size..end].iter().enumerate();
            let payload = payload.map(|(i, b)| b ^ key.map_or(0, |k| k[i % 4]));
            let (first, frame) = (bytes[0], bytes[..end].to_vec());
            bytes = &bytes[end..];
            if first & OPCODE >= 8 {
                events.push((first & OPCODE, frame));
                continue;
            }
            longest = longest.max(end - size);
            let (opcode, data) = message.get_or_insert_with(|| (first & OPCODE, Vec::new()));
            data.extend(payload);
            if first & FIN != 0 {
                events.push((*opcode, mem::take(data)));
                message = None;
            }
        }
        (frames, longest, events)
    }

    /// A reader that yields the given chunks, one (or part of one) per read, then EOF.
    struct Chunks(VecDeque<io::Result<Vec<u8>>>);

    impl AsyncRead for Chunks {
        fn poll_read(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            if let Some(mut chunk) = self.0.pop_front().transpose()? {
                let n = chunk.len().min(buf.remaining());
                buf.put_slice(&chunk[..n]);
                if n < chunk.len() {
                    self.0.push_front(Ok(chunk.split_off(n)));
                }
            }
            Poll::Ready(Ok(()))
        }
    }

    /// What `input` becomes, arriving in chunks of the given sizes and read `read` bytes at a time.
    fn rewrite(input: &[u8], chunks: &[usize], read: usize, limit: usize) -> Vec<u8> {
        let (mut queue, mut rest, mut sizes) = (VecDeque::new(), input, chunks.iter().cycle());
        while let (false, Some(&size)) = (rest.is_empty(), sizes.next()) {
            let (chunk, after) = rest.split_at(size.clamp(1, rest.len()));
            queue.push_back(Ok(chunk.to_vec()));
            rest = after;
        }
        let mut split = SplitFrames::new(Chunks(queue), limit);
        let (mut out, mut space) = (Vec::new(), vec![0; read]);
        loop {
            let mut buf = ReadBuf::new(&mut space);
            let polled =
                Pin::new(&mut split).poll_read(&mut Context::from_waker(Waker::noop()), &mut buf);
            assert!(matches!(polled, Poll::Ready(Ok(()))), "{polled:?}");
            if buf.filled().is_empty() {
                return out;
            }
            out.extend(buf.filled());
        }
    }

    fn text(len: usize) -> Vec<u8> {
        "aé😀".bytes().cycle().take(len).collect()
    }

    /// Text 100 KB, a ping, binary 40 KB, a small text, then a text message in fragments of 20
    /// and 50 KB with a pong between them: 7 + 1 + 3 + 1 + 2 + 1 + 4 frames once cut.
    fn sample() -> Vec<u8> {
        [
            frame(FIN | 1, Some(KEY), &text(100 * 1024)),
            frame(FIN | 9, Some(KEY), b"ping"),
            frame(FIN | 2, Some([1, 2, 3, 4]), &[0xa5; 40 * 1024]),
            frame(FIN | 1, Some(KEY), b"{}"),
            frame(1, Some(KEY), &text(20 * 1024)),
            frame(FIN | 10, Some(KEY), b""),
            frame(0, Some([9, 8, 7, 6]), &text(50 * 1024)),
        ]
        .concat()
    }

    #[test]
    fn data_frames_become_pieces_of_the_same_messages_however_they_arrive() {
        let input = sample();
        let whole = rewrite(&input, &[input.len()], 64 * 1024, 1 << 20);
        let (frames, longest, messages) = events(&whole);
        assert_eq!(
            (frames, messages),
            (7 + 1 + 3 + 1 + 2 + 1 + 4, events(&input).2)
        );
        assert_eq!(longest, PIECE);
        assert_eq!(rewrite(&input, &[1], 1, 1 << 20), whole, "a byte at a time");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn any_chunking_gives_the_same_output(
            chunks in prop::collection::vec(1..20_000usize, 1..20),
            read in 1..40_000usize,
        ) {
            let input = sample();
            let whole = rewrite(&input, &[input.len()], 64 * 1024, 1 << 20);
            prop_assert_eq!(rewrite(&input, &chunks, read, 1 << 20), whole);
        }
    }

    /// A frame for the property below: opcode (data, reserved or control), FIN, RSV1, masked,
    /// payload length (control frames, whose length the RFC caps, are cut to 125 bytes).
    fn any_frame() -> impl Strategy<Value = Vec<u8>> {
        let opcode = prop::sample::select(vec![0u8, 1, 2, 3, 8, 9, 10]);
        let len = prop_oneof![0..200usize, PIECE - 2..PIECE + 3, 0..3 * PIECE + 7];
        (
            opcode,
            any::<bool>(),
            prop::bool::weighted(0.1),
            prop::bool::weighted(0.9),
            len,
        )
            .prop_map(|(opcode, fin, rsv, masked, len)| {
                let first = opcode | if fin { FIN } else { 0 } | if rsv { 0x40 } else { 0 };
                let len = if opcode >= 8 { len.min(125) } else { len };
                frame(first, masked.then_some(KEY), &text(len))
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Whatever frames come, in whatever chunks: the same messages and control frames in
        /// the same order, and no data frame of the kind that is cut longer than a piece.
        #[test]
        fn any_frames_keep_their_messages_and_no_cut_kind_passes_a_piece(
            frames in prop::collection::vec(any_frame(), 1..8),
            chunks in prop::collection::vec(1..20_000usize, 1..6),
            read in 1..40_000usize,
        ) {
            let input = frames.concat();
            let output = rewrite(&input, &chunks, read, 1 << 20);
            prop_assert_eq!(events(&output).2, events(&input).2);
            let mut rest = &output[..];
            while !rest.is_empty() {
                let size = header_size(rest);
                let len = usize::try_from(payload_len(&rest[..size])).expect("fits");
                if rest[0] & (RSV | OPCODE) <= 2 {
                    prop_assert!(len <= PIECE, "a data frame of {} bytes passed", len);
                }
                rest = &rest[size + len..];
            }
        }
    }

    #[test]
    fn other_frames_pass_byte_for_byte() {
        let payload = text(PIECE + 1);
        let frames = [
            frame(FIN | 0x40 | 1, Some(KEY), &payload), // RSV1
            frame(FIN | 1, Some(KEY), &payload[..PIECE]),
            frame(FIN | 2, Some(KEY), b""),
            frame(FIN | 3, Some(KEY), &payload), // a reserved opcode
            frame(FIN | 9, Some(KEY), &payload), // a control frame (too long: refused later)
            frame(FIN | 1, Some(KEY), &text(PIECE * 2 + 1)), // over the limit below
            [
                &[FIN | 1, MASK | 127, 0x80, 0, 0, 0, 0, 0, 0, 0][..],
                &KEY,
                b"xyz",
            ]
            .concat(),
        ];
        for bytes in frames {
            assert_eq!(rewrite(&bytes, &[3], 5, PIECE * 2), bytes);
        }
    }

    #[test]
    fn an_eof_inside_a_frame_passes_on() {
        let bytes = frame(FIN | 1, Some(KEY), &text(PIECE * 2)); // 8-byte headers, in and out
        for (end, out) in [(3, 3), (8, 8), (20, 20), (PIECE + 30, PIECE + 38)] {
            assert_eq!(rewrite(&bytes[..end], &[7], 100, 1 << 20).len(), out);
        }
    }

    #[tokio::test]
    async fn errors_pass_unchanged() {
        #[derive(Debug, thiserror::Error)]
        #[error("budget")]
        struct Marker;
        let bytes = frame(FIN | 1, Some(KEY), &text(PIECE * 2));
        let chunks = [Ok(bytes[..100].to_vec()), Err(io::Error::other(Marker))];
        let mut split = SplitFrames::new(Chunks(chunks.into()), 1 << 20);
        let error = split.read_to_end(&mut Vec::new()).await.expect_err("fails");
        assert!(
            error.get_ref().is_some_and(|e| e.is::<Marker>()),
            "{error:?}"
        );
    }

    async fn server(io: DuplexStream, limit: usize) -> WebSocketStream<SplitFrames<DuplexStream>> {
        let config = WebSocketConfig::default()
            .max_frame_size(Some(limit))
            .max_message_size(Some(limit));
        WebSocketStream::from_raw_socket(SplitFrames::new(io, limit), Role::Server, Some(config))
            .await
    }

    #[tokio::test]
    async fn tungstenite_reassembles_one_text_message() {
        let (mut client, io) = duplex(64 * 1024);
        let mut ws = server(io, 4 << 20).await;
        let message = "aé😀".repeat(150_000); // 1 MB, cut inside code points
        let mut bytes = frame(FIN | 1, Some(KEY), message.as_bytes());
        bytes.extend(frame(FIN | 1, Some(KEY), b"{}"));
        let writer = tokio::spawn(async move { client.write_all(&bytes).await.map(|()| client) });
        let received = ws.next().await.expect("a message").expect("valid");
        assert!(
            received == Message::Text(message.into()),
            "not the message sent"
        );
        let received = ws.next().await.expect("a message").expect("valid");
        assert_eq!(received, Message::text("{}"), "the next message");
        writer.await.expect("joined").expect("written");
    }

    #[tokio::test]
    async fn a_frame_over_the_limit_is_refused_from_its_header() {
        let (mut client, io) = duplex(64 * 1024);
        let mut ws = server(io, 64 * 1024).await;
        let bytes = frame(FIN | 1, Some(KEY), &text(1 << 20));
        client.write_all(&bytes[..14]).await.expect("written"); // the header only
        let received = timeout(Duration::from_secs(5), ws.next()).await;
        let received = received
            .expect("refused without the payload")
            .expect("an item");
        assert!(
            matches!(received, Err(Error::Capacity(CapacityError::MessageTooLong { size, max_size }))
                if size == 1 << 20 && max_size == 64 * 1024),
            "{received:?}"
        );
    }
}
