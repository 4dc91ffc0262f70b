#!/bin/sh
# Sets up, builds and runs every test twice: a release build, and a build
# under AddressSanitizer + UndefinedBehaviorSanitizer (leaks included).
# Each test program prints one line per case ("ok - ...", "FAIL - ...",
# "skipped: ..."); a program that exits non-zero without a FAIL line (a
# crash, a sanitizer report) counts as one failure. Ends with the line
# "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
tools/setup-debian.sh || { echo "0 passed, 1 failed"; exit 1; }

passed=0
failed=0
skipped=0
log=$(mktemp -d)

build() { # dir, extra meson args...
  dir=$1
  shift
  if [ ! -d "$dir" ]; then
    meson setup "$dir" "$@" >"$log/setup-$dir.txt" 2>&1 || {
      cat "$log/setup-$dir.txt"
      return 1
    }
  fi
  ninja -C "$dir" >"$log/build-$dir.txt" 2>&1 || {
    cat "$log/build-$dir.txt"
    return 1
  }
}

run() { # label, command...
  label=$1
  shift
  out="$log/out.txt"
  "$@" >"$out" 2>&1
  rc=$?
  p=$(grep -c '^ok ' "$out")
  f=$(grep -c '^FAIL' "$out")
  s=$(grep -c '^skipped:' "$out")
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    f=1
    echo "FAIL - $label exited with status $rc" >>"$out"
  fi
  sed "s/^/[$label] /" "$out" | grep -E '^\[[^]]*\] (ok|FAIL|skipped|#)' || true
  if [ "$f" -ne 0 ] || [ "$rc" -ne 0 ]; then
    echo "---- $label output ----"
    tail -n 40 "$out"
  fi
  passed=$((passed + p))
  failed=$((failed + f))
  skipped=$((skipped + s))
}

# Vulkan runs with the Khronos validation layer on; test_vulkan fails on
# any message it counts, the others print them.
export DG_VULKAN_VALIDATION=1

tests="test_builder test_reference test_differential test_int8_golden test_session test_cpu_kernels test_oom test_onnx_node test_onnx_import test_npu test_npu_fake test_opencl test_vulkan test_tvm_ffi test_dlpack_layout"

if build build --buildtype=release; then
  for t in $tests; do
    [ -x "build/tests/$t" ] && run "$t" "build/tests/$t"
  done
  # The int8 integer dot-product kernels, which lavapipe only emulates and
  # so never takes by itself.
  DG_TEST_VULKAN_PATHS=dot run "dot:test_differential" build/tests/test_differential
  # int8 must be bit-exact on every SIMD level, not just the best one.
  for simd in avx2 portable; do
    DG_CPU_SIMD=$simd run "$simd:test_int8_golden" build/tests/test_int8_golden
  done
  run "examples" tests/examples_test.sh build
  run "tools" tests/tools_test.sh build
  run "npu-report" build/tools/npu-report
  run "tvm_codegen" /usr/bin/python3 tests/tvm/test_codegen.py build
  run "spirv_nv2khr" /usr/bin/python3 tests/vulkan/test_spirv_nv2khr.py build
  # ONNX Runtime 1.30.0 from the npm registry (cached after the first run).
  tests/ort/fetch-ort.sh >/dev/null 2>&1 || true
  run "ort_ep" tests/ort/run_ort_tests.sh build
else
  failed=$((failed + 1))
fi

# Sanitizers: LeNet on a subset (the full test set runs above).
if build build-asan --buildtype=debug -Db_sanitize=address,undefined \
  -Db_lundef=false; then
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
  export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
  for t in $tests; do
    [ -x "build-asan/tests/$t" ] && run "asan:$t" "build-asan/tests/$t"
  done
  DG_SKIP_INSTALL_TEST=1 DG_LENET_LIMIT=500 run "asan:examples" tests/examples_test.sh build-asan
  run "asan:ort_ep" tests/ort/run_ort_tests.sh build-asan
else
  failed=$((failed + 1))
fi

rm -rf "$log"
if [ "$skipped" -gt 0 ]; then
  echo "$passed passed, $failed failed, $skipped skipped"
else
  echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
