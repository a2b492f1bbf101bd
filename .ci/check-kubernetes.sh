#!/usr/bin/env bash
# Validates the Kubernetes manifests (deploy/kubernetes/*.yaml, or the files
# named as arguments) against the Kubernetes JSON schemas, offline.
#
# kubernetes-validate (PyPI) ships the schemas inside the package, so no
# cluster and no network is needed once it is installed. It lives in a
# virtualenv under ${CARGO_TARGET_DIR:-target}/k8s-venv, created on the first
# run and reused while the pinned version is unchanged. Strict mode rejects
# fields the schema does not know (a misspelt or misplaced key), and a
# resource whose kind or apiVersion has no schema fails here too (the tool
# itself only warns about it).
#
#   bash .ci/check-kubernetes.sh                    # from anywhere
#   K8S_VERSION=1.34.0 bash .ci/check-kubernetes.sh other.yaml
set -euo pipefail

KUBERNETES_VALIDATE_VERSION=1.37.0
# The Kubernetes release the manifests are checked against; the package ships
# schemas for 1.25 to 1.37.
K8S_VERSION="${K8S_VERSION:-1.37.0}"

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target="${CARGO_TARGET_DIR:-$repo/target}"
case "$target" in /*) ;; *) target="$repo/$target" ;; esac
venv="$target/k8s-venv"
stamp="$venv/.kubernetes-validate-version"

if [ $# -gt 0 ]; then
  manifests=("$@")
else
  # Relative to the repository, so the report names them as the repo does.
  cd "$repo"
  shopt -s nullglob
  manifests=(deploy/kubernetes/*.yaml deploy/kubernetes/*.yml)
  shopt -u nullglob
fi
if [ ${#manifests[@]} -eq 0 ]; then
  echo "check-kubernetes.sh: no manifests found in deploy/kubernetes/" >&2
  exit 1
fi

if ! command -v python3 >/dev/null; then
  echo "check-kubernetes.sh: python3 is missing (bash .ci/setup-clients.sh installs it)" >&2
  exit 1
fi
if [ ! -x "$venv/bin/python" ]; then
  mkdir -p "$target"
  python3 -m venv "$venv"
fi
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$KUBERNETES_VALIDATE_VERSION" ]; then
  echo "check-kubernetes.sh: installing kubernetes-validate $KUBERNETES_VALIDATE_VERSION into $venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
    "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION" </dev/null
  echo "$KUBERNETES_VALIDATE_VERSION" >"$stamp"
fi

echo "check-kubernetes.sh: kubernetes-validate $("$venv/bin/kubernetes-validate" --version)," \
  "strict, against Kubernetes $K8S_VERSION"
status=0
output="$("$venv/bin/kubernetes-validate" --strict --kubernetes-version "$K8S_VERSION" \
  "${manifests[@]}" </dev/null 2>&1)" || status=$?
printf '%s\n' "$output"
# WARN is how the tool reports a resource it has no schema for, and it still
# exits 0 then: a typo in kind or apiVersion must not pass unchecked.
if [ "$status" -eq 0 ] && grep -qv '^INFO ' <<<"$output"; then
  status=1
fi
if [ "$status" -ne 0 ]; then
  echo "check-kubernetes.sh: FAILED (exit $status)" >&2
  exit 1
fi
echo "check-kubernetes.sh: ok, $(grep -c '^INFO ' <<<"$output") resources in ${#manifests[@]} file(s)"
