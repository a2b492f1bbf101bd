#!/usr/bin/env bash
# Large grids against CaDiCaL, side by side in one run: every grid of
# data/large/{36x36,49x49,64x64}.txt (square boxes; 42, 50, 58, 65 and 80%
# of a random valid solution's cells blanked; made by
# benches/large/make_sets.py, seeded), each solved by a whole process of
# ours (`sudoku solve --local --threads 1 --box BxB`, the default work
# budget, the release build a user's `cargo install` gets) and by CaDiCaL on
# the direct encoding pruned by the givens (benches/large/cadical.py; its
# time is the cadical process's, the encoding not counted), LIMIT seconds
# each. Prints a row per side and share of blanks: how many each side
# solved, the median time of those it solved, and the median time of each
# on the grids both solved; then the same over every grid run of 42-58%
# blanks at once (the goals near the transition).
#
#   LIMIT=60 GRIDS=10 SIDES="36 49 64" SHARES="42 50 58 65 80" bash benches/large.sh
# GRIDS: the first GRIDS grids of each share (default all); SHARES: the
# shares of blanks to run (default all); also prints how many of ours took
# at most 1 s; needs cadical
# (Debian's `cadical`) and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
limit="${LIMIT:-60}"
grids="${GRIDS:-1000}"
sides="${SIDES:-36 49 64}"
shares="${SHARES:-42 50 58 65 80}"
command -v cadical >/dev/null || { echo "large.sh: cadical is not installed (apt-get install cadical)" >&2; exit 1; }

RUSTFLAGS= cargo build --release --locked -q --bin sudoku
bin="${CARGO_TARGET_DIR:-target}/release/sudoku"
dir="${CARGO_TARGET_DIR:-target}/large-bench/${sides// /-}"
mkdir -p "$dir"
now() { date +%s.%N; }
median() { sort -g | awk '{v[NR]=$1} END {if (NR == 0) print "-"; else printf "%.2f\n", (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }

echo "load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores; $limit s a grid for each side"
echo "| size | blanks | grids | ours: solved, median s | ours within 1 s | CaDiCaL: solved, median s | both solved: ours, CaDiCaL median s |"
echo "|---|---|---|---|---|---|---|"
: >"$dir/all"
for n in $sides; do
  file="data/large/${n}x${n}.txt"
  b=$(awk -v n="$n" 'BEGIN {print int(sqrt(n) + 0.5)}')
  # Each grid's share of blanks, from its zeros.
  grep -v '^#' "$file" | awk -v n="$n" '{z = 0; for (i = 1; i <= NF; i++) if ($i == 0) z++; print int(100 * z / (n * n) + 0.5)}' >"$dir/shares"
  : >"$dir/results"
  declare -A seen=()
  i=0
  while read -r share; do
    i=$((i + 1))
    seen[$share]=$(( ${seen[$share]:-0} + 1 ))
    [ "${seen[$share]}" -le "$grids" ] || continue
    case " $shares " in *" $share "*) ;; *) continue ;; esac
    grep -v '^#' "$file" | sed -n "${i}p" >"$dir/grid.txt"
    t0=$(now)
    if timeout "$limit" "$bin" solve --local --threads 1 --box "${b}x${b}" --output jsonl "$dir/grid.txt" 2>/dev/null |
      grep -q '"outcome":"solved"'; then ours=ok; else ours=no; fi
    t1=$(now)
    read -r theirs secs < <(python3 benches/large/cadical.py "${b}x${b}" "$limit" <"$dir/grid.txt")
    ours_s=$(echo "$t1 - $t0" | bc)
    echo "$share $ours $ours_s $theirs $secs" >>"$dir/results"
  done <"$dir/shares"
  unset seen
  for share in $(cut -d' ' -f1 "$dir/results" | sort -n | uniq); do
    awk -v s="$share" '$1 == s' "$dir/results" >"$dir/cell"
    total=$(wc -l <"$dir/cell")
    ours_n=$(awk '$2 == "ok"' "$dir/cell" | wc -l)
    theirs_n=$(awk '$4 == "solved"' "$dir/cell" | wc -l)
    ours_m=$(awk '$2 == "ok" {print $3}' "$dir/cell" | median)
    theirs_m=$(awk '$4 == "solved" {print $5}' "$dir/cell" | median)
    both_o=$(awk '$2 == "ok" && $4 == "solved" {print $3}' "$dir/cell" | median)
    both_t=$(awk '$2 == "ok" && $4 == "solved" {print $5}' "$dir/cell" | median)
    fast=$(awk '$2 == "ok" && $3 <= 1.0' "$dir/cell" | wc -l)
    echo "| ${n}x${n} | ${share}% | $total | $ours_n, $ours_m | $fast | $theirs_n, $theirs_m | $both_o, $both_t |"
  done
  cat "$dir/results" >>"$dir/all"
done
# The goals near the transition are over all its grids at once: every
# grid of 42-58% blanks run here, pooled.
awk '$1 <= 58' "$dir/all" >"$dir/near"
if [ -s "$dir/near" ]; then
  echo "near the transition (42-58% blanks, $(wc -l <"$dir/near") grids):" \
    "ours solved $(awk '$2 == "ok"' "$dir/near" | wc -l)," \
    "CaDiCaL $(awk '$4 == "solved"' "$dir/near" | wc -l)," \
    "CaDiCaL's not ours $(awk '$2 != "ok" && $4 == "solved"' "$dir/near" | wc -l);" \
    "both solved $(awk '$2 == "ok" && $4 == "solved"' "$dir/near" | wc -l)," \
    "median ours $(awk '$2 == "ok" && $4 == "solved" {print $3}' "$dir/near" | median) s," \
    "CaDiCaL $(awk '$2 == "ok" && $4 == "solved" {print $5}' "$dir/near" | median) s"
fi
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
