#!/usr/bin/env bash
# Picked up by .ci/run's `.ci/setup-*.sh` loop: installs what the client,
# buf and zstd tests need (see clients-setup.sh).
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/clients-setup.sh"
