#!/usr/bin/env bash
# Agreement with QQwing: generates N puzzles at each of QQwing's four levels
# (`qqwing --generate N --difficulty LEVEL --one-line`), rates them with
# `logic::rate` (benches/logic.rs) and prints two tables: QQwing level against
# our label, and against our hardest technique. docs/logic.md explains the
# disagreements.
#
#   N=200 bash benches/agree.sh
set -euo pipefail
cd "$(dirname "$0")/.."
n="${N:-200}"

command -v qqwing >/dev/null || { echo "agree.sh: qqwing is not installed (bash .ci/setup-qqwing.sh)" >&2; exit 1; }
bin=$(cargo bench --bench logic --no-run 2>&1 | grep -o 'target/[^)]*/logic-[0-9a-f]*' | tail -1)
[ -x "$bin" ] || { echo "agree.sh: could not build benches/logic.rs" >&2; exit 1; }
dir=target/agree
mkdir -p "$dir"
args=()
for level in simple easy intermediate expert; do
  qqwing --generate "$n" --difficulty "$level" --one-line | grep -E '^[0-9.]{81}$' >"$dir/$level.txt"
  args+=("$level=$dir/$level.txt")
done
"$bin" agree "${args[@]}"
