#!/bin/sh
# Sets up, builds and runs the LeNet demo on Fashion-MNIST on the best device
# present. Installs only what the demo needs (tools/setup-debian.sh --demo).
# Usage: tools/demo.sh [lenet options, e.g. --int8 or --device 1; --help]
set -eu
cd "$(dirname "$0")/.."
tools/setup-debian.sh --demo
log=$(mktemp "${TMPDIR:-/tmp}/dg-demo-build.XXXXXX")
# Quiet when it works; every line of the failing step when it does not.
step() { # what, command...
  what=$1
  shift
  if ! "$@" >"$log" 2>&1; then
    cat "$log" >&2
    echo "demo.sh: $what failed (output above, also in $log)" >&2
    exit 1
  fi
}
[ -d build ] || step "meson setup build" meson setup build --buildtype=release
echo "building (ninja -C build)..." >&2
step "ninja -C build" ninja -C build
rm -f "$log"
exec ./build/examples/lenet --weights examples/lenet-weights "$@"
