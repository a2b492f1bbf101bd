#!/usr/bin/env bash
# The crate's API documentation builds without a warning: broken intra-doc
# links, bad code-block attributes and the like fail the check.
#
#   bash .ci/check-docs.sh          # from anywhere; output in target/doc
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

echo "check-docs.sh: cargo doc --no-deps --locked, warnings are errors"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --locked </dev/null
echo "check-docs.sh: ok"
