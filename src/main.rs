//! `sudoku-server`: parse settings, set up logging (and tracing), serve
//! until SIGTERM/SIGINT, flush the traces.

#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::Parser;
use sudoku_grpc::server::{Config, Prepared, shutdown_signal};
use sudoku_grpc::telemetry::{init_tracing, traces};

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // The error and each cause beneath it, as one line.
            let mut line = format!("sudoku-server: {e}");
            let mut cause = e.source();
            while let Some(c) = cause {
                line.push_str(&format!(": {c}"));
                cause = c.source();
            }
            eprintln!("{line}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let config = Config::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(config.runtime_threads())
        .enable_all()
        .build()?;
    // In the runtime: the trace exporter's channel runs on it.
    let exporter = {
        let _runtime = runtime.enter();
        init_tracing(config.log_format, config.otlp_endpoint().as_deref())?
    };
    // The server runs as a task on the runtime's workers, not on this
    // thread: the worker that sees the listener ready then accepts and
    // starts the connection's task itself, where on this thread each new
    // connection waited for this thread to be woken, and then for a
    // worker to be (a connection's first request reached a solver 0.1-1 ms
    // later through a server on 2 cores).
    let served = runtime.block_on(async {
        tokio::spawn(async move {
            let server = Prepared::bind(config).await?;
            server.serve(shutdown_signal()).await
        })
        .await
    });
    // After the drain, while the runtime still runs the exporter's channel.
    if let Some(exporter) = exporter {
        exporter.shutdown(traces::FLUSH_TIMEOUT);
    }
    Ok(served??)
}
