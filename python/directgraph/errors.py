"""Exceptions carrying the library's structured diagnostic.

Every failing call raises a subclass of :class:`Error` chosen by the
dg_status it returned. Each also derives from the built-in exception a
Python caller would catch for that kind of failure (ValueError for bad
arguments and shapes, TypeError for dtypes, MemoryError, OSError,
LookupError, OverflowError), so generic handlers keep working.
"""

import re

from ._ffi import abi, enum_name, lib, text


class Error(Exception):
    """A directgraph failure.

    Attributes, from the library's dg_diagnostic (empty or -1 when the
    failure is not about a node or a field):

    * ``status``: the dg_status name, e.g. ``"DG_ERROR_INVALID_SHAPE"``;
      ``code`` its value;
    * ``function``: the call that failed, e.g. ``"Graph.conv2d"``;
    * ``node_index``, ``node``: the node the error is about;
    * ``op``: the op, or the API function for errors that are not an op's;
    * ``field``: the offending argument, e.g. ``"params.stride"``;
    * ``expected``, ``actual``: what was wanted and what was given;
    * ``message``: the sentence the library wrote (also ``str(e)``).
    """

    def __init__(self, message, code=None, node_index=-1, node="", op="",
                 field="", expected="", actual="", function=""):
        super().__init__(message)
        self.message = message
        self.function = function
        self.code = code
        self.status = enum_name("dg_status", code) if code else ""
        self.node_index, self.node, self.op = node_index, node, op
        self.field, self.expected, self.actual = field, expected, actual


class InvalidArgumentError(Error, ValueError):
    """A NULL, a bad enum or parameter (DG_ERROR_INVALID_ARGUMENT)."""


class InvalidShapeError(Error, ValueError):
    """Shapes that do not fit the op (DG_ERROR_INVALID_SHAPE)."""


class InvalidDtypeError(Error, TypeError):
    """A dtype the op does not take (DG_ERROR_INVALID_DTYPE)."""


class UnsupportedError(Error):
    """Valid, but no allowed device runs it (DG_ERROR_UNSUPPORTED)."""


class OutOfMemoryError(Error, MemoryError):
    """A host or device allocation failed (DG_ERROR_OUT_OF_MEMORY)."""


class DeviceError(Error):
    """The device or its driver failed (DG_ERROR_DEVICE)."""


class FileError(Error, OSError):
    """A file could not be read or written (DG_ERROR_IO)."""


class GraphFailedError(Error):
    """The graph already holds an error (DG_ERROR_GRAPH_FAILED)."""


class NotFoundError(Error, LookupError):
    """A name or index that does not exist (DG_ERROR_NOT_FOUND)."""


class MismatchError(Error):
    """Verify: outputs differ beyond tolerance (DG_ERROR_MISMATCH)."""


class SizeOverflowError(Error, OverflowError):
    """A size that does not fit in 64 bits (DG_ERROR_OVERFLOW)."""


_BY_STATUS = {
    abi.DG_ERROR_INVALID_ARGUMENT: InvalidArgumentError,
    abi.DG_ERROR_INVALID_SHAPE: InvalidShapeError,
    abi.DG_ERROR_INVALID_DTYPE: InvalidDtypeError,
    abi.DG_ERROR_UNSUPPORTED: UnsupportedError,
    abi.DG_ERROR_OUT_OF_MEMORY: OutOfMemoryError,
    abi.DG_ERROR_DEVICE: DeviceError,
    abi.DG_ERROR_IO: FileError,
    abi.DG_ERROR_GRAPH_FAILED: GraphFailedError,
    abi.DG_ERROR_NOT_FOUND: NotFoundError,
    abi.DG_ERROR_MISMATCH: MismatchError,
    abi.DG_ERROR_OVERFLOW: SizeOverflowError,
}


def error_class(code):
    return _BY_STATUS.get(code, Error)


def from_diagnostic(code, diag, function):
    """The exception for status code and diag (a dg_diagnostic, or None
    or unfilled), its message led by the function called."""
    if diag is not None and diag.status == code and diag.message[:1] != b"":
        # The C message leads with the C function; say the Python one.
        msg = "%s: %s" % (function, re.sub(r"^dg_\w+: ", "",
                                            text(diag.message)))
        return error_class(code)(
            msg, code, diag.node_index, text(diag.node_name), text(diag.op),
            text(diag.field), text(diag.expected), text(diag.actual),
            function)
    name = text(lib.dg_status_string(code))
    return error_class(code)("%s: %s" % (function, name), code,
                             function=function)


def check(code, diag, function):
    """Raises unless code is DG_OK."""
    if code != abi.DG_OK:
        raise from_diagnostic(code, diag, function)
