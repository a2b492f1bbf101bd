#!/usr/bin/env python3
"""Shows that client.py's retry policy really retries UNAVAILABLE.

The real server only answers UNAVAILABLE while it shuts down, which is hard
to time from a test, so this starts a stand-in SudokuService inside this
process on 127.0.0.1 (an ephemeral port) that answers UNAVAILABLE twice and
then a canned solution, and calls it through a channel built with client.py's
CHANNEL_OPTIONS: the call must succeed on the third attempt. A channel without
the options must fail on the first. Nothing here talks to the real server.

Usage:  python retry_check.py [--proto-dir DIR]
"""

import argparse
import shutil
import sys
import tempfile
import threading
from concurrent import futures

import grpc

import client


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--proto-dir", default=client.DEFAULT_PROTO_DIR)
    args = parser.parse_args()
    out_dir = tempfile.mkdtemp(prefix="sudoku-stubs-")
    try:
        pb, _ = client.generate_stubs(args.proto_dir, out_dir)
        return run(pb)
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)


def run(pb):
    attempts = []
    lock = threading.Lock()

    def solve(request, context):
        with lock:
            attempts.append(request.puzzle.text)
            n = len(attempts)
        if n % 3 != 0:  # attempts 1, 2 (and 4, 5...) fail
            context.abort(grpc.StatusCode.UNAVAILABLE, f"flaky stand-in: attempt {n}")
        return pb.SolveResponse(
            solution=pb.Solution(outcome=pb.OUTCOME_SOLVED, grid=pb.Grid(text="1" * 81))
        )

    handler = grpc.method_handlers_generic_handler(
        client.SERVICE,
        {
            "Solve": grpc.unary_unary_rpc_method_handler(
                solve,
                request_deserializer=pb.SolveRequest.FromString,
                response_serializer=pb.SolveResponse.SerializeToString,
            )
        },
    )
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    target = f"127.0.0.1:{port}"
    method = "/sudoku.v1.SudokuService/Solve"
    request = pb.SolveRequest(puzzle=pb.Grid(text=client.PUZZLE))
    try:
        with grpc.insecure_channel(target, options=client.CHANNEL_OPTIONS) as channel:
            call = channel.unary_unary(
                method,
                request_serializer=pb.SolveRequest.SerializeToString,
                response_deserializer=pb.SolveResponse.FromString,
            )
            response = call(request, timeout=10)
            if response.solution.outcome != pb.OUTCOME_SOLVED or len(attempts) != 3:
                print(f"FAIL: retry policy: {len(attempts)} attempts, {response}")
                return 1
        print("ok: retry policy: UNAVAILABLE twice, then OK on attempt 3")

        # Control: without the service config, the first UNAVAILABLE is final.
        attempts.clear()
        with grpc.insecure_channel(
            target, options=[("grpc.enable_retries", 0)]
        ) as channel:
            call = channel.unary_unary(
                method,
                request_serializer=pb.SolveRequest.SerializeToString,
                response_deserializer=pb.SolveResponse.FromString,
            )
            try:
                call(request, timeout=10)
                print("FAIL: control call without retries succeeded")
                return 1
            except grpc.RpcError as err:
                if err.code() != grpc.StatusCode.UNAVAILABLE or len(attempts) != 1:
                    print(f"FAIL: control: {err.code()} after {len(attempts)} attempts")
                    return 1
        print("ok: without the retry policy the first UNAVAILABLE is final")
    finally:
        server.stop(grace=None)
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
