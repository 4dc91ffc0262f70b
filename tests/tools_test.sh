#!/bin/sh
# The command-line tools as tests: dg-info lists the CPU; dg-run imports
# each fuzzing seed model (one per supported ONNX op and form), runs it on
# random inputs and verifies every node against the reference; the Q/DQ
# seed must come out folded into an int8 convolution.
# Usage: tests/tools_test.sh BUILD_DIR
set -u
b=${1:-build}
status=0
check() { # condition-status, message
  if [ "$1" -eq 0 ]; then echo "ok - $2"; else echo "FAIL - $2"; status=1; fi
}
out=$("$b/tools/dg-info" 2>&1)
echo "$out" | grep -q "kind:    cpu"
check $? "dg-info lists the CPU device"
"$b/tools/dg-info" --json | grep -q '"kind": "cpu"'
check $? "dg-info --json lists the CPU device"
for m in tests/fuzz/corpus/*.onnx; do
  out=$("$b/tools/dg-run" "$m" --random --verify --plan --repeat 1 2>&1)
  echo "$out" | grep -q "^verify: ok"
  check $? "dg-run $(basename "$m"): imported, ran, verified"
  if [ "$(basename "$m")" = qdq.onnx ]; then
    echo "$out" | grep -q "qconv2d"
    check $? "dg-run qdq.onnx: DequantizeLinear-Conv-Relu-QuantizeLinear folded into qconv2d"
  fi
done
"$b/tools/dg-run" tests/fuzz/corpus/conv.onnx >/dev/null 2>&1
[ $? -ne 0 ]
check $? "dg-run refuses to run without inputs (no --input, no --random)"
printf 'garbage' > "${TMPDIR:-/tmp}/dg-bad.onnx"
out=$("$b/tools/dg-run" "${TMPDIR:-/tmp}/dg-bad.onnx" --random 2>&1)
echo "$out" | grep -q "not a valid ONNX model"
check $? "dg-run on a corrupt file reports it"
out=$("$b/tools/dg-bench" --gpu-peak 67 2>&1)
[ $? -eq 2 ] && echo "$out" | grep -q "two positive TFLOP/s figures"
check $? "dg-bench refuses a --gpu-peak without the fp16 figure"
out=$("$b/tools/dg-bench" --gpu-peak 67,x 2>&1)
[ $? -eq 2 ] && echo "$out" | grep -q "got '67,x'"
check $? "dg-bench refuses a malformed --gpu-peak and quotes it"
exit $status
