"""Loading libdirectgraph: the cffi declarations and the library.

The declarations are graph.h's own (``_cdef.py``, generated at build time
by python/gen_cdef.py), so no type, constant or signature is written twice.
The library is the first of: ``$DG_LIBRARY`` (a path), the one the build
recorded in ``_paths.py`` (the build tree's, or the installed one after
``meson install``), and ``libdirectgraph.so.0`` from the dynamic loader's
search path.
"""

import os

import cffi

from ._cdef import CDEF

ffi = cffi.FFI()
ffi.cdef(CDEF)


def _candidates():
    env = os.environ.get("DG_LIBRARY")
    if env:
        return [env]
    try:
        from ._paths import LIBRARY
    except ImportError:  # the package run from the source tree
        LIBRARY = None
    found = [LIBRARY] if LIBRARY and os.path.exists(LIBRARY) else []
    return found + ["libdirectgraph.so.0"]


def _load():
    tried = []
    for path in _candidates():
        try:
            return ffi.dlopen(path), path
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    raise ImportError("directgraph: cannot load libdirectgraph: tried "
                      + "; ".join(tried)
                      + ". Build it (meson setup build && ninja -C build) and "
                      "import from build/python, install it, or set "
                      "DG_LIBRARY to the library's path")


lib, library_path = _load()


def enum_values(ctype, prefix):
    """{lower-case short name: value} of a graph.h enum, without its
    INVALID and COUNT_ entries: ("dg_unary_fn", "DG_UNARY_") gives
    {"tanh": 1, ...}."""
    out = {}
    for name, value in ffi.typeof(ctype).relements.items():
        short = name[len(prefix):].lower()
        if name.startswith(prefix) and short not in ("invalid", "count_"):
            out[short] = value
    return out


def text(chars):
    """A C string (char array or pointer) as str; "" for NULL."""
    if chars == ffi.NULL:
        return ""
    return ffi.string(chars).decode("utf-8", "replace")
