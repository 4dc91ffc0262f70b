#!/bin/sh
# The examples the documentation teaches, compiled and run as written: the
# worked example in include/graph.h's opening comment (the lines from
# "#include <graph.h>" to the closing "}" of main, without the comment's
# " *   " margin) and the first C block of README.md's "Quick start";
# and docs/onnx.md naming every row of the ONNX op table.
# Warnings are errors: an example that compiles only with warnings teaches
# the wrong thing. Usage: tests/docs_test.sh BUILD_DIR
# For a cross build (tests/aarch64/run.sh), CC is the cross compiler and
# MESON_EXE_WRAPPER the emulator that runs what it builds.
set -u
ew=${MESON_EXE_WRAPPER:-}
b=$(cd "${1:-build}" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dg-docs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
status=0

sed -n '/^ \*   #include <graph.h>$/,/^ \*   }$/s/^ \*   \{0,1\}//p' include/graph.h \
  >"$tmp/header_example.c"
awk '/^## Quick start/ { q = 1 } q && /^```c$/ { c = 1; next }
     c && /^```$/ { exit } c' README.md >"$tmp/readme_quick_start.c"

for ex in header_example readme_quick_start; do
  src="$tmp/$ex.c"
  what="$ex ($(wc -l <"$src") lines)"
  if [ "$(wc -l <"$src")" -lt 10 ] || ! grep -q 'int main' "$src"; then
    echo "FAIL - $what: the example was not found where this test looks"
    status=1
    continue
  fi
  if ! ${CC:-cc} -std=c11 -Wall -Wextra -Werror -Iinclude "$src" -o "$tmp/$ex" \
    -L"$b" -ldirectgraph -Wl,-rpath,"$b" -lm 2>"$tmp/$ex.log"; then
    echo "FAIL - $what compiles"
    sed 's/^/# /' "$tmp/$ex.log" | head -n 20
    status=1
    continue
  fi
  echo "ok - $what compiles with -Wall -Wextra -Werror"
  if $ew "$tmp/$ex" >"$tmp/$ex.out" 2>&1; then
    echo "ok - $what runs: $(grep -E '^y\[0\]' "$tmp/$ex.out")"
  else
    echo "FAIL - $what runs"
    sed 's/^/# /' "$tmp/$ex.out" | tail -n 20
    status=1
  fi
done
# docs/onnx.md names every row of the ONNX op table.
missing=""
for op in $(sed -n 's/^ *{"\([A-Za-z0-9]*\)", "[0-9 ]*", [0-9]*, [0-9]*, .*/\1/p' src/front/onnx/onnx_op_table.c); do
  grep -q "\`$op\`" docs/onnx.md || missing="$missing $op"
done
rows=$(grep -c '^ *{"[A-Za-z0-9]*", "[0-9 ]*", [0-9]*, [0-9]*, ' src/front/onnx/onnx_op_table.c)
if [ -n "$missing" ] || [ "$rows" -lt 20 ]; then
  echo "FAIL - docs/onnx.md names every op of src/front/onnx/onnx_op_table.c ($rows rows); missing:$missing"
  status=1
else
  echo "ok - docs/onnx.md names every op of src/front/onnx/onnx_op_table.c ($rows rows)"
fi
exit $status
