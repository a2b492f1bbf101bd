"""Imports stubs generated from proto/ the way the README says, as a client
of one's own would: `stub_imports.py GEN_DIR [--without-googleapis]`.

With --without-googleapis the google.rpc package of googleapis-common-protos
is hidden, as on a machine that has only grpcio, grpcio-tools and protobuf:
then the stubs must bring google/rpc/status.proto's module themselves.
Prints where google.rpc.status_pb2 came from; exit 1 when the import fails.
"""

import importlib.abc
import os
import sys


class HideGoogleapis(importlib.abc.MetaPathFinder):
    """Finds google.rpc and its modules only under GEN_DIR."""

    def __init__(self, gen):
        self.gen = os.path.realpath(gen)

    def find_spec(self, name, path, target=None):
        if name != "google.rpc" and not name.startswith("google.rpc."):
            return None
        from importlib.machinery import PathFinder

        if name == "google.rpc":
            spec = PathFinder.find_spec(name, [os.path.join(self.gen, "google")])
        else:
            spec = PathFinder.find_spec(name, [os.path.join(self.gen, "google", "rpc")])
        if spec is None:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return spec


def main():
    gen = sys.argv[1]
    sys.path.insert(0, gen)
    if "--without-googleapis" in sys.argv[2:]:
        sys.meta_path.insert(0, HideGoogleapis(gen))
    try:
        from sudoku.v1 import sudoku_pb2, sudoku_pb2_grpc  # noqa: F401
        from google.rpc import status_pb2
    except ImportError as e:
        print(f"import failed: {e}")
        return 1
    status_pb2.Status(code=3, message="checked")
    sudoku_pb2.SolveRequest(puzzle=sudoku_pb2.Grid(text="." * 81))
    print(f"imported; google.rpc.status_pb2 from {status_pb2.__file__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
