#!/usr/bin/env bash
# The web page the server embeds (web/dist/) is the build of web/: rebuild
# it from a clean `npm ci` and fail if a byte differs from what is
# committed. The build is reproducible (pinned lock file, esbuild without
# timestamps or absolute paths), so a difference means web/src, the proto
# or the lock file changed without `npm run build` in web/.
#
# Usage: bash .ci/check-web.sh
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo/web"

npm ci --no-audit --no-fund --loglevel=error
cp package-lock.json node_modules/.sudoku-lock
npm run --silent build

if ! git -C "$repo" diff --exit-code --stat -- web/dist; then
  echo "check-web: web/dist differs from the build of web/; run 'npm ci && npm run build' in web/ and commit web/dist" >&2
  exit 1
fi
untracked="$(git -C "$repo" ls-files --others --exclude-standard -- web/dist)"
if [ -n "$untracked" ]; then
  echo "check-web: the build made files that are not committed: $untracked" >&2
  exit 1
fi
echo "check-web: web/dist is the build of web/ ($(wc -c < dist/app.js) bytes of app.js)"
