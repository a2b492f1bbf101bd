#!/usr/bin/env bash
# Whole processes, side by side: everything a user waits for (start-up,
# reading, checking, solving, printing), on each public set in data/.
#
#   peer:   `sudoku solve --local --threads 1 FILE > /dev/null` against the
#           peer harness's `emit FILE > /dev/null` (the published `sudoku`
#           crate behind a read-solve-print loop on one thread).
#   server: `sudoku solve --server URL FILE > /dev/null` against
#           `sudoku solve --local FILE > /dev/null` (every core), the server
#           on this machine; also the CPU per puzzle of the server, of the
#           client and of the local run.
#
# Each round runs a block of REPS runs of one side, then of the other
# (the order swaps every round), so load changes hit both alike; each
# figure is the median over ROUNDS of the per-round ratio.
#
#   benches/process.sh                       # both parts, 7 rounds
#   PARTS=peer ROUNDS=11 SETS="17_clue serg" benches/process.sh
#   PARTS=server SERVER_ARGS="--workers 2" benches/process.sh
#
# Code generation: both sides build with the flags a plain `cargo install`
# gets, that is each crate's own [profile.release] and no RUSTFLAGS. The
# peer's .cargo/config.toml asks for `-C target-cpu=native`; RUSTFLAGS set
# (even to nothing) takes precedence over a config's build.rustflags, so
# it is built here with `RUSTFLAGS=` into target/peer-default.
#
# Knobs: ROUNDS (7), SETS ("17_clue magictour forum serg"), PARTS
# ("peer server"), MIN_SECS (0.3: REPS is chosen so that a block of one
# side takes about this long), PEER_DIR (../shared/peers/rust-sudoku-bench),
# PORT (50161), SERVER_ARGS, NO_BUILD=1 (use the binaries as built).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rounds="${ROUNDS:-7}"
sets="${SETS:-17_clue magictour forum serg}"
parts="${PARTS:-peer server}"
min_secs="${MIN_SECS:-0.3}"
peer_dir="${PEER_DIR:-$repo/../shared/peers/rust-sudoku-bench}"
port="${PORT:-50161}"
cd "$repo"

target="${CARGO_TARGET_DIR:-$repo/target}"
if [ -z "${NO_BUILD:-}" ]; then
  RUSTFLAGS= cargo build --release --quiet --bin sudoku --bin sudoku-server
  if [[ " $parts " == *" peer "* ]]; then
    [ -f "$peer_dir/Cargo.toml" ] || { echo "process: no peer harness in $peer_dir (set PEER_DIR)" >&2; exit 2; }
    # From inside the harness, as its run.sh builds, so its config applies
    # but for the flags.
    (cd "$peer_dir" && RUSTFLAGS= CARGO_TARGET_DIR="$repo/target/peer-default" cargo build --release --quiet)
  fi
fi
ours="$target/release/sudoku"
server_bin="$target/release/sudoku-server"
emit="$repo/target/peer-default/release/emit"

tmp="$(mktemp -d)"
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

# Puzzles in a file as both sides count them: lines of 81 characters or
# more that are not comments.
puzzles_in() { awk '!/^#/ && length($0) >= 81 { n++ } END { print n + 0 }' "$1"; }

# Runs "$@" REPS times with stdout to /dev/null; prints "wall user sys"
# in seconds for the whole block.
block() {
  local reps="$1"; shift
  local TIMEFORMAT='%3R %3U %3S'
  { time (for ((i = 0; i < reps; i++)); do "$@" >/dev/null; done) ; } 2>&1
}

# utime + stime of process $1, in clock ticks.
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
hz="$(getconf CLK_TCK)"

# REPS for a command: enough runs for a block of about MIN_SECS.
reps_for() {
  local one
  one="$(block 1 "$@" | cut -d' ' -f1)"
  awk -v one="$one" -v min="$min_secs" 'BEGIN { r = int(min / (one > 0.001 ? one : 0.001) + 0.5); print (r < 1 ? 1 : r) }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"

if [[ " $parts " == *" peer "* ]]; then
  echo
  echo "== ours (sudoku solve --local --threads 1) against the peer (emit), one process each"
  for set in $sets; do
    file="$(ls "$repo"/data/puzzles* | grep -- "$set" | head -1)"
    n="$(puzzles_in "$file")"
    # Same answers first (untimed): solutions agree wherever the puzzle
    # has one solution; on a set with several solutions either side may
    # print another one, so only the line counts must agree.
    "$ours" solve --local --threads 1 "$file" >"$tmp/ours.out" 2>/dev/null || true
    "$emit" "$file" >"$tmp/peer.out"
    lines_ours="$(wc -l <"$tmp/ours.out")"
    lines_peer="$(wc -l <"$tmp/peer.out")"
    differ="$(paste -d' ' "$tmp/ours.out" "$tmp/peer.out" | awk '$1 != $2' | wc -l)"
    reps="$(reps_for "$ours" solve --local --threads 1 "$file")"
    echo "set $set: $file, $n puzzles, $reps runs per block; output lines ours $lines_ours peer $lines_peer, $differ differ"
    : >"$tmp/rows"
    for round in $(seq "$rounds"); do
      if ((round % 2)); then
        a="$(block "$reps" "$ours" solve --local --threads 1 "$file")"
        b="$(block "$reps" "$emit" "$file")"
      else
        b="$(block "$reps" "$emit" "$file")"
        a="$(block "$reps" "$ours" solve --local --threads 1 "$file")"
      fi
      read -r aw au as <<<"$a"
      read -r bw bu bs <<<"$b"
      awk -v r="$round" -v aw="$aw" -v au="$au" -v as="$as" -v bw="$bw" -v bu="$bu" -v bs="$bs" -v k="$reps" -v n="$n" 'BEGIN {
        printf "  round %2d  ours %7.2f ms wall %7.2f ms cpu   peer %7.2f ms wall %7.2f ms cpu   speed ratio wall %.3f cpu %.3f\n",
          r, aw / k * 1000, (au + as) / k * 1000, bw / k * 1000, (bu + bs) / k * 1000, bw / aw, (bu + bs) / (au + as) }'
      echo "$aw $au $as $bw $bu $bs" >>"$tmp/rows"
    done
    wall="$(awk '{ print $4 / $1 }' "$tmp/rows" | median)"
    cpu="$(awk '{ print ($5 + $6) / ($2 + $3) }' "$tmp/rows" | median)"
    ours_ms="$(awk -v k="$reps" '{ print $1 / k * 1000 }' "$tmp/rows" | median)"
    peer_ms="$(awk -v k="$reps" '{ print $4 / k * 1000 }' "$tmp/rows" | median)"
    printf 'PROCESS set=%s puzzles=%s ours_ms=%.2f peer_ms=%.2f speed_wall=%.3f speed_cpu=%.3f\n' \
      "$set" "$n" "$ours_ms" "$peer_ms" "$wall" "$cpu"
  done
  echo "(speed = peer time / our time: above 1 we are faster; load average now: $(cut -d' ' -f1-3 /proc/loadavg))"
fi

if [[ " $parts " == *" server "* ]]; then
  echo
  echo "== sudoku solve --server against sudoku solve --local (every core), server on this machine"
  # shellcheck disable=SC2086
  "$server_bin" --listen "127.0.0.1:$port" ${SERVER_ARGS:-} 2>"$tmp/server.log" &
  server_pid=$!
  url="http://127.0.0.1:$port"
  for _ in $(seq 100); do
    "$ours" health --server "$url" >/dev/null 2>&1 && break
    sleep 0.05
  done
  "$ours" health --server "$url" >/dev/null || { echo "process: the server did not start" >&2; cat "$tmp/server.log" >&2; exit 2; }
  for set in $sets; do
    file="$(ls "$repo"/data/puzzles* | grep -- "$set" | head -1)"
    n="$(puzzles_in "$file")"
    "$ours" solve --local "$file" >"$tmp/local.out" 2>/dev/null || true
    "$ours" solve --server "$url" "$file" >"$tmp/remote.out" 2>/dev/null || true
    same="$(cmp -s "$tmp/local.out" "$tmp/remote.out" && echo "same output" || echo "outputs differ")"
    reps="$(reps_for "$ours" solve --local "$file")"
    echo "set $set: $file, $n puzzles, $reps runs per block; $same"
    : >"$tmp/rows"
    for round in $(seq "$rounds"); do
      run_remote() {
        local t0 r
        t0="$(ticks "$server_pid")"
        r="$(block "$reps" "$ours" solve --server "$url" "$file")"
        echo "$r $(($(ticks "$server_pid") - t0))"
      }
      if ((round % 2)); then
        l="$(block "$reps" "$ours" solve --local "$file")"
        s="$(run_remote)"
      else
        s="$(run_remote)"
        l="$(block "$reps" "$ours" solve --local "$file")"
      fi
      read -r lw lu ls <<<"$l"
      read -r sw su ss st <<<"$s"
      awk -v r="$round" -v lw="$lw" -v lu="$lu" -v ls="$ls" -v sw="$sw" -v su="$su" -v ss="$ss" -v st="$st" -v hz="$hz" -v k="$reps" -v n="$n" 'BEGIN {
        d = k * n / 1e6
        printf "  round %2d  local %7.1f ms wall %6.3f us/puzzle cpu   server %7.1f ms wall, cpu us/puzzle: server %6.3f client %6.3f   wall ratio %.3f\n",
          r, lw / k * 1000, (lu + ls) / d, sw / k * 1000, st / hz / d, (su + ss) / d, lw / sw }'
      echo "$lw $lu $ls $sw $su $ss $st" >>"$tmp/rows"
    done
    d="$(awk -v k="$reps" -v n="$n" 'BEGIN { print k * n / 1e6 }')"
    wall="$(awk '{ print $1 / $4 }' "$tmp/rows" | median)"
    local_cpu="$(awk -v d="$d" '{ print ($2 + $3) / d }' "$tmp/rows" | median)"
    server_cpu="$(awk -v d="$d" -v hz="$hz" '{ print $7 / hz / d }' "$tmp/rows" | median)"
    client_cpu="$(awk -v d="$d" '{ print ($5 + $6) / d }' "$tmp/rows" | median)"
    printf 'SERVER set=%s puzzles=%s wall_ratio=%.3f local_cpu_us=%.3f server_cpu_us=%.3f client_cpu_us=%.3f server_over_local=%.3f\n' \
      "$set" "$n" "$wall" "$local_cpu" "$server_cpu" "$client_cpu" \
      "$(awk -v a="$server_cpu" -v b="$local_cpu" 'BEGIN { print a / b }')"
  done
  echo "(wall ratio = local wall / server wall: the share of the in-process speed kept through the server;"
  echo " cpu per puzzle: user+sys of each process; the server's from /proc/PID/stat in ${hz} Hz ticks;"
  echo " load average now: $(cut -d' ' -f1-3 /proc/loadavg))"
fi
