#!/usr/bin/env bash
# Dependency policy check (deny.toml): licenses, bans, sources.
# Installs cargo-deny from crates.io when it is missing. The advisories check
# needs the RustSec database from the network, which these machines cannot
# reach: it runs only when DENY_ADVISORIES=1.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! cargo deny --version >/dev/null 2>&1; then
    # A debug build: it compiles in half the time of a release one, and
    # checking licenses, bans and sources takes it a second either way.
    echo "check-deny.sh: installing cargo-deny (takes a few minutes)"
    cargo install cargo-deny --locked --debug
fi
cargo deny --version

checks=(licenses bans sources)
if [[ "${DENY_ADVISORIES:-0}" == 1 ]]; then
    checks+=(advisories)
fi
echo "check-deny.sh: cargo deny check ${checks[*]}"
cargo deny check "${checks[@]}"
