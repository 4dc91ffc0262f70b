#!/usr/bin/env python3
"""Real DLPack producers through libdirectgraph's TVM-FFI entry points.

For the GPU machine (torch installed; TVM not needed): torch tensors are
exported as legacy capsules (torch.utils.dlpack.to_dlpack: a
DLManagedTensor, DLTensor at offset 0) and as versioned capsules
(tensor.__dlpack__(max_version=(1, 0)): a DLManagedTensorVersioned, DLTensor
at offset 32 after version, manager_ctx, deleter and flags), and their
DLTensor* is passed as a type-7 TVMFFIAny to __tvm_ffi_directgraph_relu and
_conv2d through ctypes. CPU tensors (contiguous and strided views) must
match torch; a CUDA tensor must be rejected with a message naming cuda.
The capsules are only borrowed: they keep their names, so each one's
destructor frees it as usual.

Usage: python3 tests/tvm/torch_dlpack.py [path/to/libdirectgraph.so]
(default: $DG_LIB, else build/libdirectgraph.so). Prints ok/FAIL/skipped.
"""

import ctypes
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))

sys.dont_write_bytecode = True  # keep __pycache__ out of the source tree
from directgraph_tvm.ffi_ctypes import DLTensor, Library  # noqa: E402

FAILED = 0


def report(ok, what):
    global FAILED
    print(("ok - " if ok else "FAIL - ") + what, flush=True)
    FAILED += not ok


_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]

# Offset of the DLTensor inside what each capsule holds.
CAPSULES = {"legacy": (b"dltensor", 0), "versioned": (b"dltensor_versioned", 32)}


def export(t, kind):
    """A capsule of tensor t, of the given kind."""
    if kind == "legacy":
        from torch.utils.dlpack import to_dlpack

        return to_dlpack(t)
    return t.__dlpack__(max_version=(1, 0))


def dltensor_of(capsule, kind):
    name, offset = CAPSULES[kind]
    base = _get_pointer(capsule, name)
    return DLTensor.from_address(base + offset)


def relu_case(lib, torch, kind, strided):
    x, y = torch.randn(6, 10), torch.empty(6, 10)
    if strided:  # x^T and y^T: non-compact DLPack strides on both sides
        x, y = x.t(), y.t()
    cx, cy = export(x, kind), export(y, kind)
    rc, msg = lib.call_status("directgraph_relu", dltensor_of(cx, kind),
                              dltensor_of(cy, kind))
    ok = rc == 0 and torch.equal(y, torch.relu(x))
    report(ok, f"relu on torch {kind} capsules ({'strided views' if strided else 'contiguous'})"
           + (f": {msg}" if msg else ""))


def conv_case(lib, torch, kind):
    import torch.nn.functional as F

    x, w, b = torch.randn(2, 4, 9, 9), torch.randn(6, 2, 3, 3), torch.randn(6)
    want = F.conv2d(x, w, b, stride=(2, 1), padding=1, dilation=(1, 2), groups=2)
    y = torch.empty_like(want)
    caps = [export(t, kind) for t in (x, w, b, y)]
    rc, msg = lib.call_status("directgraph_conv2d", *[dltensor_of(c, kind) for c in caps],
                              2, 1, 1, 1, 1, 1, 1, 2, 2)
    err = (y - want).abs().max().item() if rc == 0 else float("inf")
    report(rc == 0 and err <= 1e-4 * want.abs().max().item(),
           f"conv2d on torch {kind} capsules vs F.conv2d (max error {err:.3g})"
           + (f": {msg}" if msg else ""))


def cuda_case(lib, torch, kind):
    x = torch.randn(4, 4, device="cuda")
    y = torch.empty(4, 4, device="cuda")
    cx, cy = export(x, kind), export(y, kind)
    dl = dltensor_of(cx, kind)
    rc, msg = lib.call_status("directgraph_relu", dl, dltensor_of(cy, kind))
    report(rc != 0 and dl.device.device_type == 2 and "cuda" in msg,
           f"CUDA tensor ({kind} capsule, device_type {dl.device.device_type}) rejected: "
           f"rc {rc}: {msg}")


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.environ.get(
        "DG_LIB", os.path.join(ROOT, "build", "libdirectgraph.so"))
    try:
        import torch
    except ImportError:
        print("skipped: torch not installed")
        return 0
    if not os.path.exists(path):
        print(f"FAIL - no libdirectgraph at {path}")
        return 1
    lib = Library(path)
    torch.manual_seed(0)
    for kind in CAPSULES:
        try:
            export(torch.zeros(1), kind)
        except (TypeError, AttributeError, RuntimeError) as e:
            print(f"skipped: torch {torch.__version__} cannot make {kind} capsules ({e})")
            continue
        relu_case(lib, torch, kind, strided=False)
        relu_case(lib, torch, kind, strided=True)
        conv_case(lib, torch, kind)
        if torch.cuda.is_available():
            cuda_case(lib, torch, kind)
        else:
            print(f"skipped: no CUDA device for the {kind} rejection case")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
