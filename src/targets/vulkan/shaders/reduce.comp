#version 450
// reduce: every function of src/ops/reduce.def, whose columns this file
// expands into switches on pc.fn. Workgroup mode (pc.per_inv 0): one
// workgroup per output, each of its 256 invocations folding every 256th
// reduced element (sums compensated), then a tree; so a million elements
// take 4096 trips an invocation, within llvmpipe's loop limit.
// Invocation mode (pc.per_inv 1, short reductions): one output per
// invocation, no tree. Functions with a shift first find the maximum the
// same way, then fold map(x, max).
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
#include "common.glsl"

layout(set = 0, binding = 0) readonly buffer X { DT x[]; };
layout(set = 0, binding = 3) writeonly buffer Y { DT y[]; };

#include "push_constants.h"
layout(push_constant) uniform PC {
  VK_PC_REDUCE
} pc;

// The names reduce.def's columns use.
#define INF f_inf()
#define ABS abs
#define EXP exp
#define SQRT sqrt
#define LOG log
#define ADD 0
#define MUL 1
#define MAX 2
#define MIN 3

int red_comb() {
  switch (pc.fn) {
#define DG_REDUCE(e, v, name, init, comb, map, fin, shift) case v: return comb;
#include "../../../ops/reduce.def"
#undef DG_REDUCE
  }
  return ADD;
}
float red_init() {
  switch (pc.fn) {
#define DG_REDUCE(e, v, name, init, comb, map, fin, shift) case v: return init;
#include "../../../ops/reduce.def"
#undef DG_REDUCE
  }
  return 0.0;
}
bool red_shift() {
  switch (pc.fn) {
#define DG_REDUCE(e, v, name, init, comb, map, fin, shift) case v: return shift != 0;
#include "../../../ops/reduce.def"
#undef DG_REDUCE
  }
  return false;
}
float red_map(float X, float M) {
  switch (pc.fn) {
#define DG_REDUCE(e, v, name, init, comb, map, fin, shift) case v: return map;
#include "../../../ops/reduce.def"
#undef DG_REDUCE
  }
  return X;
}
float red_finish(float A, float N, float M) {
  switch (pc.fn) {
#define DG_REDUCE(e, v, name, init, comb, map, fin, shift) case v: return fin;
#include "../../../ops/reduce.def"
#undef DG_REDUCE
  }
  return A;
}

float comb2(int kind, float a, float b) {
  return kind == MUL ? a * b
       : kind == MAX ? max(a, b)
       : kind == MIN ? min(a, b)
                     : a + b;
}

// Offset of index i over three dims (last fastest): unrolled, no loop.
int off3(int i, int d0, int d1, int d2, int s0, int s1, int s2) {
  int c2 = i % d2;
  i /= d2;
  int c1 = i % d1;
  return (i / d1) * s0 + c1 * s1 + c2 * s2;
}

shared float part[256];

// Folds this invocation's share of output o's elements (from t, step
// apart) by kind; raw: the elements themselves (the max pass), else their
// map. With tree, combines the workgroup's shares; every invocation gets
// the result.
float fold(int base, int t, int step, int kind, float init, bool raw, float M,
           bool tree) {
  float a = init, lost = 0.0;
  for (int i = t; i < pc.count; i += step) {
    float X = float(x[base + off3(i, pc.rdim[0], pc.rdim[1], pc.rdim[2],
                                  pc.rstr[0], pc.rstr[1], pc.rstr[2])]);
    float v = raw ? X : red_map(X, M);
    if (kind == ADD)
      ksum_add(a, lost, v);
    else
      a = comb2(kind, a, v);
  }
  if (kind == ADD)
    a -= lost;
  if (!tree)
    return a;
  part[t] = a;
  barrier();
  for (int w = 128; w > 0; w >>= 1) {
    if (t < w)
      part[t] = comb2(kind, part[t], part[t + w]);
    barrier();
  }
  float r = part[0];
  barrier(); // part is reused by the next fold
  return r;
}

void main() {
  bool tree = pc.per_inv == 0;
  int o, t, step;
  if (tree) {
    o = int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x);
    t = int(gl_LocalInvocationID.x);
    step = 256;
  } else {
    o = int(linear_id());
    t = 0;
    step = 1;
    if (o >= pc.outputs)
      return; // no barrier in this mode
  }
  // Workgroup mode dispatches exactly pc.outputs workgroups but the grid
  // may round up: a workgroup past the end has uniform control flow.
  if (tree && o >= pc.outputs)
    return;
  int base = off3(o, pc.kdim[0], pc.kdim[1], pc.kdim[2], pc.kstr[0],
                  pc.kstr[1], pc.kstr[2]);
  float M = 0.0;
  if (red_shift())
    M = fold(base, t, step, MAX, -f_inf(), true, 0.0, tree);
  float A = fold(base, t, step, red_comb(), red_init(), false, M, tree);
  if (t == 0)
    y[o] = TO_DT(red_finish(A, float(pc.count), M));
}
