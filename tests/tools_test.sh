#!/bin/sh
# The command-line tools as tests: dg-info lists the CPU; dg-run imports
# each fuzzing seed model (one per supported ONNX op and form), runs it on
# random inputs and verifies every node against the reference; the Q/DQ
# seed must come out folded into an int8 convolution. Every tool and
# example prints its help with --help and refuses a bad argument with exit
# status 2 and one line naming it. A tool the build left out (dg-run
# without ONNX import, the NPU tools with -Dnpu=disabled; see meson's
# summary) is one "skipped:" line.
# Usage: tests/tools_test.sh BUILD_DIR
# For a cross build, MESON_EXE_WRAPPER names the emulator that runs its
# programs (as meson test sets it; tests/aarch64/run.sh).
set -u
b=${1:-build}
ew=${MESON_EXE_WRAPPER:-}
status=0
check() { # condition-status, message
  if [ "$1" -eq 0 ]; then echo "ok - $2"; else echo "FAIL - $2"; status=1; fi
}
# --help (and -h): exit status 0, the usage on stdout naming each option.
# (sh has no local variables: the functions' own start with _.)
helps() { # program, option...
  _p=$1
  shift
  _out=$($ew "$_p" --help 2>/dev/null)
  _rc=$?
  _missing=
  for _o in "$@"; do
    printf '%s\n' "$_out" | grep -qF -- "$_o" || _missing="$_missing $_o"
  done
  [ $_rc -eq 0 ] && [ -z "$_missing" ] && printf '%s\n' "$_out" | grep -q '^usage: ' &&
    [ "$($ew "$_p" -h 2>/dev/null)" = "$_out" ]
  check $? "$(basename "$_p") --help prints the usage with every option${_missing:+ (missing:$_missing)}"
}
# A usage error: exit status 2 and one line on stderr from the program
# (drivers may add their own) that holds the expected text.
refuses() { # description, expected text, program, argument...
  _what=$1 _text=$2 _p=$3
  shift 2
  _err=$($ew "$@" 2>&1 >/dev/null)
  _rc=$?
  _line=$(printf '%s\n' "$_err" | grep "^$(basename "$_p"): ")
  [ $_rc -eq 2 ] && [ "$(printf '%s\n' "$_line" | wc -l)" -eq 1 ] &&
    printf '%s\n' "$_line" | grep -qF -- "$_text"
  _r=$?
  [ $_r -eq 0 ] || _what="$_what (exit status $_rc, stderr: $_err)"
  check $_r "$(basename "$_p") $_what"
}
out=$($ew "$b/tools/dg-info" 2>&1)
echo "$out" | grep -q "kind:    cpu"
check $? "dg-info lists the CPU device"
$ew "$b/tools/dg-info" --json | grep -q '"kind": "cpu"'
check $? "dg-info --json lists the CPU device"
# With no driver to find, each kind says why it has no device: the
# driver's reason where the target was built, "not built" where not.
out=$(VK_ICD_FILENAMES=/nonexistent OCL_ICD_VENDORS=/nonexistent DG_NPU_DEVICE=none $ew "$b/tools/dg-info" 2>&1)
echo "$out" | grep -Eq '^no vulkan device: (no Vulkan driver \(vkCreateInstance: -9|not built into this library)' &&
  echo "$out" | grep -Eq '^no opencl device: (no OpenCL platform \(clGetPlatformIDs: -1001|not built into this library)' &&
  echo "$out" | grep -Eq '^no npu device: (DG_NPU_DEVICE=none|not built into this library)'
check $? "dg-info says why each kind has no device (no driver, not built)"
helps "$b/tools/dg-info" --json --help
refuses "refuses an unknown option" "unknown option '--jsn'" "$b/tools/dg-info" --jsn
refuses "refuses an operand" "unexpected argument '0'" "$b/tools/dg-info" 0
if [ ! -x "$b/tools/dg-run" ]; then
  echo "skipped: dg-run is not in this build (no ONNX import: -Donnx=disabled, or protobuf-c, protoc-c or onnx.proto missing)"
else
  for m in tests/fuzz/corpus/*.onnx; do
    out=$($ew "$b/tools/dg-run" "$m" --random --verify --plan --repeat 1 2>&1)
    if [ "$(basename "$m")" = unsupported.onnx ]; then
      # a seed of the refusal path: every unsupported node named, each
      # node's whole line logged before the summary
      echo "$out" | grep -q "^dg-run: onnx node 2 '' (Foo): operator domain 'x.y'" &&
        echo "$out" | grep -q "(Det), op_type: operator 'Det' is not supported; 1 more node not supported: Foo (node 2)"
      check $? "dg-run unsupported.onnx: refused, naming Det and, logged, Foo"
      continue
    fi
    echo "$out" | grep -q "^verify: ok"
    check $? "dg-run $(basename "$m"): imported, ran, verified"
    if [ "$(basename "$m")" = qdq.onnx ]; then
      echo "$out" | grep -q "qconv2d"
      check $? "dg-run qdq.onnx: DequantizeLinear-Conv-Relu-QuantizeLinear folded into qconv2d"
    fi
  done
  # --output: a folder gets every output as NAME.npy, NAME=FILE one;
  # numpy reads back the values dg-run printed.
  od=$(mktemp -d "${TMPDIR:-/tmp}/dg-run-out.XXXXXX")
  out=$($ew "$b/tools/dg-run" tests/fuzz/corpus/conv.onnx --random --repeat 1 \
    --output "$od" --output "y=$od/named.npy" 2>&1)
  first=$(printf '%s\n' "$out" | sed -n 's/^output y: f32 \[1x4x4x4\] \([^ ]*\) .*/\1/p')
  /usr/bin/python3 - "$od" "$first" <<'PY'
import sys, numpy as np
d, first = sys.argv[1], float(sys.argv[2])
for f in ("y.npy", "named.npy"):
    a = np.load(d + "/" + f)
    assert a.dtype == np.float32 and a.shape == (1, 4, 4, 4), (f, a.dtype, a.shape)
    assert abs(float(a.ravel()[0]) - first) <= 1e-5 * max(1.0, abs(first)), (f, a.ravel()[0], first)
PY
  check $? "dg-run --output DIR and NAME=FILE: .npy files numpy reads, with the printed values"
  refuses "refuses an --output naming no output" "--output got 'nope'; valid: an output of the model" "$b/tools/dg-run" tests/fuzz/corpus/conv.onnx --random --repeat 1 --output nope=$od/x.npy
  refuses "refuses an --output NAME= without a file" "--output got 'y='; valid: NAME=FILE.npy or DIR" "$b/tools/dg-run" tests/fuzz/corpus/conv.onnx --random --output y=
  rm -rf "$od"
  $ew "$b/tools/dg-run" tests/fuzz/corpus/conv.onnx >/dev/null 2>&1
  [ $? -ne 0 ]
  check $? "dg-run refuses to run without inputs (no --input, no --random)"
  printf 'garbage' > "${TMPDIR:-/tmp}/dg-bad.onnx"
  out=$($ew "$b/tools/dg-run" "${TMPDIR:-/tmp}/dg-bad.onnx" --random 2>&1)
  echo "$out" | grep -q "not a valid ONNX model"
  check $? "dg-run on a corrupt file reports it"
  r=$b/tools/dg-run
  m=tests/fuzz/corpus/conv.onnx
  helps "$r" MODEL.onnx --input --random --device --kinds --strict --plan --profile --dot --output \
    --verify --repeat --symbolic --freeze --help Examples: Environment:
  # --plan measures every node (its run_us column), --dot draws a legend
  # and what was fused; inputs are checked against the model's by name,
  # dtype and shape; --output DIR must exist.
  od=$(mktemp -d "${TMPDIR:-/tmp}/dg-run-plan.XXXXXX")
  out=$($ew "$r" $m --random --repeat 2 --plan --dot "$od/plan.dot" 2>&1)
  printf '%s\n' "$out" | awk '$1 ~ /^[0-9]+$/ && $7 + 0 > 0 { n++ } END { exit !(n > 0) }'
  check $? "dg-run --plan prints measured per-node times (run_us > 0)"
  grep -q 'cluster_legend' "$od/plan.dot" && grep -q 'legend_cpu' "$od/plan.dot"
  check $? "dg-run --dot writes a legend of the device colours"
  /usr/bin/python3 -c 'import numpy as np, sys; np.save(sys.argv[1], np.zeros((1, 1), np.float32))' "$od/small.npy"
  name=$(/usr/bin/python3 -c 'import onnx, sys; print(onnx.load(sys.argv[1]).graph.input[0].name)' $m 2>/dev/null || echo x)
  refuses "refuses an --input naming no input" "--input nope: the model has no input of this name; its inputs: $name" "$r" $m --input "nope=$od/small.npy"
  refuses "refuses an --input of the wrong shape, naming both" "--input $name: the file holds f32 [1, 1]; the model's input is f32 [" "$r" $m --input "$name=$od/small.npy"
  refuses "refuses an --output folder that does not exist" "--output $od/none: no such folder" "$r" $m --random --repeat 1 --output "$od/none"
  if /usr/bin/python3 -c 'import onnx' 2>/dev/null; then
    /usr/bin/python3 - "$od/dyn.onnx" <<'PY'
import sys
from onnx import TensorProto, helper, save
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])
g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "dyn", [x], [y])
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), sys.argv[1])
PY
    out=$($ew "$r" "$od/dyn.onnx" --random 2>&1)
    [ $? -ne 0 ] && printf '%s\n' "$out" | grep -q "symbolic dimension 0 ('batch'); give it a value with --symbolic N" &&
      ! printf '%s\n' "$out" | grep -q dg_onnx_options
    check $? "dg-run on a dynamic batch names --symbolic N, not the C field"
    $ew "$r" "$od/dyn.onnx" --random --symbolic 3 2>&1 | grep -q "^output y: f32 \[3x4\]"
    check $? "dg-run --symbolic 3 runs it with batch 3"
  else
    echo "skipped: python3-onnx is not installed (dg-run on a dynamic batch)"
  fi
  rm -rf "$od"
  refuses "refuses a non-numeric --device" "--device got 'abc'; valid: 0 (cpu: " "$r" $m --random --device abc
  refuses "refuses an out-of-range --device" "--device got '99'; valid: 0 (cpu: " "$r" $m --random --device 0 --device 99
  refuses "refuses an unknown kind" "--kinds got 'gpu'; valid: a comma-separated list of cpu,vulkan,opencl,npu" "$r" $m --random --kinds gpu
  refuses "refuses an unknown kind in a list" "--kinds got 'gpu' in 'cpu,gpu'" "$r" $m --random --kinds cpu,gpu
  refuses "refuses --repeat 0" "--repeat got '0'; valid: an integer >= 1" "$r" $m --random --repeat 0
  refuses "refuses a non-numeric --symbolic" "--symbolic got '2x'" "$r" $m --random --symbolic 2x
  refuses "refuses an --input without NAME=" "--input got 'x.npy'; valid: NAME=FILE" "$r" $m --input x.npy
  refuses "refuses a --kinds without a value" "--kinds needs a value" "$r" $m --random --kinds
  refuses "refuses an unknown option" "unknown option '--quick'" "$r" $m --random --quick
  refuses "refuses a second model" "unexpected argument 'b.onnx'" "$r" $m b.onnx --random
  refuses "refuses to run without a model" "no MODEL.onnx given" "$r" --random
fi
out=$($ew "$b/tools/dg-bench" --gpu-peak 67 2>&1)
[ $? -eq 2 ] && echo "$out" | grep -q "two positive TFLOP/s figures"
check $? "dg-bench refuses a --gpu-peak without the fp16 figure"
out=$($ew "$b/tools/dg-bench" --gpu-peak 67,x 2>&1)
[ $? -eq 2 ] && echo "$out" | grep -q "got '67,x'"
check $? "dg-bench refuses a malformed --gpu-peak and quotes it"
g=$b/tools/dg-bench
helps "$g" --full --quick --all-devices --gpu --scale --models --threads --batch --ort --device --json --weights --only --gpu-peak --help Examples: Environment:
refuses "refuses --scale with --gpu" "--scale, --gpu and --models are separate suites" "$g" --scale --gpu
refuses "refuses --models with --gpu" "separate suites" "$g" --models --gpu
refuses "refuses --threads without --models" "--threads applies to --models only" "$g" --threads 2
refuses "refuses --batch 0" "--batch wants a count from 1 to 4096" "$g" --models --batch 0
refuses "refuses --models with a --device that is no index" "--device wants a device index" "$g" --models --device vulkan
# The scale bench on the CPU: a row per size, per-node figures, exit 0.
# Real devices only by default: every CPU-hosted driver and simulator is
# named as left out; the expected duration is printed; piped, stderr
# carries no progress line.
dgi=$($ew "$b/tools/dg-info" --json 2>/dev/null)
hosted=$(printf '%s\n' "$dgi" | grep -c '"cpu_hosted": 1')
$ew "$g" --gpu --only node >"${TMPDIR:-/tmp}/dg-bench-out.$$" 2>"${TMPDIR:-/tmp}/dg-bench-err.$$"
left=$(grep -c 'left out, it computes on the host CPU (--all-devices or --device [0-9]* to include it)' "${TMPDIR:-/tmp}/dg-bench-out.$$")
grep -q '^expected: about [0-9]* s for [0-9]* device(s)' "${TMPDIR:-/tmp}/dg-bench-out.$$" &&
  [ "$left" -eq "$hosted" ] && ! grep -q "$(printf '\r')" "${TMPDIR:-/tmp}/dg-bench-err.$$"
check $? "dg-bench leaves out the $hosted CPU-hosted device(s), prints the expected duration, no progress when piped ($left left out)"
rm -f "${TMPDIR:-/tmp}/dg-bench-out.$$" "${TMPDIR:-/tmp}/dg-bench-err.$$"
# On a terminal (util-linux's script gives it one), the progress line.
if command -v script >/dev/null 2>&1 && [ -z "$ew" ]; then
  script -qc "$g --device 0" /dev/null >"${TMPDIR:-/tmp}/dg-bench-tty.$$" 2>&1
  grep -aq 'dg-bench: [0-9]* rows, [0-9]* s of about [0-9]* s' "${TMPDIR:-/tmp}/dg-bench-tty.$$"
  check $? "dg-bench shows a progress line on a terminal"
  rm -f "${TMPDIR:-/tmp}/dg-bench-tty.$$"
else
  echo "skipped: no script(1) or a cross build (dg-bench's progress on a terminal)"
fi
out=$($ew "$g" --scale --quick --device 0 2>&1)
rc=$?
rows=$(printf '%s\n' "$out" | grep -c '^{"bench":"scale","device":"0:cpu","nodes":[0-9]*,"build_us_per_node":[0-9.]*,"import_us_per_node":-*[0-9.]*,"compile_us_per_node":[0-9.]*}$')
[ $rc -eq 0 ] && [ "$rows" -eq 2 ]
check $? "dg-bench --scale --quick: 1k and 10k-node rows on the CPU (exit $rc, $rows rows)"
refuses "refuses an out-of-range --device" "--device got '99'; valid: 0 (cpu: " "$g" --quick --device 99
refuses "refuses a non-numeric --device" "--device got 'cpu'; valid: 0 (cpu: " "$g" --quick --device cpu
refuses "refuses the CPU as the GPU suite's --device" "--device got '0', a cpu device" "$g" --gpu --quick --device 0
refuses "refuses an unknown --only bench" "--only got 'gemm' in 'sgemm,gemm'; valid: a comma-separated list of sgemm,hgemm,conv,lenet,node" "$g" --gpu --only sgemm,gemm
refuses "refuses --only without --gpu" "--only applies to the GPU suite only" "$g" --only sgemm
refuses "refuses a --json without a value" "--json needs a value" "$g" --quick --json
refuses "refuses an unknown option" "unknown option '--fastest'" "$g" --fastest
refuses "refuses --fast without --models" "--fast applies to --models only" "$g" --fast
if [ ! -x "$b/tools/npu-hw-check" ]; then
  echo "skipped: npu-hw-check and npu-report are not in this build (no NPU target: -Dnpu=disabled)"
else
  n=$b/tools/npu-hw-check
  helps "$n" --out --replay --help
  refuses "refuses an --out without a value" "--out needs a value: DIR" "$n" --out
  refuses "refuses --out with --replay" "--out and --replay exclude each other" "$n" --out a --replay b
  refuses "refuses an unknown option" "unknown option '--board'" "$n" --board
  n=$b/tools/npu-report
  helps "$n" --model --help
  refuses "refuses an unknown option" "unknown option '--json'" "$n" --json
  refuses "refuses a --model without a file" "--model needs a FILE.onnx" "$n" --model
  if [ -f tests/fuzz/corpus/qdq.onnx ] && "$b/tools/dg-run" --help >/dev/null 2>&1; then
    _out=$(DG_NPU_DEVICE=sim $ew "$n" --model tests/fuzz/corpus/qdq.onnx 2>&1)
    printf '%s\n' "$_out" | grep -q '"npu_nodes":1,.*"tasks":1,"jobs":1'
    check $? "npu-report --model: the QDQ conv of the fuzz corpus on the NPU, 1 task in 1 job, with the timing model's estimate"
    _out=$($ew "$n" --model tests/no-such.onnx 2>&1)
    [ $? -eq 1 ] && printf '%s\n' "$_out" | grep -q "no-such.onnx: import"
    check $? "npu-report --model of a missing file: exit 1, naming it"
  fi
fi

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
# Every tool's --help has examples and the environment it reads.
for p in "$b/tools/dg-info" "$b/tools/dg-run" "$b/tools/dg-bench" "$b/examples/lenet" \
  "$b/examples/conv_offload" "$b/tools/npu-report" "$b/tools/npu-hw-check"; do
  [ -x "$p" ] || continue
  _h=$($ew "$p" --help 2>/dev/null)
  printf '%s\n' "$_h" | grep -q '^Examples:$' && printf '%s\n' "$_h" | grep -q '^Environment: '
  check $? "$(basename "$p") --help has examples and its environment variables"
done
# The licence meson.build declares is the LICENSE file's.
grep -q "license : 'MIT'" meson.build && head -n 1 LICENSE | grep -q '^MIT License$'
check $? "LICENSE holds the MIT licence meson.build declares"
# docs/tools.md names every option each tool's --help names.
for p in "$b/tools/dg-info" "$b/tools/dg-run" "$b/tools/dg-bench" "$b/examples/lenet" \
  "$b/tools/npu-report" "$b/tools/npu-hw-check"; do
  [ -x "$p" ] || continue
  _missing=
  for _o in $($ew "$p" --help 2>/dev/null | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u); do
    [ "$_o" = --help ] || grep -qF -- "\`$_o" docs/tools.md || _missing="$_missing $_o"
  done
  [ -z "$_missing" ]
  check $? "docs/tools.md names every option of $(basename "$p")${_missing:+ (missing:$_missing)}"
done
exit $status
