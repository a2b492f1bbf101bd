#!/usr/bin/env bash
# sudoku solve as a pipeline stage: N puzzles (10,000,000 by default) made by
# repeating data/puzzles2_17_clue through a pipe, never written to disk, into
# `sudoku solve -q`, in this process (--local) and through a server. Prints
# the CLI's peak RSS, puzzles/s, and the time to the first answer of a
# puzzle written to an open pipe.
#
# Usage: benches/pipeline.sh [N] [--no-build]
set -eu  # no pipefail: the generator ends by SIGPIPE, as it should
cd "$(dirname "$0")/.."
N=${1:-10000000}
if [[ "${2:-}" != "--no-build" ]]; then
    cargo build --release --bin sudoku --bin sudoku-server >&2
fi
BIN=${CARGO_TARGET_DIR:-target}/release
SET=data/puzzles2_17_clue
PUZZLE=$(awk '!/^#/ { print substr($0, 1, 81); exit }' "$SET")

puzzles() { # N puzzle lines, repeating the set
    while grep -v '^#' "$SET"; do :; done | head -n "$N"
}

# Runs "$@" reading puzzles() on stdin; prints "peak_kb seconds".
measure() {
    local start end peak pid
    start=$(date +%s%N)
    if [[ -x /usr/bin/time ]]; then
        peak=$(puzzles | /usr/bin/time -f '%M' "$@" 2>&1 >/dev/null | tail -n 1)
    else
        puzzles | "$@" >/dev/null &
        pid=$!
        peak=0
        while kb=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2>/dev/null) && [[ -n "$kb" ]]; do
            peak=$kb
            sleep 0.05
        done
        wait "$pid"
    fi
    end=$(date +%s%N)
    echo "$peak $(( (end - start) / 1000000 ))"
}

# Milliseconds from writing one puzzle to an open pipe to reading its answer.
first_answer_ms() {
    local start end line
    coproc SOLVE { "$@"; }
    start=$(date +%s%N)
    echo "$PUZZLE" >&"${SOLVE[1]}"
    read -r line <&"${SOLVE[0]}"
    end=$(date +%s%N)
    exec {SOLVE[1]}>&-
    wait "$SOLVE_PID" || true
    [[ ${#line} -eq 81 ]] || { echo "bad answer: $line" >&2; return 1; }
    echo $(( (end - start) / 1000000 ))
}

report() { # name peak_kb ms
    awk -v name="$1" -v kb="$2" -v ms="$3" -v n="$N" 'BEGIN {
        printf "%-10s %10d puzzles  peak RSS %6.1f MB  %6.1f s  %9.0f puzzles/s\n",
            name, n, kb / 1024, ms / 1000, n / (ms / 1000) }'
}

read -r kb ms < <(measure "$BIN/sudoku" solve --local -q)
report "--local" "$kb" "$ms"
echo "--local    first answer after $(first_answer_ms "$BIN/sudoku" solve --local) ms"

PORT=$(( 20000 + RANDOM % 20000 ))
"$BIN/sudoku-server" --listen "127.0.0.1:$PORT" >/dev/null 2>&1 &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null; wait "$SERVER" 2>/dev/null || true' EXIT
for _ in $(seq 100); do
    "$BIN/sudoku" health --server "http://127.0.0.1:$PORT" >/dev/null 2>&1 && break
    sleep 0.1
done
read -r kb ms < <(measure "$BIN/sudoku" solve --server "127.0.0.1:$PORT" -q)
report "--server" "$kb" "$ms"
echo "--server   first answer after $(first_answer_ms "$BIN/sudoku" solve --server "127.0.0.1:$PORT") ms"
