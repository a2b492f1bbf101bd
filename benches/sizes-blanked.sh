#!/usr/bin/env bash
# Grids made by blanking cells of a solution at random, solved by the sized
# engine through `sudoku solve --box RxC --local`: the figures of
# docs/sizes.md ("Grids made by blanking cells..."). Such grids often have
# many solutions; any one is the answer.
#
# Per shape, one solution is made from the box pattern (row r, column c
# holds (box_cols * (r % box_rows) + r / box_rows + c) % N + 1), its digits,
# rows within bands, bands, columns within stacks and stacks shuffled by a
# seeded RNG; then, per density, one grid with that share of its cells
# blanked (the same seed gives the same grids). Each grid is solved alone,
# one thread, bounded by the node budget (MAX_NODES, default the server's
# 5,000,000) and by TIMEOUT seconds of wall time; the line printed has the
# outcome, nodes, the engine's solve time and the process's CPU time.
#
#   benches/sizes-blanked.sh                      # 25x25 to 64x64, 50/65/80% blanks
#   SHAPES="8x8" DENSITIES="50" benches/sizes-blanked.sh
#   MAX_NODES=1000000 SEED=2 benches/sizes-blanked.sh
#
# Needs a release build of the CLI: cargo build --release --bin sudoku
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${SUDOKU:-$repo/target/release/sudoku}"
shapes="${SHAPES:-5x5 6x6 7x7 8x8}"
densities="${DENSITIES:-50 65 80}"
max_nodes="${MAX_NODES:-5000000}"
timeout_s="${TIMEOUT:-180}"
seed="${SEED:-1}"
[ -x "$bin" ] || { echo "no $bin: cargo build --release --bin sudoku" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

echo "# $(date -u +%FT%TZ) $(uname -m), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg);" \
  "seed $seed, max-nodes $max_nodes, timeout ${timeout_s}s"
for shape in $shapes; do
  for blanks in $densities; do
    grid="$tmp/$shape-$blanks.txt"
    python3 - "$shape" "$blanks" "$seed" >"$grid" <<'EOF'
import random, sys
shape, blanks, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
br, bc = map(int, shape.split("x"))
n = br * bc
rng = random.Random(f"{seed}-{shape}")
def order(groups, size):
    bands = list(range(groups)); rng.shuffle(bands)
    out = []
    for b in bands:
        inner = list(range(size)); rng.shuffle(inner)
        out += [b * size + i for i in inner]
    return out
rows = order(bc, br)   # bc bands of br rows
cols = order(br, bc)   # br stacks of bc columns
digits = list(range(1, n + 1)); rng.shuffle(digits)
pattern = lambda r, c: (bc * (r % br) + r // br + c) % n
grid = [digits[pattern(rows[r], cols[c])] for r in range(n) for c in range(n)]
# The pattern is a valid grid, and so is every shuffle of it above.
for r in range(n):
    assert len(set(grid[r * n:(r + 1) * n])) == n
for c in range(n):
    assert len({grid[r * n + c] for r in range(n)}) == n
for b0 in range(bc):
    for s0 in range(br):
        box = {grid[(b0 * br + i) * n + s0 * bc + j] for i in range(br) for j in range(bc)}
        assert len(box) == n
blank = random.Random(f"{seed}-{shape}-{blanks}").sample(range(n * n), n * n * blanks // 100)
for i in blank:
    grid[i] = 0
print(" ".join(map(str, grid)))
EOF
    out="$tmp/out.jsonl"
    start="$(date +%s.%N)"
    set +e
    /usr/bin/time -f "%U %S %M" -o "$tmp/time" timeout "$timeout_s" \
      "$bin" solve --box "$shape" --local --threads 1 --max-nodes "$max_nodes" \
      --output jsonl "$grid" >"$out" 2>"$tmp/err"
    code=$?
    set -e
    wall="$(echo "$(date +%s.%N) - $start" | bc)"
    read -r user sys rss < <(tail -n 1 "$tmp/time")
    cpu="$(echo "$user + $sys" | bc)"
    line="$(head -n 1 "$out")"
    outcome="$(sed -n 's/.*"outcome":"\([a-z_]*\)".*/\1/p' <<<"$line")"
    nodes="$(sed -n 's/.*"nodes":\([0-9]*\).*/\1/p' <<<"$line")"
    us="$(sed -n 's/.*"solve_time_us":\([0-9]*\).*/\1/p' <<<"$line")"
    if [ "$code" = 124 ]; then outcome="timeout"; fi
    printf 'SIZES_BLANKED box=%s blanks=%s%% outcome=%s nodes=%s solve_ms=%s cpu_s=%s wall_s=%.2f peak_kb=%s\n' \
      "$shape" "$blanks" "${outcome:-none}" "${nodes:-?}" "$(( ${us:-0} / 1000 ))" "$cpu" "$wall" "$rss"
  done
done
