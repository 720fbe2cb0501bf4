//! The parts the benchmark programs share: driving a server over stdio ([`session`]),
//! medians of rounds ([`stats`]) and keeping the vCPUs awake while measuring ([`awake`]).

pub mod awake;
pub mod session;
pub mod stats;
