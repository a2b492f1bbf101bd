#!/usr/bin/env bash
# sudoku solve as a pipeline stage: N puzzles (10,000,000 by default) made by
# repeating data/puzzles2_17_clue through a pipe, never written to disk, into
# `sudoku solve -q`, in this process (--local) and through a server, in each
# input format the CLI reads: 81-character lines, 9-line grids (digits
# with spaces, a blank line between grids) and bracketed boards (one
# [["5","3",".",...],...] a line). Prints the CLI's peak RSS, puzzles/s,
# and the time to the first answer of a puzzle written to an open pipe.
#
# Usage: benches/pipeline.sh [N] [--no-build]
#        FORMATS="line grid" benches/pipeline.sh 1000000
set -eu  # no pipefail: the generator ends by SIGPIPE, as it should
cd "$(dirname "$0")/.."
N=${1:-10000000}
FORMATS=${FORMATS:-line grid bracketed}
if [[ "${2:-}" != "--no-build" ]]; then
    cargo build --release --bin sudoku --bin sudoku-server >&2
fi
BIN=${CARGO_TARGET_DIR:-target}/release
SET=data/puzzles2_17_clue
PUZZLE=$(awk '!/^#/ { print substr($0, 1, 81); exit }' "$SET")
TMP=$(mktemp -d)

# The set once in each format, and the lines one puzzle takes in it.
grep -v '^#' "$SET" | cut -c1-81 >"$TMP/line"
awk '{ for (r = 0; r < 9; r++) { row = ""; for (c = 1; c <= 9; c++) {
         ch = substr($0, r * 9 + c, 1); row = row (c > 1 ? " " : "") (ch == "." ? "0" : ch) }
       print row } print "" }' "$TMP/line" >"$TMP/grid"
awk '{ b = "["; for (r = 0; r < 9; r++) { b = b (r ? "," : "") "["
         for (c = 1; c <= 9; c++) b = b (c > 1 ? "," : "") "\"" substr($0, r * 9 + c, 1) "\""
         b = b "]" } print b "]" }' "$TMP/line" >"$TMP/bracketed"
lines_per() { case "$1" in grid) echo 10 ;; *) echo 1 ;; esac; }

puzzles() { # N puzzles in format $FORMAT, repeating the set
    while cat "$TMP/$FORMAT"; do :; done | head -n "$((N * $(lines_per "$FORMAT")))"
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
        printf "%-20s %10d puzzles  peak RSS %6.1f MB  %6.1f s  %9.0f puzzles/s\n",
            name, n, kb / 1024, ms / 1000, n / (ms / 1000) }'
}

PORT=$(( 20000 + RANDOM % 20000 ))
"$BIN/sudoku-server" --listen "127.0.0.1:$PORT" >/dev/null 2>&1 &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null; wait "$SERVER" 2>/dev/null || true; rm -rf "$TMP"' EXIT
for _ in $(seq 100); do
    "$BIN/sudoku" health --server "http://127.0.0.1:$PORT" >/dev/null 2>&1 && break
    sleep 0.1
done

for FORMAT in $FORMATS; do
    read -r kb ms < <(measure "$BIN/sudoku" solve --local -q)
    report "$FORMAT --local" "$kb" "$ms"
    read -r kb ms < <(measure "$BIN/sudoku" solve --server "127.0.0.1:$PORT" -q)
    report "$FORMAT --server" "$kb" "$ms"
done
echo "--local    first answer after $(first_answer_ms "$BIN/sudoku" solve --local) ms"
echo "--server   first answer after $(first_answer_ms "$BIN/sudoku" solve --server "127.0.0.1:$PORT") ms"
