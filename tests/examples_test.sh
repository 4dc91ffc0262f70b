#!/bin/sh
# Runs the examples as tests: LeNet's accuracy checks on every device
# (examples/lenet --check) and the one-shot conv example. Usage:
#   tests/examples_test.sh BUILD_DIR      (DG_LENET_LIMIT=n for a subset)
set -u
b=${1:-build}
status=0
"$b/examples/lenet" --weights examples/lenet-weights --check || status=1
"$b/examples/conv_offload" || status=1
# The installed header, static library and pkg-config file build a program.
if [ "${DG_SKIP_INSTALL_TEST:-}" = "" ]; then
  dest=$(mktemp -d)
  if DESTDIR="$dest" meson install -C "$b" >/dev/null 2>&1; then
    pc=$(find "$dest" -name directgraph.pc | head -n 1)
    prefix=$dest$(sed -n 's/^prefix=//p' "$pc")
    libs=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --define-variable=prefix="$prefix" --libs --static directgraph)
    cflags=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --define-variable=prefix="$prefix" --cflags directgraph)
    if cc -std=c11 $cflags examples/conv_offload.c -o "$dest/conv_offload" \
      -Wl,-Bstatic -ldirectgraph -Wl,-Bdynamic $(echo "$libs" | sed 's/-ldirectgraph//') -lm &&
      "$dest/conv_offload" >/dev/null; then
      echo "ok - the installed header, static library and pkg-config file build and run conv_offload"
    else
      echo "FAIL - a program built against the installed library"
      status=1
    fi
  else
    echo "FAIL - meson install"
    status=1
  fi
  rm -rf "$dest"
fi
exit $status
