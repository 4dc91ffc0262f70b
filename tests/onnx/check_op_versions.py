#!/usr/bin/python3
"""Every row of the ONNX importer's op table (src/front/onnx/onnx_op_table.c)
against the ONNX package's own operator schemas:

  - the row's versions are exactly the since_versions ONNX defines for the
    op in the default domain, through opset 22 (the importer's newest) or
    the package's newest opset when it is older (Debian 12's onnx 1.12
    knows opsets up to 17: the versions after it are checked by a newer
    package, as on the GPU machine);
  - the handler reads from its row's first version on to the newest, so
    that no operator is refused at an opset where its semantics did not
    change; the exceptions are listed below, each with its reason.

    check_op_versions.py SOURCE_ROOT

One line per row, "ok - ..." or "FAIL - ...", or "skipped: ..." without
the onnx package."""
import os
import re
import sys

# Rows whose handler stops before the op's newest version, and why.
STOPS_EARLY = {
    "Upsample": "version 10 deprecates it for Resize, which the importer takes",
}
MAX_OPSET = 22

try:
    import onnx
    from onnx import defs
except ImportError:
    print("skipped: the onnx package is missing (Debian's python3-onnx; "
          "tools/setup-debian.sh installs it)")
    sys.exit(0)

root = sys.argv[1] if len(sys.argv) > 1 else "."
src = open(os.path.join(root, "src/front/onnx/onnx_op_table.c")).read()
rows = re.findall(r'\{"(\w+)", "([\d ]+)", (\d+), (\d+),', src)
known = min(MAX_OPSET, defs.onnx_opset_version())
history = {}
for s in defs.get_all_schemas_with_history():
    if s.domain in ("", "ai.onnx"):
        history.setdefault(s.name, set()).add(s.since_version)
failed = 0


def report(ok, msg):
    global failed
    print("%s - %s" % ("ok" if ok else "FAIL", msg))
    failed += not ok


report(len(rows) > 100, "the op table has %d rows (onnx %s, opsets up to %d "
       "checked)" % (len(rows), onnx.__version__, known))
for name, versions, lo, hi in rows:
    ours = [int(v) for v in versions.split()]
    lo, hi = int(lo), int(hi)
    theirs = sorted(v for v in history.get(name, ()) if v <= known)
    mine = [v for v in ours if v <= known]
    why = []
    if ours != sorted(set(ours)) or any(v > MAX_OPSET for v in ours):
        why.append("versions %s are not ascending within 1..%d" %
                   (versions, MAX_OPSET))
    if mine != theirs:
        why.append("versions up to opset %d are %s, ONNX's %s" %
                   (known, mine, theirs))
    if lo not in ours or hi not in ours or lo > hi:
        why.append("the handler's %d..%d are not among its versions" %
                   (lo, hi))
    if hi != ours[-1] and name not in STOPS_EARLY:
        why.append("the handler stops at version %d, before the newest (%d)"
                   % (hi, ours[-1]))
    if hi == ours[-1] and name in STOPS_EARLY:
        why.append("listed as stopping early, but reads the newest version")
    note = " (stops early: %s)" % STOPS_EARLY[name] if name in STOPS_EARLY else ""
    report(not why, "%s: versions %s, read %d..%d%s%s" %
           (name, versions, lo, hi, note, ": " + "; ".join(why) if why else ""))
sys.exit(1 if failed else 0)
