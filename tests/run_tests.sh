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
# The release and asan sections run the tests tests/meson.build registers
# (the one list: `meson test` runs the same; tests/README.md), each
# program printing one line per case, counted by tests/harness.sh.
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
# any message it counts, the others print them. (The registry sets it for
# its tests too, for meson test; this is for the plants and the aarch64
# and cpu-only sections.)
export DG_VULKAN_VALIDATION=1

# ONNX Runtime 1.30.0 from the npm registry (cached after the first run),
# for the EP test of the release and asan sections; when the fetch fails
# the EP test says skipped, and this says why.
if want release || want asan; then
  tests/ort/fetch-ort.sh >"$log/fetch-ort.txt" 2>&1 ||
    echo "[ort_ep] # tests/ort/fetch-ort.sh failed: $(grep -m 1 -iE 'err|fail|not found' "$log/fetch-ort.txt" | cut -c 1-200)"
fi

# Every test of the registry: the programs, their variants under another
# environment (dot:test_differential, avx2: and portable:test_int8_golden),
# the examples, install, docs, tools, npu-report, the Python tests and the
# EP.
if ! want release; then
  :
elif build build --buildtype=release; then
  registry "" build
else
  failed=$((failed + 1))
fi

# ASan + UBSan: the planted bugs, then the registry's tests but the
# release-only ones.
if ! want asan; then
  :
elif build build-asan --buildtype=debug -Db_sanitize=address,undefined \
  -Db_lundef=false; then
  # The sanitizers' options, the ones meson test's setup 'asan' sets: the
  # file says why each.
  asan_env=tests/sanitizers/asan.env
  while IFS= read -r line; do
    case $line in [A-Z]*=*) export "${line?}" ;; esac
  done <"$asan_env"
  DG_NPU_DEVICE=sim plant "asan:plant" "" build-asan/tests/sanitizer_plant none
  plant "asan:plant" "LeakSanitizer: detected memory leaks" build-asan/tests/sanitizer_plant leak
  plant "asan:plant" "in plant_leak" build-asan/tests/sanitizer_plant leak
  # The registry but its release-only suite, as meson test --setup asan
  # runs it: the programs, the examples (LeNet on 500 images in a
  # sanitized build) and the EP.
  registry asan: build-asan release-only
  # shellcheck disable=SC2046
  unset $(sed -n 's/^\([A-Z_]*\)=.*/\1/p' "$asan_env")
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
  plant "tsan:plant" "in plant_lock_order" build-tsan/tests/sanitizer_plant lock_order
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
