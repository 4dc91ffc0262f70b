#!/bin/sh
# tools/demo.sh's own logic, with meson, ninja, the package setup and the
# demo replaced by stubs that log their arguments (the real demo takes
# minutes; CI builds everything else anyway):
# - a build/ left by an interrupted setup (no build.ninja) is configured
#   again, with --wipe where meson had begun, not left broken;
# - only the demo, the tools and the Python package are built, not the
#   test programs;
# - the demo runs, and the README's next step (dg-run) is named.
# Usage: tests/demo_test.sh
set -u
status=0
check() {
  if [ "$1" -eq 0 ]; then echo "ok - $2"; else echo "FAIL - $2"; status=1; fi
}
t=$(mktemp -d "${TMPDIR:-/tmp}/dg-demo-test.XXXXXX")
trap 'rm -rf "$t"' EXIT INT TERM
mkdir -p "$t/tree/tools" "$t/bin"
cp tools/demo.sh "$t/tree/tools/"
printf '#!/bin/sh\nexit 0\n' >"$t/tree/tools/setup-debian.sh"
cat >"$t/bin/meson" <<'STUB'
#!/bin/sh
echo "meson $*" >>"$DEMO_LOG"
d=""; for a in "$@"; do case $a in -*|setup) ;; *) d=$a ;; esac; done
mkdir -p "$d/examples" "$d/tools" "$d/meson-private"
: >"$d/build.ninja"
printf '#!/bin/sh\necho "lenet $*" >>"$DEMO_LOG"\n' >"$d/examples/lenet"
chmod +x "$d/examples/lenet"
printf '#!/bin/sh\n' >"$d/tools/dg-run"
chmod +x "$d/tools/dg-run"
echo "directgraph 0.1.0"
echo "  Targets"
echo "    vulkan: yes"
echo "Found ninja-1.11.1 at /usr/bin/ninja"
STUB
cat >"$t/bin/ninja" <<'STUB'
#!/bin/sh
case "$*" in
*"-t targets"*) printf 'examples/lenet: c_LINKER\ntools/dg-run: c_LINKER\ntools/dg-info: c_LINKER\npython/directgraph/_abi.py: CUSTOM_COMMAND\ntests/test_npu: c_LINKER\n' ;;
*) echo "ninja $*" >>"$DEMO_LOG" ;;
esac
STUB
chmod +x "$t/bin/meson" "$t/bin/ninja" "$t/tree/tools/setup-debian.sh"
run() {
  : >"$t/log"
  (cd "$t/tree" && PATH="$t/bin:$PATH" DEMO_LOG="$t/log" sh tools/demo.sh --limit 10 >"$t/out" 2>&1)
}
# An interrupted setup: build/ and meson-private/ exist, build.ninja not.
mkdir -p "$t/tree/build/meson-private"
run
grep -q '^meson setup --wipe build --buildtype=release$' "$t/log"
check $? "demo.sh configures again a build/ without build.ninja (--wipe)"
grep -q 'vulkan: yes' "$t/out"
check $? "demo.sh shows meson's summary of what is built"
grep -q '^ninja -C build examples/lenet tools/dg-info tools/dg-run python/directgraph/_abi.py$' "$t/log"
check $? "demo.sh builds the demo, the tools and the Python package only"
grep -q '^lenet --weights examples/lenet-weights --limit 10$' "$t/log" &&
  grep -q 'next: .*dg-run' "$t/out"
check $? "demo.sh runs the demo with its arguments and names the next step"
# A configured build/ is not configured again.
run
! grep -q '^meson' "$t/log"
check $? "demo.sh leaves a configured build/ as it is"
# A build/ with nothing of meson's in it: plain setup.
rm -rf "$t/tree/build" && mkdir "$t/tree/build"
run
grep -q '^meson setup build --buildtype=release$' "$t/log"
check $? "demo.sh configures an empty build/ without --wipe"
exit $status
