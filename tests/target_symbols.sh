#!/bin/sh
# Each target is a static library of its own (libdg_target_<name>.a, from
# meson.build): every symbol it defines for the rest of the library is
# dg_target_<name> (its vtable) or carries its prefix from
# src/targets/kinds.def (dg_<prefix>_), and none of them is exported from
# libdirectgraph.so (hidden visibility). One line per built target, then
# one for the shared library.
# Usage: tests/target_symbols.sh BUILD_DIR SOURCE_ROOT
set -u
b=$1
top=$2
status=0
command -v nm >/dev/null || { echo "skipped: nm (binutils) is not installed"; exit 0; }
kinds=$(sed -n 's/^DG_KIND([A-Z]*, *\([a-z0-9]*\), *"[a-z]*", *\([a-z0-9]*\))$/\1 \2/p' \
  "$top/src/targets/kinds.def")
[ -n "$kinds" ] || { echo "FAIL - no DG_KIND lines read from kinds.def"; exit 1; }
prefixes=""
found=0
printf '%s\n' "$kinds" | {
  while read -r name prefix; do
    lib="$b/libdg_target_$name.a"
    prefixes="$prefixes dg_${prefix}_"
    if [ ! -f "$lib" ]; then
      echo "# $name: not built here (no $lib)"
      continue
    fi
    found=$((found + 1))
    syms=$(nm -g --defined-only "$lib" | awk 'NF == 3 { print $3 }' | sort -u)
    n=$(printf '%s\n' "$syms" | grep -c .)
    bad=$(printf '%s\n' "$syms" |
      grep -v -e "^dg_target_${name}\$" -e "^dg_${prefix}_" | head -n 5 | tr '\n' ' ')
    if [ -z "$bad" ] && [ "$n" -gt 0 ]; then
      echo "ok - libdg_target_$name.a: all $n symbols are dg_target_$name or dg_${prefix}_*"
    else
      echo "FAIL - libdg_target_$name.a: $n symbols, without the prefix dg_${prefix}_: $bad"
      status=1
    fi
  done
  so="$b/libdirectgraph.so"
  if [ -f "$so" ] && [ "$found" -gt 0 ]; then
    pat=$(printf '%s\n' $prefixes | sed 's/^/^/' | paste -sd '|')
    leaked=$(nm -D --defined-only "$so" | awk 'NF == 3 { print $3 }' |
      grep -E "$pat|^dg_target_" | head -n 5 | tr '\n' ' ')
    if [ -z "$leaked" ]; then
      echo "ok - libdirectgraph.so exports no target's symbol (hidden)"
    else
      echo "FAIL - libdirectgraph.so exports target symbols: $leaked"
      status=1
    fi
  fi
  exit $status
}
