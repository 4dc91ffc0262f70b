#!/bin/sh
# Installs what directgraph needs on Debian 12 or Ubuntu 24.04, for one
# purpose. Idempotent: packages already present are not fetched again.
#
#   tools/setup-debian.sh --demo    build the library and run the LeNet demo
#                                   (every target that can find its device)
#   tools/setup-debian.sh [--test]  the above, plus what the test suite uses:
#                                   lavapipe and PoCL (Vulkan and OpenCL on
#                                   the CPU), the validation layer, ONNX,
#                                   ONNX Runtime's npm package, TVM's DLPack
#   tools/setup-debian.sh --bench   the tests' packages plus the peers
#                                   dg-bench compares with (OpenBLAS, oneDNN)
#   tools/setup-debian.sh --fuzz    the tests' packages plus clang/libFuzzer
#
# The aarch64 stage (tests/aarch64/run.sh) installs its cross toolchain
# and qemu itself.
set -eu
usage() {
  sed -n '2,15s/^# \{0,1\}//p' "$0"
}
mode=test
case "${1:-}" in
"" | --test) ;;
--demo) mode=demo ;;
--bench) mode=bench ;;
--fuzz) mode=fuzz ;;
-h | --help)
  usage
  exit 0
  ;;
*)
  echo "setup-debian.sh: unknown option '$1' (valid: --demo, --test, --bench, --fuzz, --help)" >&2
  exit 2
  ;;
esac

# Building the library, its targets and the demo's data.
pkgs="gcc libc6-dev meson ninja-build pkg-config zlib1g-dev dataset-fashion-mnist"
# The GPU and NPU targets build when their headers are present: Vulkan
# (loader and glslc for the shaders), OpenCL (ICD loader), the NPU's rknpu
# backend (libdrm). The drivers themselves come with the machine's GPU.
pkgs="$pkgs libvulkan-dev glslc ocl-icd-opencl-dev opencl-headers libdrm-dev"
# The README's next steps after the demo: dg-run (ONNX import: protobuf-c
# and ONNX's own onnx.proto) and the Python package (numpy).
pkgs="$pkgs libprotobuf-c-dev protobuf-c-compiler libonnx-dev python3-numpy"
if [ "$mode" != demo ]; then
  # Vulkan and OpenCL on the CPU (Mesa's lavapipe, PoCL), so that their
  # tests run on a machine without a GPU, and the Khronos validation layer.
  pkgs="$pkgs mesa-vulkan-drivers vulkan-validationlayers pocl-opencl-icd"
  # ONNX's node tests.
  pkgs="$pkgs libonnx-testdata"
  # The ONNX Runtime plugin-EP test: models from python3-onnx, ORT from npm.
  pkgs="$pkgs python3-onnx"
  # The model zoo (tests/zoo): torchvision models exported by Debian's torch.
  pkgs="$pkgs python3-torch python3-torchvision"
  command -v npm >/dev/null 2>&1 || pkgs="$pkgs npm"
  # The Python package's plan as a picture.
  pkgs="$pkgs graphviz"
  # TVM-FFI: Debian's DLPack header, to cross-check our own declarations.
  pkgs="$pkgs libdlpack-dev"
  # The zoo's QDQ models with ONNX Runtime on an emulated AVX2-only CPU.
  [ "$(uname -m)" != x86_64 ] || pkgs="$pkgs qemu-user-static"
fi
case $mode in
bench) pkgs="$pkgs libopenblas-dev libdnnl-dev" ;;
fuzz) pkgs="$pkgs clang libclang-rt-14-dev" ;;
esac
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing="$missing $p"
done
[ -z "$missing" ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "installing:$missing" >&2
$sudo apt-get update -q >&2
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends $missing >&2
