//! agentwire
fn main() {}
