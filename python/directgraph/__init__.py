"""directgraph from Python: build a graph layer by layer, or load an ONNX
model, and run it on the best device of the machine.

A pure-Python face over libdirectgraph's C ABI (Python's own ctypes: no
compiled extension, nothing to install but numpy), whose declarations are
graph.h's own::

    import numpy as np
    import directgraph as dg

    g = dg.Graph("tiny")
    x = g.input("x", (1, 3, 32, 32))
    w = np.random.default_rng(0).standard_normal((8, 3, 3, 3), np.float32)
    y = g.conv2d(x, w, np.zeros(8, np.float32), padding="same_upper",
                 activation="relu")
    g.output("y", y)
    s = dg.Session(g)                        # or dg.Session("model.onnx")
    print(s.plan)                            # where each node runs, and why
    (out,) = s.run(None, {"x": np.ones((1, 3, 32, 32), np.float32)})
    assert s.verify({"x": np.ones((1, 3, 32, 32), np.float32)}).ok

Arrays go in and out as numpy arrays, read and written in place where
their dtype and layout already fit; host tensors with ``__dlpack__`` (torch)
are accepted as inputs without a copy, and outputs, being numpy arrays,
export DLPack (``torch.from_dlpack(out)``). Errors raise subclasses of
:class:`directgraph.Error` carrying the library's diagnostic. docs/python.md
is the tutorial.
"""

from ._ffi import abi as _abi, lib as _lib, library_path
from ._types import DTYPES, Quant
from .buffer import Buffer
from .context import KINDS, Context, Device, default_context
from .errors import (DeviceError, Error, FileError, GraphFailedError,
                     InvalidArgumentError, InvalidDtypeError,
                     InvalidShapeError, MismatchError, NotFoundError,
                     OutOfMemoryError, SizeOverflowError, UnsupportedError)
from .graph import Graph, Tensor
from .plan import Plan, PlanNode
from .session import (IOInfo, Pending, Session, VerifyReport, from_dlpack,
                      load_onnx)

__version__ = _lib.dg_version_string().decode()

__all__ = [
    "Buffer", "Context", "Device", "DTYPES", "DeviceError", "Error", "FileError",
    "Graph", "GraphFailedError", "IOInfo", "InvalidArgumentError",
    "InvalidDtypeError", "InvalidShapeError", "KINDS", "MismatchError",
    "NotFoundError", "OutOfMemoryError", "Pending", "Plan", "PlanNode", "Quant",
    "Session", "SizeOverflowError", "Tensor", "UnsupportedError",
    "VerifyReport", "default_context", "devices", "from_dlpack",
    "library_path", "load_onnx",
]


def devices():
    """The default context's devices."""
    return default_context().devices
