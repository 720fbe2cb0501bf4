//! `agentwire sandbox-exec`: what each sandbox policy lets a command do.
