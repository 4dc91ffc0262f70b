#!/bin/sh
# Sets up, builds and runs the LeNet demo on Fashion-MNIST on the best device
# present. Installs only what the demo and the README's next steps need
# (tools/setup-debian.sh --demo: the compiler, meson, the GPU and NPU
# targets' headers, ONNX import for dg-run, numpy for Python),
# builds only the demo, the tools and the Python package, not the tests.
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
# A build/ left by a failed or interrupted setup has no build.ninja:
# configure it again (--wipe where meson had begun) instead of failing
# in ninja ever after.
if [ ! -f build/build.ninja ]; then
  wipe=""
  [ -d build/meson-private ] && wipe="--wipe"
  echo "configuring (meson setup build)..." >&2
  step "meson setup build" meson setup $wipe build --buildtype=release
  # meson's summary: which targets and parts were built, and why not.
  sed -n '/^directgraph /,$p' "$log" | sed '/^Found ninja/,$d' >&2
fi
targets="examples/lenet tools/dg-info"
for t in tools/dg-run python/directgraph/_abi.py; do
  ninja -C build -t targets all 2>/dev/null | grep -q "^$t:" && targets="$targets $t"
done
echo "building $targets (ninja -C build)..." >&2
if [ -t 2 ]; then
  # On a terminal, ninja's own one-line progress; piped, quiet.
  ninja -C build $targets >&2 || {
    echo "demo.sh: ninja -C build failed (output above)" >&2
    exit 1
  }
else
  step "ninja -C build" ninja -C build $targets
fi
rm -f "$log"
./build/examples/lenet --weights examples/lenet-weights "$@"
status=$?
if [ -x build/tools/dg-run ]; then
  echo "next: build/tools/dg-info; build/tools/dg-run MODEL.onnx --random --plan;" \
    "PYTHONPATH=build/python python3 examples/python/lenet.py" >&2
fi
exit $status
