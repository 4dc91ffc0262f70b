#!/bin/bash
# Whole models on the GPU machine: the benchmark zoo made there (with its
# PyTorch), ours on each real GPU device against ONNX Runtime's CPU EP
# (dg-bench --models --device N, same process, alternating), PyTorch eager
# f32 and f16 CUDA-graph times of the same models (tools/gpu_models.py),
# and the per-node plan of ResNet-50 and MobileNetV2 on each device.
# Usage: tests/gpu/models_on_gpu.sh BUILD_DIR ZOO_DIR ORT_LIB [STEP...]
# STEP: zoo, vulkan, opencl, torch, plans (default: all, in that order);
# fast: ours on Vulkan in the fast precision (f16 storage) at batch 1, and
# fast32: ResNet-50 and MobileNetV2 at batch 32, fast, beside torch's.
# Not a test: it prints figures and asserts nothing.
set -u
b=$1 zoo=$2 ort=$3
shift 3
steps=${*:-zoo vulkan opencl torch plans}
threads=$(nproc)
export DG_CACHE_DIR=${DG_CACHE_DIR:-/tmp/dg-cache}
# The first device of a kind, as dg-info numbers them.
index_of() {
  "$b/tools/dg-info" | awk -v k="$1" '
    /^device [0-9]+:/ { d = $2; sub(":", "", d) }
    $1 == "kind:" && $2 == k { print d; exit }'
}
for step in $steps; do
  case $step in
  zoo)
    [ -f "$zoo/resnet50/model.onnx" ] ||
      python3 tests/zoo/make_bench_zoo.py "$zoo" ;;
  vulkan | opencl)
    dev=$(index_of "$step")
    if [ -z "$dev" ]; then
      echo "skipped: no $step device"
      continue
    fi
    echo "== $step (device $dev) vs ORT CPU EP, $threads threads"
    "$b/tools/dg-bench" --models "$zoo" --device "$dev" --threads "$threads" \
      --ort "$ort" --json "${OUT:-/tmp}/models_$step.json" ;;
  fast | fast32)
    dev=$(index_of vulkan)
    if [ -z "$dev" ]; then
      echo "skipped: no vulkan device"
      continue
    fi
    if [ "$step" = fast ]; then
      echo "== vulkan (device $dev), fast precision, vs ORT CPU EP"
      "$b/tools/dg-bench" --models "$zoo" --device "$dev" --threads "$threads" \
        --fast --ort "$ort" --json "${OUT:-/tmp}/models_fast.json"
    else
      echo "== vulkan (device $dev), fast precision, batch 32"
      "$b/tools/dg-bench" --models "$zoo" --device "$dev" --threads "$threads" \
        --fast --batch 32 --only resnet50,mobilenet_v2 --ort "$ort"
      python3 tools/gpu_models.py --batch 32 --only resnet50,mobilenet_v2
    fi ;;
  torch)
    echo "== PyTorch"
    python3 tools/gpu_models.py ;;
  plans)
    for kind in vulkan opencl; do
      dev=$(index_of "$kind")
      [ -n "$dev" ] || continue
      for m in resnet50 mobilenet_v2; do
        echo "== plan: $m on $kind (device $dev)"
        "$b/tools/dg-run" "$zoo/$m/model.onnx" --random --symbolic 1 \
          --device "$dev" --strict --plan --repeat 20 2>&1 | tail -n 80
      done
    done ;;
  *) echo "unknown step $step" >&2; exit 2 ;;
  esac
done
