#!/bin/bash
# Everything the GPU machine checks and measures, in one command (see
# README): the test programs on NVIDIA Vulkan (validation layer on) and
# OpenCL, LeNet on every device on the whole test set, dg-bench's GPU suite
# with PyTorch's cuBLAS/cuDNN measured in the same run, the plugin EP from
# Python onnxruntime, real torch DLPack tensors through the TVM-FFI entry
# points, and today's PyTorch exports against ORT
# (tests/gpu/torch_exports.py). Usage: tests/gpu/run_on_gpu.sh BUILD_DIR
# [--quick]
set -u
b=${1:-build}
quick=${2:-}
export LD_LIBRARY_PATH=/opt/dgdeps/usr/lib/x86_64-linux-gnu/openblas-pthread:${LD_LIBRARY_PATH:-}
export DG_LENET_DEVICE_LIMIT=10000 DG_CACHE_DIR=/tmp/dg-cache
"$b/tools/dg-info"
for t in test_reference test_int8_golden test_session test_differential \
  test_opencl test_vulkan test_onnx_node; do
  [ -x "$b/tests/$t" ] || continue
  echo "== $t"
  out=$(DG_VULKAN_VALIDATION=1 "$b/tests/$t" 2>&1)
  echo "$out" | grep -Ev '^ok ' | tail -n 20
  echo "   $(echo "$out" | grep -c '^ok') ok, $(echo "$out" | grep -c '^FAIL') FAIL"
done
# The validation layer the GPU machine gets (Debian's 1.3.239) predates
# VK_KHR_cooperative_matrix, so under it the NV kernels run; the KHR ones
# are tested with validation off.
# DG_VK_CONV_GATHER: every f16 conv through the channel-blocked copies (the
# default where they fit), the explicit im2col, or the implicit gather.
# DG_VK_SPLITK=3: every KHR f16 GEMM and conv (but those through the
# im2col) split in 3 slices of K.
for mode in DG_VK_CONV_GATHER=blocked DG_VK_CONV_GATHER=im2col \
  DG_VK_CONV_GATHER=implicit DG_VK_SPLITK=3 \
  "DG_VK_CONV_GATHER=implicit DG_VK_SPLITK=3"; do
  echo "== test_vulkan, validation off (KHR cooperative-matrix kernels), $mode"
  out=$(env DG_VULKAN_VALIDATION=0 $mode "$b/tests/test_vulkan" 2>&1)
  echo "$out" | grep -Ev '^ok ' | tail -n 20
  echo "   $(echo "$out" | grep -c '^ok') ok, $(echo "$out" | grep -c '^FAIL') FAIL"
done
echo "== lenet --check"
"$b/examples/lenet" --weights examples/lenet-weights --data "${DG_DATA_DIR:-/usr/share/datasets/fashion-mnist}" --check
echo "== dg-bench --gpu"
# DG_GPU_PEAK=F32,F16 (TFLOP/s; 67,989 for an H200 SXM) adds each row's
# fraction of the peak.
# dg-bench's own default is quick; without --quick here, its --full.
"$b/tools/dg-bench" --gpu ${quick:---full} --weights examples/lenet-weights \
  ${DG_GPU_PEAK:+--gpu-peak "$DG_GPU_PEAK"}
echo "== torch peers"
python3 tools/gpu_peers.py $quick
echo "== ORT plugin EP from Python"
python3 tests/ort/test_python_ep.py "$b/src/front/ort_ep/libdirectgraph_ort_ep.so" examples/lenet-weights
echo "== torch DLPack through TVM-FFI"
python3 tests/tvm/torch_dlpack.py "$b/libdirectgraph.so"
echo "== today's PyTorch exports: DenseNet-121 (both exporters, opsets 17 and 20), torch.ao QDQ ResNet-18 and MobileNetV2, on every device"
python3 tests/gpu/torch_exports.py "$b" 0 1 2
