//! Integration tests of the runtime: a scripted handler served over real pipes, property tests
//! of the framing, validation and dispatch layers.

mod harness;
mod props;
mod scripted;
mod stdio;
mod ws;
