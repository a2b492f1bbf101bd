#!/usr/bin/env bash
# Runs every fuzz target (or the ones named) for FUZZ_SECS seconds each and
# prints executions, executions per second and findings.
#
#   fuzz/run.sh                      # all targets, 60 s each
#   FUZZ_SECS=300 fuzz/run.sh solver # one target, 5 minutes
#
# Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`).
# Built without a sanitizer (-s none): the crate has no unsafe code, and
# without ASan a run does several times more executions; debug assertions
# and overflow checks stay on. The corpus grows in fuzz/corpus/<target>
# (seeded from fuzz/seeds/<target>); crashes land in
# fuzz/artifacts/<target>/. A crash worth keeping becomes a regression test
# in tests/it/regressions.rs.
set -uo pipefail
cd "$(dirname "$0")"

secs="${FUZZ_SECS:-60}"
if [[ $# -gt 0 ]]; then
    targets=("$@")
else
    mapfile -t targets < <(cargo +nightly fuzz list)
fi
export CARGO_TARGET_DIR="${FUZZ_TARGET_DIR:-$PWD/target}"

cargo +nightly fuzz build -s none || exit 1

status=0
summary=()
for t in "${targets[@]}"; do
    mkdir -p "corpus/$t" "artifacts/$t"
    log="artifacts/$t/last-run.log"
    before=$(find "artifacts/$t" -type f \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'leak-*' \) | wc -l)
    echo "== $t: fuzzing for ${secs}s"
    cargo +nightly fuzz run -s none "$t" "corpus/$t" "seeds/$t" -- \
        -max_total_time="$secs" -timeout=10 -print_final_stats=1 >"$log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    after=$(find "artifacts/$t" -type f \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'leak-*' \) | wc -l)
    corpus=$(find "corpus/$t" -type f | wc -l)
    line="$t: exit $rc, ${execs:-?} execs, ${rate:-?} execs/s, corpus $corpus, new findings $((after - before))"
    if [[ $rc -ne 0 ]]; then
        status=1
        grep -m1 -E "panicked at|ERROR: libFuzzer" "$log" | sed 's/^/    /'
        grep -A2 -m1 "panicked at" "$log" | tail -n 2 | sed 's/^/    /'
        ls -t "artifacts/$t" | grep -E '^(crash|timeout|oom|leak)-' | head -3 | sed "s|^|    artifact: fuzz/artifacts/$t/|"
    fi
    echo "$line"
    summary+=("$line")
done
echo
echo "== summary (FUZZ_SECS=$secs)"
printf '%s\n' "${summary[@]}"
exit $status
