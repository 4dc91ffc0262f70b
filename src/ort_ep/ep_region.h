/* The state of one region build, as the op translators see it: the
 * current node, its inputs/outputs, and the value -> tensor table. */
#ifndef DG_ORT_EP_REGION_H
#define DG_ORT_EP_REGION_H

#include "ep_internal.h"

typedef struct ep_value {
  char *name;
  dg_tensor t;
  bool produced; /* by a node of the region (not an input/constant) */
} ep_value;

struct ep_region {
  const ep_ort *o;
  dg_graph *g;
  /* current node */
  const OrtNode *node;
  const char *node_name;
  int opset;
  const OrtValueInfo **in;
  int nin;
  const OrtValueInfo **out;
  int nout;
  /* every value built so far */
  ep_value *values;
  int nvalues, cap;
  char *err;
  size_t errlen;
  bool failed;
};

/* Records the first failure, naming the node and the field. */
void rg_fail(ep_region *r, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
bool rg_has_input(const ep_region *r, int i);
/* Input i's constant initializer, if it is one. */
bool rg_const(ep_region *r, int i, ep_const *c);
/* Input i as a tensor: built earlier in the region, or a new graph input
 * or constant. quant applies to integer tensors created here; an integer
 * tensor that already exists must carry the same quantisation. */
dg_tensor rg_input(ep_region *r, int i, const dg_quant_params *quant,
                   bool optional);
/* Binds t to output i after checking dtype and dims against ORT's. */
void rg_output(ep_region *r, int i, dg_tensor t);
/* Checks the graph's sticky error; true (and err set) if it failed. */
bool rg_check(ep_region *r);
/* Float/int values of a small constant input (false + error if not). */
bool rg_const_floats(ep_region *r, int i, float *out, int max, int *n);
bool rg_const_ints(ep_region *r, int i, int64_t *out, int max, int *n);

#endif
