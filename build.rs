//! Generates `ctxwin.h` with cbindgen into `OUT_DIR` (`make header` copies it to `include/`),
//! with the version macros derived from Cargo's version so they can never drift.

use std::env;
use std::path::PathBuf;

// The exact counter's tables (vocabularies, Unicode classes), generated from tiktoken-rs's
// vocabularies and regex-syntax's Unicode data.
#[path = "src/tokens/bpe/build_tables.rs"]
mod build_tables;

fn main() {
    let crate_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!("cargo:rerun-if-changed=src/ffi");
    println!("cargo:rerun-if-changed=src/tokens/bpe/build_tables.rs");
    println!("cargo:rerun-if-changed=src/tokens/bpe/layout.rs");
    if let Err(err) = build_tables::generate(&out_dir) {
        panic!("generating the token counter's tables failed: {err}");
    }

    let mut config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("cbindgen.toml is readable and valid");
    config.after_includes = Some(format!("{}{}", version_macros(), config.after_includes.unwrap_or_default()));

    // Only the shims in src/ffi are the C API; the safe core's public types are not.
    // cbindgen follows `mod` declarations, so src/ffi/mod.rs brings in every shim file once.
    let builder = cbindgen::Builder::new().with_config(config).with_src(crate_dir.join("src/ffi/mod.rs"));
    // While 0.x every release may break the ABI: the SONAME carries the full version, as
    // rustls-ffi's does, so a program only ever loads the library it was linked against.
    if env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        let version = env::var("CARGO_PKG_VERSION").expect("cargo sets CARGO_PKG_VERSION");
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libctxwin.so.{version}");
    }
    let header = out_dir.join("ctxwin.h");
    builder.generate().expect("cbindgen can parse the crate").write_to_file(&header);
    println!("cargo:include={}", out_dir.display());
    println!("cargo:header={}", header.display());
}

fn version_macros() -> String {
    let part =
        |name: &str| -> u32 { env::var(name).expect("cargo sets the version parts").parse().expect("version parts are numbers") };
    let (major, minor, patch) =
        (part("CARGO_PKG_VERSION_MAJOR"), part("CARGO_PKG_VERSION_MINOR"), part("CARGO_PKG_VERSION_PATCH"));
    format!(
        "\n#define CTXWIN_VERSION_MAJOR {major}\n#define CTXWIN_VERSION_MINOR {minor}\n\
         #define CTXWIN_VERSION_PATCH {patch}\n#define CTXWIN_VERSION_NUMBER {}\n\
         #define CTXWIN_VERSION_STRING \"{major}.{minor}.{patch}\"\n",
        major * 1_000_000 + minor * 1_000 + patch
    )
}
