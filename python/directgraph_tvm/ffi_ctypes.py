"""Calling libdirectgraph's TVM-FFI entry points from Python without TVM.

ctypes mirrors of TVMFFIAny and DLTensor (the layouts of
``src/front/tvm/tvm_ffi_abi.h``), numpy arrays wrapped as type-7 DLTensor*
arguments, and ``call()`` which raises with the library's message. Used by
the tests and by anyone who wants the kernels from plain Python.
"""

import ctypes
import os

TYPE_NONE, TYPE_INT, TYPE_FLOAT, TYPE_DLTENSOR_PTR, TYPE_TENSOR = 0, 1, 3, 7, 70
KDL_CPU, KDL_CUDA = 1, 2


class Payload(ctypes.Union):
    _fields_ = [("v_int64", ctypes.c_int64), ("v_float64", ctypes.c_double),
                ("v_ptr", ctypes.c_void_p)]


class Any(ctypes.Structure):
    _fields_ = [("type_index", ctypes.c_int32), ("zero_padding", ctypes.c_uint32),
                ("v", Payload)]


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice),
                ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


assert ctypes.sizeof(Any) == 16 and ctypes.sizeof(DLTensor) == 48

SAFE_CALL = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(Any),
                             ctypes.c_int32, ctypes.POINTER(Any))

_DL_CODES = {"f": 2, "i": 0, "u": 1}


def dltensor(array, keep):
    """A DLTensor over a numpy array (strides in elements, as DLPack wants);
    the ctypes objects that must outlive the call are appended to keep."""
    shape = (ctypes.c_int64 * max(array.ndim, 1))(*array.shape)
    strides = (ctypes.c_int64 * max(array.ndim, 1))(
        *[s // array.itemsize for s in array.strides])
    t = DLTensor(array.ctypes.data, DLDevice(KDL_CPU, 0), array.ndim,
                 DLDataType(_DL_CODES[array.dtype.kind], array.itemsize * 8, 1),
                 shape, strides, 0)
    keep += [shape, strides, t, array]
    return t


def pack(values):
    """TVMFFIAny array from numpy arrays (type 7), ints, floats, None,
    or ready-made DLTensor structures."""
    keep = []
    anys = (Any * max(len(values), 1))()
    for i, v in enumerate(values):
        if v is None:
            anys[i].type_index = TYPE_NONE
        elif isinstance(v, bool) or isinstance(v, int):
            anys[i].type_index, anys[i].v.v_int64 = TYPE_INT, int(v)
        elif isinstance(v, float):
            anys[i].type_index, anys[i].v.v_float64 = TYPE_FLOAT, v
        else:
            t = v if isinstance(v, DLTensor) else dltensor(v, keep)
            keep.append(t)
            anys[i].type_index = TYPE_DLTENSOR_PTR
            anys[i].v.v_ptr = ctypes.addressof(t)
    return anys, keep


class Library:
    """A library exporting __tvm_ffi_* functions and dg_tvm_last_error."""

    def __init__(self, path, last_error_from=None):
        self.dll = ctypes.CDLL(os.fspath(path))
        err_dll = last_error_from.dll if last_error_from else self.dll
        self._last_error = err_dll.dg_tvm_last_error
        self._last_error.restype = ctypes.c_char_p

    def last_error(self):
        return self._last_error().decode()

    def function(self, name):
        return SAFE_CALL((f"__tvm_ffi_{name}", self.dll))

    def call_status(self, name, *values):
        """(return code, message) without raising."""
        anys, keep = pack(values)
        result = Any(TYPE_INT, 0, Payload(v_int64=99))
        rc = self.function(name)(None, anys, len(values), ctypes.byref(result))
        del keep
        if rc == 0 and result.type_index != TYPE_NONE:
            return -100, "result was not set to None"
        return rc, (self.last_error() if rc else "")

    def call(self, name, *values):
        rc, msg = self.call_status(name, *values)
        if rc:
            raise RuntimeError(f"__tvm_ffi_{name} returned {rc}: {msg}")
