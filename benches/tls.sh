#!/usr/bin/env bash
# `sudoku solve --server` over plaintext, TLS and mutual TLS, side by side:
# three servers on 127.0.0.1 (one of each), the same puzzle set solved
# through each in turn, ROUNDS rounds in rotating order. Prints each
# round's wall seconds and, at the end, the median of each and the ratios
# TLS / plaintext and mTLS / plaintext (1.10 = 10% slower).
#
# The certificates are made here with openssl (a CA, a server certificate
# for 127.0.0.1, a client certificate), in a scratch directory.
#
# Usage: benches/tls.sh [--no-build]
#        ROUNDS=9 SET=data/puzzles3_magictour_top1465 benches/tls.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-7}
SET=${SET:-data/puzzles2_17_clue}
if [[ "${1:-}" != "--no-build" ]]; then
    cargo build --release --bin sudoku --bin sudoku-server >&2
fi
BIN=${CARGO_TARGET_DIR:-target}/release
TMP=$(mktemp -d)
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$TMP"
}
trap cleanup EXIT

# A CA, a server certificate for 127.0.0.1 and localhost, a client one.
(
    cd "$TMP"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
        -subj /CN=bench-ca -keyout ca.key -out ca.pem 2>/dev/null
    for who in server client; do
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
            -subj "/CN=$who" -keyout "$who.key" -out "$who.csr" 2>/dev/null
    done
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >server.ext
    printf 'extendedKeyUsage=clientAuth\n' >client.ext
    for who in server client; do
        openssl x509 -req -in "$who.csr" -CA ca.pem -CAkey ca.key -CAcreateserial \
            -days 2 -extfile "$who.ext" -out "$who.pem" 2>/dev/null
    done
)

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
start() { # name, port, then server flags
    local name=$1 port=$2
    shift 2
    "$BIN/sudoku-server" --listen "127.0.0.1:$port" "$@" >"$TMP/$name.log" 2>&1 &
    PIDS+=($!)
}
plain=$(free_port)
tls=$(free_port)
mtls=$(free_port)
start plain "$plain"
start tls "$tls" --tls-cert "$TMP/server.pem" --tls-key "$TMP/server.key"
start mtls "$mtls" --tls-cert "$TMP/server.pem" --tls-key "$TMP/server.key" \
    --tls-client-ca "$TMP/ca.pem"

declare -A URL=([plain]="http://127.0.0.1:$plain" [tls]="https://127.0.0.1:$tls"
    [mtls]="https://127.0.0.1:$mtls")
declare -A FLAGS=([plain]="" [tls]="--ca-cert $TMP/ca.pem"
    [mtls]="--ca-cert $TMP/ca.pem --client-cert $TMP/client.pem --client-key $TMP/client.key")

for name in plain tls mtls; do
    for _ in $(seq 100); do
        # shellcheck disable=SC2086
        "$BIN/sudoku" health --server "${URL[$name]}" ${FLAGS[$name]} >/dev/null 2>&1 && break
        sleep 0.1
    done
done

puzzles=$(grep -vc '^#' "$SET")
echo "set: $SET ($puzzles puzzles); $ROUNDS rounds; $(nproc) cores; $(date -u +%F)"
declare -A TIMES
order=(plain tls mtls)
for round in $(seq "$ROUNDS"); do
    line="round $round:"
    for name in "${order[@]}"; do
        start_ns=$(date +%s%N)
        # shellcheck disable=SC2086
        "$BIN/sudoku" solve -q --server "${URL[$name]}" ${FLAGS[$name]} "$SET" >/dev/null
        secs=$(awk -v a="$start_ns" -v b="$(date +%s%N)" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
        TIMES[$name]+="$secs "
        line+=" $name ${secs}s"
    done
    echo "$line"
    order=("${order[@]:1}" "${order[0]}")
done

median() { tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
p=$(echo "${TIMES[plain]}" | median)
t=$(echo "${TIMES[tls]}" | median)
m=$(echo "${TIMES[mtls]}" | median)
echo "median wall: plaintext ${p}s, TLS ${t}s, mTLS ${m}s"
awk -v p="$p" -v t="$t" -v m="$m" -v n="$puzzles" 'BEGIN {
    printf "puzzles/s: plaintext %.0f, TLS %.0f, mTLS %.0f\n", n / p, n / t, n / m
    printf "RESULT tls_over_plain=%.3f mtls_over_plain=%.3f\n", t / p, m / p }'
