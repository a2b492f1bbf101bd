//! Compiles the contract in proto/ with protox (no system protoc), keeps the
//! descriptor set for server reflection, and generates the tonic stubs.

use std::{env, fs, path::PathBuf};

use prost::Message;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto");
    // The descriptor set includes the imports (google/rpc/status.proto), so
    // reflection clients can resolve every type the service mentions.
    let fds = protox::compile(["sudoku/v1/sudoku.proto"], ["proto"])?;

    let out = PathBuf::from(env::var("OUT_DIR")?);
    fs::write(out.join("sudoku_descriptor.bin"), fds.encode_to_vec())?;
    tonic_prost_build::configure()
        // google.rpc.Status is tonic-types' own, so its richer-error helpers apply.
        .extern_path(".google.rpc", "::tonic_types::pb")
        .compile_fds(fds)?;
    Ok(())
}
