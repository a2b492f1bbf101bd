//! `sudoku-server`: parse settings, set up logging, serve until SIGTERM/SIGINT.

#![forbid(unsafe_code)]

use clap::Parser;
use sudoku_grpc::server::{Config, Prepared, shutdown_signal};
use sudoku_grpc::telemetry::init_tracing;

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
