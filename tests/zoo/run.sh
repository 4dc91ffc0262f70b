#!/bin/sh
# The model zoo test: builds the zoo with Debian's python3-torch and
# python3-torchvision (tests/zoo/make_zoo.py; cached by the hash of the
# scripts that make it, so a change to them rebuilds it) and runs
# tests/ort/zoo_test against ONNX Runtime's CPU EP.
#
#   tests/zoo/run.sh [--qemu-cpu CPU] ZOO_TEST EP_LIBRARY [NAME...]
#
# --qemu-cpu runs the test, ONNX Runtime with it, under
# qemu-x86_64-static -cpu CPU (Haswell: AVX2 and FMA, no AVX-512, no
# VNNI), our CPU device and the EP only: so that every run, whatever
# machine it is on, also compares on a CPU whose ORT int8 kernels differ.
#
# The zoo goes to $DG_ZOO_CACHE, else ~/.cache/directgraph-ci/zoo (about
# 300 MB). Without torch the test says "skipped" with the install line.
set -u
here=$(cd "$(dirname "$0")" && pwd)
wrap=""
if [ "${1:-}" = --qemu-cpu ]; then
  if [ "$(uname -m)" != x86_64 ] || ! command -v qemu-x86_64-static >/dev/null; then
    echo "skipped: --qemu-cpu $2 needs an x86-64 host with qemu-x86_64-static (Debian's qemu-user-static; tools/setup-debian.sh installs it)"
    exit 0
  fi
  wrap="qemu-x86_64-static -cpu $2"
  shift 2
fi
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
  /usr/bin/python3 "$here/make_zoo.py" "$zoo" >"$zoo/make.log" 2>&1 &
  pid=$!
  # On a terminal, a progress line from the log's "wrote" lines (the
  # build takes minutes); piped, nothing.
  if [ -t 2 ]; then
    start=$(date +%s)
    while kill -0 "$pid" 2>/dev/null; do
      printf '\rbuilding the zoo: %d models written, %d s (about 5 minutes on 2 cores)' \
        "$(grep -c '^wrote ' "$zoo/make.log")" $(($(date +%s) - start)) >&2
      sleep 2
    done
    printf '\r\033[K' >&2
  fi
  if ! wait "$pid"; then
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
if [ -n "$wrap" ]; then
  # shellcheck disable=SC2086 # $wrap is a command line
  exec $wrap "$zoo_test" --cpu-only "$ep" "$zoo" "$@"
fi
exec "$zoo_test" "$ep" "$zoo" "$@"
