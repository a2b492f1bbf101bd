//! `sudoku-server`: parse settings, set up logging, serve until SIGTERM/SIGINT.

#![forbid(unsafe_code)]

use clap::Parser;
use sudoku_grpc::config::Config;
use sudoku_grpc::server::{Prepared, init_tracing, shutdown_signal};

fn main() -> anyhow::Result<()> {
    let config = Config::parse();
    init_tracing(config.log_format);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(config.runtime_threads())
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let server = Prepared::bind(config).await?;
        server.serve(shutdown_signal()).await
    })
}
