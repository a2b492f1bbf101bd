#!/usr/bin/env bash
# Rating speed against Sudoku Explainer's rater serate, whole processes, on
# the same puzzles: the QQwing expert (150) and top1465 (62) samples of
# data/se_reference.txt. Ours is the release build a user's `cargo install`
# gets (no target-cpu flags); serate is one JVM for the whole sample, as its
# --input reads. Each process is timed by the wall clock around it, and its
# CPU time (user + system, all its threads) is printed beside.
#
# Each round runs the sample three ways, ours then serate each time:
#
# - one core each: both pinned to the same CPU (`taskset -c $PIN_CPU`,
#   default the last), each with its defaults (ours then rates on one
#   thread; the JVM sees one processor). Neither can use a core the other
#   lacks: the like-for-like figure.
# - all cores each: both as a user starts them (ours one rating thread per
#   core; serate rates on one thread while the JVM's compiler and collector
#   threads use the other cores).
# - one rating thread each, unpinned: ours `--threads 1`; serate with
#   `-XX:ActiveProcessorCount=1 -XX:+UseSerialGC`, its JIT compiler still
#   free to run on another core (it does: serate's CPU time is well above
#   its wall time). The strictest for ours.
#
# Both print ER/EP/ED per puzzle; the script checks that ours agree with
# data/se_reference.txt and are the same in every mode.
#
# Then one process per puzzle, for PER_PUZZLE puzzles of each sample: JVM
# start and class loading count on serate's side, our process start on
# ours; pinned as above, and as each starts by default.
#
# The forum's hardest (the reference set's 20) take serate 42 s to 44
# minutes each (the reference set's header): ours per puzzle, median and
# p99, are in `cargo bench --bench logic -- serate`.
#
# serate is not in Debian and its code may not be kept here: build it from
# the public source as data/se_reference.txt's header says, and point
# SERATE_CLASSES at the directory of its classes.
#
#   SERATE_CLASSES=/path/to/classes ROUNDS=3 PER_PUZZLE=30 bash benches/serate.sh
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${ROUNDS:-3}"
classes="${SERATE_CLASSES:?set SERATE_CLASSES to the serate classes directory (see data/se_reference.txt)}"
command -v java >/dev/null || { echo "serate.sh: java is not installed (default-jdk-headless)" >&2; exit 1; }
command -v taskset >/dev/null || { echo "serate.sh: taskset is not installed (util-linux)" >&2; exit 1; }
cpu="${PIN_CPU:-$(($(nproc) - 1))}"

RUSTFLAGS= cargo build --release --locked -q --bin sudoku
bin=target/release/sudoku
dir=target/serate-bench
mkdir -p "$dir"
median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
serate=(java -cp "$classes" diuf.sudoku.test.serate "--format=%r %p %d")
serate_one=(java -Xrs -Xmx2g -XX:+UseSerialGC -XX:ActiveProcessorCount=1 -cp "$classes"
  diuf.sudoku.test.serate "--format=%r %p %d")

# timed OUT CMD...: runs CMD with its output to OUT; prints "wall cpu" in
# seconds.
timed() {
  local out=$1 t
  shift
  t=$( { TIMEFORMAT='%R %U %S'; time "$@" >"$out" 2>/dev/null; } 2>&1 )
  awk '{printf "%.3f %.3f\n", $1, $2 + $3}' <<<"$t"
}

echo "load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores; pinned runs on CPU $cpu"
modes=(one_core all_cores one_thread)
for group in qqwing_expert top1465; do
  file="$dir/$group.txt"
  awk -v g="$group" '!/^#/ && $5 == g {print $1}' data/se_reference.txt >"$file"
  awk -v g="$group" '!/^#/ && $5 == g {print $2}' data/se_reference.txt >"$dir/$group.want"
  n=$(wc -l <"$file")
  for m in "${modes[@]}"; do : >"$dir/$m.ratio"; : >"$dir/$m.ours"; : >"$dir/$m.theirs"; : >"$dir/$m.cpu"; done
  for round in $(seq "$rounds"); do
    for m in "${modes[@]}"; do
      case $m in
        one_core)
          a=$(timed "$dir/$group.$m" taskset -c "$cpu" "$bin" rate --local "$file")
          b=$(timed /dev/null taskset -c "$cpu" "${serate[@]}" "--input=$file") ;;
        all_cores)
          a=$(timed "$dir/$group.$m" "$bin" rate --local "$file")
          b=$(timed /dev/null "${serate[@]}" "--input=$file") ;;
        one_thread)
          a=$(timed "$dir/$group.$m" "$bin" rate --local --threads 1 "$file")
          b=$(timed /dev/null "${serate_one[@]}" "--input=$file") ;;
      esac
      if [ "$m" != one_core ]; then
        cmp -s "$dir/$group.one_core" "$dir/$group.$m" || { echo "serate.sh: $m printed other ratings" >&2; exit 1; }
      fi
      read -r ow oc <<<"$a"
      read -r tw tc <<<"$b"
      awk -v n="$n" -v ow="$ow" -v oc="$oc" -v tw="$tw" -v tc="$tc" -v set="$group" -v r="$round" \
        -v m="$m" -v d="$dir" 'BEGIN {
          printf "round %d %s %s: ours %.1f puzzles/s (%.2f s, cpu %.2f s), serate %.2f puzzles/s (%.1f s, cpu %.1f s), ratio %.0f, cpu ratio %.0f\n",
            r, set, m, n / ow, ow, oc, n / tw, tw, tc, tw / ow, tc / oc;
          print n / ow >> (d "/" m ".ours"); print n / tw >> (d "/" m ".theirs");
          print tw / ow >> (d "/" m ".ratio"); print tc / oc >> (d "/" m ".cpu") }'
    done
  done
  # ER agreement of this run's outputs with the committed reference.
  sed -n 's|^line [0-9]*: [a-z]* \([0-9.]*\)/.*|\1|p' "$dir/$group.one_core" >"$dir/$group.er"
  same=$(paste -d' ' "$dir/$group.er" "$dir/$group.want" | awk '$1 == $2' | wc -l)
  for m in "${modes[@]}"; do
    printf 'RESULT %s set=%s puzzles=%d ours_pps=%.1f serate_pps=%.2f ratio=%.0f cpu_ratio=%.0f er_equal=%d (medians of %d rounds)\n' \
      "$m" "$group" "$n" "$(median <"$dir/$m.ours")" "$(median <"$dir/$m.theirs")" \
      "$(median <"$dir/$m.ratio")" "$(median <"$dir/$m.cpu")" "$same" "$rounds"
  done
done
# One process per puzzle, as a user rates one puzzle (and as the reference
# set was made).
per="${PER_PUZZLE:-30}"
for group in qqwing_expert top1465; do
  head -n "$per" "$dir/$group.txt" >"$dir/$group.some"
  for m in one_core all_cores; do
    pin=()
    [ "$m" = one_core ] && pin=(taskset -c "$cpu")
    t0=$(date +%s.%N)
    while read -r p; do "${pin[@]}" "$bin" rate --local - <<<"$p" >/dev/null; done <"$dir/$group.some"
    t1=$(date +%s.%N)
    while read -r p; do "${pin[@]}" "${serate[@]}" "$p" >/dev/null; done <"$dir/$group.some"
    t2=$(date +%s.%N)
    awk -v n="$per" -v a="$t0" -v b="$t1" -v c="$t2" -v set="$group" -v m="$m" 'BEGIN {
      printf "RESULT per-puzzle %s set=%s puzzles=%d ours_ms=%.1f serate_ms=%.0f ratio=%.0f\n", m, set, n, 1000 * (b - a) / n, 1000 * (c - b) / n, (c - b) / (b - a) }'
  done
done
echo "forum hardest: per puzzle, cargo bench --bench logic -- serate (serate: 42 s to 44 min each)"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
