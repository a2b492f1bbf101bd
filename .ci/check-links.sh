#!/usr/bin/env bash
# Every relative link in the repo's Markdown files (README.md, docs/,
# benches/, examples/...) names a file that exists and, with an #anchor, a
# heading of it: a renamed heading or a moved doc fails here.
#
#   bash .ci/check-links.sh          # from anywhere
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
python3 tools/check_links.py
