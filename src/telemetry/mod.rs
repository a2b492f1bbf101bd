//! What the server tells its operators: logs (`tracing`, text or JSON
//! lines) and Prometheus metrics ([`metrics`]).

pub mod metrics;
pub mod repeats;
mod scrape;

use clap::ValueEnum;

/// Log line format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// Sets up logging: RUST_LOG filters (default `info`), `format` picks text
/// or JSON lines, and repeated warnings are limited ([`repeats`]).
pub fn init_tracing(format: LogFormat) {
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::filter::FilterExt as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;

    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let lines = tracing_subscriber::fmt::layer()
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr);
    let lines = match format {
        LogFormat::Text => lines.boxed(),
        LogFormat::Json => lines.json().flatten_event(true).boxed(),
    };
    // The level filter first, so lines it drops are not counted as
    // suppressed repeats.
    let filter = filter.and(repeats::RepeatLimit::default());
    let _ = tracing_subscriber::registry()
        .with(lines.with_filter(filter))
        .try_init();
}
