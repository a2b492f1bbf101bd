#!/usr/bin/env bash
# Generation speed per label against QQwing, side by side: each round runs
# `sudoku generate --local --threads 1` for every label and then
# `qqwing --generate N --difficulty expert`, both pinned to one core
# (taskset, when present), and the script prints the median puzzles/s of each
# and the median of the per-round ratios to QQwing's expert rate. Our puzzles
# are unique and minimal and carry their rating; QQwing's expert ones are
# unique and (by its defaults) minimal.
#
# QQwing's expert is a wider class than our expert label: it means QQwing's
# singles-and-pairs solver had to guess, which every puzzle of our hard,
# expert or extreme label makes it do. So the script also runs
# `--min-level hard` (hard or harder), the like-for-like match for QQwing's
# expert, and has `qqwing --solve --stats` rate those puzzles: the line
# GENERATE like_for_like says how many QQwing calls expert.
#
#   benches/generate.sh                       # 3 rounds
#   ROUNDS=5 N=2000 QQ_N=200 benches/generate.sh
#   LABELS="easy medium" benches/generate.sh
#
# Needs qqwing (apt-get install qqwing); builds the release binary first.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rounds="${ROUNDS:-3}"
n="${N:-2000}"          # puzzles per label per round (our side)
expert_n="${EXPERT_N:-$n}"
qq_n="${QQ_N:-200}"     # QQwing expert puzzles per round
labels="${LABELS:-easy medium hard expert}"
qqwing="${QQWING:-$(command -v qqwing || true)}"
[ -n "$qqwing" ] || { echo "generate.sh: qqwing is not installed (apt-get install qqwing)" >&2; exit 2; }

cd "$repo"
cargo build --release --quiet --bin sudoku
sudoku="$repo/target/release/sudoku"
pin=()
if command -v taskset >/dev/null; then pin=(taskset -c 0); fi

# Seconds a command takes, wall clock.
seconds() {
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null
  end=$(date +%s.%N)
  echo "$end - $start" | bc -l
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

declare -A rates ratios
qq_rates=()
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq 1 "$rounds"); do
  for label in $labels; do
    count=$n
    [ "$label" = expert ] && count=$expert_n
    s=$(seconds "${pin[@]}" "$sudoku" generate --local --threads 1 -n "$count" --seed "$round" --level "$label")
    rates[$label]+="$(echo "$count / $s" | bc -l) "
  done
  s=$(seconds "${pin[@]}" "$sudoku" generate --local --threads 1 -n "$n" --seed "$round" --min-level hard)
  rates[hard+]+="$(echo "$n / $s" | bc -l) "
  s=$(seconds "${pin[@]}" "$qqwing" --generate "$qq_n" --difficulty expert)
  qq=$(echo "$qq_n / $s" | bc -l)
  qq_rates+=("$qq")
  for label in $labels hard+; do
    last=$(echo "${rates[$label]}" | awk '{print $NF}')
    ratios[$label]+="$(echo "$last / $qq" | bc -l) "
  done
  echo "round $round: qqwing expert $(printf %.1f "$qq")/s"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
qq_median=$(printf '%s\n' "${qq_rates[@]}" | median)
printf 'GENERATE qqwing expert: %.1f puzzles/s (median of %d rounds, %d puzzles each)\n' "$qq_median" "$rounds" "$qq_n"
for label in $labels; do
  r=$(echo "${rates[$label]}" | tr ' ' '\n' | grep . | median)
  x=$(echo "${ratios[$label]}" | tr ' ' '\n' | grep . | median)
  printf 'GENERATE label=%s puzzles_per_s=%.0f ratio_to_qqwing_expert=%.1f\n' "$label" "$r" "$x"
done
r=$(echo "${rates[hard+]}" | tr ' ' '\n' | grep . | median)
x=$(echo "${ratios[hard+]}" | tr ' ' '\n' | grep . | median)
"$sudoku" generate --local -n "$n" --seed 1 --min-level hard >"$repo/target/generate-hard-plus.txt"
expert=$("$qqwing" --solve --stats <"$repo/target/generate-hard-plus.txt" | grep -c '^Difficulty: Expert' || true)
printf 'GENERATE like_for_like=min-level-hard puzzles_per_s=%.0f ratio_to_qqwing_expert=%.1f qqwing_rates_expert=%d/%d\n' "$r" "$x" "$expert" "$n"
