#!/usr/bin/env bash
# The engine against a peer solver's harness, side by side: for each data set
# in data/ and each round, our `cargo bench --bench solver` figure and the
# peer's, one right after the other on the same file, then the median of the
# per-round ratios (ours / peer) per set and mode.
#
# The peer is any program that prints lines such as
#   RESULT ... mode=one|count2 file=PATH ... median_pps=N ...
# for `--mode both --runs R --min-secs S FILE` (the harness around the
# published `sudoku` crate in ../shared/peers/rust-sudoku-bench does). It is
# run, never linked.
#
#   benches/compare-peer.sh                      # 3 rounds, every set
#   ROUNDS=5 SETS="17_clue serg" MIN_SECS=1 benches/compare-peer.sh
#   PEER=/path/to/run.sh benches/compare-peer.sh
#
# Both sides build with the same code generation flags: the peer harness
# builds with `-C target-cpu=native` (its .cargo/config.toml), so ours does
# too, into target/peer-flags (PEER_RUSTFLAGS overrides).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
peer="${PEER:-$repo/../shared/peers/rust-sudoku-bench/run.sh}"
rounds="${ROUNDS:-3}"
min_secs="${MIN_SECS:-0.5}"
sets="${SETS:-17_clue magictour forum serg}"
[ -x "$peer" ] || { echo "compare-peer: no peer harness at $peer (set PEER)" >&2; exit 2; }

cd "$repo"
export RUSTFLAGS="${PEER_RUSTFLAGS:--C target-cpu=native}"
export CARGO_TARGET_DIR="$repo/target/peer-flags"
cargo bench --bench solver --no-run --quiet 2>/dev/null
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
field() { sed -n "s/.*[ ]$1=\([^ ]*\).*/\1/p"; }

for round in $(seq "$rounds"); do
  for set in $sets; do
    file="$(ls "$repo"/data/puzzles* | grep -- "$set" | head -1)"
    ours="$(BENCH_SET="$set" BENCH_RUNS=1 BENCH_MIN_SECS="$min_secs" \
      cargo bench --bench solver --quiet 2>/dev/null | grep '^RESULT' | grep 'config=default ')"
    theirs="$("$peer" --mode both --runs 1 --min-secs "$min_secs" "$file" 2>/dev/null | grep '^RESULT')"
    for mode in one count2; do
      a="$(grep "mode=$mode " <<<"$ours" | field median_pps)"
      b="$(grep "mode=$mode " <<<"$theirs" | field median_pps)"
      echo "$set $mode $a $b" >>"$out"
      printf 'round %s  %-10s %-6s ours %9s/s  peer %9s/s  ratio %s\n' \
        "$round" "$set" "$mode" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN{printf "%.2f", a/b}')"
    done
  done
done

echo
echo "median over $rounds rounds (load average now: $(cut -d' ' -f1-3 /proc/loadavg)):"
for set in $sets; do
  for mode in one count2; do
    grep "^$set $mode " "$out" | awk -v set="$set" -v mode="$mode" '
      { ours[NR] = $3; peer[NR] = $4; ratio[NR] = $3 / $4 }
      function median(v, n,   i, j, t) {
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
        return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
      }
      END { printf "COMPARE set=%s mode=%s ours_pps=%.0f peer_pps=%.0f ratio=%.2f\n", set, mode, median(ours, NR), median(peer, NR), median(ratio, NR) }'
  done
done
