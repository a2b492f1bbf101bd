#!/usr/bin/env bash
# Service benchmark: in-process solving vs SolveBatch streams vs unary Solve
# vs the health no-op, the "solving never stalls the runtime" probe, and an
# h2load cross-check. See benches/README.md for what the figures mean.
#
# Load only targets 127.0.0.1 and every step is bounded in time or count.
# Knobs (environment): RUNS (3), DUR seconds per timed unary/probe run (5),
# PORT (50151), STREAMS (1), BATCH (64), HOGS (in-flight hard Solves on the
# busy connection during the stall probe, "1 8"), UNARY_FILE (17-clue set),
# LONG_REPEAT (0 = skip; 21 sends ~1M 17-clue puzzles on one stream),
# SERVER_ARGS (extra sudoku-server flags), SKIP_BUILD=1 (use BIN_DIR as is),
# SUBSET (0 = whole files; N = the first N puzzles of each set, for quick runs),
# CAP (--max-in-flight of the capacity run, 64), STREAM_REPEATS (17-clue
# repeats of the memory run, "2 21": about 100k and 1M puzzles),
# SECTIONS (which parts to run, default "1 2 3 4 5 6").
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-3}
DUR=${DUR:-5}
PORT=${PORT:-50151}
STREAMS=${STREAMS:-1}
BATCH=${BATCH:-64}
HOGS=${HOGS:-"1 8"}
LONG_REPEAT=${LONG_REPEAT:-0}
SERVER_ARGS=${SERVER_ARGS:-}
ADDR=127.0.0.1:$PORT
SERVER=http://$ADDR
D17=data/puzzles2_17_clue
DTOP=data/puzzles3_magictour_top1465
DHARD=data/puzzles6_forum_hardest_1106
SUBSET=${SUBSET:-0}
CAP=${CAP:-64}
STREAM_REPEATS=${STREAM_REPEATS:-"2 21"}
SECTIONS=${SECTIONS:-"1 2 3 4 5 6"}
want() { [[ " $SECTIONS " == *" $1 "* ]]; }

WORK=$(mktemp -d /tmp/sudoku-bench.XXXXXX)
if [[ $SUBSET -gt 0 ]]; then
    for v in D17 DTOP DHARD; do
        awk -v n="$SUBSET" '!/^[[:space:]]*(#|$)/ && c++ < n' "${!v}" >"$WORK/$(basename "${!v}")"
        printf -v "$v" '%s' "$WORK/$(basename "${!v}")"
    done
fi
UNARY_FILE=${UNARY_FILE:-$D17}
EASY=$WORK/easy
echo "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79" >"$EASY"
if [[ ${SKIP_BUILD:-0} != 1 ]]; then
    cargo build --release --bins --quiet
    # The target dir may be shared with other checkouts: copy the binaries
    # away at once so a later build elsewhere cannot swap them mid-run.
    TARGET=${CARGO_TARGET_DIR:-target}/release
    BIN_DIR=$WORK/bin
    mkdir -p "$BIN_DIR"
    cp "$TARGET/sudoku" "$TARGET/sudoku-server" "$BIN_DIR/"
fi
BIN_DIR=${BIN_DIR:?set BIN_DIR with SKIP_BUILD=1}
SUDOKU=$BIN_DIR/sudoku

SPID=
OPID=
cleanup() {
    if [[ -n $SPID ]]; then kill "$SPID" 2>/dev/null || true; wait "$SPID" 2>/dev/null || true; fi
    if [[ -n $OPID ]]; then kill "$OPID" 2>/dev/null || true; wait "$OPID" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

# shellcheck disable=SC2086
RUST_LOG=warn "$BIN_DIR/sudoku-server" --listen "$ADDR" $SERVER_ARGS &
SPID=$!
for _ in $(seq 100); do
    "$SUDOKU" health --server "$SERVER" >/dev/null 2>&1 && break
    sleep 0.1
done
"$SUDOKU" health --server "$SERVER" >/dev/null || { echo "server did not come up" >&2; exit 1; }

echo "# $(date -u +%FT%TZ) $(git rev-parse --short HEAD 2>/dev/null) on $(nproc) cores, load avg $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# server pid $SPID on $ADDR, RUNS=$RUNS DUR=${DUR}s STREAMS=$STREAMS BATCH=$BATCH SUBSET=$SUBSET SERVER_ARGS='$SERVER_ARGS'"

# median of numbers on stdin
median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "nan"; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
# value of key=value on the BENCH line in a saved report
field() { sed -n "s/^[Bb][Ee][Nn][Cc][Hh].* $1=\([^ ]*\).*/\1/p" "$2"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.3f", a/b; else print "nan"}'; }
puzzles_in() { grep -cvE '^[[:space:]]*(#|$)' "$1"; }
cpu_of() { awk '{sub(/.*\) /, ""); print ($12 + $13) / 100}' "/proc/$1/stat"; }
bench() { "$SUDOKU" bench --server "$SERVER" --server-pid "$SPID" "$@"; }

if want 1; then
echo
echo "## 1. in-process (sudoku solve --local -q, all cores) vs SolveBatch (bench --mode stream --streams $STREAMS --batch $BATCH --verify), puzzles/s"
for f in "$D17" "$DTOP" "$DHARD"; do
    n=$(puzzles_in "$f")
    : >"$WORK/local" ; : >"$WORK/stream"
    for r in $(seq "$RUNS"); do
        t0=$(date +%s.%N)
        "$SUDOKU" solve --local -q "$f"
        t1=$(date +%s.%N)
        awk -v n="$n" -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f\n", n/(b-a)}' >>"$WORK/local"
        bench --mode stream --streams "$STREAMS" --batch "$BATCH" --connections 1 --verify "$f" >"$WORK/out" || { cat "$WORK/out"; echo "stream run failed" >&2; }
        field rate "$WORK/out" >>"$WORK/stream"
        echo "  run $r $(basename "$f"): local $(tail -1 "$WORK/local")/s; stream $(field rate "$WORK/out")/s p50 $(field p50_us "$WORK/out")us p99 $(field p99_us "$WORK/out")us server_cpu $(field server_cpu_pct "$WORK/out")% client_cpu $(field client_cpu_pct "$WORK/out")%"
    done
    lm=$(median <"$WORK/local"); sm=$(median <"$WORK/stream")
    echo "$(basename "$f") ($n puzzles): median local $lm/s, stream $sm/s, stream/local $(ratio "$sm" "$lm")"
done

fi

if [[ $LONG_REPEAT -gt 0 ]]; then
    echo
    echo "## 1b. long stream: $D17 x $LONG_REPEAT on one stream (client peak RSS must stay flat)"
    bench --mode stream --streams 1 --batch "$BATCH" --connections 1 --repeat "$LONG_REPEAT" "$D17" || true
fi

if want 2; then
echo
echo "## 2. unary Solve ($(basename "$UNARY_FILE"), and one easy puzzle) vs health Check, 64 in flight over 4 connections, ${DUR}s each, alternating"
: >"$WORK/solve" ; : >"$WORK/easyrate" ; : >"$WORK/health"
for r in $(seq "$RUNS"); do
    bench --mode unary --concurrency 64 --connections 4 --duration "$DUR" "$UNARY_FILE" >"$WORK/out" || true
    field rate "$WORK/out" >>"$WORK/solve"
    echo "  run $r solve:  $(grep -i ^BENCH "$WORK/out")"
    bench --mode unary --concurrency 64 --connections 4 --duration "$DUR" "$EASY" >"$WORK/out" || true
    field rate "$WORK/out" >>"$WORK/easyrate"
    echo "  run $r easy:   $(grep -i ^BENCH "$WORK/out")"
    bench --mode health --concurrency 64 --connections 4 --duration "$DUR" >"$WORK/out" || true
    field rate "$WORK/out" >>"$WORK/health"
    echo "  run $r health: $(grep -i ^BENCH "$WORK/out")"
done
sm=$(median <"$WORK/solve"); em=$(median <"$WORK/easyrate"); hm=$(median <"$WORK/health")
echo "unary Solve ($(basename "$UNARY_FILE")) median $sm/s, easy Solve $em/s, health $hm/s: solve/health $(ratio "$sm" "$hm"), easy/health $(ratio "$em" "$hm") (target >= 0.85)"
fi

if want 3; then
echo
echo "## 3. stall probe: latency on a second connection while one connection solves $(basename "$DHARD") through unary Solve"
probe() { # $1 = label; prints p50/p99/max of health and of easy Solve, one call in flight
    bench --mode health --concurrency 1 --connections 1 --duration "$DUR" >"$WORK/ph" || true
    bench --mode unary --concurrency 1 --connections 1 --duration "$DUR" "$EASY" >"$WORK/ps" || true
    echo "  $1 health p50/p99/max $(field p50_us "$WORK/ph")/$(field p99_us "$WORK/ph")/$(field max_us "$WORK/ph") us; easy Solve $(field p50_us "$WORK/ps")/$(field p99_us "$WORK/ps")/$(field max_us "$WORK/ps") us"
    echo "$1 $(field p50_us "$WORK/ph") $(field p99_us "$WORK/ph") $(field max_us "$WORK/ph") $(field p50_us "$WORK/ps") $(field p99_us "$WORK/ps") $(field max_us "$WORK/ps")" >>"$WORK/probe"
}
: >"$WORK/probe"
for r in $(seq "$RUNS"); do
    probe idle
    for h in $HOGS; do
        bench --mode unary --concurrency "$h" --connections 1 --duration $((2 * DUR + 2)) "$DHARD" >"$WORK/hog" &
        HOG=$!
        sleep 1
        probe "hog$h"
        wait "$HOG" || true
        echo "    (hog: $(grep -i ^BENCH "$WORK/hog"))"
    done
done
for label in idle $(for h in $HOGS; do echo "hog$h"; done); do
    row=$label
    for col in 2 3 4 5 6 7; do
        row="$row $(awk -v l="$label" -v c="$col" '$1 == l {print $c}' "$WORK/probe" | median)"
    done
    echo "$row"
done | awk 'BEGIN {print "median us:        health p50 p99 max | easy Solve p50 p99 max | added vs idle (p50 p99 max)"}
    $1 == "idle" {for (i = 2; i <= 7; i++) base[i] = $i}
    {printf "  %-6s %8s %6s %6s | %6s %6s %6s", $1, $2, $3, $4, $5, $6, $7;
     if ($1 != "idle") printf " | health +%d +%d +%d, Solve +%d +%d +%d", $2-base[2], $3-base[3], $4-base[4], $5-base[5], $6-base[6], $7-base[7];
     print ""}'
echo "  (target: < 1000 us added)"
fi

if want 4; then
echo
echo "## 4. h2load cross-check (-c 4 -m 64, ${DUR}s, one easy puzzle / empty health request)"
if ! command -v h2load >/dev/null; then
    echo "skipped: h2load not found (Debian: apt-get install nghttp2-client)"
else
    # gRPC frame: flag 0, big-endian u32 length, then the protobuf bytes.
    # SolveRequest{puzzle: Grid{text: 81 chars}} = 0a 53 0a 51 <81 bytes>.
    puzzle=$(head -1 "$EASY")
    { printf '\x00\x00\x00\x00\x55\x0a\x53\x0a\x51'; printf '%s' "$puzzle"; } >"$WORK/solve.grpc"
    printf '\x00\x00\x00\x00\x00' >"$WORK/health.grpc"  # HealthCheckRequest{} is empty
    h2() { # $1 path, $2 frame file; prints req/s
        local c0 c1
        c0=$(cpu_of "$SPID")
        h2load -c 4 -m 64 -t 1 -D "$DUR" --warm-up-time=1 -d "$2" \
            -H 'content-type: application/grpc' -H 'te: trailers' \
            "$SERVER$1" >"$WORK/h2" 2>&1 || true
        c1=$(cpu_of "$SPID")
        local rps
        rps=$(sed -n 's/.*finished in .*, \([0-9.]*\) req\/s.*/\1/p' "$WORK/h2")
        echo "$rps" >>"$WORK/h2-$(basename "$1")"
        echo "  $1: $rps req/s; $(grep -E '^requests:' "$WORK/h2"); $(grep -E '^status codes:' "$WORK/h2"); server cpu $(awk -v a="$c0" -v b="$c1" -v d="$DUR" 'BEGIN {printf "%.0f%%", 100*(b-a)/(d+1)}')"
    }
    for r in $(seq "$RUNS"); do
        h2 /sudoku.v1.SudokuService/Solve "$WORK/solve.grpc"
        h2 /grpc.health.v1.Health/Check "$WORK/health.grpc"
    done
    # Same puzzle, same shape through the tonic client, for comparison.
    bench --mode unary --concurrency 256 --connections 4 --duration "$DUR" "$EASY" >"$WORK/out" || true
    echo "  sudoku bench, same puzzle, 256 in flight over 4 connections: $(grep -i ^BENCH "$WORK/out")"
    s=$(median <"$WORK/h2-Solve"); h=$(median <"$WORK/h2-Check")
    echo "h2load median Solve $s req/s, Check $h req/s, solve/health $(ratio "$s" "$h")"
    echo "  (h2load counts HTTP 200 as success; it does not read grpc-status from the trailers)"
fi
fi

# A server of its own on PORT+1 for one measurement, so its peak RSS
# (VmHWM) belongs to that run alone. Sets OPID; stop_own stops it.
OADDR=127.0.0.1:$((PORT + 1))
own_server() {
    # shellcheck disable=SC2068
    RUST_LOG=warn "$BIN_DIR/sudoku-server" --listen "$OADDR" $@ &
    OPID=$!
    for _ in $(seq 100); do
        "$SUDOKU" health --server "http://$OADDR" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    echo "server on $OADDR did not come up" >&2
    return 1
}
stop_own() { kill "$OPID"; wait "$OPID" 2>/dev/null || true; OPID=; }
own_bench() { "$SUDOKU" bench --server "http://$OADDR" --server-pid "$OPID" "$@"; }

if want 5; then
echo
echo "## 5. capacity: unary Solve of $(basename "$DHARD") at 1x and 2x --max-in-flight $CAP, 4 connections, ${DUR}s, a fresh server per run"
# "2x+b": the same 2x load, but a refused caller backs off 50 ms, as a
# client honouring RESOURCE_EXHAUSTED would.
for r in $(seq "$RUNS"); do
    for x in 1 2 2+b; do
        backoff=0
        [[ $x == 2+b ]] && backoff=50
        own_server --max-in-flight "$CAP"
        own_bench --mode unary --concurrency $((${x%+b} * CAP)) --backoff-ms "$backoff" --connections 4 --duration "$DUR" "$DHARD" >"$WORK/out" || true
        stop_own
        echo "  run $r ${x%+b}x ($((${x%+b} * CAP)) in flight, back-off ${backoff} ms): OK $(field rate "$WORK/out")/s p50 $(field p50_us "$WORK/out")us p99 $(field p99_us "$WORK/out")us; $(grep '^  errors' "$WORK/out" | sed 's/^ *//'); failed calls p50 $(field err_p50_us "$WORK/out")us p99 $(field err_p99_us "$WORK/out")us; server peak RSS $(field server_rss_peak_kb "$WORK/out") kB"
    done
done
echo "  (the excess fails with RESOURCE_EXHAUSTED; without back-off the refused callers retry at once, so the"
echo "   error count is a rate of refusals, and handling them takes CPU from the admitted calls)"
fi

if want 6; then
echo
echo "## 6. one SolveBatch stream, $(basename "$D17") repeated $STREAM_REPEATS times, batch $BATCH: server peak RSS must be flat in the stream's length"
for rep in $STREAM_REPEATS; do
    own_server
    own_bench --mode stream --streams 1 --batch "$BATCH" --connections 1 --repeat "$rep" "$D17" >"$WORK/out" || { cat "$WORK/out"; echo "stream run failed" >&2; }
    stop_own
    echo "  x$rep: $(field units "$WORK/out") puzzles at $(field rate "$WORK/out")/s, $(field errors "$WORK/out") errors, $(field bad "$WORK/out") bad; server peak RSS $(field server_hwm_kb "$WORK/out") kB (VmHWM), client peak RSS $(field client_hwm_kb "$WORK/out") kB"
done
fi
