# The shell side of the test harness, sourced by tests/run_tests.sh and
# tests/aarch64/run.sh: runs test programs and counts their lines. Every
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
