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
# A plain run labels its latencies: warm medians, per image at batch 1 and
# at the batch size, with how many runs each is the median of.
out=$($w "$b/examples/lenet" --weights examples/lenet-weights --limit 200 --batch 50 --device 0 2>&1)
if printf '%s\n' "$out" | grep -q '^latency, warm (each session run once before timing), medians:$' &&
  printf '%s\n' "$out" | grep -Eq '^  batch 1: [0-9.]+ us per image \(200 runs\)$' &&
  printf '%s\n' "$out" | grep -Eq '^  batch 50: [0-9.]+ us per image, [0-9.]+ us per batch \(4 batches\)$'; then
  echo "ok - lenet labels its latencies: warm medians at batch 1 and batch 50, with their run counts"
else
  echo "FAIL - lenet's latency lines: $(printf '%s\n' "$out" | tail -n 3 | tr '\n' '|')"
  status=1
fi
exit $status
