#!/bin/sh
# Runs the examples as tests: LeNet's accuracy checks on every device
# (examples/lenet --check) and the one-shot conv example (the installed
# library: tests/install_test.sh). Usage:
#   tests/examples_test.sh BUILD_DIR      (DG_LENET_LIMIT=n for a subset)
# For a cross build (tests/aarch64/run.sh), MESON_EXE_WRAPPER names the
# emulator that runs its programs, as meson test sets it.
set -u
b=${1:-build}
w=${MESON_EXE_WRAPPER:-}
status=0
$w "$b/examples/lenet" --weights examples/lenet-weights --check || status=1
$w "$b/examples/conv_offload" || status=1
exit $status
