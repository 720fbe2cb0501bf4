//! Tests of the patch tool.
