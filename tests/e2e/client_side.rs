//! The client side: the `agentwire-client` crate against the real binary over stdio, ws:// and
//! unix://; `agentwire exec`; the daemon and its stdio proxy.

mod daemon;
mod exec;
mod library;
