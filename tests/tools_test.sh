#!/bin/sh
# The command-line tools as tests: dg-info lists the CPU; dg-run imports
# each fuzzing seed model (one per supported ONNX op and form), runs it on
# random inputs and verifies every node against the reference; the Q/DQ
# seed must come out folded into an int8 convolution. Every tool and
# example prints its help with --help and refuses a bad argument with exit
# status 2 and one line naming it.
# Usage: tests/tools_test.sh BUILD_DIR
set -u
b=${1:-build}
status=0
check() { # condition-status, message
  if [ "$1" -eq 0 ]; then echo "ok - $2"; else echo "FAIL - $2"; status=1; fi
}
# --help (and -h): exit status 0, the usage on stdout naming each option.
helps() { # program, option...
  p=$1
  shift
  out=$("$p" --help 2>/dev/null)
  rc=$?
  missing=
  for o in "$@"; do
    printf '%s\n' "$out" | grep -qF -- "$o" || missing="$missing $o"
  done
  [ $rc -eq 0 ] && [ -z "$missing" ] && printf '%s\n' "$out" | grep -q '^usage: ' &&
    [ "$("$p" -h 2>/dev/null)" = "$out" ]
  check $? "$(basename "$p") --help prints the usage with every option${missing:+ (missing:$missing)}"
}
# A usage error: exit status 2 and one line on stderr from the program
# (drivers may add their own) that holds the expected text.
refuses() { # description, expected text, program, argument...
  what=$1 text=$2 p=$3
  shift 2
  err=$("$@" 2>&1 >/dev/null)
  rc=$?
  line=$(printf '%s\n' "$err" | grep "^$(basename "$p"): ")
  [ $rc -eq 2 ] && [ "$(printf '%s\n' "$line" | wc -l)" -eq 1 ] &&
    printf '%s\n' "$line" | grep -qF -- "$text"
  r=$?
  [ $r -eq 0 ] || what="$what (exit status $rc, stderr: $err)"
  check $r "$(basename "$p") $what"
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

# The examples' arguments (examples_test.sh runs them). Everything here is
# refused before LeNet classifies a single image.
l=$b/examples/lenet
w="--weights examples/lenet-weights"
helps "$l" --weights --data --device --int8 --batch --limit --dot --check --help
refuses "refuses an out-of-range --device" "--device got '7'; valid: 0 (cpu: " "$l" $w --device 7
refuses "refuses a kind name as --device" "--device got 'gpu'; valid: 0 (cpu: " "$l" $w --device gpu
refuses "refuses a negative --device" "--device got '-1'" "$l" $w --device -1
refuses "refuses a --device without a value" "--device needs a value" "$l" $w --device
refuses "refuses --batch 0" "--batch got '0'; valid: an integer in 1..10000" "$l" $w --batch 0
refuses "refuses a non-numeric --limit" "--limit got '10x'; valid: an integer >= 1" "$l" $w --limit 10x
refuses "refuses an unknown option" "unknown option '--frobnicate'" "$l" $w --frobnicate
refuses "refuses an operand" "unexpected argument 'extra'" "$l" $w extra
refuses "refuses --int8 with --check" "--int8 has no effect with --check" "$l" $w --check --int8
export DG_LENET_LIMIT=abc
refuses "refuses a non-numeric DG_LENET_LIMIT" "DG_LENET_LIMIT got 'abc'" "$l" $w
unset DG_LENET_LIMIT
c=$b/examples/conv_offload
helps "$c" --device --help
refuses "refuses an out-of-range --device" "--device got '9'; valid: 0 (cpu: " "$c" --device 9
refuses "refuses a non-numeric --device" "--device got '1x'; valid: 0 (cpu: " "$c" --device 1x
refuses "refuses a --device without a value" "--device needs a value" "$c" --device
refuses "refuses an unknown option" "unknown option '--all'" "$c" --all
exit $status
