#!/bin/sh
# Runs the examples as tests: LeNet's accuracy checks on every device
# (examples/lenet --check) and the one-shot conv example (the installed
# library: tests/install_test.sh). Usage:
#   tests/examples_test.sh BUILD_DIR      (DG_LENET_LIMIT=n for a subset)
set -u
b=${1:-build}
status=0
"$b/examples/lenet" --weights examples/lenet-weights --check || status=1
"$b/examples/conv_offload" || status=1
exit $status
