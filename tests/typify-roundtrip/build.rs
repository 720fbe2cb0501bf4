use std::{env, fs, path::PathBuf};
fn main() {
    println!("cargo:rerun-if-env-changed=AGENTWIRE_TYPIFY_BUNDLE");
    let p = PathBuf::from(env::var("AGENTWIRE_TYPIFY_BUNDLE").unwrap());
    let v: serde_json::Value = serde_json::from_str(&fs::read_to_string(&p).unwrap()).unwrap();
    let root: schemars08::schema::RootSchema = serde_json::from_value(v).unwrap();
    let mut s = typify::TypeSpaceSettings::default();
    s.with_derive("PartialEq".into());
    let mut ts = typify::TypeSpace::new(&s);
    ts.add_root_schema(root).unwrap();
    let out = PathBuf::from(env::var("OUT_DIR").unwrap()).join("gen.rs");
    fs::write(&out, ts.to_stream().to_string()).unwrap();
}
