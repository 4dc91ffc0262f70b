#!/bin/sh
# meson install's last step: refresh the dynamic loader's cache so that a
# program linked with -ldirectgraph finds libdirectgraph.so.0 right after
# `meson install` into a system directory (Debian's meson 1.0 does not).
# Staged installs (DESTDIR) and installs by a user who cannot write the
# cache are left alone. Usage: install-ldconfig.sh LIBDIR
[ -z "${DESTDIR:-}" ] || exit 0
command -v ldconfig >/dev/null 2>&1 || exit 0
if [ "$(id -u)" -eq 0 ]; then
  ldconfig || echo "install-ldconfig.sh: ldconfig failed; run it as root" >&2
else
  echo "directgraph: installed into $1; as root, run ldconfig if the loader does not find libdirectgraph.so.0" >&2
fi
exit 0
