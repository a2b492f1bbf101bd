#!/usr/bin/env bash
# What tracing costs: unary Solve calls/s (`sudoku bench --mode unary`)
# against three release servers side by side, run after run in turn:
#   off    no --otlp-endpoint (the default)
#   100%   --otlp-endpoint, OTEL_TRACES_SAMPLER=parentbased_always_on
#   1%     --otlp-endpoint, OTEL_TRACES_SAMPLER=parentbased_traceidratio, ARG=0.01
# and prints each run and the medians, with the share lost against off
# (goal: at most 5% at 1%), and the server's CPU time per call (from
# /proc, `--server-pid`), which shows the cost more plainly than the rate
# when the client, which shares the cores, is the bottleneck. The bench client sends no trace context, so every
# call is a root span and the sampler's ratio decides alone. Each run starts
# with the next mode in turn, so that none always runs first.
#
# Where spans go (RECEIVER):
#   down    (default) an endpoint on 127.0.0.1 where nothing listens: every
#           export fails, the queue fills and spans are dropped
#   python  tests/it/scripts/otel_trace.py receive --quiet in the test
#           virtualenv (PYTHON, default ${CARGO_TARGET_DIR:-target}/py-venv/bin/python;
#           `cargo test --test it otel::` or .ci/setup-clients.sh makes it),
#           which takes every export; it shares the cores with the server
#
# Load only targets 127.0.0.1 and every run is bounded in time.
# Knobs (environment): RUNS (5), DUR seconds per run (5), CONCURRENCY (64),
# CONNECTIONS (4), PORT (50261; the servers take PORT..PORT+2, a down
# endpoint PORT+3), UNARY_FILE (one easy puzzle: the per-call overhead at
# its largest share; data/puzzles2_17_clue for realistic work),
# RECEIVER (down), SKIP_BUILD=1 (use BIN_DIR as is).
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-5}
DUR=${DUR:-5}
CONCURRENCY=${CONCURRENCY:-64}
CONNECTIONS=${CONNECTIONS:-4}
PORT=${PORT:-50261}
RECEIVER=${RECEIVER:-down}
TARGET_DIR=${CARGO_TARGET_DIR:-target}
PYTHON=${PYTHON:-$TARGET_DIR/py-venv/bin/python}

WORK=$(mktemp -d /tmp/sudoku-otel-bench.XXXXXX)
EASY=$WORK/easy
echo "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79" >"$EASY"
UNARY_FILE=${UNARY_FILE:-$EASY}
if [[ ${SKIP_BUILD:-0} != 1 ]]; then
    cargo build --release --bins --quiet
    # Copied away at once, so a later build cannot swap them mid-run.
    BIN_DIR=$WORK/bin
    mkdir -p "$BIN_DIR"
    cp "$TARGET_DIR/release/sudoku" "$TARGET_DIR/release/sudoku-server" "$BIN_DIR/"
fi
BIN_DIR=${BIN_DIR:?set BIN_DIR with SKIP_BUILD=1}
SUDOKU=$BIN_DIR/sudoku

PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT

case $RECEIVER in
down)
    ENDPOINT=http://127.0.0.1:$((PORT + 3))
    ;;
python)
    [[ -x $PYTHON ]] || { echo "no $PYTHON: run cargo test --test it otel:: or .ci/setup-clients.sh" >&2; exit 1; }
    "$PYTHON" tests/it/scripts/otel_trace.py receive --quiet --port $((PORT + 3)) >"$WORK/receiver" &
    PIDS+=($!)
    for _ in $(seq 100); do grep -q listening "$WORK/receiver" && break; sleep 0.1; done
    grep -q listening "$WORK/receiver" || { echo "the receiver did not come up" >&2; exit 1; }
    ENDPOINT=http://127.0.0.1:$((PORT + 3))
    ;;
*) echo "RECEIVER is down or python, not $RECEIVER" >&2; exit 1 ;;
esac

MODES=(off 100% 1%)
declare -A SPID ADDR
start() { # mode port env...
    local mode=$1 port=$2
    shift 2
    local args=()
    [[ $mode != off ]] && args=(--otlp-endpoint "$ENDPOINT")
    # The exporter's failures (RECEIVER=down) are logged: kept out of the report.
    env RUST_LOG=error "$@" "$BIN_DIR/sudoku-server" --listen "127.0.0.1:$port" "${args[@]}" \
        2>"$WORK/server-${mode%\%}.log" &
    SPID[$mode]=$!
    PIDS+=($!)
    ADDR[$mode]=http://127.0.0.1:$port
    for _ in $(seq 100); do
        # Ours, not another server that already had the port.
        kill -0 "${SPID[$mode]}" 2>/dev/null || break
        "$SUDOKU" health --server "${ADDR[$mode]}" >/dev/null 2>&1 && return
        sleep 0.1
    done
    echo "the $mode server did not come up on port $port (in use? set PORT):" >&2
    cat "$WORK/server-${mode%\%}.log" >&2
    exit 1
}
start off "$PORT"
start 100% $((PORT + 1)) OTEL_TRACES_SAMPLER=parentbased_always_on
start 1% $((PORT + 2)) OTEL_TRACES_SAMPLER=parentbased_traceidratio OTEL_TRACES_SAMPLER_ARG=0.01

median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "nan"; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
field() { sed -n "s/^[Bb][Ee][Nn][Cc][Hh].* $1=\([^ ]*\).*/\1/p" "$2"; }
lost() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%+.1f%%", 100 * (a - b) / b; else print "nan"}'; }

echo "# $(date -u +%FT%TZ) $(git rev-parse --short HEAD 2>/dev/null) on $(nproc) cores, load avg $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# unary Solve of $(basename "$UNARY_FILE"), $CONCURRENCY in flight over $CONNECTIONS connections, ${DUR}s per run, RUNS=$RUNS, spans to $ENDPOINT ($RECEIVER)"
for mode in "${MODES[@]}"; do : >"$WORK/rate-$mode"; : >"$WORK/cpu-$mode"; done
for r in $(seq "$RUNS"); do
    line="  run $r:"
    # Each run starts with the next mode, so no mode always goes first.
    order=("${MODES[@]:$(((r - 1) % 3))}" "${MODES[@]:0:$(((r - 1) % 3))}")
    for mode in "${order[@]}"; do
        "$SUDOKU" bench --server "${ADDR[$mode]}" --server-pid "${SPID[$mode]}" --mode unary \
            --concurrency "$CONCURRENCY" --connections "$CONNECTIONS" --duration "$DUR" \
            "$UNARY_FILE" >"$WORK/out" || { cat "$WORK/out"; echo "bench against $mode failed" >&2; }
        rate=$(field rate "$WORK/out")
        cpu=$(field server_us_per_unit "$WORK/out")
        echo "$rate" >>"$WORK/rate-$mode"
        echo "$cpu" >>"$WORK/cpu-$mode"
        line+=" $mode $rate/s ${cpu}us/call (p99 $(field p99_us "$WORK/out")us);"
    done
    echo "$line"
done
off=$(median <"$WORK/rate-off"); all=$(median <"$WORK/rate-100%"); one=$(median <"$WORK/rate-1%")
echo "unary Solve median calls/s: off $off, 100% sampled $all ($(lost "$all" "$off")), 1% sampled $one ($(lost "$one" "$off")) (goal: 1% within -5%)"
# The client shares the cores and spends more per call than the server, so
# the server's CPU time per call shows the cost more plainly than the rate.
off=$(median <"$WORK/cpu-off"); all=$(median <"$WORK/cpu-100%"); one=$(median <"$WORK/cpu-1%")
echo "server CPU per call, median us: off $off, 100% sampled $all ($(lost "$all" "$off")), 1% sampled $one ($(lost "$one" "$off"))"
for mode in 100% 1%; do
    rss=$(awk '/VmHWM/ {print $2}' "/proc/${SPID[$mode]}/status")
    echo "  $mode server peak RSS ${rss} kB"
done
echo "  off server peak RSS $(awk '/VmHWM/ {print $2}' "/proc/${SPID[off]}/status") kB"
if [[ $RECEIVER == python ]]; then
    echo "  receiver: $(tail -1 "$WORK/receiver")"
fi
