#!/bin/bash
# Device buffers on the GPU machine: test_buffers on NVIDIA's Vulkan
# (validation layer on) and OpenCL, then wall time against the device's
# own time with inputs and outputs in device buffers (no host copies):
# SGEMM/HGEMM (dg-bench --gpu, the *_res rows) and whole models
# (dg-bench --models --resident, batch 1 and 32), LeNet included.
# Usage: tests/gpu/resident_on_gpu.sh BUILD_DIR ZOO_DIR ORT_LIB [STEP...]
# STEP: test, zoo, gemm, models (default: all, in that order). Not a test:
# it prints figures and asserts nothing (test_buffers' lines aside).
set -u
b=$1 zoo=$2 ort=$3
shift 3
steps=${*:-test zoo gemm models}
threads=$(nproc)
export DG_CACHE_DIR=${DG_CACHE_DIR:-/tmp/dg-cache}
vk=$("$b/tools/dg-info" | awk '
  /^device [0-9]+:/ { d = $2; sub(":", "", d) }
  $1 == "kind:" && $2 == "vulkan" { print d; exit }')
for step in $steps; do
  case $step in
  test)
    echo "== test_buffers (validation on)"
    DG_VULKAN_VALIDATION=1 "$b/tests/test_buffers" 2>&1 | grep -Ev '^ok - (pthread|Intel|AMD)' ;;
  zoo)
    python3 tests/zoo/make_bench_zoo.py "$zoo" resnet50 mobilenet_v2 resnet18 lenet ;;
  gemm)
    [ -n "$vk" ] || { echo "skipped: no Vulkan device"; continue; }
    "$b/tools/dg-bench" --gpu --full --device "$vk" --only sgemm,hgemm,lenet \
      --weights examples/lenet-weights ;;
  models)
    [ -n "$vk" ] || { echo "skipped: no Vulkan device"; continue; }
    for batch in 1 32; do
      only=resnet50,mobilenet_v2,resnet18,lenet
      [ "$batch" = 1 ] || only=resnet50,mobilenet_v2
      echo "== models on Vulkan (device $vk), batch $batch, buffers bound"
      "$b/tools/dg-bench" --models "$zoo" --device "$vk" --threads "$threads" \
        --batch "$batch" --only "$only" --resident --ort "$ort"
    done ;;
  *) echo "unknown step $step" >&2; exit 2 ;;
  esac
done
