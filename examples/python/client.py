#!/usr/bin/env python3
"""Example Python client of sudoku.v1.SudokuService.

Copy it and keep what you need. It walks through everything a client of the
service is likely to use, and checks each answer, so it doubles as an
end-to-end test (tests/it/python_client.rs runs it against the real server):

  1. Solve (text and cells forms), gzip-compressed on the wire
  2. SolveBatch: a stream of request messages, results matched by id,
     including a bad item that gets its own google.rpc.Status
  3. INVALID_ARGUMENT with google.rpc.BadRequest details (grpcio-status)
  4. grpc.health.v1 Check and Watch (grpcio-health-checking)
  5. server reflection, v1 and v1alpha (grpcio-reflection)
  6. compression: gzip works; zstd is reported (grpcio cannot send it)
  7. Validate (a puzzle that breaks the rules gets its conflicts, not an
     error), Hint (the next step, checked against the solution) and
     Generate (a seeded server stream of rated puzzles, each checked unique
     here by a small solver of our own)

The channel carries a service config with a retry policy (UNAVAILABLE is
retried with exponential back-off) and a default deadline: see
SERVICE_CONFIG below.

Stubs are generated from ../../proto at start-up with grpcio-tools
(`python -m grpc_tools.protoc`, which bundles protoc), into a temporary
directory, or into --stubs DIR to keep them.

Usage:  python client.py [--target 127.0.0.1:50051] [--proto-dir DIR]
Exit status 0 when every check passed; 1 with a "FAIL:" line otherwise.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import grpc

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_PROTO_DIR = os.path.normpath(os.path.join(HERE, "..", "..", "proto"))
SERVICE = "sudoku.v1.SudokuService"

# The channel's service config (https://grpc.io/docs/guides/retry/).
# - retryPolicy: UNAVAILABLE means "this instance is shutting down or not
#   reachable right now", so the call is retried, up to 4 attempts in all,
#   waiting a random time up to 0.1 s, 0.2 s, 0.4 s (capped at 1 s) between
#   attempts. Other codes are not retried: INVALID_ARGUMENT would fail again,
#   and RESOURCE_EXHAUSTED (server overloaded) is better left to the
#   application's own back-off. A SolveBatch stream is retried only until
#   the server has sent its first response.
# - timeout: the deadline of a Solve that sets none of its own. SolveBatch
#   gets none: a stream lasts as long as its input, and a fixed deadline
#   would cut a long batch off mid-way (on a busy machine, a 49,158-puzzle
#   file is past 30 s).
RETRY_POLICY = {
    "maxAttempts": 4,
    "initialBackoff": "0.1s",
    "maxBackoff": "1s",
    "backoffMultiplier": 2,
    "retryableStatusCodes": ["UNAVAILABLE"],
}
SERVICE_CONFIG = {
    "methodConfig": [
        {
            "name": [{"service": SERVICE, "method": "Solve"}],
            "timeout": "30s",
            "retryPolicy": RETRY_POLICY,
        },
        {
            "name": [{"service": SERVICE}],
            "retryPolicy": RETRY_POLICY,
        },
    ]
}

CHANNEL_OPTIONS = [
    ("grpc.enable_retries", 1),
    ("grpc.service_config", json.dumps(SERVICE_CONFIG)),
]

# A classic puzzle with one solution ('.' is a blank).
PUZZLE = (
    "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79"
)
# A minimal 16x16 (4x4 boxes) of data/sizes/16x16-hard.txt.
PUZZLE16 = (
    ".E...DF9.A.3..B7.D....2.E....8.12.B73....F....C6A8.....6...B..4."
    "E......5.78D......7F......B.4....69A.7.G.....F5C....24D..3C..91."
    "4...7.C8B.........F...5A.C..D.2...G2........9......5.B63....C.A8"
    "62.G..7....1.4..........29.....G.9......3.EF..7....C.A3...D5.19."
)
# Harder ones for the batch.
BATCH_PUZZLES = [
    "4.....8.5.3..........7......2.....6.....8.4......1.......6.3.7.5..2.....1.4......",
    "52...6.........7.13...........4..8..6......5...........418.........3..2...87.....",
    "6.....8.3.4.7.................5.4.7.3..2.....1.6.......2.....5.....8.6......1....",
]
# Two 5s in row 1 (cells 0 and 8, r1c1 and r1c9): the givens break the rules.
CLASHING = "5.......5" + "." * 72


class CheckFailed(Exception):
    pass


def check(condition, what):
    if not condition:
        raise CheckFailed(what)


def generate_stubs(proto_dir, out_dir):
    """Runs protoc (bundled in grpcio-tools) on the contract; returns the
    generated modules. google/rpc/status.proto is not generated: its Python
    module comes with googleapis-common-protos (a grpcio-status dependency)."""
    cmd = [
        sys.executable,
        "-m",
        "grpc_tools.protoc",
        f"-I{proto_dir}",
        f"--python_out={out_dir}",
        f"--grpc_python_out={out_dir}",
        "sudoku/v1/sudoku.proto",
    ]
    subprocess.run(cmd, check=True)
    sys.path.insert(0, out_dir)
    from sudoku.v1 import sudoku_pb2, sudoku_pb2_grpc

    return sudoku_pb2, sudoku_pb2_grpc


def is_valid_solution(puzzle, solution):
    """True when `solution` is a full valid grid that keeps `puzzle`'s givens."""
    if len(solution) != 81 or not all(c in "123456789" for c in solution):
        return False
    for p, s in zip(puzzle, solution):
        if p not in ".0" and p != s:
            return False
    units = []
    for i in range(9):
        units.append([i * 9 + c for c in range(9)])  # row
        units.append([r * 9 + i for r in range(9)])  # column
        br, bc = 3 * (i // 3), 3 * (i % 3)
        units.append([(br + r) * 9 + bc + c for r in range(3) for c in range(3)])
    return all(sorted(solution[i] for i in unit) == list("123456789") for unit in units)


def bad_request_of(status_proto):
    """The google.rpc.BadRequest among a google.rpc.Status's details, if any."""
    from google.rpc import error_details_pb2

    for detail in status_proto.details:
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            return bad
    return None


def demo_solve(pb, stub):
    # Unary call, gzip-compressed request (the server answers gzip too).
    request = pb.SolveRequest(puzzle=pb.Grid(text=PUZZLE))
    response = stub.Solve(request, compression=grpc.Compression.Gzip)
    sol = response.solution
    check(sol.outcome == pb.OUTCOME_SOLVED, f"Solve outcome {sol.outcome}")
    check(is_valid_solution(PUZZLE, sol.grid.text), "Solve: invalid solution")
    print(f"ok: Solve (gzip) -> {sol.grid.text} in {sol.stats.nodes} nodes")

    # The cells form: the answer comes back in the form it was asked in.
    cells = [0 if c == "." else int(c) for c in PUZZLE]
    options = pb.SolveOptions(mode=pb.SOLVE_MODE_COUNT, max_solutions=2)
    response = stub.Solve(pb.SolveRequest(puzzle=pb.Grid(cells=cells), options=options))
    sol = response.solution
    text = "".join(str(v) for v in sol.grid.cells)
    check(sol.outcome == pb.OUTCOME_SOLVED, f"Solve(cells) outcome {sol.outcome}")
    check(sol.solution_count == 1, "Solve(cells): puzzle should be unique")
    check(is_valid_solution(PUZZLE, text), "Solve(cells): invalid solution")
    print("ok: Solve (cells, count mode) -> unique solution")

    # Other sizes: the Grid carries its box (docs/sizes.md). A minimal
    # 16x16 of data/sizes/16x16-hard.txt, values '1'-'9' then 'A'-'G'.
    request = pb.SolveRequest(puzzle=pb.Grid(text=PUZZLE16, box_rows=4, box_cols=4))
    sol = stub.Solve(request).solution
    check(sol.outcome == pb.OUTCOME_SOLVED, f"Solve(16x16) outcome {sol.outcome}")
    check((sol.grid.box_rows, sol.grid.box_cols) == (4, 4), "Solve(16x16): box")
    check(is_valid_sized(PUZZLE16, sol.grid.text, 4, 4), "Solve(16x16): invalid solution")
    print(f"ok: Solve (16x16, 4x4 boxes) -> solved in {sol.stats.nodes} nodes")


def is_valid_sized(puzzle, solution, box_rows, box_cols):
    """Every row, column and box of an N x N solution holds each value once."""
    n = box_rows * box_cols
    alphabet = "123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"[:n]
    if len(solution) != n * n or any(p not in ".0" and p != s for p, s in zip(puzzle, solution)):
        return False
    units = [[r * n + c for c in range(n)] for r in range(n)]
    units += [[r * n + c for r in range(n)] for c in range(n)]
    units += [
        [(br + i) * n + bc + j for i in range(box_rows) for j in range(box_cols)]
        for br in range(0, n, box_rows)
        for bc in range(0, n, box_cols)
    ]
    return all(sorted(solution[i] for i in u) == sorted(alphabet) for u in units)


def demo_solve_batch(pb, stub):
    def requests():
        # Two request messages on one stream; ids are ours to choose.
        yield pb.SolveBatchRequest(
            items=[
                pb.BatchItem(id=100 + i, puzzle=pb.Grid(text=p))
                for i, p in enumerate(BATCH_PUZZLES)
            ]
        )
        yield pb.SolveBatchRequest(
            items=[
                pb.BatchItem(id=200, puzzle=pb.Grid(text=PUZZLE)),
                pb.BatchItem(id=201, puzzle=pb.Grid(text=CLASHING)),
            ]
        )

    by_id = {}
    for response in stub.SolveBatch(requests(), compression=grpc.Compression.Gzip):
        for result in response.results:
            by_id[result.id] = result
    expected = {100 + i: p for i, p in enumerate(BATCH_PUZZLES)}
    expected[200] = PUZZLE
    check(set(by_id) == set(expected) | {201}, f"SolveBatch ids {sorted(by_id)}")
    for item_id, puzzle in expected.items():
        result = by_id[item_id]
        check(result.WhichOneof("result") == "solution", f"item {item_id}: no solution")
        check(result.solution.outcome == pb.OUTCOME_SOLVED, f"item {item_id} outcome")
        check(
            is_valid_solution(puzzle, result.solution.grid.text),
            f"item {item_id}: invalid solution",
        )
    bad = by_id[201]
    check(bad.WhichOneof("result") == "error", "item 201 should carry an error")
    check(bad.error.code == grpc.StatusCode.INVALID_ARGUMENT.value[0], "item 201 code")
    details = bad_request_of(bad.error)
    check(details is not None, "item 201: no BadRequest details")
    fields = [v.field for v in details.field_violations]
    check(
        any(f.startswith("items[1].puzzle") for f in fields),
        f"item 201: violation fields {fields}",
    )
    print(
        f"ok: SolveBatch -> {len(expected)} solved, item 201 rejected: "
        f"{details.field_violations[0].field}: {details.field_violations[0].description}"
    )


def demo_bad_request(pb, stub):
    from grpc_status import rpc_status

    def violations_for(grid):
        try:
            stub.Solve(pb.SolveRequest(puzzle=grid))
        except grpc.RpcError as err:
            check(err.code() == grpc.StatusCode.INVALID_ARGUMENT, f"code {err.code()}")
            status = rpc_status.from_call(err)  # google.rpc.Status, or None
            check(status is not None, "no grpc-status-details-bin on the error")
            bad = bad_request_of(status)
            check(bad is not None, "no google.rpc.BadRequest in the details")
            return list(bad.field_violations)
        raise CheckFailed("Solve accepted an invalid puzzle")

    # Givens that clash: the description names both cells.
    (v,) = violations_for(pb.Grid(text=CLASHING))
    check(v.field == "puzzle", f"clash field {v.field!r}")
    check("at row 1, column 1 and row 1, column 9" in v.description,
          f"clash description {v.description!r}")
    print(f"ok: INVALID_ARGUMENT BadRequest: {v.field}: {v.description}")

    # A bad character: the violation names the text field and the cell.
    bad_char = PUZZLE[:10] + "x" + PUZZLE[11:]
    (v,) = violations_for(pb.Grid(text=bad_char))
    check(v.field == "puzzle.text", f"bad char field {v.field!r}")
    check("'x'" in v.description and "row 2, column 2" in v.description,
          f"bad char description {v.description!r}")
    print(f"ok: INVALID_ARGUMENT BadRequest: {v.field}: {v.description}")


def demo_health(channel):
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    health = health_pb2_grpc.HealthStub(channel)
    serving = health_pb2.HealthCheckResponse.SERVING
    for name in ("", SERVICE):
        reply = health.Check(health_pb2.HealthCheckRequest(service=name), timeout=5)
        check(reply.status == serving, f"health of {name!r}: {reply.status}")
    # Watch streams the status now and on every change; read the first one.
    watch = health.Watch(health_pb2.HealthCheckRequest(service=SERVICE), timeout=5)
    first = next(watch)
    watch.cancel()
    check(first.status == serving, f"health Watch: {first.status}")
    print("ok: health Check ('' and sudoku.v1.SudokuService) and Watch -> SERVING")


class V1ReflectionStub:
    """A stub of grpc.reflection.v1.ServerReflection.

    grpcio-reflection ships only the v1alpha protos; the v1 messages are
    wire-identical (same fields and numbers, only the package differs), so the
    v1alpha message classes serve the v1 method path."""

    def __init__(self, channel):
        from grpc_reflection.v1alpha import reflection_pb2

        self.ServerReflectionInfo = channel.stream_stream(
            "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
            request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
            response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
        )


def demo_reflection(channel):
    from google.protobuf.descriptor_pool import DescriptorPool
    from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
    from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
        ProtoReflectionDescriptorDatabase,
    )

    # v1: list the services, then resolve SudokuService's methods and types
    # from the descriptors the server sends.
    db = ProtoReflectionDescriptorDatabase(channel)
    db._stub = V1ReflectionStub(channel)  # speak v1 instead of v1alpha
    services = set(db.get_services())
    for name in (SERVICE, "grpc.health.v1.Health"):
        check(name in services, f"reflection v1 does not list {name}: {services}")
    pool = DescriptorPool(db)
    service = pool.FindServiceByName(SERVICE)
    methods = {m.name: m for m in service.methods}
    want = {"Solve", "SolveBatch", "Validate", "Hint", "Rate", "Generate", "SolveStream"}
    check(set(methods) == want, f"methods {sorted(methods)}")
    solve_batch = methods["SolveBatch"]
    check(solve_batch.input_type.full_name == "sudoku.v1.SolveBatchRequest", "input type")
    solve_stream = methods["SolveStream"]
    check(solve_stream.server_streaming and not solve_stream.client_streaming,
          "SolveStream streams from the server only")
    # The descriptors are complete: google.rpc.Status resolves too.
    result = pool.FindMessageTypeByName("sudoku.v1.BatchResult")
    check(result.fields_by_name["error"].message_type.full_name == "google.rpc.Status",
          "BatchResult.error type")
    print(f"ok: reflection v1 lists {sorted(services)}; resolved {SERVICE} "
          f"({', '.join(sorted(methods))})")

    # v1alpha, raw: one list_services request on the stock stub.
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    request = reflection_pb2.ServerReflectionRequest(list_services="")
    (response,) = list(stub.ServerReflectionInfo(iter([request]), timeout=5))
    names = {s.name for s in response.list_services_response.service}
    check(SERVICE in names, f"reflection v1alpha services {names}")
    print(f"ok: reflection v1alpha lists {sorted(names)}")


def demo_zstd(pb, stub):
    # grpcio's compression algorithms are identity, deflate and gzip only,
    # so zstd cannot be sent from Python. What can be shown is that the
    # server accepts it: every response carries grpc-accept-encoding
    # (gzip,zstd,identity), which lists zstd. grpcio 1.85 reads that header
    # in its core and does not pass it on in initial_metadata(), so the check
    # runs only on a grpcio that does; tests/it/zstd_curl.rs checks the header
    # on the wire either way.
    names = [c.name for c in grpc.Compression]
    if "Zstd" in names:  # a future grpcio
        response = stub.Solve(
            pb.SolveRequest(puzzle=pb.Grid(text=PUZZLE)),
            compression=grpc.Compression.Zstd,
        )
        check(is_valid_solution(PUZZLE, response.solution.grid.text), "zstd Solve")
        print("ok: Solve (zstd)")
        return
    _, call = stub.Solve.with_call(pb.SolveRequest(puzzle=pb.Grid(text=PUZZLE)))
    headers = dict(call.initial_metadata())
    accept = headers.get("grpc-accept-encoding")
    if accept is None:
        print(f"skip: zstd: grpcio {grpc.__version__} cannot send zstd "
              f"(it has {names}) and keeps grpc-accept-encoding to itself")
    else:
        check("zstd" in accept.split(","), f"grpc-accept-encoding {accept!r} lacks zstd")
        print(f"ok: server advertises grpc-accept-encoding: {accept}")


def count_solutions(puzzle, limit=2):
    """Solutions of `puzzle` (81 characters), counted up to `limit` by a
    plain backtracking search on the cell with fewest candidates."""
    cells = [0 if c in ".0" else int(c) for c in puzzle]
    peers = [set() for _ in range(81)]
    for i in range(81):
        r, c = divmod(i, 9)
        for j in range(81):
            rj, cj = divmod(j, 9)
            if j != i and (r == rj or c == cj or (r // 3 == rj // 3 and c // 3 == cj // 3)):
                peers[i].add(j)

    def search():
        best, best_cands = None, None
        for i in range(81):
            if cells[i] == 0:
                cands = set(range(1, 10)) - {cells[j] for j in peers[i]}
                if best is None or len(cands) < len(best_cands):
                    best, best_cands = i, cands
                    if not cands:
                        return 0
        if best is None:
            return 1
        found = 0
        for d in best_cands:
            cells[best] = d
            found += search()
            cells[best] = 0
            if found >= limit:
                break
        return found

    return search()


def demo_toolkit(pb, stub):
    # Validate: a second 5 in row 1 is an answer listing the conflicts.
    broken = "5" + PUZZLE[1:8] + "5" + PUZZLE[9:]
    report = stub.Validate(pb.ValidateRequest(puzzle=pb.Grid(text=broken)))
    pairs = [(c.first, c.second, c.digit) for c in report.conflicts]
    check((0, 8, 5) in pairs, f"Validate conflicts {pairs}")
    check(not report.solvable and not report.unique, "Validate: broken puzzle solvable?")
    report = stub.Validate(pb.ValidateRequest(puzzle=pb.Grid(text=PUZZLE)))
    check(report.unique and is_valid_solution(PUZZLE, report.solution.text), "Validate unique")
    print(f"ok: Validate -> {len(pairs)} conflicts in the broken puzzle; the classic is unique")

    # Hint: the step's placements are the solution's digits.
    hint = stub.Hint(pb.HintRequest(puzzle=pb.Grid(text=PUZZLE)))
    step = hint.step
    solution = report.solution.text
    # search_complete is false only when no technique applied and the
    # search behind the fallback step ran out of the server's work budget.
    check(hint.search_complete and not hint.solved, "Hint: search_complete / solved")
    check(step.technique_name != "", "Hint: no technique")
    for p in step.placements:
        check(int(solution[p.cell]) == p.digit, f"Hint places {p.digit} at {p.cell}")
    for e in step.eliminations:
        check(int(solution[e.cell]) != e.digit, f"Hint removes the solution's {e.digit}")
    print(f"ok: Hint -> {step.technique_name}: {step.explanation}")

    # Generate: a server stream; the same seed gives the same puzzles.
    request = pb.GenerateRequest(count=3, label=pb.LABEL_MEDIUM, seed=42)
    first = [r.puzzle.puzzle.text for r in stub.Generate(request, timeout=30)]
    again = [r.puzzle.puzzle.text for r in stub.Generate(request, timeout=30)]
    check(len(first) == 3 and first == again, "Generate: same seed, different puzzles")
    for r in stub.Generate(request, timeout=30):
        p = r.puzzle
        check(p.rating.label == pb.LABEL_MEDIUM, f"Generate label {p.rating.label}")
        check(is_valid_solution(p.puzzle.text, p.solution.text), "Generate: bad solution")
        check(count_solutions(p.puzzle.text) == 1, f"Generate: {p.puzzle.text} not unique")
    print(f"ok: Generate -> 3 medium puzzles, unique, same for seed 42: {first[0]}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="127.0.0.1:50051", help="host:port")
    parser.add_argument("--proto-dir", default=DEFAULT_PROTO_DIR)
    parser.add_argument("--stubs", help="keep the generated stubs in this directory")
    args = parser.parse_args()

    out_dir = args.stubs or tempfile.mkdtemp(prefix="sudoku-stubs-")
    try:
        os.makedirs(out_dir, exist_ok=True)
        pb, pb_grpc = generate_stubs(args.proto_dir, out_dir)
        with grpc.insecure_channel(args.target, options=CHANNEL_OPTIONS) as channel:
            grpc.channel_ready_future(channel).result(timeout=10)
            stub = pb_grpc.SudokuServiceStub(channel)
            demo_solve(pb, stub)
            demo_solve_batch(pb, stub)
            demo_bad_request(pb, stub)
            demo_health(channel)
            demo_reflection(channel)
            demo_zstd(pb, stub)
            demo_toolkit(pb, stub)
    except CheckFailed as failure:
        print(f"FAIL: {failure}")
        return 1
    except grpc.RpcError as err:
        print(f"FAIL: unexpected RPC error {err.code()}: {err.details()}")
        return 1
    except grpc.FutureTimeoutError:
        print(f"FAIL: could not connect to {args.target} within 10 s")
        return 1
    finally:
        if not args.stubs:
            shutil.rmtree(out_dir, ignore_errors=True)
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
