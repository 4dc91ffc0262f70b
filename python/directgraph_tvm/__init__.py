"""directgraph for Apache TVM (Relax BYOC).

Importable without TVM: ``emit_c_wrapper`` (the C code generator) and
``ffi_ctypes`` (calling libdirectgraph's TVM-FFI entry points from plain
Python) need neither TVM nor tvm_ffi. The TVM parts are imported on first
use:

* ``partition_for_directgraph(mod)`` registers the ``directgraph.*``
  patterns and offloads the matching Relax subgraphs (and registers the
  ``relax.ext.directgraph`` code generator, which ``relax.build`` runs);
* ``register_codegen()`` only registers the code generator.

Build with ``ex.export_library(path, options=["-ldirectgraph"])`` so the
emitted wrappers link against libdirectgraph.
"""

from .emit import OPS, emit_c_wrapper

__all__ = ["OPS", "emit_c_wrapper", "partition_for_directgraph", "register_codegen",
           "PATTERN_NAMES"]

PATTERN_NAMES = tuple("directgraph." + op for op in OPS)


def partition_for_directgraph(mod, **kwargs):
    from .patterns import partition_for_directgraph as partition

    return partition(mod, **kwargs)


def register_codegen():
    from .codegen import register_codegen as register

    return register()
