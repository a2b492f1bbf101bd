#!/usr/bin/env python3
"""Writes the seed corpora in fuzz/seeds/<target>/ (run.sh copies them into
fuzz/corpus/<target>/ before fuzzing). Protobuf is encoded by hand here so
the seeds need nothing but Python."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "it", "scripts"))
from protowire import varint  # noqa: E402
CLASSIC = "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79"
SOLVED = "534678912672195348198342567859761423426853791713924856961537284287419635345286179"
HARD = "........8..3...4...9..2..6.....79.......612...6.5.2.7...8...5...1.....2.4.5.....3"
EMPTY = "." * 81


def field(num, wire, payload):
    key = varint(num << 3 | wire)
    if wire == 0:
        return key + varint(payload)
    return key + varint(len(payload)) + payload


def grid_text(t):
    return field(1, 2, t.encode())


def grid_cells(t):
    cells = b"".join(varint(0 if c == "." else int(c)) for c in t)
    return field(2, 2, cells)


def options(mode, max_solutions=0):
    return field(1, 0, mode) + (field(2, 0, max_solutions) if max_solutions else b"")


def solve_request(grid, opts=None):
    return field(1, 2, grid) + (field(2, 2, opts) if opts is not None else b"")


def batch(items, opts=None):
    body = b"".join(field(1, 2, field(1, 0, i) + field(2, 2, g)) for i, g in items)
    return body + (field(2, 2, opts) if opts is not None else b"")


def spaced(t):
    return "\n".join(" ".join("0" if c == "." else c for c in t[r * 9 : r * 9 + 9]) for r in range(9))


def bracketed(t):
    return "[" + ",".join("[" + ",".join('"%s"' % c for c in t[r * 9 : r * 9 + 9]) + "]" for r in range(9)) + "]"


def unspaced_with_rulers(t):
    rows = [t[r * 9 : r * 9 + 9] for r in range(9)]
    return "\n".join(rows[0:3] + ["------"] + rows[3:6] + ["---+---+---"] + rows[6:9])


seeds = {
    "grid_text": [CLASSIC, SOLVED, CLASSIC.replace(".", "0"), HARD, CLASSIC[:80], "é" + CLASSIC[1:], "11" + "." * 79],
    "grid_cells": [bytes(0 if c == "." else int(c) for c in t) for t in (CLASSIC, SOLVED, HARD)]
    + [bytes(80), bytes([0xF0, 10, 0, 0, 0]) + bytes(80)],
    "read_puzzles": [
        "# source\n" + CLASSIC + "  rating 3.4\n\n" + SOLVED + "\n",
        spaced(CLASSIC) + "\n",
        unspaced_with_rulers(HARD) + "\n",
        bracketed(CLASSIC),
        "[\n" + bracketed(CLASSIC)[1:-1].replace("],[", "],\n[") + "\n]\n",
        CLASSIC + "\n1 2 3\n" + CLASSIC[:40] + "x" + CLASSIC[41:] + "\n",
        "\n".join(spaced(CLASSIC).split("\n")[:4]) + "\n\n" + CLASSIC + "\n",
        "  " + CLASSIC[:40] + "x" + CLASSIC[41:] + "\n",
    ],
    "service_solve": [
        solve_request(grid_text(CLASSIC)),
        solve_request(grid_cells(HARD), options(2, 2)),
        solve_request(grid_text(EMPTY), options(2, 5)),
        solve_request(grid_text("11" + "." * 79), options(1)),
        solve_request(grid_text(CLASSIC) + grid_cells(CLASSIC)),
        solve_request(grid_cells(CLASSIC[:80]), options(9)),
        solve_request(grid_text(HARD), options(2, 1000001)),
        b"",
    ],
    "service_batch": [
        batch([(1, grid_text(CLASSIC)), (2, grid_cells(HARD)), (3, grid_text("1" * 81))]),
        batch([(7, grid_text(EMPTY)), (8, grid_cells(SOLVED))], options(2, 3)),
        batch([(1, grid_text(CLASSIC))], options(5)),
        batch([(1, b""), (2, grid_text(CLASSIC[:3]))]),
        b"",
    ],
    "solver": [
        bytes([m, s]) + bytes(0 if c == "." else 149 + int(c) for c in t)
        for m, s, t in [(0, 7, CLASSIC), (1, 3, HARD), (4, 1, EMPTY), (0, 63, SOLVED), (1, 5, "11" + "." * 79)]
    ]
    + [bytes([9, 2]) + bytes(0 if c == "." else int(c) for c in CLASSIC)],
}

for target, items in seeds.items():
    d = os.path.join(HERE, "seeds", target)
    os.makedirs(d, exist_ok=True)
    for i, s in enumerate(items):
        with open(os.path.join(d, "seed-%02d" % i), "wb") as f:
            f.write(s.encode() if isinstance(s, str) else s)
    print(target, len(items))
