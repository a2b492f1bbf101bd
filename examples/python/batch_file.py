#!/usr/bin/env python3
"""Solves a file of puzzles through sudoku.v1.SudokuService, many calls at once.

Reads 81-character lines ('.' or '0' for blanks; '#' lines, blank lines and
any text after the 81 characters are skipped, so the public benchmark files in
data/ work as they are) and writes one `ID SOLUTION` line per puzzle, in file
order, ID being the puzzle's index among the file's puzzles (0 for the first),
as the `sudoku` command line numbers them.

Two ways to send them, both over one channel (one HTTP/2 connection); a proxy
that balances per call, such as nginx's grpc_pass or a service mesh, spreads
the calls over its servers:

  --rpc solve  (default) one unary Solve per puzzle, --in-flight calls at
               once. The channel's retry policy (client.SERVICE_CONFIG)
               retries UNAVAILABLE: a server that shuts down, or dies
               mid-call behind a proxy that then answers UNAVAILABLE, costs
               a retry, not a puzzle. Solving is a pure function of the
               puzzle, so a call that reached a server before it died is
               safe to repeat.
  --rpc batch  SolveBatch: --streams calls at once, --batch puzzles per
               message, answers matched by id. A retry policy cannot help a
               stream once it has answered something (gRPC commits the call
               at the first response), so when a stream ends with
               UNAVAILABLE this script itself re-sends the items that stream
               left unanswered, on new calls, up to --attempts rounds.

Either way each puzzle is written once, however often it was sent.
A summary goes to stderr. Exit status 0 when every puzzle was solved; 1 when
some were not (each is reported on stderr with its id and line); 2 on a call
that failed for good.

It uses grpcio's threaded API, not grpc.aio: when a server ends a stream
while the client is still sending (a draining server does exactly that),
grpc.aio can report INTERNAL "Internal error from Core" instead of the
server's UNAVAILABLE (https://github.com/grpc/grpc/issues/36066), and this
script must see UNAVAILABLE to know the items are worth sending again.

Usage:  python batch_file.py FILE [--target 127.0.0.1:50051] [--rpc solve|batch]
                             [--in-flight 64] [--streams 4] [--batch 64]
                             [--output OUT] [--proto-dir DIR]
"""

import argparse
import shutil
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import grpc

import client


def read_puzzles(path):
    """{id: 81-character puzzle} for the puzzle lines of `path`, and
    {id: line number} to report failures by line."""
    puzzles, lines = {}, {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            lines[len(puzzles)] = number
            puzzles[len(puzzles)] = line[:81]
    return puzzles, lines


def on_threads(count, work):
    """Runs work(stop) on `count` threads until each returns. The first
    exception raised sets `stop`, so the others finish early, and is raised
    here."""
    stop = threading.Event()

    def guarded():
        try:
            work(stop)
        except BaseException:
            stop.set()
            raise

    with ThreadPoolExecutor(max_workers=count) as pool:
        futures = [pool.submit(guarded) for _ in range(count)]
    for future in futures:
        if future.exception() is not None:
            raise future.exception()


def record(pb, item_id, solution, answers, failures):
    """Files one puzzle's answer under its id."""
    if solution.outcome == pb.OUTCOME_SOLVED:
        answers[item_id] = solution.grid.text
    else:
        failures[item_id] = pb.Outcome.Name(solution.outcome)


def solve_one(pb, stub, puzzle, attempts=4):
    """One Solve call. A proxy whose server dies in the middle of an answer
    can pass on the cut answer, which grpcio reports as INTERNAL
    "Exception deserializing response!" rather than the UNAVAILABLE its
    retry policy would retry. Solve is a pure function of the puzzle, so
    asking again is safe; any other failure is raised."""
    for attempt in range(1, attempts + 1):
        try:
            return stub.Solve(pb.SolveRequest(puzzle=pb.Grid(text=puzzle)))
        except grpc.RpcError as error:
            cut = error.code() == grpc.StatusCode.INTERNAL and "deserializing" in (
                error.details() or ""
            )
            if not cut or attempt == attempts:
                raise
            print(f"a Solve answer arrived cut ({error.details()}); asking again",
                  file=sys.stderr)


def solve_unary(pb, stub, puzzles, in_flight, answers, failures):
    """One Solve per puzzle, `in_flight` at once. Retries of UNAVAILABLE
    happen inside grpcio, as the channel's service config says."""
    todo = iter(sorted(puzzles.items()))
    lock = threading.Lock()

    def worker(stop):
        while not stop.is_set():
            with lock:  # each puzzle is taken by exactly one thread
                item = next(todo, None)
            if item is None:
                return
            item_id, puzzle = item
            response = solve_one(pb, stub, puzzle)
            record(pb, item_id, response.solution, answers, failures)

    on_threads(in_flight, worker)


def solve_batch(pb, stub, puzzles, streams, batch, attempts, answers, failures):
    """SolveBatch over `streams` calls; items a stream left unanswered when it
    ended with UNAVAILABLE are sent again in the next round. Returns how many
    items were re-sent."""

    def one_stream(items):
        requests = (
            pb.SolveBatchRequest(
                items=[
                    pb.BatchItem(id=item_id, puzzle=pb.Grid(text=puzzle))
                    for item_id, puzzle in items[start : start + batch]
                ]
            )
            for start in range(0, len(items), batch)
        )
        for response in stub.SolveBatch(requests):
            for result in response.results:
                if result.WhichOneof("result") == "error":
                    failures[result.id] = result.error.message
                else:
                    record(pb, result.id, result.solution, answers, failures)

    resent = 0
    pending = sorted(puzzles.items())
    for attempt in range(1, attempts + 1):
        # Messages, not single items, are dealt over the streams in turn.
        messages = [pending[i : i + batch] for i in range(0, len(pending), batch)]
        shares = [
            [item for message in messages[s::streams] for item in message]
            for s in range(streams)
        ]
        shares = [share for share in shares if share]
        with ThreadPoolExecutor(max_workers=len(shares)) as pool:
            outcomes = [pool.submit(one_stream, share) for share in shares]
        for outcome in outcomes:
            error = outcome.exception()
            if error is None:
                continue
            if not isinstance(error, grpc.RpcError):
                raise error
            if error.code() != grpc.StatusCode.UNAVAILABLE or attempt == attempts:
                raise error
            print(f"a stream ended with UNAVAILABLE ({error.details()}); "
                  "re-sending its unanswered items", file=sys.stderr)
        pending = [(n, p) for n, p in pending if n not in answers and n not in failures]
        if not pending:
            break
        resent += len(pending)
        time.sleep(0.1 * 2 ** (attempt - 1))  # the same back-off as the policy
    return resent


def run(args, pb, pb_grpc):
    puzzles, lines = read_puzzles(args.file)
    answers, failures = {}, {}
    started = time.monotonic()
    with grpc.insecure_channel(args.target, options=client.CHANNEL_OPTIONS) as channel:
        grpc.channel_ready_future(channel).result(timeout=10)
        stub = pb_grpc.SudokuServiceStub(channel)
        if args.rpc == "solve":
            solve_unary(pb, stub, puzzles, args.in_flight, answers, failures)
            how = f"Solve, {args.in_flight} in flight"
        else:
            resent = solve_batch(
                pb, stub, puzzles, args.streams, args.batch, args.attempts, answers, failures
            )
            how = f"SolveBatch, {args.streams} streams of {args.batch}/message, {resent} re-sent"
    elapsed = time.monotonic() - started

    out = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout
    try:
        for item_id in sorted(answers):
            out.write(f"{item_id} {answers[item_id]}\n")
    finally:
        if args.output:
            out.close()
    for item_id in sorted(failures):
        print(f"puzzle {item_id} (line {lines[item_id]}): {failures[item_id]}", file=sys.stderr)
    missing = len(puzzles) - len(answers) - len(failures)
    print(f"solved {len(answers)} of {len(puzzles)} puzzles in {elapsed:.1f} s "
          f"({len(answers) / max(elapsed, 1e-9):.0f}/s; {how})", file=sys.stderr)
    if missing:
        print(f"{missing} puzzles unanswered", file=sys.stderr)
    return 0 if len(answers) == len(puzzles) else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", help="puzzle file, one 81-character puzzle per line")
    parser.add_argument("--target", default="127.0.0.1:50051", help="host:port")
    parser.add_argument("--rpc", choices=("solve", "batch"), default="solve")
    parser.add_argument("--in-flight", type=int, default=64, help="Solve calls at once")
    parser.add_argument("--streams", type=int, default=4, help="SolveBatch calls at once")
    parser.add_argument("--batch", type=int, default=64, help="puzzles per SolveBatch message")
    parser.add_argument("--attempts", type=int, default=4,
                        help="SolveBatch rounds, the first included")
    parser.add_argument("--output", help="write the solutions here instead of stdout")
    parser.add_argument("--proto-dir", default=client.DEFAULT_PROTO_DIR)
    args = parser.parse_args()
    if min(args.in_flight, args.streams, args.batch, args.attempts) < 1:
        parser.error("--in-flight, --streams, --batch and --attempts must be at least 1")

    out_dir = tempfile.mkdtemp(prefix="sudoku-stubs-")
    try:
        pb, pb_grpc = client.generate_stubs(args.proto_dir, out_dir)
        return run(args, pb, pb_grpc)
    except grpc.RpcError as err:
        print(f"call failed: {err.code().name}: {err.details()}", file=sys.stderr)
        return 2
    except grpc.FutureTimeoutError:
        print(f"could not connect to {args.target} within 10 s", file=sys.stderr)
        return 2
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
