#!/usr/bin/env python3
"""Solves a file of puzzles through sudoku.v1.SudokuService, many calls at once.

Reads 81-character lines ('.' or '0' for blanks; '#' lines, blank lines and
any text after the 81 characters are skipped, so the public benchmark files in
data/ work as they are) and writes one `ID SOLUTION` line per puzzle as its
answer arrives (`sort -n` puts them in file order), ID being the puzzle's
index among the file's puzzles (0 for the first), as the `sudoku` command line
numbers them. It streams: the file is read a line at a time as the calls need
puzzles, and answers are written as they come, so memory stays the same on a
file of any size.

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
  --rpc batch  SolveBatch: --streams calls at once, each fed by a generator
               that reads the file's next --batch puzzles per message, with
               at most --window messages unanswered per call; answers are
               matched by id. A retry policy cannot help a stream once it
               has answered something (gRPC commits the call at the first
               response), so when a stream ends with UNAVAILABLE this script
               itself opens it again, sending the items it left unanswered
               first, up to --attempts calls per stream.

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
                             [--window 32] [--attempts 4]
                             [--output OUT] [--proto-dir DIR]
"""

import argparse
import itertools
import shutil
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import grpc

import client


def read_puzzles(path):
    """Yields (id, line number, puzzle) for the puzzle lines of `path`, one
    at a time: the file is never held whole."""
    item_id = 0
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            yield item_id, number, line[:81]
            item_id += 1


class Run:
    """What the threads share: the file's puzzles, taken in turn, and the
    output, written as answers arrive. Only counts are kept, so memory does
    not grow with the file."""

    def __init__(self, path, out):
        self._puzzles = read_puzzles(path)
        self._take_lock = threading.Lock()
        self._out = out
        self._out_lock = threading.Lock()
        self.taken = self.solved = self.failed = 0

    def take(self, n):
        """The next `n` puzzles of the file (fewer at its end)."""
        with self._take_lock:
            items = list(itertools.islice(self._puzzles, n))
            self.taken += len(items)
            return items

    def solution(self, item_id, grid):
        with self._out_lock:
            self._out.write(f"{item_id} {grid}\n")
            self.solved += 1

    def failure(self, item_id, line, why):
        with self._out_lock:
            print(f"puzzle {item_id} (line {line}): {why}", file=sys.stderr)
            self.failed += 1

    def record(self, pb, item_id, line, solution):
        if solution.outcome == pb.OUTCOME_SOLVED:
            self.solution(item_id, solution.grid.text)
        else:
            self.failure(item_id, line, pb.Outcome.Name(solution.outcome))


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


def solve_unary(pb, stub, run, in_flight):
    """One Solve per puzzle, `in_flight` at once, each thread taking the
    file's next puzzle. Retries of UNAVAILABLE happen inside grpcio, as the
    channel's service config says."""

    def worker(stop):
        while not stop.is_set():
            items = run.take(1)
            if not items:
                return
            item_id, line, puzzle = items[0]
            response = solve_one(pb, stub, puzzle)
            run.record(pb, item_id, line, response.solution)

    on_threads(in_flight, worker)


def solve_batch(pb, stub, run, streams, batch, window, attempts):
    """SolveBatch over `streams` calls, each fed by a generator that takes
    the file's next `batch` puzzles per message, at most `window` messages
    unanswered per call. A call that ends with UNAVAILABLE is opened again,
    up to `attempts` calls per stream, and sends the items it left
    unanswered first. Returns how many items were re-sent."""
    resent = [0]
    resent_lock = threading.Lock()

    def one_call(stop, again):
        """One call; returns the items it left unanswered, {id: (line, puzzle)}.
        `again` counts as sent from the start, so nothing is lost if the call
        fails before it sends them."""
        pending = dict(again)
        lock = threading.Lock()
        closed = threading.Event()
        room = threading.Semaphore(window)

        def message(items):
            return pb.SolveBatchRequest(
                items=[pb.BatchItem(id=i, puzzle=pb.Grid(text=p)) for i, (_, p) in items]
            )

        def requests():
            first = sorted(again.items())
            for start in range(0, len(first), batch):
                while not room.acquire(timeout=0.1):
                    if closed.is_set() or stop.is_set():
                        return
                yield message(first[start : start + batch])
            while True:
                while not room.acquire(timeout=0.1):
                    if closed.is_set() or stop.is_set():
                        return
                # Taken and noted under one lock, so a call given up (below)
                # cannot take items that then belong to no call.
                with lock:
                    if closed.is_set():
                        return
                    items = [(i, (n, p)) for i, n, p in run.take(batch)]
                    pending.update(items)
                if not items:
                    return
                yield message(items)

        try:
            for response in stub.SolveBatch(requests()):
                for result in response.results:
                    with lock:
                        line, _ = pending.pop(result.id, (0, None))
                    if result.WhichOneof("result") == "error":
                        run.failure(result.id, line, result.error.message)
                    else:
                        run.record(pb, result.id, line, result.solution)
                room.release()
            return None, pending
        except grpc.RpcError as error:
            return error, pending
        finally:
            with lock:
                closed.set()

    def stream(stop):
        again = {}
        for attempt in range(1, attempts + 1):
            error, again = one_call(stop, again)
            if error is None:
                # Items a call that ended OK left unanswered are counted as
                # missing in the summary.
                return
            if error.code() != grpc.StatusCode.UNAVAILABLE or attempt == attempts:
                raise error
            print(f"a stream ended with UNAVAILABLE ({error.details()}); "
                  f"re-sending its {len(again)} unanswered items", file=sys.stderr)
            with resent_lock:
                resent[0] += len(again)
            time.sleep(0.1 * 2 ** (attempt - 1))  # the same back-off as the policy

    on_threads(streams, stream)
    return resent[0]


def run_file(args, pb, pb_grpc):
    out = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout
    started = time.monotonic()
    try:
        run = Run(args.file, out)
        with grpc.insecure_channel(args.target, options=client.CHANNEL_OPTIONS) as channel:
            grpc.channel_ready_future(channel).result(timeout=10)
            stub = pb_grpc.SudokuServiceStub(channel)
            if args.rpc == "solve":
                solve_unary(pb, stub, run, args.in_flight)
                how = f"Solve, {args.in_flight} in flight"
            else:
                resent = solve_batch(pb, stub, run, args.streams, args.batch, args.window,
                                     args.attempts)
                how = (f"SolveBatch, {args.streams} streams of {args.batch}/message, "
                       f"{resent} re-sent")
    finally:
        if args.output:
            out.close()
        else:
            out.flush()
    elapsed = time.monotonic() - started
    missing = run.taken - run.solved - run.failed
    print(f"solved {run.solved} of {run.taken} puzzles in {elapsed:.1f} s "
          f"({run.solved / max(elapsed, 1e-9):.0f}/s; {how})", file=sys.stderr)
    if missing:
        print(f"{missing} puzzles unanswered", file=sys.stderr)
    return 0 if run.solved == run.taken else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", help="puzzle file, one 81-character puzzle per line")
    parser.add_argument("--target", default="127.0.0.1:50051", help="host:port")
    parser.add_argument("--rpc", choices=("solve", "batch"), default="solve")
    parser.add_argument("--in-flight", type=int, default=64, help="Solve calls at once")
    parser.add_argument("--streams", type=int, default=4, help="SolveBatch calls at once")
    parser.add_argument("--batch", type=int, default=64, help="puzzles per SolveBatch message")
    parser.add_argument("--window", type=int, default=32,
                        help="SolveBatch messages unanswered at once per stream")
    parser.add_argument("--attempts", type=int, default=4,
                        help="SolveBatch calls per stream, the first included")
    parser.add_argument("--output", help="write the solutions here instead of stdout")
    parser.add_argument("--proto-dir", default=client.DEFAULT_PROTO_DIR)
    args = parser.parse_args()
    if min(args.in_flight, args.streams, args.batch, args.window, args.attempts) < 1:
        parser.error("--in-flight, --streams, --batch, --window and --attempts must be at least 1")

    out_dir = tempfile.mkdtemp(prefix="sudoku-stubs-")
    try:
        pb, pb_grpc = client.generate_stubs(args.proto_dir, out_dir)
        return run_file(args, pb, pb_grpc)
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
