"""Sessions: a compiled graph that runs, in the shape ONNX Runtime's
InferenceSession has (``run(output_names, feeds)``, ``get_inputs()``)."""

import ctypes
import os
import weakref
from dataclasses import dataclass

import numpy as np

from . import errors
from ._ffi import abi, address, c_array, enum_values, lib, text
from ._types import (DTYPES, Quant, describe, dtype_name, enum,
                     numpy_dtype, shape_of)
from .context import KINDS, Device, default_context, kind_mask
from .plan import Plan

POLICIES = enum_values("dg_policy", "DG_POLICY_")
_LAYOUT_NAMES = {v: k for k, v in enum_values("dg_layout",
                                              "DG_LAYOUT_").items()}


@dataclass(frozen=True)
class IOInfo:
    """A graph input or output: name, shape (NCHW), dtype, layout, quant.
    ``type`` and ``shape`` read as ONNX Runtime's NodeArg does."""

    name: str
    shape: tuple
    dtype: str
    layout: str
    quant: object

    @property
    def type(self):
        return "tensor(%s)" % self.dtype

    @classmethod
    def get(cls, fn, ptr, index):
        info = abi.dg_io_info()
        errors.check(fn(ptr, index, info), None, "io info")
        return cls(text(info.name), shape_of(info.desc),
                   dtype_name(info.desc.dtype),
                   _LAYOUT_NAMES.get(info.layout, "?"),
                   Quant.from_c(info.desc.quant))

    def io_shape(self):
        """The shape the caller's array has: NHWC when bound as NHWC."""
        s = self.shape
        if self.layout == "nhwc" and len(s) == 4:
            return (s[0], s[2], s[3], s[1])
        return s


@dataclass(frozen=True)
class VerifyReport:
    """dg_session_verify's answer: ok, and the first failing (or worst)
    node with its errors against the tolerance."""

    ok: bool
    nodes_checked: int
    node_index: int
    node: str
    op: str
    max_abs_error: float
    max_rel_error: float
    max_lsb_error: int
    tolerance: float


def load_onnx(model, *, context=None, symbolic=None, freeze=None,
              external_data_dir=None):
    """A Graph from an ONNX model: a path or the file's bytes.

    ``symbolic`` gives every symbolic dimension (a dynamic batch) that
    value; ``freeze`` maps graph input names to arrays fixed at import.
    """
    from .graph import Graph
    from ._types import desc

    ctx = context or default_context()
    o = abi.dg_onnx_options()
    keep = []
    if symbolic is not None:
        o.symbolic_dim_value = int(symbolic)
    if freeze:
        consts = (abi.dg_onnx_constant * len(freeze))()
        for i, (name, value) in enumerate(freeze.items()):
            a = np.ascontiguousarray(value)
            d = desc(a.shape, a.dtype, None, keep)
            keep += [a, d]
            consts[i].name = name.encode()
            consts[i].desc = ctypes.pointer(d)
            consts[i].data = a.ctypes.data
        o.constants = ctypes.cast(consts, ctypes.POINTER(abi.dg_onnx_constant))
        o.constant_count = len(freeze)
        keep.append(consts)
    if external_data_dir is not None:
        o.external_data_dir = os.fsencode(external_data_dir)
    out = ctypes.c_void_p()
    diag = abi.dg_diagnostic()
    if isinstance(model, (bytes, bytearray, memoryview)):
        buf = np.frombuffer(model, np.uint8)
        st = lib.dg_onnx_load_memory(ctx._ptr, address(buf), buf.nbytes, o,
                                     ctypes.byref(out), diag)
    else:
        st = lib.dg_onnx_load(ctx._ptr, os.fsencode(model), o,
                              ctypes.byref(out), diag)
    if st != abi.DG_OK:
        e = errors.from_diagnostic(st, diag, "load_onnx")
        # The library's hint names the C option; say the Python one.
        e.args = (e.message,) = (e.message.replace(
            "set dg_onnx_options.symbolic_dim_value",
            "give it a value with symbolic=N (load_onnx, Session)"),)
        raise e
    return Graph(context=ctx, _ptr=out.value)


def _devices(ctx, devices):
    """Device indices from Device objects, indices or kind names."""
    if devices is None:
        return [], 0
    if isinstance(devices, (str, int, Device)):
        devices = [devices]
    indices, kinds = [], 0
    for d in devices:
        if isinstance(d, str):
            kinds |= kind_mask(d, "devices")
        elif isinstance(d, Device):
            indices.append(d.index)
        elif isinstance(d, int) and not isinstance(d, bool):
            indices.append(d)
        else:
            raise TypeError("devices: %r is not a Device, a device index or "
                            "a kind name" % (d,))
    if indices and kinds:
        by_kind = {dev.index for dev in ctx.devices
                   if KINDS[dev.kind] & kinds}
        indices += sorted(by_kind - set(indices))
        kinds = 0
    return indices, kinds


def from_dlpack(obj):
    """A numpy array sharing obj's memory (a torch tensor, a cupy or numpy
    array...: anything with __dlpack__ on the host). Device memory is
    refused: sessions read and write host memory."""
    dev = obj.__dlpack_device__() if hasattr(obj, "__dlpack_device__") \
        else (1, 0)
    if dev[0] not in (1, 3):  # kDLCPU, kDLCUDAHost
        raise errors.UnsupportedError(
            "from_dlpack: the tensor lives on DLPack device type %d: "
            "directgraph's Python runs take host memory (copy it there "
            "first, e.g. tensor.cpu())" % dev[0])
    return np.from_dlpack(obj)


class Pending:
    """A run started by Session.submit: ``wait()`` returns its results
    (raising its error), once."""

    def __init__(self, session, results, keep):
        self._session, self._results, self._keep = session, results, keep

    def wait(self):
        if self._session is None:
            raise errors.InvalidArgumentError(
                "Pending.wait: already waited for",
                abi.DG_ERROR_INVALID_ARGUMENT, function="Pending.wait")
        s, self._session = self._session, None
        diag = abi.dg_diagnostic()
        try:
            errors.check(lib.dg_session_wait(s._ptr, diag), diag,
                         "Pending.wait")
        finally:
            self._keep = None
        return self._results


class Session:
    """A compiled graph (dg_session).

    ``Session(model, devices=None, policy="auto", kinds=None,
    profile=False, context=None, symbolic=None, freeze=None,
    precision="exact")``: model is a
    Graph, an ONNX file's path or its bytes. devices allows only these
    (Device objects, indices or kind names such as "vulkan"); policy
    "strict" makes pins binding; profile times every node of every run
    (``plan``'s measured_us); precision "fast_f16" lets an f32 graph run
    in f16 storage with f32 accumulation where an allowed GPU computes in
    f16 (``plan.precision`` says what was done). One session runs one
    call at a time; make one session per thread to run in parallel (the
    GIL is released while the library runs).
    """

    def __init__(self, model, devices=None, *, policy="auto", kinds=None,
                 profile=False, context=None, symbolic=None, freeze=None,
                 precision="exact"):
        from .graph import Graph

        if isinstance(model, Graph):
            graph = model
        else:
            graph = load_onnx(model, context=context, symbolic=symbolic,
                              freeze=freeze)
        self.context = graph.context
        self._lent = list(graph._lent)  # lent constants outlive the graph
        o = abi.dg_compile_options()
        o.policy = enum("dg_policy", "DG_POLICY_", policy, "policy")
        indices, mask = _devices(self.context, devices)
        o.device_kinds = mask | kind_mask(kinds)
        keep = []
        if indices:
            keep.append(c_array(ctypes.c_int, indices))
            o.devices = ctypes.cast(keep[-1], ctypes.POINTER(ctypes.c_int))
            o.device_count = len(indices)
        o.profile = int(bool(profile))
        o.precision = enum("dg_precision", "DG_PRECISION_", precision,
                           "precision")
        out = ctypes.c_void_p()
        diag = abi.dg_diagnostic()
        errors.check(lib.dg_graph_compile(graph._ptr, o, ctypes.byref(out),
                                          diag), diag, "Session")
        self._ptr = out.value
        self._finalizer = weakref.finalize(self, lib.dg_session_destroy,
                                           self._ptr)
        self._bound = {}  # name -> Buffer (bind)
        self.inputs = [IOInfo.get(lib.dg_session_input_info, self._ptr, i)
                       for i in range(lib.dg_session_input_count(self._ptr))]
        self.outputs = [IOInfo.get(lib.dg_session_output_info, self._ptr, i)
                        for i in range(lib.dg_session_output_count(self._ptr))]

    def get_inputs(self):
        return list(self.inputs)

    def get_outputs(self):
        return list(self.outputs)

    @property
    def plan(self):
        """Where every node runs and why, as a list of PlanNode records
        (print it for the table; .dot(), .svg() for pictures)."""
        return Plan.of(lib.dg_session_plan(self._ptr))

    def _bind(self, feeds, keep, fn="Session.run"):
        if not isinstance(feeds, dict):
            raise TypeError("%s: feeds is a dict {input name: array}, not "
                            "%s" % (fn, type(feeds).__name__))
        known = {i.name: i for i in self.inputs}
        arr = (abi.dg_binding * max(len(feeds), 1))()
        for k, (name, value) in enumerate(feeds.items()):
            info = known.get(name)
            if info is None:
                raise errors.NotFoundError(
                    "%s: no input named '%s'; the inputs are %s" %
                    (fn, name, ", ".join(repr(n) for n in known)),
                    abi.DG_ERROR_NOT_FOUND, field="input", function=fn)
            a = self._host_array(value, info, fn)
            keep.append(a)
            arr[k].name, arr[k].data = name.encode(), a.ctypes.data
            arr[k].size = a.nbytes
        return arr, len(feeds)

    @staticmethod
    def _host_array(value, info, fn="Session.run"):
        """value as a C-contiguous array of info's dtype and shape: the
        caller's own memory when it already is one (no copy)."""
        if hasattr(value, "__dlpack__") and not isinstance(value, np.ndarray):
            value = from_dlpack(value)
        want = numpy_dtype(DTYPES[info.dtype])
        a = np.asarray(value)
        if a.dtype != want:
            raise errors.InvalidDtypeError(
                "%s: '%s' is %s, expected %s" %
                (fn, info.name, a.dtype, describe(info.io_shape(), info.dtype)),
                abi.DG_ERROR_INVALID_DTYPE, field="input",
                expected=info.dtype, actual=str(a.dtype), function=fn)
        if a.shape != info.io_shape():
            raise errors.InvalidShapeError(
                "%s: '%s' has shape %s, expected %s" %
                (fn, info.name, list(a.shape),
                 describe(info.io_shape(), info.dtype)),
                abi.DG_ERROR_INVALID_SHAPE, field="input",
                expected=str(list(info.io_shape())), actual=str(list(a.shape)),
                function=fn)
        return np.ascontiguousarray(a)

    @classmethod
    def _out_array(cls, dst, info):
        """dst itself (or its DLPack view) when it can be written in place."""
        view = dst if isinstance(dst, np.ndarray) else from_dlpack(dst)
        a = cls._host_array(view, info, "Session.run out")  # dtype, shape
        if a is not view or (isinstance(dst, np.ndarray) and
                             not a.flags.writeable):
            raise ValueError("out['%s']: not a writeable C-contiguous array; "
                             "it cannot be written in place" % info.name)
        if not a.flags.writeable:
            # numpy marks every DLPack import read-only (DLPack had no
            # such flag); the caller handing it as out= means to write.
            # An alias of the same bytes, writeable; dst stays referenced
            # by the caller for the call.
            buf = (ctypes.c_char * a.nbytes).from_address(a.ctypes.data)
            a = np.frombuffer(buf, a.dtype).reshape(a.shape)
        return a

    def _prepare(self, output_names, feeds, out, fn):
        """The bindings of one run: (ins, nin, outs, nout, results, keep);
        an output bound to a Buffer is that Buffer in results."""
        if feeds is None:
            feeds = {}
        names = [o.name for o in self.outputs] if output_names is None \
            else list(output_names)
        by_name = {o.name: o for o in self.outputs}
        keep = []
        ins, nin = self._bind(feeds, keep, fn)
        outs = (abi.dg_binding * max(len(names), 1))()
        results, nout = [], 0
        for name in names:
            info = by_name.get(name)
            if info is None:
                raise errors.NotFoundError(
                    "%s: no output named '%s'; the outputs are %s" %
                    (fn, name, ", ".join(repr(n) for n in by_name)),
                    abi.DG_ERROR_NOT_FOUND, field="output", function=fn)
            if name in self._bound:
                results.append(self._bound[name])
                continue
            dst = (out or {}).get(name)
            if dst is None:
                a = np.empty(info.io_shape(), numpy_dtype(DTYPES[info.dtype]))
            else:
                a = self._out_array(dst, info)
            keep.append(a)
            outs[nout].name, outs[nout].data = name.encode(), a.ctypes.data
            outs[nout].size = a.nbytes
            nout += 1
            results.append(a)
        return ins, nin, outs, nout, results, keep

    def run(self, output_names=None, feeds=None, *, out=None):
        """Runs once: feeds maps every input's name to an array (numpy,
        or a host tensor with __dlpack__, e.g. torch, read in place);
        returns the outputs named (None: all) as numpy arrays, in that
        order. ``out`` maps output names to arrays to write into instead
        (C-contiguous, of the output's dtype and shape: no copy). Names
        bound to a Buffer (``bind``) take no feed, and their result is
        the Buffer, written on its device."""
        ins, nin, outs, nout, results, keep = self._prepare(
            output_names, feeds, out, "Session.run")
        diag = abi.dg_diagnostic()
        errors.check(lib.dg_session_run(self._ptr, ins, nin, outs, nout,
                                        diag), diag, "Session.run")
        return results

    def submit(self, output_names=None, feeds=None, *, out=None):
        """run() in two halves: reads the feeds, starts the run and
        returns a Pending at once, whose ``wait()`` waits for the device
        and returns the results. The session is busy until then; several
        sessions' runs can be in flight at once (dg_session_submit)."""
        ins, nin, outs, nout, results, keep = self._prepare(
            output_names, feeds, out, "Session.submit")
        diag = abi.dg_diagnostic()
        errors.check(lib.dg_session_submit(self._ptr, ins, nin, outs, nout,
                                           diag), diag, "Session.submit")
        return Pending(self, results, keep)

    def bind(self, name, buffer):
        """Binds a Buffer to the input or output called name for every
        later run (None unbinds): runs read or write it on its device,
        with no copy through the host (dg_session_bind_buffer, whose
        rules apply: the buffer's dtype and shape, and a GPU buffer only
        where the nodes using the tensor run on that GPU)."""
        from .buffer import Buffer

        if buffer is not None and not isinstance(buffer, Buffer):
            raise TypeError("Session.bind: %r is not a Buffer" % (buffer,))
        diag = abi.dg_diagnostic()
        errors.check(lib.dg_session_bind_buffer(
            self._ptr, str(name).encode(),
            buffer._ptr if buffer is not None else None, diag),
            diag, "Session.bind")
        if buffer is None:
            self._bound.pop(name, None)
        else:
            self._bound[name] = buffer  # alive while bound

    def verify(self, feeds, *, check=False):
        """Runs beside the reference kernels and compares every node:
        a VerifyReport (ok False names the first node out of tolerance);
        with check=True a mismatch raises MismatchError instead."""
        keep = []
        ins, nin = self._bind(feeds, keep, "Session.verify")
        rep = abi.dg_verify_report()
        st = lib.dg_session_verify(self._ptr, ins, nin, rep)
        if st not in (abi.DG_OK, abi.DG_ERROR_MISMATCH):
            errors.check(st, None, "Session.verify")
        r = VerifyReport(bool(rep.ok), rep.nodes_checked, rep.node_index,
                         text(rep.node_name), text(lib.dg_op_name(rep.op)),
                         rep.max_abs_error, rep.max_rel_error,
                         rep.max_lsb_error, rep.tolerance)
        if check and not r.ok:
            raise errors.MismatchError(
                "Session.verify: node %d '%s' (%s) is off by %g (relative "
                "%g, %d LSB), tolerance %g" % (
                    r.node_index, r.node, r.op, r.max_abs_error,
                    r.max_rel_error, r.max_lsb_error, r.tolerance),
                abi.DG_ERROR_MISMATCH, r.node_index, r.node, r.op,
                function="Session.verify")
        return r

    def close(self):
        """Frees the session now (else when it is garbage)."""
        if self._ptr is not None:
            self._finalizer()  # dg_session_destroy, once
            self._ptr = None


