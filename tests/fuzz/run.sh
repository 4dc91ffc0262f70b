#!/bin/sh
# Builds a fuzzer with clang (libFuzzer, ASan, UBSan) and runs it on its
# seed corpus for the given number of seconds (default 600):
#   tests/fuzz/run.sh [seconds] [onnx|builder]      (default onnx)
# onnx: the importer (fuzz_onnx.c, seeds corpus/*.onnx); builder: random
# call sequences on the builder API (fuzz_builder.c, seeds
# corpus_builder/). found_onnx/ and found_builder/ hold what earlier runs
# found (libFuzzer -set_cover_merge=1 of their corpora), so that a run
# starts from their coverage. Needs clang and libclang-rt-14-dev
# (tools/setup-debian.sh --fuzz). New inputs found go to
# build-fuzz/corpus[_builder]; crashes to build-fuzz/.
set -eu
cd "$(dirname "$0")/../.."
secs=${1:-600}
target=${2:-onnx}
case $target in
  onnx) seeds=tests/fuzz/corpus found=tests/fuzz/found_onnx corpus=corpus ;;
  builder) seeds=tests/fuzz/corpus_builder found=tests/fuzz/found_builder
    corpus=corpus_builder ;;
  *) echo "run.sh: unknown fuzzer '$target' (onnx or builder)" >&2; exit 2 ;;
esac
if [ ! -d build-fuzz ]; then
  CC=clang meson setup build-fuzz --buildtype=debugoptimized \
    -Db_sanitize=address,undefined -Db_lundef=false \
    -Dc_args=-fsanitize=fuzzer-no-link >/dev/null
fi
# Only the static library: the other programs are not built for libFuzzer.
ninja -C build-fuzz libdirectgraph.a >/dev/null
lib=build-fuzz/libdirectgraph.a
clang -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude \
  tests/fuzz/fuzz_$target.c "$lib" \
  $(pkg-config --libs libprotobuf-c OpenCL libdrm vulkan 2>/dev/null) -lm -ldl \
  -pthread -o build-fuzz/fuzz_$target
mkdir -p build-fuzz/$corpus
cp "$seeds"/* "$found"/* build-fuzz/$corpus/
cd build-fuzz
# allocator_may_return_null: a huge request is an out-of-memory path to
# fuzz (malloc returns NULL), not an error of the sanitizer's own;
# max_allocation_size_mb=1024 makes every request over 1 GiB such a
# failure, below libFuzzer's 2 GiB limit (a fuzzed Tile can ask for a
# 2 GiB tensor, a valid model this machine cannot hold).
# UBSAN_OPTIONS halt_on_error=1: undefined behaviour is a crash, written
# out like one (without it UBSan reports each place once and goes on,
# and a run would end "0 crashes" over signed overflows).
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:max_allocation_size_mb=1024 ./fuzz_$target -max_total_time="$secs" \
  -rss_limit_mb=2048 -timeout=10 -max_len=65536 $corpus
