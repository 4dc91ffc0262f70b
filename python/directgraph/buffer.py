"""Device buffers (dg_buffer): a tensor kept in one device's memory,
bound to a session's input or output (Session.bind) so that runs read
and write it there, with no copy through the host."""

import ctypes
import weakref

import numpy as np

from . import errors
from ._ffi import abi, lib
from ._types import DTYPES, describe, desc, dtype_name, numpy_dtype
from .context import Device, default_context


def device_index(ctx, device):
    """A device index from a Device, an index or a kind name (the first
    device of that kind)."""
    if isinstance(device, Device):
        return device.index
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    if isinstance(device, str):
        for d in ctx.devices:
            if d.kind == device:
                return d.index
        raise errors.NotFoundError(
            "no %s device in the context (dg-info lists them)" % device,
            abi.DG_ERROR_NOT_FOUND, field="device", function="Buffer")
    raise TypeError("device: %r is not a Device, a device index or a kind "
                    "name" % (device,))


class Buffer:
    """``Buffer(shape, dtype="f32", device=0, *, context=None)``: a tensor
    of that dtype and shape in the memory of ``device`` (a Device, an
    index, or a kind name such as "vulkan": its first device). Contents
    are undefined until written. ``Buffer.from_numpy(array, device)``
    makes one holding an array; ``write(array)`` and ``numpy()`` copy
    into and out of it. Bound to a session (``Session.bind``), every run
    of the session reads or writes it on its device. The NPU has no
    buffers (UnsupportedError); a CPU buffer is host memory.
    """

    def __init__(self, shape, dtype="f32", device=0, *, context=None):
        self.context = context if context is not None else default_context()
        self.device = device_index(self.context, device)
        self.shape = tuple(int(d) for d in shape)
        d = desc(self.shape, dtype)
        self.dtype = dtype_name(d.dtype)
        out = ctypes.c_void_p()
        diag = abi.dg_diagnostic()
        errors.check(lib.dg_buffer_create(self.context._ptr, self.device,
                                          ctypes.byref(d), ctypes.byref(out),
                                          diag), diag, "Buffer")
        self._ptr = out.value
        self._finalizer = weakref.finalize(self, lib.dg_buffer_destroy,
                                           self._ptr)

    @classmethod
    def from_numpy(cls, array, device=0, *, context=None):
        a = np.ascontiguousarray(array)
        names = {np.dtype(numpy_dtype(v)): k for k, v in DTYPES.items()}
        if a.dtype not in names:
            raise errors.InvalidDtypeError(
                "Buffer.from_numpy: %s is not a directgraph dtype" % a.dtype,
                abi.DG_ERROR_INVALID_DTYPE, field="array",
                function="Buffer.from_numpy")
        b = cls(a.shape, names[a.dtype], device, context=context)
        b.write(a)
        return b

    def _array(self, array, fn):
        a = np.asarray(array)
        want = np.dtype(numpy_dtype(DTYPES[self.dtype]))
        if a.dtype != want or a.shape != self.shape:
            raise errors.InvalidShapeError(
                "%s: the array is %s %s, the buffer %s" %
                (fn, a.dtype, list(a.shape), describe(self.shape, self.dtype)),
                abi.DG_ERROR_INVALID_SHAPE, field="array", function=fn)
        return np.ascontiguousarray(a)

    def write(self, array):
        """Copies array (this buffer's dtype and shape) into the buffer."""
        a = self._array(array, "Buffer.write")
        diag = abi.dg_diagnostic()
        errors.check(lib.dg_buffer_write(self._ptr, a.ctypes.data, a.nbytes,
                                         diag), diag, "Buffer.write")

    def numpy(self):
        """The buffer's contents, copied into a new numpy array."""
        a = np.empty(self.shape, numpy_dtype(DTYPES[self.dtype]))
        diag = abi.dg_diagnostic()
        errors.check(lib.dg_buffer_read(self._ptr, a.ctypes.data, a.nbytes,
                                        diag), diag, "Buffer.numpy")
        return a

    def close(self):
        """Frees the buffer now (else when it is garbage; a session it is
        bound to keeps it alive)."""
        if self._ptr is not None:
            self._finalizer()
            self._ptr = None

    def __repr__(self):
        return "Buffer(%s on device %d)" % (describe(self.shape, self.dtype),
                                            self.device)
