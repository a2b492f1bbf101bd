#!/usr/bin/env bash
# Rating speed against Sudoku Explainer's rater serate, whole processes, on
# the same puzzles: the QQwing expert (150) and top1465 (62) samples of
# data/se_reference.txt. Each round runs ours (`sudoku rate --local --threads 1`, the
# release build a user's `cargo install` gets: no target-cpu flags), then
# serate (one JVM for the whole sample, as its --input reads), each timed by
# the wall clock around the process; it prints each round and the medians.
# Both print ER/EP/ED per puzzle; the script checks that the outputs agree
# with data/se_reference.txt as they are made.
#
# The forum's hardest (the reference set's 20) take serate 42 s to 44
# minutes each (the reference set's header): ours per puzzle, median and
# p99, are in `cargo bench --bench logic -- serate`.
#
# serate is not in Debian and its code may not be kept here: build it from
# the public source as data/se_reference.txt's header says, and point
# SERATE_CLASSES at the directory of its classes.
#
# Each round also runs both sides as a user starts them on this machine:
# ours with its default threads (one per core), serate with the JVM's
# default flags (its rating is one thread; the JVM's compiler and
# collector threads use the other cores).
#
# Then the same per puzzle, one process each side for each puzzle.
#
#   SERATE_CLASSES=/path/to/classes ROUNDS=3 PER_PUZZLE=30 bash benches/serate.sh
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${ROUNDS:-3}"
classes="${SERATE_CLASSES:?set SERATE_CLASSES to the serate classes directory (see data/se_reference.txt)}"
command -v java >/dev/null || { echo "serate.sh: java is not installed (default-jdk-headless)" >&2; exit 1; }

RUSTFLAGS= cargo build --release --locked -q --bin sudoku
bin=target/release/sudoku
dir=target/serate-bench
mkdir -p "$dir"
now() { date +%s.%N; }
median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

echo "load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
for group in qqwing_expert top1465; do
  file="$dir/$group.txt"
  awk -v g="$group" '!/^#/ && $5 == g {print $1}' data/se_reference.txt >"$file"
  awk -v g="$group" '!/^#/ && $5 == g {print $2}' data/se_reference.txt >"$dir/$group.want"
  n=$(wc -l <"$file")
  : >"$dir/ratios"; : >"$dir/ours"; : >"$dir/theirs"; : >"$dir/ratios_all"; : >"$dir/ours_all"; : >"$dir/theirs_all"
  for round in $(seq "$rounds"); do
    t0=$(now)
    "$bin" rate --local --threads 1 "$file" >"$dir/$group.ours"
    t1=$(now)
    java -Xrs -Xmx2g -XX:+UseSerialGC -XX:ActiveProcessorCount=1 -cp "$classes" \
      diuf.sudoku.test.serate --format='%r %p %d' --input="$file" >"$dir/$group.theirs"
    t2=$(now)
    awk -v n="$n" -v a="$t0" -v b="$t1" -v c="$t2" -v set="$group" -v r="$round" \
      -v d="$dir" 'BEGIN {
        ours = n / (b - a); theirs = n / (c - b);
        printf "round %d %s: ours %.1f puzzles/s, serate %.2f puzzles/s, ratio %.0f\n", r, set, ours, theirs, ours / theirs;
        print ours >> (d "/ours"); print theirs >> (d "/theirs"); print ours / theirs >> (d "/ratios") }'
    t0=$(now)
    "$bin" rate --local "$file" >"$dir/$group.ours_all"
    t1=$(now)
    java -cp "$classes" diuf.sudoku.test.serate --format='%r %p %d' --input="$file" >/dev/null
    t2=$(now)
    cmp -s "$dir/$group.ours" "$dir/$group.ours_all" || { echo "serate.sh: rate with all cores printed something else" >&2; exit 1; }
    awk -v n="$n" -v a="$t0" -v b="$t1" -v c="$t2" -v set="$group" -v r="$round" \
      -v d="$dir" 'BEGIN {
        ours = n / (b - a); theirs = n / (c - b);
        printf "round %d %s, defaults: ours %.1f puzzles/s, serate %.2f puzzles/s, ratio %.0f\n", r, set, ours, theirs, ours / theirs;
        print ours >> (d "/ours_all"); print theirs >> (d "/theirs_all"); print ours / theirs >> (d "/ratios_all") }'
  done
  # ER agreement of this run's outputs with the committed reference.
  sed -n 's|^line [0-9]*: [a-z]* \([0-9.]*\)/.*|\1|p' "$dir/$group.ours" >"$dir/$group.er"
  same=$(paste -d' ' "$dir/$group.er" "$dir/$group.want" | awk '$1 == $2' | wc -l)
  printf 'RESULT set=%s puzzles=%d ours_pps=%.1f serate_pps=%.2f ratio=%.0f er_equal=%d (medians of %d rounds)\n' \
    "$group" "$n" "$(median <"$dir/ours")" "$(median <"$dir/theirs")" "$(median <"$dir/ratios")" "$same" "$rounds"
  printf 'RESULT defaults set=%s puzzles=%d ours_pps=%.1f serate_pps=%.2f ratio=%.0f (ours on %d cores, serate with the JVM defaults; medians of %d rounds)\n' \
    "$group" "$n" "$(median <"$dir/ours_all")" "$(median <"$dir/theirs_all")" "$(median <"$dir/ratios_all")" "$(nproc)" "$rounds"
done
# One process per puzzle, as a user rates one puzzle (and as the reference
# set was made): JVM start and class loading count on serate's side, our
# process start on ours. PER_PUZZLE=N puzzles of each sample (default 30).
per="${PER_PUZZLE:-30}"
for group in qqwing_expert top1465; do
  head -n "$per" "$dir/$group.txt" >"$dir/$group.some"
  t0=$(now)
  while read -r p; do "$bin" rate --local --threads 1 - <<<"$p" >/dev/null; done <"$dir/$group.some"
  t1=$(now)
  while read -r p; do
    java -Xrs -Xmx2g -XX:+UseSerialGC -XX:ActiveProcessorCount=1 -cp "$classes" \
      diuf.sudoku.test.serate --format='%r %p %d' "$p" >/dev/null
  done <"$dir/$group.some"
  t2=$(now)
  awk -v n="$per" -v a="$t0" -v b="$t1" -v c="$t2" -v set="$group" 'BEGIN {
    printf "RESULT per-puzzle set=%s puzzles=%d ours_ms=%.1f serate_ms=%.0f ratio=%.0f\n", set, n, 1000 * (b - a) / n, 1000 * (c - b) / n, (c - b) / (b - a) }'
done
echo "forum hardest: per puzzle, cargo bench --bench logic -- serate (serate: 42 s to 44 min each)"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
