#!/bin/sh
# The model zoo test: builds the zoo with Debian's python3-torch and
# python3-torchvision (tests/zoo/make_zoo.py; cached by the hash of the
# scripts that make it, so a change to them rebuilds it) and runs
# tests/ort/zoo_test against ONNX Runtime's CPU EP.
#
#   tests/zoo/run.sh ZOO_TEST EP_LIBRARY [NAME...]
#
# The zoo goes to $DG_ZOO_CACHE, else ~/.cache/directgraph-ci/zoo (about
# 300 MB). Without torch the test says "skipped" with the install line.
set -u
here=$(cd "$(dirname "$0")" && pwd)
zoo_test=$1
ep=$2
shift 2
case $ep in /*) ;; *) ep="$(pwd)/$ep" ;; esac
if ! /usr/bin/python3 -c 'import torch, torchvision, onnx' 2>/dev/null; then
  echo "skipped: the zoo needs Debian's python3-torch, python3-torchvision and python3-onnx (tools/setup-debian.sh installs them)"
  exit 0
fi
key=$(cat "$here/make_zoo.py" "$here/qdq.py" | sha256sum | cut -c 1-16)
cache=${DG_ZOO_CACHE:-${HOME:-/tmp}/.cache/directgraph-ci/zoo}
zoo="$cache/$key"
if [ ! -f "$zoo/complete" ]; then
  rm -rf "$zoo"
  mkdir -p "$zoo"
  if ! /usr/bin/python3 "$here/make_zoo.py" "$zoo" >"$zoo/make.log" 2>&1; then
    echo "FAIL - building the zoo (tests/zoo/make_zoo.py):"
    tail -n 20 "$zoo/make.log" | sed 's/^/# /'
    rm -rf "$zoo"
    exit 1
  fi
  touch "$zoo/complete"
  # Older zoos of other script versions are not needed any more.
  for d in "$cache"/*; do
    [ "$d" = "$zoo" ] || rm -rf "$d"
  done
fi
exec "$zoo_test" "$ep" "$zoo" "$@"
