#!/bin/sh
# Installs what directgraph needs to build, test and run its demo on Debian 12
# or Ubuntu 24.04. Idempotent: packages already present are not fetched again.
# Usage: tools/setup-debian.sh [--bench | --fuzz]   (benchmark peers; the
# ONNX fuzzer's clang and libFuzzer)
set -eu
pkgs="gcc libc6-dev meson ninja-build pkg-config zlib1g-dev dataset-fashion-mnist"
# GPU targets, and the CPU implementations of Vulkan (Mesa's lavapipe) and
# OpenCL (PoCL) that let their tests run on a machine without a GPU.
pkgs="$pkgs libvulkan-dev glslc mesa-vulkan-drivers vulkan-validationlayers"
pkgs="$pkgs ocl-icd-opencl-dev opencl-headers pocl-opencl-icd"
# ONNX import (protobuf-c and ONNX's own onnx.proto) and ONNX's node tests.
pkgs="$pkgs libprotobuf-c-dev protobuf-c-compiler libonnx-dev libonnx-testdata"
# The ONNX Runtime plugin-EP test: models from python3-onnx, ORT from npm.
pkgs="$pkgs python3-onnx python3-numpy"
command -v npm >/dev/null 2>&1 || pkgs="$pkgs npm"
# NPU target: the rknpu backend finds the vendor driver through libdrm.
pkgs="$pkgs libdrm-dev"
# TVM-FFI: Debian's DLPack header, to cross-check our own layout declarations.
pkgs="$pkgs libdlpack-dev"
case "${1:-}" in
--bench) pkgs="$pkgs libopenblas-dev libdnnl-dev" ;;
--fuzz) pkgs="$pkgs clang libclang-rt-14-dev" ;;
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
