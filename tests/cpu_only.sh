#!/bin/sh
# The CPU-only stage: configures build-cpu with every optional part off
# (-Dvulkan=disabled -Dopencl=disabled -Dnpu=disabled -Donnx=disabled;
# release, warnings as errors), builds it, and checks
# - that nothing of the other parts is in it: no program or object of
#   theirs among the build's targets, dg-info lists the CPU alone even
#   with lavapipe, PoCL and the NPU simulator (DG_NPU_DEVICE=sim) there
#   for the taking, and libdirectgraph.so neither needs their libraries
#   nor imports vk*/cl*/drm*/protobuf_c* symbols;
# - that the core tests pass on it: the builder, reference, session, CPU
#   kernel, differential, int8 golden, thread, out-of-memory, TVM-FFI and
#   DLPack programs, the examples (LeNet on 500 images), the tools, the
#   documentation's examples and the ONNX Runtime plugin EP; the tests
#   that need a part left out say "skipped:" or are not built.
# Prints the lines of each program prefixed "[cpu-only:NAME]"
# (tests/harness.sh, as tests/run_tests.sh does); a program that exits
# non-zero without a FAIL line counts as one failure. Ends with the line
# "N passed, N failed" (", N skipped" when some were). Run from anywhere:
#   tests/cpu_only.sh
# On 2 cores: about 20 s from nothing (the build 8-15 s), 10 s with the
# build done.
set -u
cd "$(dirname "$0")/.." || exit 1
b=build-cpu
opts="-Dvulkan=disabled -Dopencl=disabled -Dnpu=disabled -Donnx=disabled"
start=$(date +%s)
log=$(mktemp -d)
. tests/harness.sh
trap 'rm -rf "$log"' EXIT
trap 'exit 1' INT TERM
words() { tr '\n' ' ' | sed 's/ *$//'; } # lines to one line of words
# check LABEL WHAT: one case, passed when the command before succeeded.
check() {
  if [ $? -eq 0 ]; then result "$1" 1 "$2"; else result "$1" 0 "$2"; fi
}

# ---- build ----
# An existing build-cpu gets the options again (meson configure), so that
# it is CPU-only whatever it was set up with; reconfiguring changes
# nothing when they are already set.
built=0
if [ -d "$b" ]; then
  # shellcheck disable=SC2086
  meson configure "$b" -Dbuildtype=release -Dwerror=true $opts \
    >"$log/setup.txt" 2>&1 || cat "$log/setup.txt"
else
  # shellcheck disable=SC2086
  meson setup "$b" --buildtype=release -Dwerror=true $opts \
    >"$log/setup.txt" 2>&1 || {
    cat "$log/setup.txt"
    rm -rf "$b" # a half-configured folder would be taken as set up
  }
fi
if [ -d "$b" ]; then
  if ninja -C "$b" >"$log/build.txt" 2>&1; then
    built=1
    result cpu-only:build 1 "the release build with $opts, warnings as errors"
  else
    grep -E 'error|warning|FAILED' "$log/build.txt" | head -n 40
  fi
fi
[ "$built" -eq 1 ] || result cpu-only:build 0 "the release build with $opts"
compiled=$(date +%s)

# ---- nothing but the CPU ----
if [ "$built" -eq 1 ]; then
  # What the build defines (not what an earlier configuration of the
  # folder may have left on disk): no program of a part left out, and no
  # object compiled from its sources into the library.
  ninja -C "$b" -t targets all >"$log/targets.txt"
  left=$(grep -oE '^(tests/(test_vulkan|test_opencl|test_npu|test_npu_fake|test_onnx_node|test_onnx_import|libfake_npu\.so)|tools/(dg-run|npu-hw-check|npu-report)|[^:]*src_(target_vulkan|target_opencl|target_npu|onnx_onnx_model)[^:]*):' \
    "$log/targets.txt" | tr -d : | head -n 5 | words)
  grep -q '^tests/test_builder:' "$log/targets.txt" && [ -z "$left" ]
  check cpu-only:targets "no program or library object of Vulkan, OpenCL, the NPU or ONNX import among the build's targets${left:+ (found: $left)}"

  # dg-info: the devices a program sees. The Vulkan and OpenCL drivers
  # installed here (named in the line) are what a build with those
  # targets would list; the simulator is what DG_NPU_DEVICE=sim adds.
  icds=$(for f in /usr/share/vulkan/icd.d/*.json /etc/vulkan/icd.d/*.json \
    /etc/OpenCL/vendors/*.icd; do
    [ -e "$f" ] && basename "$f"
  done | words)
  info=$(DG_NPU_DEVICE=sim "$b/tools/dg-info" --json 2>&1)
  kinds=$(printf '%s\n' "$info" | grep '"index"' |
    sed -n 's/.*"kind": "\([a-z]*\)".*/\1/p' | words)
  [ "$kinds" = cpu ]
  check cpu-only:dg-info "dg-info lists the CPU alone with DG_NPU_DEVICE=sim (kinds: ${kinds:-none}; drivers installed: ${icds:-none})"
  absent=$(printf '%s\n' "$info" | grep -c '"absent": "not built into this library')
  [ "$absent" -eq 3 ]
  check cpu-only:dg-info-absent "dg-info says Vulkan, OpenCL and the NPU are not built into this library ($absent of 3)"

  # The shared library: the libraries it needs and the functions it
  # imports. pthread_create must be among those (the CPU's thread pool),
  # so that an empty list cannot pass for a clean one.
  so="$b/libdirectgraph.so"
  needed=$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | words)
  # shellcheck disable=SC2086
  bad=$(printf '%s\n' $needed | grep -E '^lib(vulkan|OpenCL|drm|protobuf-c)\.' | words)
  [ -n "$needed" ] && [ -z "$bad" ]
  check cpu-only:needed "libdirectgraph.so needs no Vulkan, OpenCL, libdrm or protobuf-c library (needs: $needed)"
  nm -D --undefined-only "$so" | awk '{ print $NF }' | sed 's/@.*//' >"$log/imports.txt"
  bad=$(grep -E '^(vk[A-Z]|cl[A-Z]|drm[A-Z]|protobuf_c_)' "$log/imports.txt" | head -n 5 | words)
  grep -qx pthread_create "$log/imports.txt" && [ -z "$bad" ]
  check cpu-only:imports "libdirectgraph.so imports no vk*, cl*, drm* or protobuf_c_* symbol ($(wc -l <"$log/imports.txt") imports${bad:+; found: $bad})"
  # The ONNX entry points stay (graph.h is the same in every build) and
  # say why they cannot work: a caller's program, built against the
  # library as docs_test.sh builds the documentation's examples.
  cat >"$log/onnx.c" <<'END'
#include <graph.h>
#include <stdio.h>
int main(void) {
  dg_context *ctx;
  dg_graph *g;
  dg_diagnostic d;
  if (dg_context_create(NULL, &ctx) != DG_OK)
    return 1;
  dg_status st = dg_onnx_load_memory(ctx, "", 0, NULL, &g, &d);
  printf("%s%s\n", st == DG_ERROR_UNSUPPORTED ? "" : "not unsupported: ",
         d.message);
  dg_context_destroy(ctx);
  return 0;
}
END
  msg=$(${CC:-cc} -std=c11 -Wall -Wextra -Werror -Iinclude "$log/onnx.c" \
    -o "$log/onnx" -L"$b" -ldirectgraph -Wl,-rpath,"$(pwd)/$b" 2>&1 &&
    "$log/onnx" 2>&1)
  printf '%s\n' "$msg" | grep -q '^onnx: .*no ONNX support (-Donnx=disabled)$'
  check cpu-only:onnx "dg_onnx_load_memory returns DG_ERROR_UNSUPPORTED naming -Donnx=disabled: $(printf '%s' "$msg" | head -n 3)"
fi

# ---- tests ----
if [ "$built" -eq 1 ]; then
  for t in test_builder test_op_table test_reference test_session test_cpu_kernels \
    test_differential test_int8_golden test_threads test_oom test_tvm_ffi; do
    if [ -x "$b/tests/$t" ]; then
      run "cpu-only:$t" "$b/tests/$t"
    else
      result "cpu-only:$t" 0 "$b/tests/$t was built"
    fi
  done
  if [ -x "$b/tests/test_dlpack_layout" ]; then
    run cpu-only:test_dlpack_layout "$b/tests/test_dlpack_layout"
  else
    skip cpu-only:test_dlpack_layout "not built: no dlpack/dlpack.h (libdlpack-dev)"
  fi
  run cpu-only:examples env DG_LENET_LIMIT=500 tests/examples_test.sh "$b"
  run cpu-only:tools tests/tools_test.sh "$b"
  run cpu-only:docs tests/docs_test.sh "$b"
  # The plugin EP, built in every configuration, against the ONNX Runtime
  # that tests/ort/fetch-ort.sh cached (run_tests.sh fetches it; this
  # stage does not reach the network): "skipped" without one.
  run cpu-only:ort_ep tests/ort/run_ort_tests.sh "$b"
fi
done_at=$(date +%s)
echo "# cpu-only: build $((compiled - start)) s, tests $((done_at - compiled)) s"

summary
