#!/usr/bin/env bash
# Installs what the web page's tests need (tests/it/browser.rs,
# node_client.rs's gRPC-Web test) and .ci/check-web.sh, on a fresh Debian
# machine, as root, without questions. Safe to run again.
#
#   - node and npm
#   - chromium, Debian's package (puppeteer-core drives it; no browser is
#     downloaded), with a font so the page's text renders in screenshots
#   - `npm ci` in web/ (esbuild, buf, protoc-gen-es, Connect, puppeteer-core,
#     axe-core, which the browser test injects into the page from node_modules)
#
# Usage: bash .ci/setup-web.sh
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

apt_updated=no
apt_install() {
  if [ "$(id -u)" != 0 ]; then
    echo "web-setup: need root to apt-get install $*" >&2
    return 1
  fi
  if [ "$apt_updated" = no ]; then
    apt-get update -qq
    apt_updated=yes
  fi
  apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  apt_install nodejs npm
fi
if ! command -v chromium >/dev/null && [ ! -x /usr/bin/chromium ]; then
  apt_install chromium fonts-dejavu-core
fi

dir="$repo/web"
if ! cmp -s "$dir/package-lock.json" "$dir/node_modules/.sudoku-lock"; then
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  cp "$dir/package-lock.json" "$dir/node_modules/.sudoku-lock"
fi

echo "web-setup: node $(node --version), $(chromium --version 2>/dev/null || /usr/bin/chromium --version)"
