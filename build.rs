//! Compiles the contract in proto/ with the protoc that the
//! `protoc-bin-vendored` crate ships (no system protoc), keeps the
//! descriptor set for server reflection, and generates the tonic stubs.

use std::{env, path::PathBuf};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto");
    println!("cargo:rerun-if-env-changed=PROTOC");
    let mut config = tonic_prost_build::Config::new();
    // A protoc named by the environment wins, as prost-build documents;
    // otherwise the vendored one.
    if env::var_os("PROTOC").is_none() {
        config.protoc_executable(protoc_bin_vendored::protoc_bin_path()?);
    }
    // The well-known types (google/protobuf/any.proto, ...) ship with it.
    let well_known = protoc_bin_vendored::include_path()?;
    let out = PathBuf::from(env::var("OUT_DIR")?);
    tonic_prost_build::configure()
        // The descriptor set includes the imports (google/rpc/status.proto), so
        // reflection clients can resolve every type the service mentions.
        .file_descriptor_set_path(out.join("sudoku_descriptor.bin"))
        // google.rpc.Status is tonic-types' own, so its richer-error helpers apply.
        .extern_path(".google.rpc", "::tonic_types::pb")
        .compile_with_config(
            config,
            &[PathBuf::from("proto/sudoku/v1/sudoku.proto")],
            &[PathBuf::from("proto"), well_known],
        )?;
    Ok(())
}
