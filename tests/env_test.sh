#!/bin/sh
# The environment variables have one list, src/core/env.def: no file of
# the library calls getenv but src/core/env.c, every DG_ENV name is read
# through dg_env somewhere, and docs/environment.md is what
# tools/gen-env-doc.py writes from the list.
# Usage: tests/env_test.sh [SOURCE_ROOT]
set -u
top=$(cd "${1:-.}" && pwd)
py=/usr/bin/python3
[ -x "$py" ] || py=python3
status=0
calls=$(grep -rn 'getenv *(' "$top/src" --include='*.c' --include='*.h' |
  grep -v "^$top/src/core/env.c:" | sed "s|^$top/||")
if [ -z "$calls" ]; then
  echo "ok - no getenv call under src/ but src/core/env.c's"
else
  echo "FAIL - getenv called outside src/core/env.c (read it through dg_env and list it in env.def):"
  printf '%s\n' "$calls" | head -n 10 | sed 's/^/#   /'
  status=1
fi
ids=$(sed -n 's/^DG_ENV(\([A-Z0-9_]*\),.*/\1/p' "$top/src/core/env.def")
unused=""
for id in $ids; do
  grep -rq "DG_ENV_$id\b" "$top/src" --include='*.c' --include='*.h' || unused="$unused $id"
done
if [ -n "$ids" ] && [ -z "$unused" ]; then
  echo "ok - every one of the $(echo $ids | wc -w) variables of env.def is read through dg_env"
else
  echo "FAIL - env.def lists variables nothing reads:${unused:- (none listed)}"
  status=1
fi
if out=$("$py" "$top/tools/gen-env-doc.py" "$top" --check); then
  echo "ok - docs/environment.md is written from env.def"
else
  echo "FAIL - $out"
  status=1
fi
exit $status
