#!/bin/sh
# Builds the ONNX importer's fuzzer with clang (libFuzzer, ASan, UBSan) and
# runs it on the seed corpus for the given number of seconds (default 600).
# Needs clang and libclang-rt-14-dev (tools/setup-debian.sh --fuzz).
# New inputs found go to build-fuzz/corpus; crashes to build-fuzz/.
set -eu
cd "$(dirname "$0")/../.."
secs=${1:-600}
if [ ! -d build-fuzz ]; then
  CC=clang meson setup build-fuzz --buildtype=debugoptimized \
    -Db_sanitize=address,undefined -Db_lundef=false \
    -Dc_args=-fsanitize=fuzzer-no-link >/dev/null
fi
# Only the static library: the other programs are not built for libFuzzer.
ninja -C build-fuzz libdirectgraph.a >/dev/null
lib=build-fuzz/libdirectgraph.a
clang -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude \
  tests/fuzz/fuzz_onnx.c "$lib" \
  $(pkg-config --libs libprotobuf-c OpenCL libdrm vulkan 2>/dev/null) -lm -ldl \
  -pthread -o build-fuzz/fuzz_onnx
mkdir -p build-fuzz/corpus
cp tests/fuzz/corpus/*.onnx build-fuzz/corpus/
cd build-fuzz
ASAN_OPTIONS=detect_leaks=1 ./fuzz_onnx -max_total_time="$secs" \
  -rss_limit_mb=2048 -timeout=10 -max_len=65536 corpus
