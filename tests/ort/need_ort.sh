# Sourced by the ONNX Runtime test scripts (run_ort_tests.sh,
# bench_models_test.sh): sets lib to the ONNX Runtime library, from
# $DG_ORT_LIB, else tests/ort/fetch-ort.sh's cache, and ends the script
# with a "skipped" line when it or Debian's python3-onnx is missing.
cache=${DG_ORT_CACHE:-${HOME:-/tmp}/.cache/directgraph-ci/ort}
lib=${DG_ORT_LIB:-$cache/1.30.0/libonnxruntime.so.1}
if [ ! -s "$lib" ]; then
  echo "skipped: ONNX Runtime 1.30.0 not found at $lib; run tests/ort/fetch-ort.sh first (it needs the npm registry)"
  exit 0
fi
if ! /usr/bin/python3 -c 'import onnx' 2>/dev/null; then
  echo "skipped: Debian's python3-onnx is not installed (apt-get install python3-onnx)"
  exit 0
fi
