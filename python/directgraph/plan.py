"""The plan: where each node runs and why, as records and as pictures."""

import ctypes
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass

from . import errors
from ._ffi import abi, enum_values, lib, text

# dg_plan_write takes a FILE *: the C library's fdopen and fclose on a
# temporary file's descriptor make one.
_libc = ctypes.CDLL(None)
_libc.fdopen.restype, _libc.fdopen.argtypes = ctypes.c_void_p, [
    ctypes.c_int, ctypes.c_char_p]
_libc.fclose.restype, _libc.fclose.argtypes = ctypes.c_int, [ctypes.c_void_p]

_REASONS = {v: k for k, v in enum_values("dg_placement_reason",
                                         "DG_REASON_").items()}
FORMATS = enum_values("dg_plan_format", "DG_PLAN_FORMAT_")


@dataclass(frozen=True)
class PlanNode:
    """One node of the plan (dg_plan_node)."""

    index: int
    name: str
    op: str
    device_index: int
    device_kind: str
    device_name: str
    reason: str  # only_device, cheapest, pinned, fallback
    reason_text: str
    estimated_us: float
    measured_us: float  # the last run's, with profile=True; else 0
    bytes_in: int
    bytes_out: int
    bytes_transferred: int
    int8_max_lsb_deviation: int
    f16_max_ulp_deviation: int
    compute_dtype: str  # "f16" where precision="fast_f16" lowered it


class Plan(list):
    """A list of PlanNode records; str() is the library's table, dot()
    its Graphviz text, svg() that drawn by Graphviz's dot (shown inline
    in Jupyter)."""

    @classmethod
    def of(cls, ptr):
        plan = cls()
        plan._ptr = ptr
        n = abi.dg_plan_node()
        for i in range(lib.dg_plan_node_count(ptr)):
            errors.check(lib.dg_plan_get_node(ptr, i, n), None,
                         "dg_plan_get_node")
            plan.append(PlanNode(
                n.node_index, text(n.node_name), text(lib.dg_op_name(n.op)),
                n.device_index, text(lib.dg_device_kind_name(n.device_kind)),
                text(n.device_name), _REASONS.get(n.reason, "?"),
                text(n.reason_text), n.estimated_us, n.measured_us,
                n.bytes_in, n.bytes_out, n.bytes_transferred,
                n.int8_max_lsb_deviation, n.f16_max_ulp_deviation,
                text(lib.dg_dtype_name(n.compute_dtype))))
        plan.precision = text(lib.dg_plan_precision(ptr))
        return plan

    def _write(self, fmt):
        with tempfile.TemporaryFile("w+b") as f:
            fp = _libc.fdopen(os.dup(f.fileno()), b"w")
            if not fp:
                raise errors.FileError("Plan: fdopen failed")
            st = lib.dg_plan_write(self._ptr, FORMATS[fmt], fp)
            _libc.fclose(fp)
            errors.check(st, None, "Plan")
            f.seek(0)
            return f.read().decode("utf-8", "replace")

    def table(self):
        return self._write("table")

    def dot(self):
        return self._write("dot")

    def svg(self):
        """The plan drawn by Graphviz (the `dot` program, Debian's
        graphviz package)."""
        exe = shutil.which("dot")
        if exe is None:
            raise errors.UnsupportedError(
                "Plan.svg: Graphviz's `dot` is not on PATH (apt-get install "
                "graphviz); Plan.dot() gives the text to draw elsewhere")
        done = subprocess.run([exe, "-Tsvg"], input=self.dot().encode(),
                              capture_output=True, check=False)
        if done.returncode:
            raise errors.Error("Plan.svg: dot failed: %s" %
                               done.stderr.decode("utf-8", "replace").strip())
        return done.stdout.decode("utf-8", "replace")

    def _repr_svg_(self):  # Jupyter
        return self.svg() if shutil.which("dot") else None

    def __str__(self):
        return self.table()
