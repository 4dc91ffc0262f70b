"""Contexts and their devices."""

import ctypes
import threading
import weakref
from dataclasses import dataclass, field

from . import errors
from ._ffi import abi, enum_values, lib, text
from ._types import DTYPES

KINDS = enum_values("dg_device_kind", "DG_DEVICE_")  # {"cpu": 1, ...}
LOG_LEVELS = enum_values("dg_log_level", "DG_LOG_")
OPS = enum_values("dg_op", "DG_OP_")


def kind_mask(kinds, what="kinds"):
    """A dg_device_kind mask from names ("cpu", "vulkan", ...); 0 for None."""
    if kinds is None:
        return 0
    if isinstance(kinds, str):
        kinds = [kinds]
    mask = 0
    for k in kinds:
        if k not in KINDS:
            raise ValueError("%s: %r is not a device kind (%s)" %
                             (what, k, ", ".join(KINDS)))
        mask |= KINDS[k]
    return mask


@dataclass(frozen=True)
class Device:
    """One device of a context, as dg_context_device_info (and dg-info)
    describe it."""

    index: int
    kind: str  # "cpu", "vulkan", "opencl", "npu"
    name: str
    driver: str
    dtypes: tuple  # ("f32", "f16", ...)
    is_simulator: bool
    int8_max_lsb_deviation: int
    f16_max_ulp_deviation: int
    cpu_hosted: bool  # a GPU API's driver on the host CPU (lavapipe, PoCL)
    context: object = field(repr=False, compare=False)

    def supports(self, op):
        """Whether the device has a kernel for op ("conv2d", ...)."""
        if op not in OPS:
            raise ValueError("op: %r is not an op (%s)" %
                             (op, ", ".join(sorted(OPS))))
        return bool(lib.dg_device_supports(self.context._ptr, self.index,
                                           OPS[op]))


class Context:
    """The devices of the machine and the caches shared by graphs and
    sessions (dg_context).

    ``kinds`` limits the devices opened ("cpu", "vulkan", "opencl", "npu";
    None: all present); ``threads`` the CPU's worker threads (0: one per
    core); ``log`` is called as log(level, message) with level one of
    "error", "warning", "info", "debug", at and above ``log_level``.
    A context may be used from several threads at once (graph.h's Threads
    paragraph); it lives as long as any graph or session made from it.
    """

    def __init__(self, kinds=None, *, threads=0, cache_dir=None,
                 disable_cache=False, device_timeout_ms=0, log=None,
                 log_level="warning"):
        o = abi.dg_context_options()
        o.device_kinds = kind_mask(kinds)
        o.cpu_threads = int(threads)
        o.disable_cache = int(bool(disable_cache))
        o.device_timeout_ms = int(device_timeout_ms)
        if cache_dir is not None:
            o.cache_dir = str(cache_dir).encode()  # read during the call
        self._log = None
        if log is not None:
            if log_level not in LOG_LEVELS:
                raise ValueError("log_level: %r is not one of %s" %
                                 (log_level, ", ".join(LOG_LEVELS)))
            names = {v: k for k, v in LOG_LEVELS.items()}

            def trampoline(user, level, msg):
                try:
                    log(names.get(level, str(level)), text(msg))
                except Exception:  # never unwind into C
                    pass

            # The callback lives as long as the context does.
            self._log = abi.dg_log_fn(trampoline)
            o.log = self._log
            o.log_level = LOG_LEVELS[log_level]
        out = ctypes.c_void_p()
        errors.check(lib.dg_context_create(ctypes.byref(o), ctypes.byref(out)),
                     None, "Context")
        self._ptr = out.value
        # Graphs and sessions hold the context (graph.h: it is freed after
        # the last of them), so this runs when all are gone.
        weakref.finalize(self, lib.dg_context_destroy, self._ptr)

    @property
    def devices(self):
        """The devices opened, CPU first, as Device records."""
        out = []
        info = abi.dg_device_info()
        for i in range(lib.dg_context_device_count(self._ptr)):
            errors.check(lib.dg_context_device_info(self._ptr, i,
                                                    ctypes.byref(info)),
                         None, "Context.devices")
            out.append(Device(
                info.index, text(lib.dg_device_kind_name(info.kind)),
                text(info.name), text(info.driver),
                tuple(n for n, v in sorted(DTYPES.items(), key=lambda kv: kv[1])
                      if info.dtypes >> v & 1),
                bool(info.is_simulator), info.int8_max_lsb_deviation,
                info.f16_max_ulp_deviation, bool(info.cpu_hosted), self))
        return out

    @property
    def absent(self):
        """{kind: why} for each device kind the context has no device of:
        not built, left out by ``kinds``, or the driver's reason."""
        out = {}
        for kind, value in KINDS.items():
            why = lib.dg_context_device_absence(self._ptr, value)
            if why is not None:
                out[kind] = text(why)
        return out

    @property
    def cache_dir(self):
        """The kernel cache folder in use, or None when caching is off."""
        p = lib.dg_context_cache_dir(self._ptr)
        return None if p is None else text(p)

    def graph(self, name=None):
        from .graph import Graph

        return Graph(name, context=self)

    def __repr__(self):
        return "Context(%s)" % ", ".join(
            "%s:%d" % (d.kind, d.index) for d in self.devices)


_default = None
_default_lock = threading.Lock()


def default_context():
    """The context used where none is given: every device present,
    created on first use and shared by the whole program."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Context()
        return _default
