#!/usr/bin/env bash
# Minimal large puzzles from Generate, and count mode on them: for each box
# in BOXES and each seed in SEEDS, a whole process of
# `sudoku generate --local --threads 1 --box RxC -n 1 --seed S` (the
# default work budget and memory cap, the release build a user's
# `cargo install` gets), then `sudoku solve --local --threads 1 --unique`
# on the puzzle it made. Prints a row per puzzle (clues, minimal, time and
# peak memory of each process, the count's nodes) and a median row per
# box. Minimality is the maker's word; CHECK=1 also counts every puzzle
# without one of its clues (each must have two solutions).
#
#   SEEDS="1 2 3" BOXES="5x5 6x6" bash benches/minimal.sh      # about 3 minutes
#   SEEDS=1 BOXES=6x6 CHECK=1 bash benches/minimal.sh
set -euo pipefail
cd "$(dirname "$0")/.."
seeds="${SEEDS:-1 2 3}"
boxes="${BOXES:-5x5 6x6}"
RUSTFLAGS= cargo build --release --locked -q --bin sudoku
bin="${CARGO_TARGET_DIR:-target}/release/sudoku"
dir="${CARGO_TARGET_DIR:-target}/minimal-bench"
mkdir -p "$dir"
median() { sort -g | awk '{v[NR]=$1} END {if (NR == 0) print "-"; else printf "%.2f\n", (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
field() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

echo "load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
echo "| box | seed | clues | minimal | generate s, MB | --unique: count, s, nodes, MB |"
echo "|---|---|---|---|---|---|"
for box in $boxes; do
  : >"$dir/times"
  : >"$dir/counts"
  for seed in $seeds; do
    /usr/bin/time -f "%e %M" -o "$dir/gen.time" \
      "$bin" generate --local --threads 1 --box "$box" -n 1 --seed "$seed" --output jsonl >"$dir/made.json"
    read -r gs gk <"$dir/gen.time"
    clues=$(field "d['clues']" <"$dir/made.json")
    minimal=$(field "d['minimal']" <"$dir/made.json")
    field "d['puzzle']" <"$dir/made.json" >"$dir/puzzle.txt"
    /usr/bin/time -f "%e %M" -o "$dir/count.time" \
      "$bin" solve --local --threads 1 --box "$box" --unique --output jsonl "$dir/puzzle.txt" >"$dir/count.json" || true
    read -r cs ck <"$dir/count.time"
    count=$(field "d.get('solution_count')" <"$dir/count.json")
    nodes=$(field "d['stats']['nodes']" <"$dir/count.json")
    echo "| $box | $seed | $clues | $minimal | $gs, $((gk / 1024)) | $count, $cs, $nodes, $((ck / 1024)) |"
    echo "$gs" >>"$dir/times"
    echo "$cs" >>"$dir/counts"
    if [ "${CHECK:-0}" = 1 ]; then
      python3 - "$dir/puzzle.txt" >"$dir/without.txt" <<'EOF'
import sys
v = open(sys.argv[1]).read().split()
text = len(v) == 1
cells = list(v[0]) if text else v
for i, x in enumerate(cells):
    if x not in ('0', '.'):
        w = list(cells)
        w[i] = '.' if text else '0'
        print(''.join(w) if text else ' '.join(w))
EOF
      total=$(wc -l <"$dir/without.txt")
      two=$("$bin" solve --local --box "$box" --unique --output jsonl "$dir/without.txt" 2>/dev/null |
        grep -c '"solution_count":2' || true)
      echo "|   | check | $two of $total puzzles without one clue have two solutions | | | |"
    fi
  done
  echo "| $box | median | | | $(median <"$dir/times") | $(median <"$dir/counts") |"
done
