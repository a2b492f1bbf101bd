//! Distributed tracing with OpenTelemetry, off unless an OTLP endpoint is
//! set (`--otlp-endpoint`, `SUDOKU_OTLP_ENDPOINT`,
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT`).
//!
//! On, a `tracing-opentelemetry` layer turns the service's spans (one per
//! call, one per SolveBatch message, one per search that leaves the inline
//! budget) into OpenTelemetry spans, and a [`BatchSpanProcessor`] exports
//! them over OTLP/gRPC from its own thread: its queue is bounded
//! (`OTEL_BSP_MAX_QUEUE_SIZE`, 2,048 spans) and a span that finds it full
//! is dropped, so a collector that is down or slow costs neither a call's
//! time nor memory. A call whose metadata carries W3C trace context
//! (`traceparent`, `tracestate`) gets its span as a child of the caller's.
//! The sampler is the standard one (`OTEL_TRACES_SAMPLER`,
//! `OTEL_TRACES_SAMPLER_ARG`; parent-based always-on by default), asked
//! when a call's span is made ([`call_span`]) so that a dropped call makes
//! no OpenTelemetry span at all, and the resource's `service.name` is
//! `OTEL_SERVICE_NAME`, else `sudoku-server`.
//!
//! Off, no layer is installed: the spans stay at debug level, which the
//! log filter usually disables, and a call pays one relaxed load to learn
//! that there is no trace context to read.
//!
//! See docs/tracing.md.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::StartError;
use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::{SpanKind, TraceContextExt as _, TracerProvider as _};
use opentelemetry_otlp::WithExportConfig as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{
    BatchConfigBuilder, BatchSpanProcessor, IdGenerator as _, RandomIdGenerator, Sampler,
    SamplingDecision, SdkTracerProvider, ShouldSample,
};
use tonic::Code;
use tonic::metadata::{KeyRef, MetadataMap};
use tracing::Span;
use tracing::field::Empty;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;
use tracing_subscriber::registry::LookupSpan;

use crate::pb::sudoku_service_server::SERVICE_NAME;
use crate::telemetry::metrics;

/// True once the OpenTelemetry layer is installed.
static ON: AtomicBool = AtomicBool::new(false);

/// The configured sampler (`OTEL_TRACES_SAMPLER`), asked when a call's
/// span is made; see [`call_span`].
static SAMPLER: OnceLock<Box<dyn ShouldSample>> = OnceLock::new();

/// The target of the spans of calls the sampler dropped, and of their
/// children: the logs still see them (under RUST_LOG=debug), the
/// OpenTelemetry layer never does.
const UNTRACED: &str = "sudoku_grpc::untraced";

/// How long shutdown waits for the last spans to be exported.
pub const FLUSH_TIMEOUT: Duration = Duration::from_secs(5);

/// The `service.name` of the exported spans when `OTEL_SERVICE_NAME` (or
/// `service.name` in `OTEL_RESOURCE_ATTRIBUTES`) does not name one.
const DEFAULT_SERVICE_NAME: &str = "sudoku-server";

/// True when spans are exported.
pub fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// Where to export spans: `flag` (`--otlp-endpoint` or
/// `SUDOKU_OTLP_ENDPOINT`), else `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, else
/// `OTEL_EXPORTER_OTLP_ENDPOINT`; none (tracing off) when none is set or
/// `OTEL_SDK_DISABLED=true`.
pub fn endpoint(flag: Option<&str>) -> Option<String> {
    endpoint_from(flag, |name| std::env::var(name).ok())
}

fn endpoint_from(flag: Option<&str>, env: impl Fn(&str) -> Option<String>) -> Option<String> {
    if env("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
        return None;
    }
    flag.map(str::to_string)
        .or_else(|| env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
        .or_else(|| env("OTEL_EXPORTER_OTLP_ENDPOINT"))
        .map(|e| e.trim().to_string())
        .filter(|e| !e.is_empty())
}

/// The exporting half of tracing, kept by `main` to flush at exit.
#[must_use = "dropping it without shutdown loses the spans still queued"]
pub struct Exporter {
    provider: SdkTracerProvider,
}

impl Exporter {
    /// Exports the spans still queued and stops, waiting at most `timeout`
    /// (a collector that is down or slow gets no longer). Call it while the
    /// runtime the exporter was built in still runs.
    pub fn shutdown(self, timeout: Duration) {
        ON.store(false, Ordering::Relaxed);
        if let Err(e) = self.provider.shutdown_with_timeout(timeout) {
            tracing::warn!(error = %e, "spans not all exported at shutdown");
        }
    }
}

/// The OpenTelemetry layer that exports to `endpoint`, and its exporter.
/// Must run inside a tokio runtime: the exporter's channel runs on it.
/// The layer sees only this crate's spans (and its warnings, as span
/// events), so the exporter's own gRPC client is never traced.
pub(super) fn layer<S>(
    endpoint: &str,
) -> Result<(impl tracing_subscriber::Layer<S> + use<S>, Exporter), StartError>
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    use tracing_subscriber::Layer as _;

    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_tonic()
        .with_endpoint(endpoint)
        .build()
        .map_err(|e| StartError::Traces {
            endpoint: endpoint.to_string(),
            source: e.into(),
        })?;
    // The queue's bound and the export cadence come from the standard
    // OTEL_BSP_* variables (2,048 spans, every 5 s, 512 at a time).
    let processor = BatchSpanProcessor::new(exporter, BatchConfigBuilder::default().build());
    // The configured sampler decides when a call's span is made, so that
    // a dropped call costs no OpenTelemetry span at all; the SDK then
    // only follows its decision down the call's children.
    let _ = SAMPLER.set(opentelemetry_sdk::trace::Config::default().sampler);
    let provider = SdkTracerProvider::builder()
        .with_span_processor(processor)
        .with_sampler(Sampler::ParentBased(Box::new(Sampler::AlwaysOn)))
        .with_resource(resource())
        .build();
    let tracer = provider.tracer(env!("CARGO_PKG_NAME"));
    let filter = tracing_subscriber::filter::filter_fn(|meta| {
        meta.target().starts_with(env!("CARGO_CRATE_NAME"))
            && meta.target() != UNTRACED
            && (meta.is_span() || *meta.level() <= tracing::Level::WARN)
    });
    // Only what a span says: no code locations, thread names, busy/idle
    // timings or context switches on every poll, which would cost every
    // call, sampled or not.
    let layer = tracing_opentelemetry::layer()
        .with_tracer(tracer)
        .with_location(false)
        .with_threads(false)
        .with_target(false)
        .with_tracked_inactivity(false)
        .with_context_activation(false)
        .with_filter(filter);
    Ok((layer, Exporter { provider }))
}

/// Marks tracing on, once its layer is installed.
pub(super) fn switch_on() {
    ON.store(true, Ordering::Relaxed);
}

/// The resource the spans come from: the SDK's (OTEL_SERVICE_NAME,
/// OTEL_RESOURCE_ATTRIBUTES, the SDK's own attributes), with our
/// service name when neither variable names one.
fn resource() -> Resource {
    let named = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let has_name = named("OTEL_SERVICE_NAME").is_some()
        || named("OTEL_RESOURCE_ATTRIBUTES").is_some_and(|attrs| {
            attrs
                .split(',')
                .any(|kv| kv.split('=').next().map(str::trim) == Some("service.name"))
        });
    let builder = Resource::builder();
    if has_name {
        builder.build()
    } else {
        builder.with_service_name(DEFAULT_SERVICE_NAME).build()
    }
}

/// The span of one call of `method` on `sudoku.v1.SudokuService`. With
/// tracing on and the call sampled, it carries the RPC semantic-convention
/// attributes, is named `sudoku.v1.SudokuService/<method>` and, when
/// `metadata` holds a `traceparent`, is a child of the caller's span. Its
/// outcome is filled in by [`record_code`] and [`record_answer`].
///
/// The sampler is asked here, with the caller's context: a `parentbased_*`
/// sampler follows the caller's sampled flag, a ratio decides by the
/// caller's trace id, or for a call without trace context by a fresh one
/// (the SDK then names the trace with another random id: the same odds).
/// A call it drops gets the plain logging span, which OpenTelemetry never
/// sees.
pub fn call_span(method: &'static str, metadata: &MetadataMap) -> Span {
    if !on() {
        return tracing::debug_span!("call", method, code = Empty);
    }
    let parent = match metadata.get("traceparent") {
        Some(_) => TraceContextPropagator::new().extract(&Carrier(metadata)),
        None => opentelemetry::Context::new(),
    };
    if !sampled(&parent, method) {
        return tracing::debug_span!(target: UNTRACED, "call", method, code = Empty);
    }
    let name = format!("{SERVICE_NAME}/{method}");
    let span = tracing::debug_span!(
        "call",
        method,
        code = Empty,
        otel.name = name.as_str(),
        otel.kind = "server",
        otel.status_code = Empty,
        rpc.system = "grpc",
        rpc.service = SERVICE_NAME,
        rpc.method = method,
        rpc.grpc.status_code = Empty,
        sudoku.outcome = Empty,
        sudoku.nodes = Empty,
        sudoku.guesses = Empty,
    );
    if parent.has_active_span() {
        // Fails only when the span is disabled or already started, and
        // then it has no parent to take.
        let _ = span.set_parent(parent);
    }
    span
}

/// Whether the configured sampler keeps a call of `method` with the
/// caller's context `parent`.
fn sampled(parent: &opentelemetry::Context, method: &str) -> bool {
    SAMPLER
        .get()
        .is_none_or(|sampler| sampled_by(&**sampler, parent, method))
}

fn sampled_by(sampler: &dyn ShouldSample, parent: &opentelemetry::Context, method: &str) -> bool {
    let remote = parent.span().span_context().clone();
    let trace_id = if remote.is_valid() {
        remote.trace_id()
    } else {
        RandomIdGenerator::default().new_trace_id()
    };
    let result = sampler.should_sample(Some(parent), trace_id, method, &SpanKind::Server, &[], &[]);
    result.decision == SamplingDecision::RecordAndSample
}

/// False inside the span of a call the sampler dropped (or outside any
/// span): a child made there stays out of OpenTelemetry too, rather than
/// start a trace of its own.
fn in_traced_call() -> bool {
    !on()
        || Span::current()
            .metadata()
            .is_some_and(|meta| meta.target() != UNTRACED)
}

/// The span of one SolveBatch request message of `items` items, in the
/// current call's span; [`record_work`] fills in what its items took.
pub fn message_span(items: usize) -> Span {
    if !in_traced_call() {
        return tracing::debug_span!(target: UNTRACED, "message", items);
    }
    tracing::debug_span!(
        "message",
        sudoku.items = int(items as u64),
        sudoku.solved = Empty,
        sudoku.failed = Empty,
        sudoku.nodes = Empty,
        sudoku.guesses = Empty,
    )
}

/// The span of the part of a unary call's search that runs on a solver
/// thread, after `inline_nodes` nodes on the thread that read the call;
/// [`record_answer`] fills in how it ended.
pub fn search_span(inline_nodes: u64) -> Span {
    if !in_traced_call() {
        return tracing::debug_span!(target: UNTRACED, "search", inline_nodes);
    }
    tracing::debug_span!(
        "search",
        sudoku.inline_nodes = int(inline_nodes),
        sudoku.outcome = Empty,
        sudoku.nodes = Empty,
        sudoku.guesses = Empty,
    )
}

/// Records how a call ended on its `span`: the status code, as a name
/// (`code`, for the logs) and as the number semantic conventions ask for
/// (`rpc.grpc.status_code`), and an error status for the codes that mean
/// the server failed.
pub fn record_code(span: &Span, code: Code) {
    span.record("code", metrics::code_name(code));
    if span.is_disabled() || !on() {
        return;
    }
    span.record("rpc.grpc.status_code", code as i64);
    // The server-side error codes of the gRPC semantic conventions.
    if matches!(
        code,
        Code::Unknown
            | Code::DeadlineExceeded
            | Code::Unimplemented
            | Code::Internal
            | Code::Unavailable
            | Code::DataLoss
    ) {
        span.record("otel.status_code", "ERROR");
    }
}

/// Records a search's answer on `span` (a call's or a search's):
/// `outcome` as the wire names it, and the work it took.
pub fn record_answer(span: &Span, outcome: &'static str, nodes: u64, guesses: u64) {
    span.record("sudoku.outcome", outcome);
    span.record("sudoku.nodes", int(nodes));
    span.record("sudoku.guesses", int(guesses));
}

/// Records on a message's `span` its items that were solved (any answer)
/// and failed (an error), and the work they took together.
pub fn record_work(span: &Span, solved: u64, failed: u64, nodes: u64, guesses: u64) {
    span.record("sudoku.solved", int(solved));
    span.record("sudoku.failed", int(failed));
    span.record("sudoku.nodes", int(nodes));
    span.record("sudoku.guesses", int(guesses));
}

/// A count as an attribute value: OpenTelemetry integers are signed
/// (tracing-opentelemetry sends a `u64` as a string).
fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Request metadata as OpenTelemetry's propagators read it.
struct Carrier<'a>(&'a MetadataMap);

impl Extractor for Carrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key)?.to_str().ok()
    }

    fn keys(&self) -> Vec<&str> {
        self.0
            .keys()
            .filter_map(|key| match key {
                KeyRef::Ascii(key) => Some(key.as_str()),
                KeyRef::Binary(_) => None,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_comes_first_then_the_standard_variables() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                vars.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        let both = &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://all:4317"),
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://traces:4317"),
        ];
        assert_eq!(endpoint_from(None, env(&[])), None);
        assert_eq!(
            endpoint_from(Some("http://flag:4317"), env(both)).as_deref(),
            Some("http://flag:4317")
        );
        assert_eq!(
            endpoint_from(None, env(both)).as_deref(),
            Some("http://traces:4317")
        );
        assert_eq!(
            endpoint_from(
                None,
                env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://all:4317")])
            )
            .as_deref(),
            Some("http://all:4317")
        );
        assert_eq!(
            endpoint_from(None, env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", " ")])),
            None
        );
        assert_eq!(
            endpoint_from(
                Some("http://flag:4317"),
                env(&[("OTEL_SDK_DISABLED", "TRUE")])
            ),
            None
        );
    }

    #[test]
    fn a_parent_based_ratio_follows_the_caller_and_decides_alone_for_roots() {
        let sampler = Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(0.0)));
        let context_of = |traceparent: &str| {
            let mut metadata = MetadataMap::new();
            metadata.insert("traceparent", traceparent.parse().unwrap());
            TraceContextPropagator::new().extract(&Carrier(&metadata))
        };
        let sampled = context_of("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
        let unsampled = context_of("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00");
        assert!(sampled_by(&sampler, &sampled, "Solve"));
        assert!(!sampled_by(&sampler, &unsampled, "Solve"));
        assert!(!sampled_by(
            &sampler,
            &opentelemetry::Context::new(),
            "Solve"
        ));
        let always = Sampler::ParentBased(Box::new(Sampler::AlwaysOn));
        assert!(sampled_by(&always, &opentelemetry::Context::new(), "Solve"));
    }

    #[test]
    fn trace_context_is_read_from_request_metadata() {
        let mut metadata = MetadataMap::new();
        metadata.insert(
            "traceparent",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
                .parse()
                .unwrap(),
        );
        metadata.insert("tracestate", "vendor=opaque".parse().unwrap());
        let cx = TraceContextPropagator::new().extract(&Carrier(&metadata));
        let span = cx.span();
        let remote = span.span_context();
        assert!(remote.is_remote() && remote.is_sampled());
        assert_eq!(
            remote.trace_id().to_string(),
            "4bf92f3577b34da6a3ce929d0e0e4736"
        );
        assert_eq!(remote.span_id().to_string(), "00f067aa0ba902b7");
        assert_eq!(remote.trace_state().get("vendor"), Some("opaque"));
        assert!(Carrier(&metadata).keys().contains(&"traceparent"));
    }
}
