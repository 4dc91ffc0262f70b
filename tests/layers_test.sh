#!/bin/sh
# The include check (tools/check-layers.py) and the 800-line limit on
# this tree, then the include check on copies of
# src/ with one planted include each that breaks a rule: each must fail,
# naming the file, so that the check is known to see what it guards.
# Usage: tests/layers_test.sh [SOURCE_ROOT]
set -u
top=$(cd "${1:-.}" && pwd)
py=/usr/bin/python3
[ -x "$py" ] || py=python3
status=0
"$py" "$top/tools/check-layers.py" "$top" || status=1
# Small files with one job each: none under src/ over 800 lines.
long=$(find "$top/src" -name '*.c' -o -name '*.h' | xargs wc -l | awk '$2 != "total" && $1 > 800 { print $2 " (" $1 ")" }' | sed "s|$top/||")
if [ -z "$long" ]; then
  echo "ok - no C file under src/ is over 800 lines"
else
  echo "FAIL - C files under src/ over 800 lines: $long"
  status=1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dg-layers.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
plant() { # what, file (under src/), the include line, words the FAIL holds
  rm -rf "$tmp/t"
  mkdir -p "$tmp/t"
  cp -r "$top/src" "$top/include" "$tmp/t/"
  printf '%s\n' "$3" >>"$tmp/t/src/$2"
  out=$("$py" "$top/tools/check-layers.py" "$tmp/t")
  if [ $? -ne 0 ] && printf '%s\n' "$out" | grep -q "FAIL - src/$2: .*$4"; then
    echo "ok - the check fails on $1 (src/$2)"
  else
    echo "FAIL - the check missed $1 (src/$2): $(printf '%s' "$out" | tail -n 1)"
    status=1
  fi
}
plant "an include from core up to the runtime" core/ir.c \
  '#include "runtime/session.h"' "points up"
plant "an include from ops up to a target" ops/conv.c \
  '#include "targets/cpu/cpu_ops.h"' "points up"
plant "a target reaching into another" targets/cpu/cpu_target.c \
  '#include "targets/vulkan/vk_internal.h"' "another target"
plant "a target including the runtime" targets/opencl/cl_util.c \
  '#include "../../runtime/internal.h"' "points up"
plant "the runtime reaching into a target" runtime/placement.c \
  '#include "targets/npu/lower.h"' "past the contract"
plant "an include of no file" ops/pool.c '#include "ops/no_such.h"' \
  "resolves to no file"
exit $status
