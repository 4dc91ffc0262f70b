#!/usr/bin/python3
"""The include check: the layers of src/ point one way (docs/architecture.md).

    core      src/core       includes nothing above it
    ops       src/ops        core
    targets   src/targets    the target contract (src/targets/*.h, .def),
                             ops and core; a target's folder
                             (src/targets/<name>/) its own files besides,
                             never another target's
    runtime   src/runtime    the above, a target's folder excepted: it sees
                             targets through the contract only
    front     src/front      anything below, and each other (the ORT EP
                             translates with the ONNX importer's translator)

Every #include "..." of every file under src/ is resolved as the compiler
does (the file's folder, then src/, then include/); a generated header is
resolved by its name to the folder of the layer that generates it
(GENERATED). An include that resolves nowhere is an error too, so that the
check cannot pass by not seeing a file.

    check-layers.py [SOURCE_ROOT]

Prints "ok - ..." or "FAIL - ..." lines (one per broken include, then a
summary); exit status 1 on any FAIL."""
import os
import re
import sys

LAYERS = {"core": 0, "ops": 1, "targets": 2, "runtime": 3, "front": 4}
# Headers the build generates, and the folder whose layer they belong to.
GENERATED = {
    "dg_targets_builtin.h": "src/targets",  # meson.build, from kinds.def
    "onnx.pb-c.h": "src/front/onnx",        # protoc-c, from onnx.proto
}
SOURCE_EXT = (".c", ".h", ".def", ".in")

root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
src = os.path.join(root, "src")
include = os.path.join(root, "include")
inc_re = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def where(path):
    """(layer, room) of a file: room is the target's or front end's folder,
    or the layer's name for its shared files."""
    rel = os.path.relpath(path, src).split(os.sep)
    if rel[0] == "..":
        return (-1, "include") if path.startswith(include + os.sep) else None
    if rel[0] not in LAYERS:
        return None
    room = rel[0]
    if rel[0] in ("targets", "front") and len(rel) > 2:
        room = rel[0] + "/" + rel[1]
    return LAYERS[rel[0]], room


def resolve(includer, name):
    for base in (os.path.dirname(includer), src, include):
        p = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(p):
            return p
    if os.path.basename(name) in GENERATED:
        return os.path.join(root, GENERATED[os.path.basename(name)],
                            os.path.basename(name))
    return None


failed = 0
checked = 0
files = 0
for dirpath, _, names in sorted(os.walk(src)):
    for n in sorted(names):
        if not n.endswith(SOURCE_EXT):
            continue
        path = os.path.join(dirpath, n)
        files += 1
        me = where(path)
        rel = os.path.relpath(path, root)
        if me is None:
            print("FAIL - %s: not in a layer's folder (%s)" %
                  (rel, ", ".join("src/" + k for k in LAYERS)))
            failed += 1
            continue
        text = open(path, encoding="utf-8", errors="replace").read()
        for name in inc_re.findall(text):
            checked += 1
            target = resolve(path, name)
            if target is None:
                print('FAIL - %s: #include "%s" resolves to no file' %
                      (rel, name))
                failed += 1
                continue
            it = where(target)
            why = None
            if it is None:
                why = "outside the layers"
            elif it[0] > me[0]:
                why = "points up, from %s to %s" % (me[1], it[1])
            elif me[0] == LAYERS["targets"] and "/" in it[1] and \
                    it[1] != me[1]:
                why = "reaches into another target (%s)" % it[1]
            elif me[0] == LAYERS["runtime"] and it[1].startswith("targets/"):
                why = "reaches into a target (%s) past the contract" % it[1]
            if why:
                print('FAIL - %s: #include "%s" %s' % (rel, name, why))
                failed += 1
print("%s - the layers point one way: %d includes of %d files under src/ "
      "checked, %d point up or sideways" %
      ("ok" if not failed else "FAIL", checked, files, failed))
sys.exit(1 if failed else 0)
