#!/bin/sh
# The plugin-EP test: generates the models with Debian's python3-onnx and
# runs tests/ort/ort_host against the cached ONNX Runtime.
#
#   tests/ort/run_ort_tests.sh BUILD_DIR           (from run_tests.sh)
#   tests/ort/run_ort_tests.sh ORT_HOST EP_LIBRARY (from meson test)
#
# ONNX Runtime comes from $DG_ORT_LIB, else from tests/ort/fetch-ort.sh's
# cache; without it (no network when it was fetched) the test says
# "skipped". Prints "ok - ..." / "FAIL - ..." / "skipped: ..." lines.
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
if [ $# -eq 1 ]; then
  host="$1/tests/ort_host"
  ep="$1/src/front/ort_ep/libdirectgraph_ort_ep.so"
else
  host=$1
  ep=$2
fi
# ORT resolves a relative EP path against its own folder: make it absolute.
case $ep in /*) ;; *) ep="$(pwd)/$ep" ;; esac
. "$here/need_ort.sh"
models=$(mktemp -d "${TMPDIR:-/tmp}/dg-ort-models.XXXXXX")
trap 'rm -rf "$models"' EXIT INT TERM
if ! /usr/bin/python3 "$here/gen_models.py" "$models" "$src/examples/lenet-weights" >"$models/gen.log" 2>&1; then
  echo "FAIL - generating the ONNX models:"
  sed 's/^/# /' "$models/gen.log"
  exit 1
fi
# Under AddressSanitizer, ORT's own leftovers at exit are not ours.
export LSAN_OPTIONS="suppressions=$here/lsan-ort.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
"$host" "$lib" "$ep" "$models"
