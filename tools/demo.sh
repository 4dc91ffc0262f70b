#!/bin/sh
# Sets up, builds and runs the LeNet demo on Fashion-MNIST on the best device
# present. Usage: tools/demo.sh [lenet options, e.g. --int8 or --device 1]
set -eu
cd "$(dirname "$0")/.."
tools/setup-debian.sh
[ -d build ] || meson setup build --buildtype=release >/dev/null
ninja -C build >/dev/null
exec ./build/examples/lenet --weights examples/lenet-weights "$@"
