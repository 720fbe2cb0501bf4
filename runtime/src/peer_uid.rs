//! Who is on the other end of a local connection: the user id of the process that opened it.
//!
//! A loopback TCP listener without a token serves only processes of the server's own user
//! (issue #32): any local user can reach a loopback port, and whoever reaches the server can
//! run commands as its user. The kernel knows the owner of both ends of a loopback
//! connection: the peer's socket is a row of `/proc/net/tcp` (or `tcp6`) whose local address
//! is the peer's address and whose remote address is ours, and its `uid` column is the user
//! that created it. A row the kernel shows without an inode (a socket its process has already
//! closed, or one in `TIME_WAIT`) names no owner, and the peer is refused. For a Unix socket
//! the kernel says it directly (`SO_PEERCRED`).

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::AsFd;

/// Most rows of a socket table read before giving up (a host with more open TCP sockets than
/// this refuses peers it cannot find rather than read without end).
const MAX_ROWS: usize = 1_000_000;

/// Longest row read; the kernel's are about 150 bytes.
const MAX_ROW_BYTES: u64 = 512;

/// Why a peer is not served.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PeerRefused {
    /// The peer's process belongs to another user.
    #[error(
        "this server serves only processes of its own user (uid {server}) without a token, \
         and the connection comes from uid {peer}; configure a bearer token to serve other users"
    )]
    OtherUser {
        /// The server's effective user id.
        server: u32,
        /// The peer's.
        peer: u32,
    },
    /// The peer's socket could not be found or has no owner any more.
    #[error(
        "this server serves only processes of its own user without a token, and the owner of \
         the connection from {0} cannot be established"
    )]
    Unknown(String),
}

/// The server's effective user id.
pub fn server_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// Checks that the loopback TCP connection from `peer` to `local` was opened by a process of
/// the server's own user. Reads the kernel's socket tables: blocking work, a few milliseconds
/// at most on a busy host (call it off the async workers).
pub fn check_loopback_peer(local: SocketAddr, peer: SocketAddr) -> Result<(), PeerRefused> {
    let unknown = || PeerRefused::Unknown(peer.to_string());
    let owner = loopback_owner(local, peer).ok_or_else(unknown)?;
    same_user(owner)
}

/// Checks the peer of a Unix socket the same way, from the kernel's `SO_PEERCRED`.
pub fn check_unix_peer(socket: impl AsFd) -> Result<(), PeerRefused> {
    let credentials = rustix::net::sockopt::socket_peercred(socket)
        .map_err(|error| PeerRefused::Unknown(format!("a Unix socket ({error})")))?;
    same_user(credentials.uid.as_raw())
}

fn same_user(peer: u32) -> Result<(), PeerRefused> {
    let server = server_uid();
    if peer == server {
        Ok(())
    } else {
        Err(PeerRefused::OtherUser { server, peer })
    }
}

/// The uid owning the socket whose local address is `peer` and remote address `local`.
fn loopback_owner(local: SocketAddr, peer: SocketAddr) -> Option<u32> {
    let (local_ip, peer_ip) = (local.ip().to_canonical(), peer.ip().to_canonical());
    // An IPv4 connection may be accepted on an IPv6 socket (shown as a mapped address): the
    // peer's own socket can be either kind, so both tables are looked at.
    let tables: &[&str] = match (local_ip, peer_ip) {
        (IpAddr::V4(_), IpAddr::V4(_)) => &["/proc/net/tcp", "/proc/net/tcp6"],
        _ => &["/proc/net/tcp6"],
    };
    let local = SocketAddr::new(local_ip, local.port());
    let peer = SocketAddr::new(peer_ip, peer.port());
    tables.iter().find_map(|table| {
        let file = File::open(table).ok()?;
        find_owner(BufReader::new(file), local, peer)
    })
}

/// The `uid` of the row of a socket table (`/proc/net/tcp` format) whose local address is
/// `peer` and remote address `local`, if that row names a live socket (a non-zero inode).
fn find_owner(mut table: impl BufRead, local: SocketAddr, peer: SocketAddr) -> Option<u32> {
    let mut row = Vec::with_capacity(MAX_ROW_BYTES as usize);
    for _ in 0..MAX_ROWS {
        row.clear();
        let read = (&mut table)
            .take(MAX_ROW_BYTES)
            .read_until(b'\n', &mut row)
            .ok()?;
        if read == 0 {
            return None;
        }
        if row.last() != Some(&b'\n') && read as u64 == MAX_ROW_BYTES {
            // A row longer than any the kernel writes: not a socket table.
            return None;
        }
        let Ok(text) = std::str::from_utf8(&row) else {
            continue;
        };
        if let Some(owner) = parse_row(text)
            && owner.local == peer
            && owner.remote == local
        {
            return (owner.inode != 0).then_some(owner.uid);
        }
    }
    None
}

/// The columns of a socket table row that matter here.
#[derive(Debug, PartialEq, Eq)]
struct Row {
    local: SocketAddr,
    remote: SocketAddr,
    uid: u32,
    inode: u64,
}

/// Parses `sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode …`.
fn parse_row(text: &str) -> Option<Row> {
    let mut columns = text.split_ascii_whitespace();
    let _slot = columns.next()?;
    let local = parse_address(columns.next()?)?;
    let remote = parse_address(columns.next()?)?;
    let _state = columns.next()?;
    let _queues = columns.next()?;
    let _timer = columns.next()?;
    let _retransmits = columns.next()?;
    let uid = columns.next()?.parse().ok()?;
    let _timeout = columns.next()?;
    let inode = columns.next()?.parse().ok()?;
    Some(Row {
        local,
        remote,
        uid,
        inode,
    })
}

/// Parses `0100007F:1F90` (IPv4) or 32 hexadecimal digits and a port (IPv6): the address as
/// 32-bit words in the host's byte order, the port in hexadecimal. Mapped IPv4 addresses come
/// back as IPv4.
fn parse_address(text: &str) -> Option<SocketAddr> {
    let (address, port) = text.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |at: usize| -> Option<[u8; 4]> {
        let hex = address.get(at..at + 8)?;
        Some(u32::from_str_radix(hex, 16).ok()?.to_ne_bytes())
    };
    let ip = match address.len() {
        8 => IpAddr::V4(Ipv4Addr::from(word(0)?)),
        32 => {
            let mut octets = [0u8; 16];
            for (i, chunk) in octets.chunks_exact_mut(4).enumerate() {
                chunk.copy_from_slice(&word(i * 8)?);
            }
            IpAddr::V6(Ipv6Addr::from(octets)).to_canonical()
        }
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_endian = "little")]
    #[test]
    fn rows_of_both_tables_parse() {
        let v4 = "   3: 0100007F:A2C4 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  \
                  65534        0 123456 1 0000000000000000 20 4 30 10 -1\n";
        assert_eq!(
            parse_row(v4),
            Some(Row {
                local: "127.0.0.1:41668".parse().expect("addr"),
                remote: "127.0.0.1:8080".parse().expect("addr"),
                uid: 65534,
                inode: 123456,
            })
        );
        let v6 = "   0: 00000000000000000000000001000000:A2C4 \
                  0000000000000000FFFF00000100007F:1F90 01 00000000:00000000 00:00000000 \
                  00000000     0        0 99 1 0000000000000000 20 4 30 10 -1\n";
        let row = parse_row(v6).expect("row");
        assert_eq!(row.local, "[::1]:41668".parse().expect("addr"));
        assert_eq!(row.remote, "127.0.0.1:8080".parse().expect("addr"));
        assert_eq!((row.uid, row.inode), (0, 99));
    }

    #[cfg(target_endian = "little")]
    #[test]
    fn the_peer_row_is_found_and_an_ownerless_one_refused() {
        let local: SocketAddr = "127.0.0.1:8080".parse().expect("addr");
        let peer: SocketAddr = "127.0.0.1:41668".parse().expect("addr");
        let header = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n";
        // Our own end (local 8080, remote the peer) comes first and must not be taken.
        let ours = "   1: 0100007F:1F90 0100007F:A2C4 01 00000000:00000000 00:00000000 00000000     0        0 7 1\n";
        let theirs = |uid: u32, inode: u64| {
            format!(
                "   2: 0100007F:A2C4 0100007F:1F90 01 00000000:00000000 00:00000000 00000000 {uid:>6}        0 {inode} 1\n"
            )
        };
        let table = format!("{header}{ours}{}", theirs(1000, 55));
        assert_eq!(find_owner(table.as_bytes(), local, peer), Some(1000));
        let closed = format!("{header}{ours}{}", theirs(0, 0));
        assert_eq!(find_owner(closed.as_bytes(), local, peer), None);
        let absent = format!("{header}{ours}");
        assert_eq!(find_owner(absent.as_bytes(), local, peer), None);
        let garbage = "x".repeat(4096);
        assert_eq!(find_owner(garbage.as_bytes(), local, peer), None);
    }

    #[test]
    fn a_real_loopback_connection_is_ours() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let local = listener.local_addr().expect("addr");
        let _client = std::net::TcpStream::connect(local).expect("connect");
        let (_accepted, peer) = listener.accept().expect("accept");
        assert_eq!(check_loopback_peer(local, peer), Ok(()));
        let (a, _b) = std::os::unix::net::UnixStream::pair().expect("pair");
        assert_eq!(check_unix_peer(&a), Ok(()));
    }
}
