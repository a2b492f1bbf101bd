//! Distributed tracing with real parts: the `sudoku-server` binary exports
//! over OTLP/gRPC to a receiver built on the published OTLP protos, and a
//! Python client instrumented with opentelemetry-instrumentation-grpc makes
//! the calls inside its own trace (both in tests/it/scripts/otel_trace.py).
//! The server's spans must continue the client's trace, with the client's
//! call spans as parents and the RPC semantic-convention attributes; with
//! the receiver gone, calls must go on as before; on SIGTERM the spans
//! still queued must be exported.
//!
//! Needs the Python virtualenv (see python_client.rs); skips without it,
//! except under CI=true, where it fails.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use sudoku_grpc::pb::sudoku_service_client::SudokuServiceClient;
use tonic::Request;

use crate::support::{BinaryServer, CLASSIC, data_set, python_venv, repo, run, skip};

fn script() -> std::path::PathBuf {
    repo().join("tests/it/scripts/otel_trace.py")
}

/// The OTLP receiver of otel_trace.py, and the spans it has printed.
struct Receiver {
    child: Child,
    port: u16,
    spans: Arc<Mutex<Vec<Value>>>,
}

impl Receiver {
    fn start(python: &std::path::Path) -> Receiver {
        let mut child = Command::new(python)
            .arg(script())
            .args(["receive", "--port", "0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the OTLP receiver");
        let mut lines = BufReader::new(child.stdout.take().expect("piped")).lines();
        let first = lines
            .next()
            .and_then(Result::ok)
            .unwrap_or_else(|| panic!("the OTLP receiver said nothing: {:?}", child.try_wait()));
        let port = first
            .strip_prefix("listening ")
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or_else(|| panic!("unexpected first line {first:?}"));
        let spans = Arc::new(Mutex::new(Vec::new()));
        let collected = spans.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                let span: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("receiver line {line:?}: {e}"));
                collected.lock().unwrap().push(span);
            }
        });
        Receiver { child, port, spans }
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The spans received so far.
    fn spans(&self) -> Vec<Value> {
        self.spans.lock().unwrap().clone()
    }

    /// Waits up to `limit` until `done` holds of the spans received.
    fn wait_for(&self, limit: Duration, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let started = Instant::now();
        loop {
            let spans = self.spans();
            if done(&spans) || started.elapsed() > limit {
                return spans;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The server spans of `trace_id`, by span id.
fn of_trace<'a>(spans: &'a [Value], trace_id: &str) -> HashMap<String, &'a Value> {
    spans
        .iter()
        .filter(|s| s["trace_id"] == trace_id)
        .map(|s| (s["span_id"].as_str().unwrap().to_string(), s))
        .collect()
}

fn named<'a>(spans: &HashMap<String, &'a Value>, name: &str) -> Vec<&'a Value> {
    spans
        .values()
        .copied()
        .filter(|s| s["name"] == name)
        .collect()
}

fn attr<'a>(span: &'a Value, key: &str) -> &'a Value {
    &span["attributes"][key]
}

/// Checks the attributes every call span carries.
fn assert_rpc_attributes(span: &Value, method: &str) {
    assert_eq!(span["kind"], "SPAN_KIND_SERVER", "{span}");
    assert_eq!(attr(span, "rpc.system"), "grpc", "{span}");
    assert_eq!(
        attr(span, "rpc.service"),
        "sudoku.v1.SudokuService",
        "{span}"
    );
    assert_eq!(attr(span, "rpc.method"), method, "{span}");
    assert_eq!(attr(span, "rpc.grpc.status_code"), 0, "{span}");
    assert_eq!(span["service"], "sudoku-otel-test", "{span}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_spans_continue_the_python_clients_trace_and_survive_the_collector() {
    const TEST: &str = "server_spans_continue_the_python_clients_trace_and_survive_the_collector";
    let python = match python_venv() {
        Ok(p) => p,
        Err(e) => return skip(TEST, &e),
    };
    let mut receiver = Receiver::start(&python);
    let endpoint = receiver.endpoint();
    // Exported every 100 ms; a queue small enough for the calls below to
    // overflow it once the receiver is gone.
    let server = BinaryServer::spawn_with_env(
        &[
            ("OTEL_SERVICE_NAME", "sudoku-otel-test"),
            ("OTEL_BSP_SCHEDULE_DELAY", "100"),
            ("OTEL_BSP_MAX_QUEUE_SIZE", "64"),
            ("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "16"),
        ],
        &["--otlp-endpoint", &endpoint],
    )
    .await;

    // A puzzle whose search needs more than the inline budget (20 nodes),
    // so it moves to a solver thread in a span of its own.
    let hard = &data_set("puzzles6_forum_hardest_1106")[1];
    let mut cmd = Command::new(&python);
    cmd.arg(script())
        .args(["client", "--target", &server.addr.to_string()])
        .arg("--proto-dir")
        .arg(repo().join("proto"))
        .args(["--solve", hard])
        .args(["--batch", &format!("{CLASSIC},{CLASSIC}")])
        .args(["--batch", CLASSIC]);
    let out = tokio::task::spawn_blocking(move || run(cmd, Duration::from_secs(120)))
        .await
        .unwrap()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(out.success, "otel_trace.py client failed:\n{}", out.both());
    let client: Value = serde_json::from_str(out.stdout.trim())
        .unwrap_or_else(|e| panic!("client output: {e}\n{}", out.both()));
    let trace_id = client["trace_id"].as_str().unwrap().to_string();
    let client_span = |method: &str| -> String {
        let calls = client["calls"].as_array().unwrap();
        let found: Vec<&Value> = calls.iter().filter(|c| c["method"] == method).collect();
        assert_eq!(found.len(), 1, "one {method} client span in {client}");
        found[0]["span_id"].as_str().unwrap().to_string()
    };
    let (solve_parent, batch_parent) = (client_span("Solve"), client_span("SolveBatch"));

    // The call spans, one search span and two message spans.
    let spans = receiver.wait_for(Duration::from_secs(30), |spans| {
        of_trace(spans, &trace_id).len() >= 5
    });
    let ours = of_trace(&spans, &trace_id);
    assert_eq!(
        ours.len(),
        5,
        "server spans of trace {trace_id}: {spans:#?}"
    );

    let solve = named(&ours, "sudoku.v1.SudokuService/Solve");
    assert_eq!(solve.len(), 1, "{ours:#?}");
    let solve = solve[0];
    assert_eq!(solve["parent_span_id"], solve_parent.as_str(), "{solve}");
    assert_rpc_attributes(solve, "Solve");
    assert_eq!(attr(solve, "sudoku.outcome"), "OUTCOME_SOLVED", "{solve}");
    let nodes = attr(solve, "sudoku.nodes").as_i64().unwrap();
    assert!(nodes > 20, "{solve}");
    assert!(
        attr(solve, "sudoku.guesses").as_i64().unwrap() > 0,
        "{solve}"
    );
    let search = named(&ours, "search");
    assert_eq!(search.len(), 1, "{ours:#?}");
    assert_eq!(
        search[0]["parent_span_id"], solve["span_id"],
        "{}",
        search[0]
    );
    assert_eq!(attr(search[0], "sudoku.nodes").as_i64(), Some(nodes));
    assert_eq!(attr(search[0], "sudoku.outcome"), "OUTCOME_SOLVED");

    let batch = named(&ours, "sudoku.v1.SudokuService/SolveBatch");
    assert_eq!(batch.len(), 1, "{ours:#?}");
    let batch = batch[0];
    assert_eq!(batch["parent_span_id"], batch_parent.as_str(), "{batch}");
    assert_rpc_attributes(batch, "SolveBatch");
    let mut items: Vec<i64> = named(&ours, "message")
        .into_iter()
        .map(|m| {
            assert_eq!(m["parent_span_id"], batch["span_id"], "{m}");
            assert_eq!(attr(m, "sudoku.solved"), attr(m, "sudoku.items"), "{m}");
            assert_eq!(attr(m, "sudoku.failed"), 0, "{m}");
            attr(m, "sudoku.items").as_i64().unwrap()
        })
        .collect();
    items.sort();
    assert_eq!(items, [1, 2]);

    // The collector goes away: calls, traced and sampled, go on as before
    // while the exporter fails and its queue overflows.
    receiver.kill();
    let mut solver = SudokuServiceClient::new(server.channel().await);
    let started = Instant::now();
    for i in 0..200u32 {
        let mut request = Request::new(crate::support::solve_request(CLASSIC));
        let traceparent = format!("00-{trace_id}-{:016x}-01", u64::from(i) + 1);
        request
            .metadata_mut()
            .insert("traceparent", traceparent.parse().unwrap());
        let reply = tokio::time::timeout(Duration::from_secs(10), solver.solve(request))
            .await
            .unwrap_or_else(|_| panic!("call {i} hung with the collector gone"));
        reply.unwrap_or_else(|e| panic!("call {i} failed with the collector gone: {e}"));
    }
    let elapsed = started.elapsed();
    eprintln!("200 traced Solve calls with the collector gone: {elapsed:?}");
    assert!(
        elapsed < Duration::from_secs(60),
        "200 calls took {elapsed:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queued_spans_are_flushed_on_sigterm_and_the_sampler_is_honoured() {
    const TEST: &str = "queued_spans_are_flushed_on_sigterm_and_the_sampler_is_honoured";
    let python = match python_venv() {
        Ok(p) => p,
        Err(e) => return skip(TEST, &e),
    };
    let receiver = Receiver::start(&python);
    // The standard variable rather than the flag; an export delay longer
    // than the test, so only the flush at exit can deliver; a sampler that
    // follows a sampled parent and samples nothing else.
    let mut server = BinaryServer::spawn_with_env(
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.endpoint()),
            ("OTEL_SERVICE_NAME", "sudoku-otel-test"),
            ("OTEL_BSP_SCHEDULE_DELAY", "600000"),
            ("OTEL_TRACES_SAMPLER", "parentbased_traceidratio"),
            ("OTEL_TRACES_SAMPLER_ARG", "0"),
        ],
        &[],
    )
    .await;
    let sampled = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    let unsampled = "00-1af7651916cd43dd8448eb211c80319c-c7ad6b7169203331-00";
    let mut solver = SudokuServiceClient::new(server.channel().await);
    for traceparent in [Some(sampled), Some(unsampled), None] {
        let mut request = Request::new(crate::support::solve_request(CLASSIC));
        if let Some(tp) = traceparent {
            request
                .metadata_mut()
                .insert("traceparent", tp.parse().unwrap());
            request
                .metadata_mut()
                .insert("tracestate", "vendor=opaque".parse().unwrap());
        }
        solver.solve(request).await.unwrap();
    }
    drop(solver);
    assert!(receiver.spans().is_empty(), "exported before the flush");
    server.sigterm();
    let status = server.wait_exit(Duration::from_secs(30)).await;
    assert!(
        status.is_some_and(|s| s.success()),
        "exit {status:?}: {}",
        server.logs()
    );
    // The flush happened before the exit; the receiver's reader may lag.
    let spans = receiver.wait_for(Duration::from_secs(5), |spans| !spans.is_empty());
    assert_eq!(spans.len(), 1, "only the sampled call's span: {spans:#?}");
    let span = &spans[0];
    assert_eq!(
        span["trace_id"], "0af7651916cd43dd8448eb211c80319c",
        "{span}"
    );
    assert_eq!(span["parent_span_id"], "b7ad6b7169203331", "{span}");
    assert_eq!(span["trace_state"], "vendor=opaque", "{span}");
    assert_eq!(span["name"], "sudoku.v1.SudokuService/Solve", "{span}");
    assert_rpc_attributes(span, "Solve");
}
