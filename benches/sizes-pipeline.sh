#!/usr/bin/env bash
# Other sizes through the streaming pipeline of `sudoku solve`, the one 9x9
# grids take: 16x16 puzzles in this process against through a server, the
# local pool's use of two threads, and `--box 3x3` on a 9x9 set against no
# `--box` (the same fast path, so the same speed).
#
# The 16x16 puzzles (N, 100,000 by default) are made here by a seeded
# Python script: per puzzle, a valid 16x16 solution made from the box
# pattern (row r, column c holds (4 * (r % 4) + r / 4 + c) % 16 + 1), its
# digits relabelled and its rows within bands, bands, columns within
# stacks and stacks shuffled, then BLANKS% of its cells (50 by default)
# blanked at random. Each is solvable (its solution keeps every given); some
# have more than one solution, and any one is the answer (no --unique).
#
# Prints, with the command and the data set of each:
#   (a) how the puzzles were made;
#   (b) `solve --box 4x4 --local` and `solve --box 4x4 --server URL` (a
#       release sudoku-server on 127.0.0.1 started here), ROUNDS rounds
#       taken in turn, the median wall time and puzzles/s of each, and the
#       ratio of the server's throughput to the local one's (target >= 0.7);
#   (c) `solve --box 4x4 --local --threads 2`: CPU time (user + sys) over
#       wall time, user and sys from /usr/bin/time -f, the median of the
#       rounds (target >= 1.6);
#   (d) SET9 (data/puzzles2_17_clue, repeated REPEAT9 = 20 times) through
#       `solve --local` with and without `--box 3x3`, ROUNDS9 rounds (15 by
#       default: a run is about a second, and one run's noise is several
#       percent), median wall time and the ratio of throughputs (target >= 0.95).
# Every round's answers go to /dev/null but the first's, whose answer count
# and errors are checked.
#
# Built with the release profile and no RUSTFLAGS (each crate's own flags).
#
# Usage: benches/sizes-pipeline.sh [--no-build]
#        N=20000 ROUNDS=3 benches/sizes-pipeline.sh
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-100000}
ROUNDS=${ROUNDS:-5}
BLANKS=${BLANKS:-50}
SEED=${SEED:-1}
SET9=${SET9:-data/puzzles2_17_clue}
REPEAT9=${REPEAT9:-20}
ROUNDS9=${ROUNDS9:-15}
if [[ "${1:-}" != "--no-build" ]]; then
    RUSTFLAGS= cargo build --release --bin sudoku --bin sudoku-server >&2
fi
BIN=${CARGO_TARGET_DIR:-target}/release
[[ -x /usr/bin/time ]] || { echo "needs /usr/bin/time (GNU time)" >&2; exit 1; }
TMP=$(mktemp -d)
SERVER=
cleanup() {
    if [[ -n "$SERVER" ]]; then kill "$SERVER" 2>/dev/null || true; fi
    rm -rf "$TMP"
}
trap cleanup EXIT

# (a) The 16x16 puzzles.
python3 - "$N" "$BLANKS" "$SEED" >"$TMP/16x16.txt" <<'EOF'
import random, sys
n_puzzles, blanks, seed = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
br = bc = 4
n = br * bc
rng = random.Random(seed)
chars = "123456789ABCDEFG"
def order(groups, size):
    bands = list(range(groups)); rng.shuffle(bands)
    out = []
    for b in bands:
        inner = list(range(size)); rng.shuffle(inner)
        out += [b * size + i for i in inner]
    return out
out = []
for _ in range(n_puzzles):
    rows = order(bc, br)
    cols = order(br, bc)
    digits = list(range(n)); rng.shuffle(digits)
    grid = [chars[digits[(bc * (rows[r] % br) + rows[r] // br + cols[c]) % n]]
            for r in range(n) for c in range(n)]
    for i in rng.sample(range(n * n), n * n * blanks // 100):
        grid[i] = "."
    out.append("".join(grid))
sys.stdout.write("\n".join(out) + "\n")
EOF
for _ in $(seq "$REPEAT9"); do grep -v '^#' "$SET9"; done >"$TMP/nine.txt"
NINE=$(wc -l <"$TMP/nine.txt")
echo "# $(date -u +%FT%TZ) $(uname -m), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg); rounds $ROUNDS (16x16), $ROUNDS9 (9x9)"
echo "# (a) $N 16x16 puzzles: seeded ($SEED) relabelled and permuted box-pattern solutions, $BLANKS% of cells blanked"

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$BIN/sudoku-server" --listen "127.0.0.1:$PORT" >"$TMP/server.log" 2>&1 &
SERVER=$!
URL="http://127.0.0.1:$PORT"
for _ in $(seq 100); do
    "$BIN/sudoku" health --server "$URL" >/dev/null 2>&1 && break
    sleep 0.1
done

# Runs `sudoku ARGS` on FILE (the last argument); appends "wall user sys"
# (seconds) to $TMP/$NAME. The first run of a NAME has its answers checked: one line
# a puzzle, no errors.
run() {
    local name=$1
    shift
    local file=${*: -1} out=/dev/null
    [[ -s "$TMP/$name" ]] || out="$TMP/$name.out"
    local start end
    start=$(date +%s%N)
    /usr/bin/time -f '%U %S' -o "$TMP/$name.time" "$BIN/sudoku" "$@" >"$out" 2>"$TMP/$name.err" \
        || { echo "$name failed: $(tail -n 3 "$TMP/$name.err")" >&2; exit 1; }
    end=$(date +%s%N)
    if [[ "$out" != /dev/null ]]; then
        local want got
        want=$(grep -cv '^#' "$file")
        got=$(wc -l <"$out")
        [[ "$got" == "$want" ]] || { echo "$name: $got answers for $want puzzles" >&2; exit 1; }
        ! grep -q '#' "$out" || { echo "$name: $(grep -m1 '#' "$out")" >&2; exit 1; }
        rm -f "$out"
    fi
    # wall (from the clock, to the nanosecond), user, sys (from time)
    awk -v ns="$((end - start))" '{ printf "%.4f %s %s\n", ns / 1e9, $1, $2 }' \
        <(tail -n 1 "$TMP/$name.time") >>"$TMP/$name"
}
median() { # of column $2 of file $1 ("cpu": (user + sys) / wall of each line)
    awk -v c="$2" '{ print (c == "cpu") ? ($2 + $3) / $1 : $c }' "$1" | sort -g |
        awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

LOCAL=(solve --box 4x4 --local "$TMP/16x16.txt")
REMOTE=(solve --box 4x4 --server "$URL" "$TMP/16x16.txt")
THREADS2=(solve --box 4x4 --local --threads 2 "$TMP/16x16.txt")
PLAIN9=(solve --local "$TMP/nine.txt")
BOX9=(solve --local --box 3x3 "$TMP/nine.txt")
for round in $(seq "$ROUNDS"); do
    # Taken in turn, first one then the other, so drift hits both alike.
    if (( round % 2 )); then
        run local "${LOCAL[@]}"; run server "${REMOTE[@]}"
    else
        run server "${REMOTE[@]}"; run local "${LOCAL[@]}"
    fi
    run threads2 "${THREADS2[@]}"
done
for round in $(seq "$ROUNDS9"); do
    if (( round % 2 )); then
        run plain9 "${PLAIN9[@]}"; run box9 "${BOX9[@]}"
    else
        run box9 "${BOX9[@]}"; run plain9 "${PLAIN9[@]}"
    fi
done

say() { # name, what, command, puzzles
    local wall
    wall=$(median "$TMP/$1" 1)
    awk -v w="$wall" -v n="$4" -v name="$1" -v cmd="$3" -v what="$2" 'BEGIN {
        printf "SIZES_PIPELINE %-8s %-28s median %7.2f s  %9.0f puzzles/s  (sudoku %s)\n",
            name, what, w, n / w, cmd }'
}
say local "(b) 16x16 in this process" "${LOCAL[*]}" "$N"
say server "(b) 16x16 through a server" "${REMOTE[*]}" "$N"
awk -v l="$(median "$TMP/local" 1)" -v s="$(median "$TMP/server" 1)" 'BEGIN {
    printf "SIZES_PIPELINE (b) server/local throughput %.3f (target >= 0.7)\n", l / s }'
awk -v r="$(median "$TMP/threads2" cpu)" -v w="$(median "$TMP/threads2" 1)" -v cmd="${THREADS2[*]}" 'BEGIN {
    printf "SIZES_PIPELINE (c) CPU/wall %.2f (target >= 1.6), wall %.2f s  (sudoku %s)\n", r, w, cmd }'
say plain9 "(d) $SET9 x$REPEAT9" "${PLAIN9[*]}" "$NINE"
say box9 "(d) $SET9 x$REPEAT9" "${BOX9[*]}" "$NINE"
awk -v p="$(median "$TMP/plain9" 1)" -v b="$(median "$TMP/box9" 1)" 'BEGIN {
    printf "SIZES_PIPELINE (d) --box 3x3 / no --box throughput %.3f (target >= 0.95)\n", p / b }'
