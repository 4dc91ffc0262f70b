#!/bin/sh
# Sets up, builds and runs every test:
#   release     every test program, the examples, tools, docs and install
#   asan        the programs again under AddressSanitizer +
#               UndefinedBehaviorSanitizer (leaks included)
#   tsan        the thread stress test under ThreadSanitizer
#   aarch64     cross-built for the RK3588's CPU, run under qemu-user
#               (tests/aarch64/run.sh)
#   cpu-only    every optional target and ONNX import disabled
#               (tests/cpu_only.sh)
# Each test program prints one line per case, counted by tests/harness.sh.
# Ends with the line "N passed, N failed". DG_TEST_SECTIONS="release asan"
# runs only those sections.
set -u
cd "$(dirname "$0")/.."
tools/setup-debian.sh --test || { echo "0 passed, 1 failed"; exit 1; }
sections=${DG_TEST_SECTIONS:-release asan tsan aarch64 cpu-only}
want() { case " $sections " in *" $1 "*) return 0 ;; esac; return 1; }

log=$(mktemp -d)
. tests/harness.sh

build() { # dir, extra meson args...
  dir=$1
  shift
  if [ ! -d "$dir" ]; then
    meson setup "$dir" "$@" >"$log/setup-$dir.txt" 2>&1 || {
      cat "$log/setup-$dir.txt"
      return 1
    }
  fi
  ninja -C "$dir" ${targets:-} >"$log/build-$dir.txt" 2>&1 || {
    cat "$log/build-$dir.txt"
    return 1
  }
}

# A sanitizer build must still report a bug planted in our code while
# every device is open (the drivers kept loaded or suppressed do not hide
# ours), and report nothing without one.
plant() { # label, pattern the report must hold ("": no report), command...
  label=$1
  pattern=$2
  shift 2
  out="$log/plant.txt"
  "$@" >"$out" 2>&1
  rc=$?
  if [ -z "$pattern" ]; then
    good=$([ "$rc" -eq 0 ] && ! grep -q "Sanitizer" "$out" && echo 1)
    what="every device opened and used: no sanitizer report (exit $rc)"
  else
    good=$([ "$rc" -ne 0 ] && grep -q "$pattern" "$out" && echo 1)
    what="the planted bug is reported: '$pattern' (exit $rc)"
  fi
  result "$label" "$good" "$what"
  [ -n "$good" ] || tail -n 30 "$out" | sed 's/^/#   /'
}

# Vulkan runs with the Khronos validation layer on; test_vulkan fails on
# any message it counts, the others print them.
export DG_VULKAN_VALIDATION=1

tests="test_builder test_op_table test_reference test_differential test_int8_golden test_session test_cpu_kernels test_threads test_oom test_onnx_node test_onnx_import test_npu test_npu_fake test_opencl test_vulkan test_tvm_ffi test_dlpack_layout"

if ! want release; then
  :
elif build build --buildtype=release; then
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
  run "install" tests/install_test.sh build
  run "docs" tests/docs_test.sh build
  run "tools" tests/tools_test.sh build
  run "npu-report" build/tools/npu-report
  run "tvm_codegen" /usr/bin/python3 tests/tvm/test_codegen.py build
  run "spirv_nv2khr" /usr/bin/python3 tests/vulkan/test_spirv_nv2khr.py build
  # ONNX Runtime 1.30.0 from the npm registry (cached after the first run);
  # when the fetch fails the EP test says skipped, and this says why.
  tests/ort/fetch-ort.sh >"$log/fetch-ort.txt" 2>&1 ||
    echo "[ort_ep] # tests/ort/fetch-ort.sh failed: $(grep -m 1 -iE 'err|fail|not found' "$log/fetch-ort.txt" | cut -c 1-200)"
  run "ort_ep" tests/ort/run_ort_tests.sh build
else
  failed=$((failed + 1))
fi

# Sanitizers: LeNet on a subset (the full test set runs above).
if ! want asan; then
  :
elif build build-asan --buildtype=debug -Db_sanitize=address,undefined \
  -Db_lundef=false; then
  # intercept_tls_get_addr=0: GCC 12's LeakSanitizer records a bogus
  # dynamic-TLS block for a module PoCL loads and unloads (verbosity=1
  # shows "DTLS 6 at 0x1e6a-0x1800002f6c") and its stop-the-world tracer
  # then dies reading it ("Tracer caught signal 11"), in about two of
  # three runs of test_opencl. Without the interception dynamic TLS is
  # not scanned for pointers: that can only add leak reports, never
  # hide one.
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:intercept_tls_get_addr=0
  export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
  DG_NPU_DEVICE=sim plant "asan:plant" "" build-asan/tests/sanitizer_plant none
  plant "asan:plant" "LeakSanitizer: detected memory leaks" build-asan/tests/sanitizer_plant leak
  plant "asan:plant" "in plant_leak" build-asan/tests/sanitizer_plant leak
  for t in $tests; do
    [ -x "build-asan/tests/$t" ] && run "asan:$t" "build-asan/tests/$t"
  done
  DG_LENET_LIMIT=500 run "asan:examples" tests/examples_test.sh build-asan
  run "asan:ort_ep" tests/ort/run_ort_tests.sh build-asan
  unset ASAN_OPTIONS UBSAN_OPTIONS
else
  failed=$((failed + 1))
fi

# ThreadSanitizer: the thread stress test (every device) and the planted
# race. Only third-party code is suppressed (tests/sanitizers/tsan.supp).
if ! want tsan; then
  :
elif targets="tests/test_threads tests/sanitizer_plant" &&
  build build-tsan --buildtype=debugoptimized -Db_sanitize=thread \
    -Db_lundef=false; then
  unset targets
  export TSAN_OPTIONS="halt_on_error=0:suppressions=$(pwd)/tests/sanitizers/tsan.supp"
  DG_NPU_DEVICE=sim plant "tsan:plant" "" build-tsan/tests/sanitizer_plant none
  plant "tsan:plant" "ThreadSanitizer: data race.*plant_race" build-tsan/tests/sanitizer_plant race
  run "tsan:test_threads" build-tsan/tests/test_threads
  unset TSAN_OPTIONS
else
  failed=$((failed + 1))
fi

# aarch64: cross-built, under qemu-user (its own installs and build dir).
if want aarch64; then
  run_timeout=2400 # its own programs have their own timeouts
  run "aarch64" tests/aarch64/run.sh
  unset run_timeout
fi

# CPU only: the build without every optional part (its own build dir).
if want cpu-only; then
  run "cpu-only" tests/cpu_only.sh
fi

rm -rf "$log"
summary
