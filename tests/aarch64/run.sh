#!/bin/sh
# The aarch64 stage: cross-builds the whole tree for aarch64 (release,
# warnings as errors) with Debian's cross compiler and arm64 multiarch
# libraries, and runs the CPU, NPU-simulator, builder, reference,
# differential, thread, int8 golden (NEON with and without the dot
# product, and portable), ONNX, tools, instruction-count benchmark,
# documentation and LeNet (a subset) tests under qemu-user as a
# Cortex-A76, and meson install. Installs what it needs
# when missing. Prints the lines of each program prefixed
# "[aarch64:NAME]", as tests/run_tests.sh does; a program that exits
# non-zero without a FAIL line counts as one failure. Ends with the line
# "N passed, N failed" (", N skipped" when some were). Run from anywhere:
#   tests/aarch64/run.sh
# On 2 cores: about 2.5 minutes from nothing (installs 10-15 s, a fresh
# build 15-30 s), 2 minutes with both done (the tests themselves).
set -u
cd "$(dirname "$0")/../.." || exit 1
b=build-aarch64
start=$(date +%s)

# ---- what it needs ----
# Build machine: meson and the cross compiler; protoc-c and ONNX's
# onnx.proto (libonnx-dev) generate the ONNX importer, whose node tests
# read libonnx-testdata; LeNet reads Fashion-MNIST.
host_pkgs="meson ninja-build pkg-config gcc-aarch64-linux-gnu qemu-user-static"
# The cross compiler's own C library headers and startup files (only
# recommended by gcc-aarch64-linux-gnu): the build is checked with them.
host_pkgs="$host_pkgs libc6-dev-arm64-cross"
host_pkgs="$host_pkgs protobuf-c-compiler libonnx-dev libonnx-testdata"
host_pkgs="$host_pkgs dataset-fashion-mnist"
# arm64 (multiarch): the loader and C library the programs run with
# (libc6), zlib (required), protobuf-c (ONNX import) and libdrm (the NPU's
# rknpu backend). No Vulkan or OpenCL: no arm64 loader or driver is
# installed, so those targets are not built.
arm_pkgs="libc6:arm64 zlib1g-dev:arm64 libprotobuf-c-dev:arm64 libdrm-dev:arm64"
# Not installed: the peers tools/insn_bench.py measures against
# (libxnnpack-dev:arm64, libpthreadpool-dev:arm64, libopenblas-dev:arm64).
# Debian 12's arm64 XNNPACK cannot be installed beside the amd64 one that
# python3-torch depends on (apt would remove torch, which the zoo tests
# need), so the stage checks our side and says the peers are skipped;
# docs/performance.md says how to install them for a measurement.
install_missing() {
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    echo "# aarch64: dpkg --add-architecture arm64" >&2
    $sudo dpkg --add-architecture arm64 || return 1
  fi
  missing=""
  for p in $host_pkgs $arm_pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
      grep -q "install ok installed" || missing="$missing $p"
  done
  [ -z "$missing" ] && return 0
  echo "# aarch64: installing:$missing" >&2
  # The arm64 lists are needed anyway, and co-installed arm64 libraries
  # must match their amd64 versions, which may pull amd64 upgrades.
  $sudo apt-get update -q >&2 || return 1
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q \
    --no-install-recommends -o DPkg::Lock::Timeout=300 $missing >&2
}
if ! install_missing; then
  echo "[aarch64:install] FAIL - the cross toolchain and arm64 packages"
  echo "0 passed, 1 failed"
  exit 1
fi
installed=$(date +%s)

# ---- build ----
log=$(mktemp -d)
. tests/harness.sh
trap 'rm -rf "$log"' EXIT
trap 'exit 1' INT TERM
built=0
if [ ! -d "$b" ]; then
  # No arm64 Vulkan or OpenCL loader is installed: the targets are off
  # by name, so that the amd64 headers the cross compiler also sees in
  # /usr/include cannot turn them on.
  meson setup "$b" --cross-file tests/aarch64/cross-aarch64.ini \
    -Dvulkan=disabled -Dopencl=disabled \
    --buildtype=release -Dwerror=true >"$log/setup.txt" 2>&1 || {
    cat "$log/setup.txt"
    rm -rf "$b" # a half-configured folder would be taken as set up
  }
fi
if [ -d "$b" ]; then
  if ninja -C "$b" >"$log/build.txt" 2>&1; then
    built=1
    result aarch64:build 1 "the release build, warnings as errors"
  else
    grep -E 'error|warning|FAILED' "$log/build.txt" | head -n 40
  fi
fi
[ "$built" -eq 1 ] || result aarch64:build 0 "the release build"
compiled=$(date +%s)

# ---- tests ----
# The multiarch loader runs the programs (see the cross file for -L /);
# MESON_EXE_WRAPPER is how the tests that start other programs of the
# build (tests/exec_wrapper.h, examples_test.sh, tools_test.sh) reach the
# emulator: there is no binfmt_misc to rely on.
# $qemu is a command line, split into words where it is used.
qemu="qemu-aarch64-static -L / -cpu cortex-a76"
qemu_nodot="qemu-aarch64-static -L / -cpu cortex-a72"
export MESON_EXE_WRAPPER="$qemu"

if [ "$built" -eq 1 ]; then
  # test_npu and test_npu_fake select the simulator themselves
  # (DG_NPU_DEVICE=sim, and the fake kernel behind rocket / rknpu).
  for t in test_builder test_op_table test_reference test_session \
    test_threads test_differential test_oom test_onnx_node test_onnx_import \
    test_npu test_npu_fake test_tvm_ffi test_dlpack_layout; do
    if [ -x "$b/tests/$t" ]; then
      # shellcheck disable=SC2086
      run "aarch64:$t" $qemu "$b/tests/$t"
    else
      case $t in
      test_onnx_*) skip "aarch64:$t" "not built: no ONNX import (libprotobuf-c-dev:arm64, protoc-c or /usr/include/onnx/onnx.proto missing)" ;;
      test_dlpack_layout) skip "aarch64:$t" "not built: no dlpack/dlpack.h (libdlpack-dev)" ;;
      *) skip "aarch64:$t" "not built" ;;
      esac
    fi
  done
  # The CPU kernels on a core with the dot product (the RK3588's A76 and
  # A55: the int8 GEMM's sdot kernel) and on one without (Cortex-A72, as
  # in a Raspberry Pi 4: the portable int8 kernel, never an instruction
  # the core lacks). Each checks which int8 kernel it ran.
  # (env, not assignments before run: whether those outlive a function
  # call differs between shells.)
  # shellcheck disable=SC2086
  run aarch64:a76:test_cpu_kernels env DG_EXPECT_QKERNEL=neon-dot $qemu \
    "$b/tests/test_cpu_kernels"
  # shellcheck disable=SC2086
  run aarch64:a72:test_cpu_kernels env DG_EXPECT_QKERNEL=portable \
    $qemu_nodot "$b/tests/test_cpu_kernels"
  # int8 must be bit-exact on every SIMD level aarch64 has: NEON with the
  # dot product (the default there), NEON without it, and portable.
  for simd in neon portable; do
    # shellcheck disable=SC2086
    run "aarch64:$simd:test_int8_golden" env DG_CPU_SIMD=$simd $qemu \
      "$b/tests/test_int8_golden"
  done
  # shellcheck disable=SC2086
  run "aarch64:a72:test_int8_golden" $qemu_nodot "$b/tests/test_int8_golden"
  # The instruction-count benchmark at its small size (a quarter of a
  # minute): each side built in checked against the reference, the
  # figures printed as "#" lines (docs/performance.md has the full size).
  run aarch64:insn_bench python3 tools/insn_bench.py "$b" --size small --tap
  skip aarch64:test_vulkan "no Vulkan target in the aarch64 build (no arm64 Vulkan loader or driver installed)"
  skip aarch64:test_opencl "no OpenCL target in the aarch64 build (no arm64 ICD loader installed)"
  skip aarch64:ort_ep "ONNX Runtime is fetched for linux-x64 only (tests/ort/fetch-ort.sh)"
  # LeNet on 2000 of the 10000 test images (the x86 stage runs them all)
  # and the conv example.
  run aarch64:examples env DG_LENET_LIMIT=2000 tests/examples_test.sh "$b"
  run aarch64:tools tests/tools_test.sh "$b"
  # The documentation's examples, built with the cross compiler (-Werror).
  run aarch64:docs env CC=aarch64-linux-gnu-gcc tests/docs_test.sh "$b"
  # meson install, which GCC 12's internal compiler error once stopped on
  # aarch64 (tests/ort/ort_host.c).
  dest=$(mktemp -d "$log/install.XXXXXX")
  if DESTDIR="$dest" meson install -C "$b" --no-rebuild >"$log/install.txt" 2>&1 &&
    [ -n "$(find "$dest" -name 'libdirectgraph.so.*')" ]; then
    result aarch64:install 1 "meson install into a DESTDIR"
  else
    result aarch64:install 0 "meson install into a DESTDIR"
    tail -n 20 "$log/install.txt" | sed 's/^/#   /'
  fi
  skip aarch64:install_test "host-only: it checks the installed library with the host's pkg-config path, ldd and loader configuration"
  # shellcheck disable=SC2086
  run aarch64:npu-report $qemu "$b/tools/npu-report"
fi
done_at=$(date +%s)
echo "# aarch64: install $((installed - start)) s, build $((compiled - installed)) s, tests $((done_at - compiled)) s"

summary
