#!/bin/sh
# The installed library as a user meets it: `meson install` of BUILD_DIR
# into an empty DESTDIR, then, as if that were the real prefix:
# - only include/directgraph/graph.h is installed as a header;
# - pkg-config finds directgraph.pc through its own default search path
#   (the entries under the build's prefix, moved into the DESTDIR);
# - a program using `#include <graph.h>` and pkg-config's flags builds
#   against the shared library and runs with only the dynamic loader's own
#   directories under that prefix (from /etc/ld.so.conf) on its path;
# - the same program links the static library.
# Usage: tests/install_test.sh BUILD_DIR
set -u
b=${1:-build}
status=0
ok() { echo "ok - $*"; }
fail() {
  echo "FAIL - $*"
  status=1
}
dest=$(mktemp -d "${TMPDIR:-/tmp}/dg-install.XXXXXX")
trap 'rm -rf "$dest"' EXIT INT TERM
if ! DESTDIR="$dest" meson install -C "$b" --no-rebuild >"$dest/install.log" 2>&1; then
  fail "meson install -C $b"
  sed 's/^/# /' "$dest/install.log" | tail -n 20
  exit 1
fi
prefix=$(meson introspect "$b" --buildoptions |
  /usr/bin/python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"][0])')
root="$dest$prefix"

headers=$(cd "$root" && find include -type f | sort | tr '\n' ' ')
if [ "$headers" = "include/directgraph/graph.h " ]; then
  ok "installed headers: include/directgraph/graph.h only"
else
  fail "installed headers: expected include/directgraph/graph.h only, got: $headers"
fi

# pkg-config's own search path, the entries under our prefix moved into
# the DESTDIR: where it would look after a real install.
# The other entries stay as they are: the private requirements' own .pc
# files (vulkan, OpenCL...) live there.
pc_path=""
pc_rest=""
for d in $(pkg-config --variable pc_path pkg-config | tr ':' ' '); do
  case $d in
  "$prefix"/*) pc_path="$pc_path${pc_path:+:}$dest$d" ;;
  *) pc_rest="$pc_rest:$d" ;;
  esac
done
pc=$(find "$root" -name directgraph.pc | head -n 1)
if [ -z "$pc_path" ]; then
  echo "skipped: pkg-config does not search prefix $prefix by default; using $(dirname "$pc")"
  pc_path=$(dirname "$pc")
elif PKG_CONFIG_LIBDIR="$pc_path$pc_rest" pkg-config --exists directgraph; then
  ok "pkg-config finds directgraph.pc in its default path (${pc#"$dest"})"
else
  fail "pkg-config's default path under $prefix ($pc_path) misses ${pc#"$dest"}"
fi
pcflags() { PKG_CONFIG_LIBDIR="$pc_path$pc_rest" pkg-config --define-variable=prefix="$root" "$@" directgraph; }

# The loader's configured directories under our prefix, in the DESTDIR.
ld_path=""
for d in $(cat /etc/ld.so.conf /etc/ld.so.conf.d/*.conf 2>/dev/null | grep '^/'); do
  case $d in "$prefix"/*) ld_path="$ld_path${ld_path:+:}$dest$d" ;; esac
done
prog="$dest/conv_offload"
if cc -std=c11 $(pcflags --cflags) examples/conv_offload.c -o "$prog" \
  $(pcflags --libs) -lm 2>"$dest/cc.log"; then
  ok "conv_offload builds with #include <graph.h> and pkg-config's flags"
else
  fail "conv_offload against the installed library:"
  sed 's/^/# /' "$dest/cc.log" | head -n 20
fi
if [ -x "$prog" ]; then
  if [ -z "$ld_path" ]; then
    echo "skipped: the dynamic loader searches nothing under $prefix (/etc/ld.so.conf)"
  else
    where=$(LD_LIBRARY_PATH="$ld_path" ldd "$prog" | sed -n 's/.*libdirectgraph.so.0 => \([^ ]*\).*/\1/p')
    case $where in
    "$dest"/*) ok "the loader finds libdirectgraph.so.0 in its own directories (${where#"$dest"})" ;;
    *) fail "libdirectgraph.so.0 not found in the loader's directories under $prefix (${where:-not found})" ;;
    esac
    if LD_LIBRARY_PATH="$ld_path" "$prog" >"$dest/run.log" 2>&1; then
      ok "conv_offload runs against the installed shared library"
    else
      fail "conv_offload against the installed shared library:"
      sed 's/^/# /' "$dest/run.log" | tail -n 10
    fi
  fi
fi
# The version's one home is graph.h: the .pc file, the soname and
# dg_version_string() all say the header's DG_VERSION_*.
hv=$(sed -n 's/^#define DG_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' include/graph.h | paste -sd .)
printf '#include <graph.h>\n#include <stdio.h>\nint main(void) { puts(dg_version_string()); return 0; }\n' >"$dest/version.c"
if [ -n "$ld_path" ] && cc -std=c11 $(pcflags --cflags) "$dest/version.c" -o "$dest/version" $(pcflags --libs) 2>>"$dest/cc.log"; then
  rv=$(LD_LIBRARY_PATH="$ld_path" "$dest/version")
  pv=$(pcflags --modversion)
  so=$(ls "$dest$prefix"/lib*/libdirectgraph.so.* "$dest$prefix"/lib*/*/libdirectgraph.so.* 2>/dev/null | sed -n 's/.*libdirectgraph\.so\.\([0-9]*\.[0-9]*\.[0-9]*\)$/\1/p' | head -n 1)
  if [ -n "$hv" ] && [ "$rv" = "$hv" ] && [ "$pv" = "$hv" ] && [ "$so" = "$hv" ]; then
    ok "one version everywhere: graph.h, dg_version_string(), directgraph.pc and the soname say $hv"
  else
    fail "versions differ: graph.h '$hv', dg_version_string() '$rv', directgraph.pc '$pv', soname '$so'"
  fi
fi
libs=$(pcflags --libs --static)
if cc -std=c11 $(pcflags --cflags) examples/conv_offload.c -o "$prog.static" \
  -Wl,-Bstatic -ldirectgraph -Wl,-Bdynamic $(echo "$libs" | sed 's/-ldirectgraph//') -lm \
  2>"$dest/cc.log" && "$prog.static" >/dev/null 2>&1; then
  ok "conv_offload links the installed static library and runs"
else
  fail "conv_offload against the installed static library:"
  sed 's/^/# /' "$dest/cc.log" | head -n 20
fi
# The Python package: installed into Python's site folder under the
# prefix, it imports with only that folder on its path and loads the
# installed library (its path recorded relative to the package, so the
# DESTDIR copy finds the DESTDIR library).
pkg=$(find "$root" -path '*/directgraph/__init__.py' | head -n 1)
if [ -z "$pkg" ]; then
  if meson introspect "$b" --buildoptions | grep -q '"name": "python", "value": "disabled"'; then
    echo "skipped: the Python package is disabled (-Dpython=disabled)"
  else
    fail "the Python package was not installed under $prefix"
  fi
elif ! /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  echo "skipped: python3-numpy missing (the installed Python package)"
else
  site=$(dirname "$(dirname "$pkg")")
  if got=$(cd / && PYTHONPATH="$site" /usr/bin/python3 -c 'import directgraph as dg, numpy as np
g = dg.Graph(); x = g.input("x", (2, 2)); g.output("y", g.relu(x))
y, = dg.Session(g).run(None, {"x": -np.eye(2, dtype=np.float32)})
print(dg.library_path, dg.__version__, float(y.sum()))' 2>&1); then
    set -- $got
    case $1 in
    "$dest"/*) ok "import directgraph from ${site#"$dest"} loads ${1#"$dest"} (version $2), runs a graph" ;;
    *) fail "the installed Python package loaded $1, not the installed library" ;;
    esac
  else
    fail "import directgraph from the installed ${site#"$dest"}: $got"
  fi
fi
exit $status
