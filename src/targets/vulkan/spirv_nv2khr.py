#!/usr/bin/env python3
"""Rewrites a SPIR-V module from SPV_NV_cooperative_matrix to
SPV_KHR_cooperative_matrix.

Why: on NVIDIA's driver the KHR extension issues tensor-core work far faster
than the NV one (measured on the H200, driver 580: 16x16x16 f16 MMAs from
registers 640 TFLOP/s through KHR against 390 through NV; fragment loads
from shared memory plus MMAs 335 against 230), but the glslang that Debian
12 ships (11.13 in shaderc 2023.2) predates GL_KHR_cooperative_matrix. The
tensor-core shaders are therefore written once against GL_NV_cooperative_
matrix, and this script derives the KHR module at build time.

The mapping is one to one except for two things the NV form does not carry:
  - a KHR matrix type states its use (A, B or accumulator). It is inferred
    from OpCooperativeMatrixMulAddNV: its first operand is A, its second B,
    its third and its result the accumulator. A use reaches back through
    the Function variables a matrix is stored in and loaded from, and
    through copies, phis and selects (one "use class" each). Where the NV
    form gives two uses one type (a 16x16 f16 matrix is both A and B in
    m16n16k16), the first use keeps the type and each other gets a type
    id of its own, with a Function pointer type, for the values and
    variables of its classes. Refused: a value or variable whose class
    reaches two uses; a matrix of a shared type that reaches none; arrays
    and structs of a shared type; and a split value reaching anything
    but loads, stores, copies, phis, selects and products (arithmetic,
    calls and returns would still expect the shared type).
  - loads and stores take a memory-layout id (an int constant, 0 = row
    major, 1 = column major) where NV took a bool; the bool must be a
    constant.
  (Lengths, OpCooperativeMatrixLengthNV, map one to one, also inside
  OpSpecConstantOp.)
Only float matrices are accepted (integer ones need signedness operands).

Usage: spirv_nv2khr.py IN.spv OUT.spv
"""
import struct
import sys

MAGIC = 0x07230203

OP_EXTENSION = 10
OP_CAPABILITY = 17
OP_TYPE_INT = 21
OP_TYPE_FLOAT = 22
OP_CONSTANT_TRUE = 41
OP_CONSTANT_FALSE = 42
OP_CONSTANT = 43
OP_FUNCTION = 54
OP_TYPE_POINTER = 32
OP_VARIABLE = 59
OP_LOAD = 61
OP_STORE = 62
OP_COPY_OBJECT = 83
OP_SELECT = 169
OP_PHI = 245
OP_UNDEF = 1
OP_ACCESS_CHAIN = 65
OP_SPEC_CONSTANT_OP = 52

NV_CAP = 5357
NV_TYPE, NV_LOAD, NV_STORE, NV_MULADD, NV_LENGTH = 5358, 5359, 5360, 5361, 5362
KHR_CAP = 6022
KHR_TYPE, KHR_LOAD, KHR_STORE, KHR_MULADD, KHR_LENGTH = (
    4456, 4457, 4458, 4459, 4460)
NV_EXT = "SPV_NV_cooperative_matrix"
KHR_EXT = "SPV_KHR_cooperative_matrix"

# Instructions whose result takes a split matrix type, and the operand
# positions (in the words after the opcode) where a split value may appear.
RETYPED_OPS = (NV_LOAD, OP_LOAD, OP_COPY_OBJECT, OP_PHI, OP_SELECT, OP_UNDEF)
RETYPED_OPERANDS = {OP_LOAD: (2,), OP_STORE: (0, 1), OP_COPY_OBJECT: (2,),
                    OP_SELECT: (3, 4), NV_STORE: (1,), NV_MULADD: (2, 3, 4)}


def split_operands(op, ops):
    """Positions in ops where a split value may appear (OpPhi: its
    values)."""
    if op == OP_PHI:
        return range(2, len(ops), 2)
    return RETYPED_OPERANDS.get(op, ())

# Not scanned for split values: debug and annotation instructions, the
# module's header instructions (literals only).
UNSCANNED_OPS = (3, 4, 5, 6, 7, 8, 10, 11, 14, 15, 16, 17, 71, 72, 73, 74,
                 75, 76, 77, 332, 5632)

USE_A, USE_B, USE_ACC = 0, 1, 2
USE_NAMES = {USE_A: "A", USE_B: "B", USE_ACC: "accumulator"}


class Nv2KhrError(Exception):
    pass


def parse(words):
    """Splits the instruction stream into (opcode, operand words) pairs."""
    out = []
    i = 5
    while i < len(words):
        count, op = words[i] >> 16, words[i] & 0xFFFF
        if count == 0 or i + count > len(words):
            raise Nv2KhrError("truncated instruction at word %d" % i)
        out.append((op, list(words[i + 1:i + count])))
        i += count
    return out


def string_words(s):
    b = s.encode() + b"\0"
    b += b"\0" * (-len(b) % 4)
    return list(struct.unpack("<%dI" % (len(b) // 4), b))


def decode_string(ops):
    b = struct.pack("<%dI" % len(ops), *ops)
    return b.split(b"\0", 1)[0].decode()


def translate(words):
    if len(words) < 5 or words[0] != MAGIC:
        raise Nv2KhrError("not a little-endian SPIR-V module")
    insts = parse(words)
    bound = words[3]
    # A module cut at an instruction boundary parses; its functions do not
    # all end (OpFunction 54, OpFunctionEnd 56).
    ops_seen = [op for op, _ in insts]
    if (not ops_seen or ops_seen[-1] != 56
            or ops_seen.count(54) != ops_seen.count(56)):
        raise Nv2KhrError("truncated module: a function has no end")

    # Pass 1: declared types, constants, value types.
    type_ids = set()
    coop_types = {}           # id -> (component type id, operands)
    int32_types = {}          # id -> signedness
    float_types = set()
    bool_consts = {}          # id -> True / False
    value_type = {}           # value id -> type id
    ptr_types = {}            # pointer type id -> pointee
    defining_op = {}          # result id -> opcode
    for op, ops in insts:
        if 19 <= op <= 39 or op in (322, NV_TYPE, KHR_TYPE):
            type_ids.add(ops[0])
            if op == OP_TYPE_INT and ops[1] == 32:
                int32_types[ops[0]] = ops[2]
            if op == OP_TYPE_FLOAT:
                float_types.add(ops[0])
            if op == OP_TYPE_POINTER:
                ptr_types[ops[0]] = ops[2]
            if op == NV_TYPE:
                coop_types[ops[0]] = ops
            continue
        if op in (OP_CONSTANT_TRUE, OP_CONSTANT_FALSE):
            bool_consts[ops[1]] = op == OP_CONSTANT_TRUE
        if len(ops) >= 2 and ops[0] in type_ids and ops[1] not in value_type:
            value_type[ops[1]] = ops[0]
            defining_op[ops[1]] = op
    if not coop_types:
        raise Nv2KhrError("no SPV_NV_cooperative_matrix types in the module")

    def matrix_type(x):
        """The matrix type of value x, or that pointer x points to."""
        t = value_type.get(x)
        t = ptr_types.get(t, t)   # a pointer: its pointee
        return t if t in coop_types else None

    # Use classes: matrix values joined with the variables they are stored
    # in and loaded from, and with copies, phis and selects of them; each
    # class takes its use from the MulAdd operand slots it reaches.
    parent = {}

    def find(x):
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(a, b):
        parent[find(a)] = find(b)

    class_use = {}            # class root -> use (after the loop below)
    muladds = []
    for op, ops in insts:
        if op == OP_STORE and matrix_type(ops[1]):
            union(ops[0], ops[1])
        elif op in RETYPED_OPS and ops[0] in coop_types:
            for i in split_operands(op, ops):
                union(ops[1], ops[i])
        elif op == NV_MULADD:
            muladds.append(ops)
    uses_of = {}              # matrix type -> set of uses
    for ops in muladds:
        for x, use in ((ops[2], USE_A), (ops[3], USE_B), (ops[4], USE_ACC),
                       (ops[1], USE_ACC)):
            t = matrix_type(x)
            if t is None:
                raise Nv2KhrError("MulAdd %%%d: operand type unknown"
                                  % ops[1])
            r = find(x)
            if class_use.setdefault(r, use) != use:
                raise Nv2KhrError(
                    "matrix %%%d used as %s and as %s" %
                    (x, USE_NAMES[class_use[r]], USE_NAMES[use]))
            uses_of.setdefault(t, set()).add(use)
    # A type with one use keeps its id; one with several (16x16 f16 as
    # both A and B) keeps it for the first and gets a new type id (and
    # Function pointer type) per other use, given to its classes' values
    # and variables.
    uses = {}                 # matrix type id -> use
    clone = {}                # (matrix type, use) -> type id
    for t, ops in coop_types.items():
        if t not in uses_of:
            raise Nv2KhrError("matrix type %%%d never reaches a MulAdd, so "
                              "its use cannot be inferred" % t)
        if ops[1] not in float_types:
            raise Nv2KhrError("matrix type %%%d is not a float matrix" % t)
        for i, use in enumerate(sorted(uses_of[t])):
            if i == 0:
                uses[t] = use
            else:
                clone[(t, use)] = bound
                uses[bound] = use
                bound += 1
    for x, dop in defining_op.items():
        t = matrix_type(x)
        if dop == OP_ACCESS_CHAIN and t is not None and len(uses_of[t]) > 1:
            raise Nv2KhrError("matrix %%%d: arrays and structs of a matrix "
                              "type used as both A and B are not supported"
                              % x)
    retype = {}               # result id -> its new type (value or pointer)
    ptr_clone = {}            # (pointer type, new matrix type) -> id
    for x in list(parent):
        t = matrix_type(x)
        if t is None:
            continue
        use = class_use.get(find(x))
        if use is None:
            if len(uses_of[t]) > 1:
                raise Nv2KhrError("matrix %%%d never reaches a MulAdd, so "
                                  "its use cannot be inferred" % x)
            continue
        nt = clone.get((t, use))
        if nt is None:
            continue
        dop = defining_op.get(x)
        if dop == OP_VARIABLE:
            key = (value_type[x], nt)
            if key not in ptr_clone:
                ptr_clone[key] = bound
                bound += 1
            retype[x] = ptr_clone[key]
        elif dop in RETYPED_OPS:
            retype[x] = nt
        else:
            raise Nv2KhrError("matrix %%%d (opcode %s) would need the %s "
                              "type of its shape" % (x, dop, USE_NAMES[use]))
    # A retyped value or variable may only reach the operands retyped
    # together above and the products'; anything else (arithmetic, calls,
    # returns, composites) would still expect the shared type.
    if retype:
        for op, ops in insts:
            if op in UNSCANNED_OPS or 19 <= op <= 39 or 41 <= op <= 52:
                continue
            ok = split_operands(op, ops)
            for i, x in enumerate(ops):
                if (x in retype and i not in ok and
                        not (i == 1 and defining_op.get(x) == op)):
                    raise Nv2KhrError(
                        "matrix %%%d of a type used as both A and B reaches "
                        "opcode %d, which keeps the shared type" % (x, op))
    new_ptrs = {}             # pointer type -> [(clone id, new pointee)]
    for (pt, nt), pid in ptr_clone.items():
        new_ptrs.setdefault(pt, []).append((pid, nt))
    new_types = {}            # matrix type -> [(clone id, use)]
    for (t, use), nt in clone.items():
        new_types.setdefault(t, []).append((nt, use))

    # The int constants 0, 1, 2 (uses and layouts) are new ids, typed like
    # the first matrix type's row count and declared just before it.
    first_rows = next(iter(coop_types.values()))[3]
    int_type = None
    for op, ops in insts:
        if op == OP_CONSTANT and ops[1] == first_rows:
            int_type = ops[0]
    if int_type not in int32_types:
        raise Nv2KhrError("matrix rows are not a 32-bit int constant")
    const_ids = {v: bound + v for v in (0, 1, 2)}
    bound += 3

    def layout(bool_id, what):
        if bool_id not in bool_consts:
            raise Nv2KhrError("%s: column-major flag %%%d is not a constant"
                              % (what, bool_id))
        return const_ids[1 if bool_consts[bool_id] else 0]

    # Pass 2: emit.
    out = []

    def emit(op, ops):
        out.append(((len(ops) + 1) << 16) | op)
        out.extend(ops)

    consts_done = False
    for op, ops in insts:
        if op == OP_CAPABILITY and ops[0] == NV_CAP:
            emit(op, [KHR_CAP])
        elif op == OP_EXTENSION and decode_string(ops) == NV_EXT:
            emit(op, string_words(KHR_EXT))
        elif op == NV_TYPE:
            if not consts_done:
                for v, cid in const_ids.items():
                    emit(OP_CONSTANT, [int_type, cid, v])
                consts_done = True
            emit(KHR_TYPE, ops + [const_ids[uses[ops[0]]]])
            for nt, use in new_types.get(ops[0], []):
                emit(KHR_TYPE, [nt] + ops[1:] + [const_ids[use]])
        elif op == OP_TYPE_POINTER and ops[0] in new_ptrs:
            emit(op, ops)
            for pid, nt in new_ptrs[ops[0]]:
                emit(op, [pid, ops[1], nt])
        elif op == NV_LOAD:
            emit(KHR_LOAD, [retype.get(ops[1], ops[0])] + ops[1:3] +
                 [layout(ops[4], "load %%%d" % ops[1]), ops[3]] + ops[5:])
        elif (op in RETYPED_OPS + (OP_VARIABLE,) and len(ops) > 1
              and ops[1] in retype):
            emit(op, [retype[ops[1]]] + ops[1:])
        elif op == NV_STORE:
            emit(KHR_STORE, ops[0:2] + [layout(ops[3], "store"), ops[2]] +
                 ops[4:])
        elif op == NV_MULADD:
            emit(KHR_MULADD, ops)
        elif op == NV_LENGTH:
            emit(KHR_LENGTH, ops)
        elif op == OP_SPEC_CONSTANT_OP and ops[2] == NV_LENGTH:
            emit(op, ops[:2] + [KHR_LENGTH] + ops[3:])
        elif op in (NV_CAP, NV_TYPE):
            raise Nv2KhrError("unexpected NV opcode %d" % op)
        else:
            emit(op, ops)
    header = list(words[0:5])
    header[3] = bound
    return header + out


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: spirv_nv2khr.py IN.spv OUT.spv\n")
        return 2
    try:
        with open(argv[1], "rb") as f:
            data = f.read()
        if len(data) % 4:
            raise Nv2KhrError("size %d is not a multiple of 4" % len(data))
        words = list(struct.unpack("<%dI" % (len(data) // 4), data))
        result = translate(words)
    except (OSError, Nv2KhrError) as e:
        sys.stderr.write("spirv_nv2khr.py: %s: %s\n" % (argv[1], e))
        return 1
    with open(argv[2], "wb") as f:
        f.write(struct.pack("<%dI" % len(result), *result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
