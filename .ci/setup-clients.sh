#!/usr/bin/env bash
# Installs what the other-language client tests need (tests/it/python_client.rs,
# tests/it/otel.rs, tests/it/node_client.rs, buf.rs, zstd_curl.rs, scale_out.rs)
# on a fresh Debian machine, as root, without questions. Safe to run again:
# each step is skipped when its result is already there and current.
#
#   - python3 with venv, then a virtualenv in ${CARGO_TARGET_DIR:-target}/py-venv
#     with examples/python/requirements.txt and tests/it/scripts/requirements.txt
#     (the same path the tests use)
#   - node and npm, then `npm ci` in examples/node and tools/buf (buf comes
#     from the @bufbuild/buf npm package)
#   - curl (with HTTP/2) and zstd, for the zstd test
#   - nginx, for the scale-out test, which runs its own nginx from a config
#     in the target directory; the system one is not needed, so it is
#     stopped if the package started it
#
# Usage: bash .ci/setup-clients.sh     (from anywhere; CI runs it before cargo test)
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target="${CARGO_TARGET_DIR:-$repo/target}"
case "$target" in /*) ;; *) target="$repo/$target" ;; esac

apt_updated=no
apt_install() {
  if [ "$(id -u)" != 0 ]; then
    echo "clients-setup: need root to apt-get install $*" >&2
    return 1
  fi
  if [ "$apt_updated" = no ]; then
    apt-get update -qq
    apt_updated=yes
  fi
  apt-get install -y -qq --no-install-recommends "$@"
}

# Python with venv and pip (Debian splits venv/ensurepip into python3-venv).
if ! command -v python3 >/dev/null || ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
  apt_install python3 python3-venv python3-pip
fi
# Node and npm.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  apt_install nodejs npm
fi
# curl with HTTP/2 and the zstd command, for tests/it/zstd_curl.rs.
if ! command -v zstd >/dev/null || ! curl --version 2>/dev/null | grep -q 'HTTP2'; then
  apt_install curl zstd ca-certificates
fi

# nginx (Debian puts it in /usr/sbin, which a non-root PATH may lack; the
# test looks there too). In a container policy-rc.d usually forbids the
# package's start of the service, which apt reports and ignores.
if ! command -v nginx >/dev/null && [ ! -x /usr/sbin/nginx ]; then
  apt_install nginx
  if [ -s /run/nginx.pid ] && kill -0 "$(cat /run/nginx.pid)" 2>/dev/null; then
    /usr/sbin/nginx -s quit || true
  fi
fi

# The virtualenv, reused while the requirements files are unchanged (the
# stamp is the files one after the other, as the tests compare it; keep the
# list in step with PYTHON_REQUIREMENTS in tests/it/support/tools.rs).
venv="$target/py-venv"
reqs=("$repo/examples/python/requirements.txt" "$repo/tests/it/scripts/requirements.txt")
if [ ! -x "$venv/bin/python" ]; then
  mkdir -p "$target"
  python3 -m venv "$venv"
fi
if ! cmp -s <(cat "${reqs[@]}") "$venv/.sudoku-requirements"; then
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    -r "${reqs[0]}" -r "${reqs[1]}"
  cat "${reqs[@]}" > "$venv/.sudoku-requirements"
fi

# npm packages from the lock files, reused while a lock file is unchanged.
for dir in "$repo/examples/node" "$repo/tools/buf"; do
  if ! cmp -s "$dir/package-lock.json" "$dir/node_modules/.sudoku-lock"; then
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
    cp "$dir/package-lock.json" "$dir/node_modules/.sudoku-lock"
  fi
done

echo "clients-setup: python $("$venv/bin/python" --version 2>&1 | cut -d' ' -f2)," \
  "node $(node --version), buf $("$repo/tools/buf/node_modules/.bin/buf" --version)," \
  "$(zstd --version | head -1)," \
  "$("$(command -v nginx || echo /usr/sbin/nginx)" -v 2>&1)"
