/* How deep a model's messages nest, found before protobuf-c unpacks it:
 * protobuf-c recurses once per nested message, so a 112 KB file of If
 * nodes nested 3,000 deep overflowed the stack inside
 * onnx__model_proto__unpack. This walks the wire format iteratively,
 * following only the fields through which ONNX's messages recurse
 * (graph -> node -> attribute -> graph, and types within types), and
 * refuses what nests deeper than the limit. */
#include "onnx_internal.h"

#include <stdio.h>

typedef enum msg {
  M_SKIP = 0, /* not followed: no recursion through it */
  M_MODEL,
  M_GRAPH,
  M_NODE,
  M_ATTRIBUTE,
  M_VALUE_INFO,
  M_TYPE,
  M_TYPE_INNER, /* Sequence, Map, Optional: hold a TypeProto */
  M_FUNCTION,
  M_TRAINING,
} msg;

/* The message a length-delimited field of m holds, if it is followed
 * (field numbers from onnx.proto). */
static msg child(msg m, uint64_t field) {
  switch (m) {
  case M_MODEL: /* graph, training_info, functions */
    return field == 7    ? M_GRAPH
           : field == 20 ? M_TRAINING
           : field == 25 ? M_FUNCTION
                         : M_SKIP;
  case M_TRAINING: /* initialization, algorithm */
    return field == 1 || field == 2 ? M_GRAPH : M_SKIP;
  case M_FUNCTION:
    return field == 7 ? M_NODE : M_SKIP;
  case M_GRAPH:
    return field == 1                                  ? M_NODE
           : field == 11 || field == 12 || field == 13 ? M_VALUE_INFO
                                                       : M_SKIP;
  case M_NODE:
    return field == 5 ? M_ATTRIBUTE : M_SKIP;
  case M_ATTRIBUTE: /* g, graphs; tp, type_protos */
    return field == 6 || field == 11    ? M_GRAPH
           : field == 14 || field == 15 ? M_TYPE
                                        : M_SKIP;
  case M_VALUE_INFO:
    return field == 2 ? M_TYPE : M_SKIP;
  case M_TYPE: /* sequence_type, map_type, optional_type */
    return field == 4 || field == 5 || field == 9 ? M_TYPE_INNER : M_SKIP;
  case M_TYPE_INNER: /* Sequence.elem_type, Map.value_type, Optional */
    return field == 1 || field == 2 ? M_TYPE : M_SKIP;
  default:
    return M_SKIP;
  }
}

static bool varint(const uint8_t *p, size_t end, size_t *pos, uint64_t *v) {
  *v = 0;
  for (int shift = 0; shift < 64 && *pos < end; shift += 7) {
    uint8_t b = p[(*pos)++];
    *v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80))
      return true;
  }
  return false;
}

bool onnx_nesting_ok(const void *data, size_t size, int max_depth, char *err,
                     size_t err_size) {
  struct frame {
    size_t end;
    msg m;
  } stack[ONNX_MAX_NESTING + 1];
  if (max_depth > ONNX_MAX_NESTING)
    max_depth = ONNX_MAX_NESTING;
  const uint8_t *p = data;
  int depth = 0;
  stack[0] = (struct frame){size, M_MODEL};
  size_t pos = 0;
  while (depth >= 0) {
    if (pos == stack[depth].end) {
      depth--;
      continue;
    }
    uint64_t tag, len;
    if (!varint(p, stack[depth].end, &pos, &tag))
      return true; /* malformed: protobuf-c says so, without recursing */
    uint64_t field = tag >> 3;
    switch (tag & 7) {
    case 0:
      if (!varint(p, stack[depth].end, &pos, &len))
        return true;
      break;
    case 1:
    case 5:
      if ((tag & 7) == 1 ? stack[depth].end - pos < 8
                         : stack[depth].end - pos < 4)
        return true;
      pos += (tag & 7) == 1 ? 8 : 4;
      break;
    case 2: {
      if (!varint(p, stack[depth].end, &pos, &len) ||
          len > stack[depth].end - pos)
        return true;
      msg c = child(stack[depth].m, field);
      if (c == M_SKIP) {
        pos += (size_t)len;
        break;
      }
      if (depth + 1 > max_depth) {
        snprintf(err, err_size,
                 "the model's messages nest deeper than %d levels (graphs "
                 "within attributes, or types within types)",
                 max_depth);
        return false;
      }
      stack[++depth] = (struct frame){pos + (size_t)len, c};
      break;
    }
    default:
      return true; /* groups or garbage: protobuf-c refuses it */
    }
  }
  return true;
}
