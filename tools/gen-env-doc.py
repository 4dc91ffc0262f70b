#!/usr/bin/python3
"""Writes docs/environment.md from src/core/env.def, the one list of the
environment variables the library reads (tests/env_test.sh checks that the
committed page is what this writes).

    gen-env-doc.py [SOURCE_ROOT] [--check]

--check: print the differences and exit 1 instead of writing."""
import os
import re
import sys

args = [a for a in sys.argv[1:] if a != "--check"]
root = args[0] if args else "."
text = open(os.path.join(root, "src/core/env.def")).read()
text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
rows = []
literal = re.compile(r'"((?:[^"\\]|\\.)*)"|(,)')
for m in re.finditer(r"DG_ENV\((\w+),(.*?)\)\s*$", text, re.S | re.M):
    # The fields after the ID: string literals, adjacent ones joined as C
    # joins them, separated by commas.
    fields = [""]
    for lit, comma in literal.findall(m.group(2)):
        if comma:
            fields.append("")
        else:
            fields[-1] += lit
    if len(fields) != 3:
        sys.exit("env.def: DG_ENV(%s, ...) has %d fields, not 3" %
                 (m.group(1), len(fields)))
    rows.append(fields)
out = ["# Environment variables",
       "",
       "Every variable the library reads, from `src/core/env.def` (the one",
       "list: `tools/gen-env-doc.py` writes this page from it, and",
       "`tests/env_test.sh` fails when the page is stale or a part of the",
       "library calls `getenv` itself). The tools' and tests' own variables",
       "are in the README.",
       "",
       "| variable | read by | effect |",
       "| --- | --- | --- |"]
for name, reader, what in rows:
    out.append("| `%s` | %s | %s |" % (name, reader, what.replace("|", "\\|")))
page = "\n".join(out) + "\n"
path = os.path.join(root, "docs/environment.md")
if "--check" in sys.argv:
    have = open(path).read() if os.path.exists(path) else ""
    if have != page:
        print("docs/environment.md is not what tools/gen-env-doc.py writes "
              "from src/core/env.def; run it")
        sys.exit(1)
    sys.exit(0)
open(path, "w").write(page)
print("wrote %s (%d variables)" % (path, len(rows)))
