"""Both ends of a distributed trace through sudoku-server, for tests/it/otel.rs.

- receive: an OTLP/gRPC trace receiver, a grpcio server implementing
  opentelemetry.proto.collector.trace.v1.TraceService/Export from the
  published protos (the opentelemetry-proto package). It listens on
  127.0.0.1 (--port, 0 for any), prints `listening PORT`, then one JSON line
  per span received:
  {"service", "trace_id", "span_id", "parent_span_id", "trace_state", "name",
   "kind", "status", "attributes": {key: value}}, ids in lowercase hex; with
  --quiet only `received N spans` each second the count changed.

- client: a Python client instrumented with opentelemetry-instrumentation-grpc
  (its client spans go to an in-memory exporter). Inside one root span of
  its own it calls Solve for each --solve puzzle, then SolveBatch with one
  request message per --batch argument (puzzles separated by commas), and
  prints one JSON line: {"trace_id", "root_span_id", "calls": [{"method",
  "span_id"}]}, the span ids of the instrumentation's client spans, whose
  context travels to the server in `traceparent`.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from concurrent import futures

import grpc


def hexid(raw):
    return raw.hex()


def value_of(any_value):
    kind = any_value.WhichOneof("value")
    if kind is None:
        return None
    if kind in ("array_value", "kvlist_value", "bytes_value"):
        return str(getattr(any_value, kind))
    return getattr(any_value, kind)


def receive(args):
    from opentelemetry.proto.collector.trace.v1 import (
        trace_service_pb2,
        trace_service_pb2_grpc,
    )
    from opentelemetry.proto.trace.v1 import trace_pb2

    out = threading.Lock()
    received = [0]

    class Receiver(trace_service_pb2_grpc.TraceServiceServicer):
        def Export(self, request, context):
            lines = []
            for resource_spans in request.resource_spans:
                service = None
                for kv in resource_spans.resource.attributes:
                    if kv.key == "service.name":
                        service = value_of(kv.value)
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        lines.append(
                            json.dumps(
                                {
                                    "service": service,
                                    "trace_id": hexid(span.trace_id),
                                    "span_id": hexid(span.span_id),
                                    "parent_span_id": hexid(span.parent_span_id),
                                    "trace_state": span.trace_state,
                                    "name": span.name,
                                    "kind": trace_pb2.Span.SpanKind.Name(span.kind),
                                    "status": trace_pb2.Status.StatusCode.Name(
                                        span.status.code
                                    ),
                                    "attributes": {
                                        kv.key: value_of(kv.value)
                                        for kv in span.attributes
                                    },
                                }
                            )
                        )
            with out:
                received[0] += len(lines)
                if not args.quiet:
                    for line in lines:
                        print(line)
                    sys.stdout.flush()
            return trace_service_pb2.ExportTraceServiceResponse()

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Receiver(), server)
    port = server.add_insecure_port(f"127.0.0.1:{args.port}")
    server.start()
    with out:
        print(f"listening {port}")
        sys.stdout.flush()
    if not args.quiet:
        server.wait_for_termination()
        return
    shown = -1
    while True:
        time.sleep(1)
        with out:
            if received[0] != shown:
                shown = received[0]
                print(f"received {shown} spans")
                sys.stdout.flush()


def generate_stubs(proto_dir, out_dir):
    subprocess.run(
        [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"-I{proto_dir}",
            f"--python_out={out_dir}",
            f"--grpc_python_out={out_dir}",
            "sudoku/v1/sudoku.proto",
        ],
        check=True,
    )
    sys.path.insert(0, out_dir)
    from sudoku.v1 import sudoku_pb2, sudoku_pb2_grpc

    return sudoku_pb2, sudoku_pb2_grpc


def client(args):
    from opentelemetry import trace
    from opentelemetry.instrumentation.grpc import GrpcInstrumentorClient
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
        InMemorySpanExporter,
    )

    exported = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exported))
    trace.set_tracer_provider(provider)
    # Before the channel is made: the instrumentation wraps grpc's channel
    # constructors.
    GrpcInstrumentorClient().instrument()

    with tempfile.TemporaryDirectory() as stubs:
        pb, pb_grpc = generate_stubs(args.proto_dir, stubs)
        tracer = trace.get_tracer("otel_trace.py")
        with grpc.insecure_channel(args.target) as channel:
            stub = pb_grpc.SudokuServiceStub(channel)
            with tracer.start_as_current_span("python-client") as root:
                for puzzle in args.solve:
                    reply = stub.Solve(
                        pb.SolveRequest(puzzle=pb.Grid(text=puzzle)), timeout=30
                    )
                    if reply.solution.outcome != pb.OUTCOME_SOLVED:
                        sys.exit(f"FAIL: Solve answered {reply.solution.outcome}")
                if args.batch:
                    messages = [
                        pb.SolveBatchRequest(
                            items=[
                                pb.BatchItem(id=i, puzzle=pb.Grid(text=p))
                                for i, p in enumerate(batch.split(","))
                            ]
                        )
                        for batch in args.batch
                    ]
                    results = [
                        r
                        for response in stub.SolveBatch(iter(messages), timeout=30)
                        for r in response.results
                    ]
                    wanted = sum(len(m.items) for m in messages)
                    if len(results) != wanted:
                        sys.exit(f"FAIL: SolveBatch answered {len(results)} of {wanted}")
                root_context = root.get_span_context()
    provider.force_flush()
    calls = []
    for span in exported.get_finished_spans():
        if span.kind != trace.SpanKind.CLIENT:
            continue
        context = span.get_span_context()
        if context.trace_id != root_context.trace_id:
            sys.exit(f"FAIL: client span {span.name} is not in the root's trace")
        calls.append(
            {
                "method": span.name.rsplit("/", 1)[-1],
                "span_id": format(context.span_id, "016x"),
                "status": span.status.status_code.name,
            }
        )
    print(
        json.dumps(
            {
                "trace_id": format(root_context.trace_id, "032x"),
                "root_span_id": format(root_context.span_id, "016x"),
                "calls": calls,
            }
        )
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    modes = parser.add_subparsers(dest="mode", required=True)
    r = modes.add_parser("receive")
    r.add_argument("--port", type=int, default=0)
    r.add_argument(
        "--quiet",
        action="store_true",
        help="print no spans, only `received N spans` when N changes (for benches/otel.sh)",
    )
    c = modes.add_parser("client")
    c.add_argument("--target", required=True)
    c.add_argument("--proto-dir", required=True)
    c.add_argument("--solve", action="append", default=[])
    c.add_argument("--batch", action="append", default=[])
    args = parser.parse_args()
    if args.mode == "receive":
        receive(args)
    else:
        client(args)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
