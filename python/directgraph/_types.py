"""dtypes, layouts, quantisation and descriptors between numpy and C."""

import ctypes

import numpy as np

from ._ffi import abi, c_array, enum_values, lib, text

# graph.h's dtype names ("f32", ...) and numpy's dtype for each.
_NUMPY = {"f32": np.float32, "f16": np.float16, "i8": np.int8,
          "u8": np.uint8, "i32": np.int32, "bool": np.bool_, "i64": np.int64}
DTYPES = {text(lib.dg_dtype_name(v)): v
          for v in enum_values("dg_dtype", "DG_DTYPE_").values()}
_DG_OF_NUMPY = {np.dtype(t): DTYPES[n] for n, t in _NUMPY.items()}
LAYOUTS = enum_values("dg_layout", "DG_LAYOUT_")


def enum(ctype, prefix, value, what):
    """The C value of an enum given by its short name ("tanh", case
    ignored), or by its integer value; ValueError naming the choices."""
    choices = enum_values(ctype, prefix)
    if isinstance(value, str) and value.lower() in choices:
        return choices[value.lower()]
    if isinstance(value, int) and value in choices.values():
        return value
    raise ValueError("%s: %r is not one of %s" %
                     (what, value, ", ".join(sorted(choices))))


def dtype_of(value, what="dtype"):
    """A dg_dtype from "f32"/"float32"/np.float32/np.dtype/a dg_dtype int."""
    if isinstance(value, int) and not isinstance(value, bool) \
            and value in DTYPES.values():
        return value
    if isinstance(value, str) and value in DTYPES:
        return DTYPES[value]
    try:
        dt = np.dtype(value)
    except TypeError:
        dt = None
    if dt in _DG_OF_NUMPY:
        return _DG_OF_NUMPY[dt]
    raise TypeError("%s: %r is not a dtype directgraph takes (%s, or their "
                    "numpy equivalents)" % (what, value, ", ".join(DTYPES)))


def dtype_name(dg_dtype):
    return text(lib.dg_dtype_name(dg_dtype))


def numpy_dtype(dg_dtype):
    return np.dtype(_NUMPY[dtype_name(dg_dtype)])


class Quant:
    """Quantisation of an int8/uint8/int32 tensor: real = scale * (q - zero).

    ``Quant(0.02, 3)`` is per-tensor; ``Quant(scales=[...],
    zero_points=[...], axis=0)`` is per channel along axis.
    """

    def __init__(self, scale=0.0, zero_point=0, *, scales=None,
                 zero_points=None, axis=0):
        self.scale, self.zero_point, self.axis = float(scale), int(
            zero_point), int(axis)
        self.scales = None if scales is None else [float(s) for s in scales]
        self.zero_points = None if zero_points is None else [
            int(z) for z in zero_points]

    @classmethod
    def of(cls, value):
        """A Quant from None, a Quant, a (scale, zero_point) pair or a
        scale alone."""
        if value is None or isinstance(value, Quant):
            return value
        if isinstance(value, (tuple, list)) and len(value) == 2:
            return cls(value[0], value[1])
        if isinstance(value, (int, float)):
            return cls(value)
        raise TypeError("quant: %r is not a Quant, (scale, zero_point) or a "
                        "scale" % (value,))

    @classmethod
    def from_c(cls, q):
        if q.channel_count:
            zs = None
            if q.channel_zero_points:
                zs = [q.channel_zero_points[i] for i in range(q.channel_count)]
            return cls(scales=[q.channel_scales[i]
                               for i in range(q.channel_count)],
                       zero_points=zs, axis=q.axis)
        if q.scale == 0 and q.zero_point == 0:
            return None
        return cls(q.scale, q.zero_point)

    def fill(self, q, keep):
        """Writes self into the dg_quant_params q; the arrays it points to
        are appended to keep (they must outlive the call)."""
        q.scale, q.zero_point, q.axis = self.scale, self.zero_point, self.axis
        if self.scales is not None:
            q.channel_count = len(self.scales)
            scales = c_array(ctypes.c_float, self.scales)
            q.channel_scales = ctypes.cast(scales,
                                           ctypes.POINTER(ctypes.c_float))
            keep.append(scales)
            if self.zero_points is not None:
                if len(self.zero_points) != len(self.scales):
                    raise ValueError("quant: %d zero points for %d scales" %
                                     (len(self.zero_points), len(self.scales)))
                zs = c_array(ctypes.c_int32, self.zero_points)
                q.channel_zero_points = ctypes.cast(
                    zs, ctypes.POINTER(ctypes.c_int32))
                keep.append(zs)

    def __eq__(self, other):
        return isinstance(other, Quant) and vars(self) == vars(other)

    def __repr__(self):
        if self.scales is not None:
            return "Quant(scales=%r, zero_points=%r, axis=%d)" % (
                self.scales, self.zero_points, self.axis)
        return "Quant(%r, %d)" % (self.scale, self.zero_point)


def quant_ptr(value, keep):
    """A pointer to dg_quant_params for value (None: NULL)."""
    q = Quant.of(value)
    if q is None:
        return None
    p = abi.dg_quant_params()
    q.fill(p, keep)
    keep.append(p)
    return ctypes.byref(p)


def desc(shape, dtype, quant=None, keep=None):
    """A new dg_tensor_desc; keep receives what it points to."""
    shape = tuple(int(d) for d in shape)
    if len(shape) > abi.DG_MAX_RANK:
        raise ValueError("shape %s: rank %d is above DG_MAX_RANK (%d)" %
                         (shape, len(shape), abi.DG_MAX_RANK))
    d = abi.dg_tensor_desc()
    d.dtype, d.rank = dtype_of(dtype), len(shape)
    for i, n in enumerate(shape):
        d.dims[i] = n
    q = Quant.of(quant)
    if q is not None:
        q.fill(d.quant, keep if keep is not None else [])
    return d


def shape_of(d):
    return tuple(d.dims[i] for i in range(d.rank))


def describe(shape, dtype):
    """"f32 [1, 3, 224, 224]": how messages show a tensor."""
    return "%s [%s]" % (dtype_name(dtype) if isinstance(dtype, int) else
                        dtype, ", ".join(str(d) for d in shape))
