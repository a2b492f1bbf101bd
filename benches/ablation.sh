#!/usr/bin/env bash
# What each propagation rule is worth, in instructions (callgrind counts
# them the same however loaded the machine is): one pass over the first
# FIRST puzzles of each set and mode, counted inside the bench's `pass`
# only (not the parsing), for the default rules on the generic code path and
# for each ablation. Prints the change against that baseline; + means the
# engine does more work without the rule, so the rule pays.
#
#   benches/ablation.sh              # FIRST=1000, every set, both modes
#   FIRST=200 SETS="forum" benches/ablation.sh
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
first="${FIRST:-1000}"
sets="${SETS:-17_clue magictour forum serg}"
configs="default_generic_path no_row_singles no_box_line no_naked_singles no_hidden_singles always_hidden_singles never_by_peers always_by_peers"
command -v valgrind >/dev/null || { echo "ablation: needs valgrind" >&2; exit 2; }
cd "$repo"
bin="$(cargo bench --bench solver --no-run 2>&1 | sed -n 's/.*Executable .*(\(.*\)).*/\1/p' | tail -1)"
count() {
  BENCH_FIXED=1 BENCH_FIRST="$first" BENCH_SET="$1" BENCH_MODE="$2" BENCH_FIXED_CONFIG="$3" \
    valgrind --tool=callgrind --toggle-collect='solver::pass' --callgrind-out-file=/dev/null \
    "$bin" --bench 2>&1 | sed -n 's/.*refs: *//p' | tr -d ,
}
for set in $sets; do
  for mode in one count2; do
    base="$(count "$set" "$mode" default_generic_path)"
    line="ABLATION set=$set mode=$mode first=$first default_instructions=$base"
    for cfg in $configs; do
      [ "$cfg" = default_generic_path ] && continue
      n="$(count "$set" "$mode" "$cfg")"
      line="$line $cfg=$(awk -v n="$n" -v b="$base" 'BEGIN{printf "%+.1f%%", (n/b-1)*100}')"
    done
    echo "$line"
  done
done
