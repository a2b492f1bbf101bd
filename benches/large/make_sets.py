#!/usr/bin/env python3
"""Seeded sets of large grids for benches/large.sh: for each side (36, 49,
64, square boxes) and each fraction of blanks, GRIDS grids made by taking a
random valid solution and blanking that fraction of its cells at random.

A random solution: a pattern grid, shuffled by moves that keep every rule
(digits relabelled, rows within a band, bands, columns within a stack,
stacks), then mixed by swapping two digits on a closed set of their cells:
take the cells holding a or b; each row, column and box holds one of each,
so link the two in every unit; swapping a and b on one connected part keeps
every unit whole. Many such swaps reach solutions that are no relabelling
of the pattern.

Writes one file per side: one grid per line, N*N integers separated by
spaces, 0 for a blank, after '#' lines that say how they were made.

    python3 benches/large/make_sets.py [OUT_DIR] [GRIDS] [SEED]
"""
import random
import sys

SIDES = [(36, 6), (49, 7), (64, 8)]
BLANKS = [42, 50, 58, 65, 80]


def pattern(n, b):
    return [[(b * (r % b) + r // b + c) % n + 1 for c in range(n)] for r in range(n)]


def order(b, rng):
    """Bands (or stacks) of b lines in a random order, each's lines too."""
    groups = list(range(b))
    rng.shuffle(groups)
    out = []
    for group in groups:
        inner = list(range(b))
        rng.shuffle(inner)
        out += [group * b + i for i in inner]
    return out


def shuffled(g, n, b, rng):
    label = list(range(1, n + 1))
    rng.shuffle(label)
    rows = order(b, rng)
    cols = order(b, rng)
    return [[label[g[r][c] - 1] for c in cols] for r in rows]


def swap_part(g, n, b, rng):
    """Swaps two random digits on one connected part of their cells."""
    a, d = rng.sample(range(1, n + 1), 2)
    cells = [(r, c) for r in range(n) for c in range(n) if g[r][c] in (a, d)]
    index = {rc: i for i, rc in enumerate(cells)}
    links = [[] for _ in cells]
    units = {}
    for r, c in cells:
        for key in (("r", r), ("c", c), ("b", r // b, c // b)):
            units.setdefault(key, []).append((r, c))
    for members in units.values():
        x, y = members
        links[index[x]].append(index[y])
        links[index[y]].append(index[x])
    start = rng.randrange(len(cells))
    seen = {start}
    todo = [start]
    while todo:
        i = todo.pop()
        for j in links[i]:
            if j not in seen:
                seen.add(j)
                todo.append(j)
    for i in seen:
        r, c = cells[i]
        g[r][c] = d if g[r][c] == a else a


def valid(g, n, b):
    want = set(range(1, n + 1))
    for i in range(n):
        if set(g[i]) != want or {g[r][i] for r in range(n)} != want:
            return False
    for br in range(b):
        for bc in range(b):
            box = {g[br * b + r][bc * b + c] for r in range(b) for c in range(b)}
            if box != want:
                return False
    return True


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "data/large"
    grids = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 35
    for n, b in SIDES:
        rng = random.Random(f"{seed}-{n}")
        path = f"{out}/{n}x{n}.txt"
        with open(path, "w") as f:
            f.write(f"# python3 benches/large/make_sets.py {out} {grids} {seed}: {n}x{n} grids, "
                    f"{b}x{b} boxes, {grids} a row of blanks in {BLANKS} %\n")
            f.write("# each a random valid solution (a shuffled pattern mixed by "
                    f"{n * n} two-digit swaps) with that share of its cells blanked at random; "
                    "0 for a blank\n")
            for blanks in BLANKS:
                for k in range(grids):
                    g = shuffled(pattern(n, b), n, b, rng)
                    for _ in range(n * n):
                        swap_part(g, n, b, rng)
                    assert valid(g, n, b)
                    cells = [(r, c) for r in range(n) for c in range(n)]
                    for r, c in rng.sample(cells, round(n * n * blanks / 100)):
                        g[r][c] = 0
                    f.write(" ".join(str(v) for row in g for v in row) + "\n")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
