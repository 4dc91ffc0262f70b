"""Loading libdirectgraph through ctypes, with graph.h's own declarations.

``_abi.py`` (generated at build time by python/gen_abi.py from graph.h)
holds every struct, enum and function signature, so nothing is declared
twice and nothing beyond Python's ctypes is needed. The library is the
first of: ``$DG_LIBRARY`` (a path), the one the build recorded in
``_paths.py`` (the build tree's, or the installed one after ``meson
install``), and ``libdirectgraph.so.0`` from the dynamic loader's path.
"""

import ctypes
import os

from . import _abi as abi


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
            return abi.bind(ctypes.CDLL(path)), path
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
        except AttributeError as e:  # a library older than this graph.h
            tried.append("%s (%s: not the version of this package)" %
                         (path, e))
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
    for name, value in abi.ENUMS[ctype].items():
        short = name[len(prefix):].lower()
        if name.startswith(prefix) and short not in ("invalid", "count_"):
            out[short] = value
    return out


def enum_name(ctype, value):
    """The C name of an enum value ("DG_ERROR_IO"), or ""."""
    for name, v in abi.ENUMS[ctype].items():
        if v == value:
            return name
    return ""


def text(chars):
    """A C string (bytes, a char array's value, or None) as str."""
    if chars is None:
        return ""
    if isinstance(chars, bytes):
        return chars.decode("utf-8", "replace")
    return bytes(chars).split(b"\0", 1)[0].decode("utf-8", "replace")


def address(array):
    """A c_void_p to a numpy array's first byte (the array must stay
    alive, and unmoved, for as long as C reads it)."""
    return ctypes.c_void_p(array.ctypes.data)


def c_array(ctype, values):
    """A ctypes array of values (at least one element, so that an empty
    list still gives a valid pointer)."""
    values = list(values)
    return (ctype * max(len(values), 1))(*values)
