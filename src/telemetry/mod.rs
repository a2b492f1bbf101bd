//! What the server tells its operators: logs (`tracing`, text or JSON
//! lines), Prometheus metrics ([`metrics`]) and, when an OTLP endpoint is
//! set, distributed traces ([`traces`]).

pub mod metrics;
pub mod repeats;
mod scrape;
pub mod traces;

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
/// or JSON lines, and repeated warnings are limited ([`repeats`]). With an
/// `otlp_endpoint`, spans are exported there too ([`traces`]); then this
/// must run inside the tokio runtime that serves, and the exporter it
/// returns is shut down (flushed) at exit.
pub fn init_tracing(
    format: LogFormat,
    otlp_endpoint: Option<&str>,
) -> Result<Option<traces::Exporter>, crate::StartError> {
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
    let logs = tracing_subscriber::registry().with(lines.with_filter(filter));
    // Off, no layer at all: an absent `Option` layer would still take an
    // interest in every call site (tracing-subscriber's `None` answers
    // `Interest::always`), which makes the libraries' trace-level events
    // reach the registry and costs a third more per call.
    let Some(endpoint) = otlp_endpoint else {
        let _ = logs.try_init();
        return Ok(None);
    };
    let (spans, exporter) = traces::layer(endpoint)?;
    if logs.with(spans).try_init().is_ok() {
        traces::switch_on();
        tracing::info!(endpoint, "exporting traces over OTLP/gRPC");
    }
    Ok(Some(exporter))
}
