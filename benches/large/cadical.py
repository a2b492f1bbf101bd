#!/usr/bin/env python3
"""Solves one grid with CaDiCaL: the direct encoding pruned by the givens
(a variable for each value a blank cell may still take; each blank cell
takes one value, at most one; each value missing from a unit goes in one
of its cells there, at most one), then the model read back and checked.

    python3 benches/large/cadical.py BOX LIMIT_SECONDS < grid-line
prints `solved SECONDS`, `none SECONDS` (no solution) or `unknown SECONDS`,
SECONDS the wall time of the cadical process alone (the encoding here is
not counted). BOX is RxC, e.g. 6x6; the line holds N*N integers, 0 blank.
"""
import os
import subprocess
import sys
import tempfile
import time


def main():
    br, bc = (int(x) for x in sys.argv[1].split("x"))
    limit = int(sys.argv[2])
    n = br * bc
    vals = [int(x) for x in sys.stdin.read().split()]
    assert len(vals) == n * n, f"{len(vals)} values, want {n * n}"
    units = [[r * n + c for c in range(n)] for r in range(n)]
    units += [[r * n + c for r in range(n)] for c in range(n)]
    units += [[(R * br + r) * n + C * bc + c for r in range(br) for c in range(bc)]
              for R in range(bc) for C in range(br)]
    of = [[] for _ in range(n * n)]
    for u, cells in enumerate(units):
        for x in cells:
            of[x].append(u)
    used = [set(vals[x] for x in cells if vals[x]) for cells in units]
    var = {}
    for x in range(n * n):
        if vals[x]:
            continue
        for v in range(1, n + 1):
            if all(v not in used[u] for u in of[x]):
                var[(x, v)] = len(var) + 1
    clauses = []
    for x in range(n * n):
        if vals[x]:
            continue
        vs = [var[(x, v)] for v in range(1, n + 1) if (x, v) in var]
        clauses.append(vs)
        clauses += [[-a, -b] for i, a in enumerate(vs) for b in vs[i + 1:]]
    for u, cells in enumerate(units):
        for v in range(1, n + 1):
            if v in used[u]:
                continue
            vs = [var[(x, v)] for x in cells if (x, v) in var]
            clauses.append(vs)
            clauses += [[-a, -b] for i, a in enumerate(vs) for b in vs[i + 1:]]
    with tempfile.NamedTemporaryFile("w", suffix=".cnf", delete=False) as f:
        f.write(f"p cnf {len(var)} {len(clauses)}\n")
        for c in clauses:
            f.write(" ".join(map(str, c)) + " 0\n")
        path = f.name
    t0 = time.monotonic()
    out = subprocess.run(["cadical", "-q", "-t", str(limit), path],
                         capture_output=True, text=True)
    secs = time.monotonic() - t0
    os.unlink(path)
    if out.returncode == 20:
        print(f"none {secs:.3f}")
        return
    if out.returncode != 10:
        print(f"unknown {secs:.3f}")
        return
    true = set()
    for line in out.stdout.splitlines():
        if line.startswith("v "):
            true.update(int(t) for t in line.split()[1:] if int(t) > 0)
    grid = list(vals)
    for (x, v), k in var.items():
        if k in true:
            grid[x] = v
    for cells in units:
        assert sorted(grid[x] for x in cells) == list(range(1, n + 1)), "cadical's model breaks a rule"
    print(f"solved {secs:.3f}")


if __name__ == "__main__":
    main()
