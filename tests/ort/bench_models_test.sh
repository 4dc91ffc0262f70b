#!/bin/sh
# dg-bench --models end to end on a tiny zoo: LeNet (tests/ort/gen_models.py,
# the demo's trained weights) against ONNX Runtime, and a corrupt model
# that must give a FAIL row and exit status 1. The figures themselves are
# not judged (a benchmark, not a timed test).
#
#   tests/ort/bench_models_test.sh DG_BENCH
#
# Prints "ok - ..." / "FAIL - ..." / "skipped: ..." lines.
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
bench=$1
. "$here/need_ort.sh"
dir=$(mktemp -d "${TMPDIR:-/tmp}/dg-bench-models.XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM
mkdir -p "$dir/gen"
if ! /usr/bin/python3 "$here/gen_models.py" "$dir/gen" "$src/examples/lenet-weights" >"$dir/gen.log" 2>&1; then
  echo "FAIL - generating the ONNX models:"
  sed 's/^/# /' "$dir/gen.log"
  exit 1
fi
fails=0
mkdir -p "$dir/zoo/lenet"
cp "$dir/gen/lenet.onnx" "$dir/zoo/lenet/model.onnx"
# Under AddressSanitizer, ORT's own leftovers at exit are not ours.
export LSAN_OPTIONS="suppressions=$here/lsan-ort.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
out=$("$bench" --models "$dir/zoo" --quick --threads 2 --ort "$lib" --json "$dir/b.json" 2>&1)
rc=$?
if [ $rc -eq 0 ] && printf '%s\n' "$out" | grep -Eq '^lenet +f32 .*x ' &&
  printf '%s\n' "$out" | grep -q '^geomean f32: .* over 1 models' &&
  grep -q '"model":"lenet".*"speed":' "$dir/b.json"; then
  echo "ok - dg-bench --models: LeNet against ONNX Runtime, checked, timed, a table row, the geomean and a JSON line"
else
  echo "FAIL - dg-bench --models on LeNet (exit $rc):"
  printf '%s\n' "$out" | sed 's/^/# /'
  fails=$((fails + 1))
fi
mkdir -p "$dir/zoo/broken"
printf 'not a model' >"$dir/zoo/broken/model.onnx"
out=$("$bench" --models "$dir/zoo" --quick --ort "$lib" 2>&1)
rc=$?
if [ $rc -eq 1 ] && printf '%s\n' "$out" | grep -q '^broken .*FAIL - import' &&
  printf '%s\n' "$out" | grep -Eq '^lenet +f32 '; then
  echo "ok - dg-bench --models: a corrupt model is a FAIL row naming the import, the others still run, exit status 1"
else
  echo "FAIL - dg-bench --models with a corrupt model (exit $rc):"
  printf '%s\n' "$out" | sed 's/^/# /'
  fails=$((fails + 1))
fi
out=$("$bench" --models "$dir/zoo" --quick --ort "$dir/no-such-lib.so" 2>&1)
rc=$?
if [ $rc -eq 2 ] && printf '%s\n' "$out" | grep -q 'cannot load ONNX Runtime'; then
  echo "ok - dg-bench --models: a missing ONNX Runtime is named, exit status 2"
else
  echo "FAIL - dg-bench --models without ONNX Runtime (exit $rc):"
  printf '%s\n' "$out" | sed 's/^/# /'
  fails=$((fails + 1))
fi
[ $fails -eq 0 ]
