#!/usr/bin/env bash
# Installs QQwing (Debian package qqwing), which tests/it/qqwing.rs and
# benches/rate.sh and benches/agree.sh compare the logical solver with.
# As root, without questions; does nothing when qqwing is already there.
#
# Usage: bash .ci/setup-qqwing.sh     (CI runs every .ci/setup-*.sh before cargo test)
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

if command -v qqwing >/dev/null; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "qqwing-setup: need root to apt-get install qqwing" >&2
  exit 1
fi
apt-get update -qq
apt-get install -y -qq --no-install-recommends qqwing
