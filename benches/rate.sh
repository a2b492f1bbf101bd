#!/usr/bin/env bash
# Rating speed: `logic::rate` (benches/logic.rs, one core) against
# `qqwing --solve --stats` on the same files, 17-clue and top1465 from data/.
# Each round runs ours, then qqwing, on one set, both timed by the wall clock
# around the whole process (start, reading, rating, printing), so load hits
# both sides of a round alike; it prints each round and the medians.
#
# Ours rates every puzzle fully: it proves uniqueness with the engine
# (count up to 2), then steps the techniques to the end. QQwing solves with
# its singles-and-pairs logic plus guessing and prints its statistics.
#
#   ROUNDS=3 bash benches/rate.sh
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${ROUNDS:-3}"

command -v qqwing >/dev/null || { echo "rate.sh: qqwing is not installed (bash .ci/setup-qqwing.sh)" >&2; exit 1; }
bin=$(cargo bench --bench logic --no-run 2>&1 | grep -o 'target/[^)]*/logic-[0-9a-f]*' | tail -1)
[ -x "$bin" ] || { echo "rate.sh: could not build benches/logic.rs" >&2; exit 1; }
dir=target/rate-bench
mkdir -p "$dir"

now() { date +%s.%N; }
median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

echo "load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
for set in puzzles2_17_clue puzzles3_magictour_top1465; do
  file="$dir/$set.txt"
  grep -v '^#' "data/$set" | grep -v '^[[:space:]]*$' >"$file"
  n=$(wc -l <"$file")
  : >"$dir/ratios"; : >"$dir/ours"; : >"$dir/theirs"
  for round in $(seq "$rounds"); do
    t0=$(now)
    BENCH_RUNS=1 BENCH_QUIET=1 "$bin" rate "$file" >/dev/null
    t1=$(now)
    qqwing --solve --stats <"$file" >/dev/null
    t2=$(now)
    awk -v n="$n" -v a="$t0" -v b="$t1" -v c="$t2" -v set="$set" -v r="$round" \
      -v d="$dir" 'BEGIN {
        ours = n / (b - a); theirs = n / (c - b);
        printf "round %d %s: ours %.0f/s, qqwing %.0f/s, ratio %.1f\n", r, set, ours, theirs, ours / theirs;
        print ours >> (d "/ours"); print theirs >> (d "/theirs"); print ours / theirs >> (d "/ratios") }'
  done
  printf 'RESULT set=%s puzzles=%d ours_pps=%.0f qqwing_pps=%.0f ratio=%.1f (medians of %d rounds)\n' \
    "$set" "$n" "$(median <"$dir/ours")" "$(median <"$dir/theirs")" "$(median <"$dir/ratios")" "$rounds"
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
