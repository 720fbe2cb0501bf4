//! Pseudo-terminals for `command/exec` with `tty: true`, with `rustix` (no `unsafe` here).
//!
//! The server keeps the master side, non-blocking and driven by Tokio's reactor (through
//! Tokio's Unix pipe types, which take any pollable descriptor safely); the process gets the
//! slave side as stdin, stdout and stderr. Making the slave its controlling terminal
//! needs `setsid` + `TIOCSCTTY` in the child between `fork` and `exec`, which safe Rust cannot
//! do in a `pre_exec` hook; the child is `agentwire sandbox-exec --tty`, our own program, which
//! does it before it executes the command.

use std::io;
use std::os::fd::OwnedFd;

use agentwire_protocol::CommandExecTerminalSize;
use rustix::fs::{Mode, OFlags};
use rustix::pty::OpenptFlags;
use rustix::termios::Winsize;
use tokio::net::unix::pipe;

/// The server's side of a pseudo-terminal: one descriptor to read the process's output, a
/// duplicate to write its input.
#[derive(Debug)]
pub(super) struct Master {
    output: pipe::Receiver,
    input: pipe::Sender,
}

/// Opens a pseudo-terminal of `size`; returns the master and the slave.
pub(super) fn open(size: CommandExecTerminalSize) -> io::Result<(Master, OwnedFd)> {
    let master = rustix::pty::openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY)?;
    rustix::pty::grantpt(&master)?;
    rustix::pty::unlockpt(&master)?;
    let name = rustix::pty::ptsname(&master, Vec::new())?;
    let slave = rustix::fs::open(
        name.as_c_str(),
        OFlags::RDWR | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    rustix::termios::tcsetwinsize(&master, winsize(size))?;
    rustix::io::ioctl_fionbio(&master, true)?;
    // `openpt` has no close-on-exec flag everywhere; the process must not inherit the master.
    rustix::io::fcntl_setfd(&master, rustix::io::FdFlags::CLOEXEC)?;
    let input = master.try_clone()?;
    Ok((
        Master {
            output: pipe::Receiver::from_owned_fd_unchecked(master)?,
            input: pipe::Sender::from_owned_fd_unchecked(input)?,
        },
        slave,
    ))
}

fn winsize(size: CommandExecTerminalSize) -> Winsize {
    Winsize {
        ws_row: size.rows,
        ws_col: size.cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    }
}

impl Master {
    /// Reads what the process wrote to the terminal; `Ok(0)` once every slave descriptor is
    /// closed (Linux reports that as `EIO`).
    pub(super) async fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            self.output.readable().await?;
            match self.output.try_read(buf) {
                Ok(n) => return Ok(n),
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => {}
                Err(error)
                    if error.raw_os_error() == Some(rustix::io::Errno::IO.raw_os_error()) =>
                {
                    return Ok(0);
                }
                Err(error) => return Err(error),
            }
        }
    }

    /// Writes some of `bytes` as terminal input; returns how many were taken.
    pub(super) async fn write(&self, bytes: &[u8]) -> io::Result<usize> {
        loop {
            self.input.writable().await?;
            match self.input.try_write(bytes) {
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => {}
                result => return result,
            }
        }
    }

    /// Sets the terminal's window size (the process gets `SIGWINCH`).
    pub(super) fn resize(&self, size: CommandExecTerminalSize) -> io::Result<()> {
        rustix::termios::tcsetwinsize(&self.input, winsize(size))?;
        Ok(())
    }

    /// The terminal's current window size.
    #[cfg(test)]
    fn size(&self) -> io::Result<CommandExecTerminalSize> {
        let size = rustix::termios::tcgetwinsize(&self.input)?;
        Ok(CommandExecTerminalSize::builder()
            .rows(size.ws_row)
            .cols(size.ws_col)
            .build())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn bytes_cross_the_terminal_both_ways_and_the_size_sticks() {
        let (master, slave) =
            open(CommandExecTerminalSize::builder().rows(7).cols(33).build()).expect("pty");
        assert_eq!(
            master.size().expect("size"),
            CommandExecTerminalSize::builder().rows(7).cols(33).build()
        );
        assert!(rustix::termios::isatty(&slave));
        master
            .resize(
                CommandExecTerminalSize::builder()
                    .rows(50)
                    .cols(120)
                    .build(),
            )
            .expect("resize");
        let seen = rustix::termios::tcgetwinsize(&slave).expect("slave size");
        assert_eq!((seen.ws_row, seen.ws_col), (50, 120));

        // Input written on the master is echoed back by the line discipline.
        let written = master.write(b"hi\n").await.expect("write");
        assert_eq!(written, 3);
        let mut echoed = Vec::new();
        let mut buf = [0u8; 64];
        while !echoed.ends_with(b"\r\n") {
            let n = master.read(&mut buf).await.expect("read");
            assert!(n > 0, "terminal closed early: {echoed:?}");
            echoed.extend_from_slice(&buf[..n]);
        }
        assert_eq!(echoed, b"hi\r\n");
        let mut line = [0u8; 8];
        let n = rustix::io::read(&slave, &mut line).expect("slave read");
        assert_eq!(&line[..n], b"hi\n");

        // Output on the slave reaches the master; closing the slave ends the stream.
        rustix::io::write(&slave, b"out").expect("slave write");
        drop(slave);
        let mut output = Vec::new();
        loop {
            let n = master.read(&mut buf).await.expect("read");
            if n == 0 {
                break;
            }
            output.extend_from_slice(&buf[..n]);
        }
        assert_eq!(output, b"out");
    }
}
