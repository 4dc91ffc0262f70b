#!/bin/sh
# Fetches ONNX Runtime's libonnxruntime.so.1 (linux x64) out of the npm
# package onnxruntime-node, the only packaged ORT reachable from CI (no
# PyPI, no Debian package). `npm pack` downloads the tarball without
# running its install script, which would try to download more and fail.
#
#   tests/ort/fetch-ort.sh [VERSION]      (default 1.30.0)
#
# The library lands in $DG_ORT_CACHE/<version>/libonnxruntime.so.1
# (default $HOME/.cache/directgraph-ci/ort); an existing copy is kept.
# Prints the library's path on success.
set -eu
version=${1:-1.30.0}
cache=${DG_ORT_CACHE:-${HOME:-/tmp}/.cache/directgraph-ci/ort}
dest="$cache/$version"
lib="$dest/libonnxruntime.so.1"
if [ -s "$lib" ]; then
  echo "$lib"
  exit 0
fi
command -v npm >/dev/null 2>&1 || { echo "fetch-ort: npm not found" >&2; exit 1; }
mkdir -p "$dest"
work=$(mktemp -d "$dest/.fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
# npm's own error lines (a TLS or network failure) go to stderr.
if ! (cd "$work" && npm pack --loglevel=error "onnxruntime-node@$version" >/dev/null); then
  echo "fetch-ort: npm pack onnxruntime-node@$version failed (see npm's error above)" >&2
  exit 1
fi
tgz=$(ls "$work"/onnxruntime-node-*.tgz)
tar xzf "$tgz" -C "$work" package/bin/napi-v6/linux/x64/libonnxruntime.so.1
# Rename into place last, so an interrupted fetch leaves no partial library.
mv "$work/package/bin/napi-v6/linux/x64/libonnxruntime.so.1" "$lib.part"
mv "$lib.part" "$lib"
echo "$lib"
