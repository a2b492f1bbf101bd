#!/usr/bin/env bash
# The sized engine against the `yasgs` crate (0.1.1, MIT) on the sets of
# data/sizes/, side by side, one thread each. benches/yasgs/ is its own cargo
# project (yasgs never enters the main crate's build); one binary holds both
# sides, built once in release with the main crate's [profile.release] and
# no extra code generation flags, into target/yasgs-bench.
#
# Per round and set, the two sides run one after the other (the order swaps
# every round) over the same puzzles; each puzzle is timed from its text to
# its answer, and every answer is checked against the givens by a check that
# shares no code with either solver. yasgs cannot be stopped, so a puzzle it
# has not solved within LIMIT_MS counts as LIMIT_MS (its figures and the
# ratio are then lower bounds) and is reported as a timeout.
#
#   benches/sizes-peer.sh                        # 3 rounds, 16x16-hard and 25x25-hard
#   ROUNDS=5 LIMIT_MS=5000 benches/sizes-peer.sh
#   SETS="16x16-hard" FIRST=10 benches/sizes-peer.sh   # first 10 puzzles only
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rounds="${ROUNDS:-3}"
limit_ms="${LIMIT_MS:-2000}"
first="${FIRST:-1000000}"
sets="${SETS:-16x16-hard 25x25-hard}"

export RUSTFLAGS=""
export CARGO_TARGET_DIR="$repo/target/yasgs-bench"
(cd "$repo/benches/yasgs" && cargo build --release --locked -q)
bin="$CARGO_TARGET_DIR/release/yasgs-bench"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# run SIDE FILE OUT: every puzzle's line into OUT, restarting yasgs past a timeout.
run() {
  local side="$1" file="$2" out="$3" from=0 last
  : >"$out"
  while :; do
    "$bin" "$side" "$file" "$from" "$limit_ms" "$first" >"$out.part"
    cat "$out.part" >>"$out"
    last="$(tail -n 1 "$out.part")"
    case "$last" in
      T\ *) from=$(( ${last#T } + 1 )) ;;
      *) break ;;
    esac
  done
}

# stats OUT: "median p99 timeouts bad count" in microseconds; a timeout counts as the limit.
stats() {
  awk -v lim="$(( limit_ms * 1000 ))" '
    $1 == "P" { t[n++] = $3; if ($4 != "ok") bad++ }
    $1 == "T" { t[n++] = lim; to++ }
    END {
      for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (t[j] < t[i]) { x = t[i]; t[i] = t[j]; t[j] = x }
      m = t[int((n - 1) * 0.5 + 0.5)]; p = t[int((n - 1) * 0.99 + 0.5)]
      printf "%.1f %.1f %d %d %d\n", m, p, to + 0, bad + 0, n
    }' "$1"
}

echo "sizes-peer: sized engine vs yasgs 0.1.1, one thread, rounds=$rounds limit_ms=$limit_ms first=$first load: $(cut -d' ' -f1-3 /proc/loadavg)"
for set in $sets; do
  file="$repo/data/sizes/$set.txt"
  [ -f "$file" ] || { echo "sizes-peer: no set $file" >&2; exit 2; }
  : >"$tmp/rounds"
  for r in $(seq 1 "$rounds"); do
    if (( r % 2 )); then order="ours yasgs"; else order="yasgs ours"; fi
    for side in $order; do run "$side" "$file" "$tmp/$side.out"; done
    read -r om op oto obad on < <(stats "$tmp/ours.out")
    read -r ym yp yto ybad yn < <(stats "$tmp/yasgs.out")
    ratio="$(awk -v o="$om" -v y="$ym" 'BEGIN { printf "%.1f", y / o }')"
    echo "  round $r $set: puzzles=$on ours median=${om}us p99=${op}us bad=$obad | yasgs median=${ym}us p99=${yp}us bad=$ybad timeouts=$yto | ratio=${ratio}x"
    echo "$om $op $ym $yp $ratio $obad $ybad $yto $on" >>"$tmp/rounds"
  done
  awk -v set="$set" -v lim="$limit_ms" '
    function med(c,   i, j, x, a, k) {
      k = 0; for (i = 1; i <= NR; i++) a[k++] = col[c, i]
      for (i = 0; i < k; i++) for (j = i + 1; j < k; j++) if (a[j] < a[i]) { x = a[i]; a[i] = a[j]; a[j] = x }
      return a[int((k - 1) / 2)]
    }
    { for (c = 1; c <= 5; c++) col[c, NR] = $c; ob += $6; yb += $7; to += $8; n = $9 }
    END {
      printf "SIZES_PEER set=%s puzzles=%d ours_median_us=%.1f ours_p99_us=%.1f yasgs_median_us=%.1f yasgs_p99_us=%.1f ratio=%.1f mismatches_ours=%d mismatches_yasgs=%d yasgs_timeouts=%d limit_ms=%d\n",
        set, n, med(1), med(2), med(3), med(4), med(5), ob, yb, to, lim
    }' "$tmp/rounds"
done
