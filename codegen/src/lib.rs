//! agentwire-codegen
