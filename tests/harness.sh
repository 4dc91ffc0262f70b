# The shell side of the test harness, sourced by tests/run_tests.sh,
# tests/aarch64/run.sh and tests/cpu_only.sh: runs test programs and
# counts their lines. Every
# program prints one line per case ("ok - ...", "FAIL - ...", "skipped:
# ..."); one that exits non-zero without a FAIL line (a crash, a
# sanitizer report, a hang past the timeout) counts as one failure.
# Needs $log, a scratch folder; keeps $passed, $failed and $skipped.
passed=0
failed=0
skipped=0

# run LABEL COMMAND...: runs the command under `timeout ${run_timeout:-600}`
# (a hang must not stall CI), shows its counted lines as "[LABEL] ok - ..."
# and, when it failed, its last lines behind "#" (shown, not counted
# again by a runner that runs this one as a stage). Lines a nested runner
# already tagged "[stage:program] ..." are counted and shown as they are.
run() {
  label=$1
  shift
  out="$log/out.txt"
  timeout "${run_timeout:-600}" "$@" >"$out" 2>&1
  rc=$?
  tag='^(\[[^] ]*\] )?'
  p=$(grep -cE "${tag}ok " "$out")
  f=$(grep -cE "${tag}FAIL" "$out")
  s=$(grep -cE "${tag}skipped:" "$out")
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    f=1
    echo "FAIL - $label exited with status $rc" >>"$out"
  fi
  grep -E "${tag}(ok|FAIL|skipped|#)" "$out" |
    sed -E "/^\[/!s/^/[$label] /" || true
  if [ "$f" -ne 0 ] || [ "$rc" -ne 0 ]; then
    echo "# ---- $label output ----"
    tail -n 40 "$out" | sed 's/^/#   /'
  fi
  passed=$((passed + p))
  failed=$((failed + f))
  skipped=$((skipped + s))
}

# registry PREFIX BUILD_DIR [SUITE]: runs through run every test that
# BUILD_DIR's meson.build registers (tests/meson.build, read with `meson
# introspect --tests`) but those in SUITE, in the order they are declared,
# each with its environment, working folder and timeout, as `meson test`
# would: the runner and meson test run one list. The label is PREFIX and
# the test's name, a "/" in it read as ":" (meson allows no ":" in a name:
# avx2/test_int8_golden prints as [avx2:test_int8_golden]). Leaves
# run_timeout unset.
registry() {
  _reg_prefix=$1
  _reg_list="$log/registry.txt"
  # One line a test: label, timeout, folder, and the command (env NAME=value
  # ... first when it has an environment) quoted for the shell.
  meson introspect "$2" --tests | /usr/bin/python3 -c '
import json, os, shlex, sys
build, skip = os.path.abspath(sys.argv[1]), sys.argv[2]
for t in json.load(sys.stdin):
    if skip and any(s.split(":", 1)[-1] == skip for s in t["suite"]):
        continue
    env = ["%s=%s" % kv for kv in t["env"].items()]
    cmd = (["env"] + env if env else []) + t["cmd"]
    print("\t".join([t["name"].replace("/", ":"), str(t["timeout"]),
                     t["workdir"] or build, " ".join(map(shlex.quote, cmd))]))
' "$2" "${3:-}" >"$_reg_list" || {
    result "${_reg_prefix}registry" 0 "the tests $2 registers (meson introspect $2 --tests)"
    return
  }
  _reg_top=$(pwd)
  _reg_tab=$(printf '\t')
  while IFS=$_reg_tab read -r _reg_name _reg_timeout _reg_dir _reg_cmd; do
    eval "set -- $_reg_cmd"
    if cd "$_reg_dir"; then
      run_timeout=$_reg_timeout
      run "$_reg_prefix$_reg_name" "$@" </dev/null
      cd "$_reg_top" || return
    else
      result "$_reg_prefix$_reg_name" 0 "its working folder $_reg_dir exists"
    fi
  done <"$_reg_list"
  unset run_timeout
}

# skip LABEL WHY: a case that cannot run here.
skip() {
  echo "[$1] skipped: $2"
  skipped=$((skipped + 1))
}

# result LABEL GOOD WHAT: one case the runner decides itself (GOOD is 1
# when it passed).
result() {
  if [ "$2" = 1 ]; then
    echo "[$1] ok - $3"
    passed=$((passed + 1))
  else
    echo "[$1] FAIL - $3"
    failed=$((failed + 1))
  fi
}

# The last line: "N passed, N failed" (", N skipped" when some were);
# returns non-zero when something failed.
summary() {
  if [ "$skipped" -gt 0 ]; then
    echo "$passed passed, $failed failed, $skipped skipped"
  else
    echo "$passed passed, $failed failed"
  fi
  [ "$failed" -eq 0 ]
}
