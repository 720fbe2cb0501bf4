//! Blocking reads of JSON lines, for drivers that wait on their own thread instead of a tokio
//! runtime: the benchmark (one thread that times round trips, where a hop through a runtime
//! would be measured too), the conformance suite and the end-to-end tests. What a line means
//! is [`wire`](crate::wire)'s business; this only finds the lines.

use std::io::{ErrorKind, Read};

/// Splits what `R` yields into lines (without their `\n`), one blocking read at a time, in a
/// buffer reused across reads: a read that brings many lines hands each over without copying.
#[derive(Debug)]
pub struct LineReader<R> {
    inner: R,
    buffer: Vec<u8>,
    start: usize,
    end: usize,
    max_line: usize,
}

impl<R: Read> LineReader<R> {
    /// Reads `inner`; a line longer than `max_line` bytes is an error (a broken server).
    pub fn new(inner: R, max_line: usize) -> Self {
        Self {
            inner,
            buffer: vec![0; 256 * 1024],
            start: 0,
            end: 0,
            max_line,
        }
    }

    /// Reads once (blocking) and calls `on_line` for every complete line now buffered. At the
    /// end of input, a last line without its `\n` is handed over, then the error is
    /// [`ErrorKind::UnexpectedEof`].
    pub fn read_lines(&mut self, mut on_line: impl FnMut(&[u8])) -> std::io::Result<()> {
        if self.start > 0 {
            self.buffer.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buffer.len() {
            if self.buffer.len() >= self.max_line {
                return Err(std::io::Error::other(format!(
                    "a line longer than {} bytes",
                    self.max_line
                )));
            }
            self.buffer.resize(self.buffer.len() * 2, 0);
        }
        let n = loop {
            match self.inner.read(&mut self.buffer[self.end..]) {
                Ok(0) => {
                    if self.end > self.start {
                        on_line(&self.buffer[self.start..self.end]);
                        self.start = self.end;
                    }
                    return Err(ErrorKind::UnexpectedEof.into());
                }
                Ok(n) => break n,
                Err(error) if error.kind() == ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
            }
        };
        self.end += n;
        while let Some(i) = memchr::memchr(b'\n', &self.buffer[self.start..self.end]) {
            let line_end = self.start + i;
            on_line(&self.buffer[self.start..line_end]);
            self.start = line_end + 1;
        }
        Ok(())
    }

    /// The reader underneath.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Yields its chunks one read at a time.
    struct Chunks(Vec<&'static [u8]>);

    impl Read for Chunks {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.0.is_empty() {
                return Ok(0);
            }
            let chunk = self.0.remove(0);
            buf[..chunk.len()].copy_from_slice(chunk);
            Ok(chunk.len())
        }
    }

    #[test]
    fn lines_split_across_reads_come_out_whole_and_a_last_partial_line_too() {
        let mut reader = LineReader::new(
            Chunks(vec![b"{\"a\":1}\n{\"b\"", b":2}\n\n", b"tail"]),
            1 << 20,
        );
        let mut lines = Vec::new();
        let mut end = None;
        for _ in 0..4 {
            if let Err(e) = reader.read_lines(|l| lines.push(l.to_vec())) {
                end = Some(e.kind());
                break;
            }
        }
        assert_eq!(
            lines,
            vec![
                b"{\"a\":1}".to_vec(),
                b"{\"b\":2}".to_vec(),
                Vec::new(),
                b"tail".to_vec()
            ]
        );
        assert_eq!(end, Some(ErrorKind::UnexpectedEof));
    }

    #[test]
    fn an_endless_line_is_an_error_not_an_endless_buffer() {
        let endless = std::io::repeat(b'x');
        let mut reader = LineReader::new(endless, 1 << 20);
        let error = (0..64)
            .find_map(|_| reader.read_lines(|_| {}).err())
            .expect("stops");
        assert!(error.to_string().contains("longer than"), "{error}");
    }
}
