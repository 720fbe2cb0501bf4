#![allow(missing_docs, unused_qualifications)]
include!(concat!(env!("OUT_DIR"), "/gen.rs"));
