#define _POSIX_C_SOURCE 200809L
/* The memory planner (src/core/memplan.h) and the host plan made with it:
 * - random blocks: every offset aligned and past the base, no two blocks
 *   live at one step (or either pinned) share a byte, the arena ends at
 *   the highest block;
 * - cases worked by hand: a chain reuses two slots, pinned blocks stack,
 *   a block fits a gap between live ones, overflow is reported;
 * - shared whole buffers: never two blocks live together in one, best fit;
 * - lifetimes of a node sequence;
 * - the session's host arena, read from the plan table: a chain on the
 *   CPU gets two slots, the same chain on a device with its own memory
 *   only its output. */
#include "core/memplan.h"
#include "graph.h"
#include "harness.h"
#include "runtime/internal.h"

#include <stdint.h>
#include <string.h>

static bool live_together(const dg_mem_block *a, const dg_mem_block *b) {
  return a->pinned || b->pinned || !(a->last < b->first || b->last < a->first);
}

static void random_blocks(void) {
  int bad_align = 0, clashes = 0, bad_top = 0, trials = 300;
  t_seed(7);
  for (int trial = 0; trial < trials; trial++) {
    dg_mem_block b[64];
    int n = t_range(1, 64);
    size_t align = (size_t)1 << t_range(0, 8), base = (size_t)t_range(0, 300);
    for (int i = 0; i < n; i++) {
      int f = t_range(0, 40);
      b[i] = (dg_mem_block){(size_t)t_range(0, 5000), f, f + t_range(0, 10),
                            t_range(0, 9) == 0, 0};
    }
    bool oom;
    size_t top = dg_memplan_place(b, n, align, base, &oom);
    size_t end = base;
    for (int i = 0; i < n; i++) {
      bad_align += b[i].offset % align != 0 || b[i].offset < base;
      if (b[i].offset + b[i].size > end)
        end = b[i].offset + b[i].size;
      for (int j = 0; j < i; j++)
        clashes += b[i].size && b[j].size && live_together(&b[i], &b[j]) &&
                   b[i].offset < b[j].offset + b[j].size &&
                   b[j].offset < b[i].offset + b[i].size;
    }
    bad_top += oom || top != end;
  }
  CHECK(!bad_align && !clashes && !bad_top,
        "memplan: %d random plans: %d misaligned, %d pairs of live blocks "
        "sharing bytes, %d wrong arena sizes",
        trials, bad_align, clashes, bad_top);
}

static void worked_cases(void) {
  /* a -> b -> c -> d, each read by the next: two slots suffice. */
  dg_mem_block chain[4];
  for (int i = 0; i < 4; i++)
    chain[i] = (dg_mem_block){1000, i, i + 1, false, 0};
  bool oom;
  size_t top = dg_memplan_place(chain, 4, 64, 0, &oom);
  CHECK(top == 1024 + 1000 && chain[0].offset == 0 && chain[1].offset == 1024 &&
            chain[2].offset == 0 && chain[3].offset == 1024,
        "memplan: a chain of four 1000-byte values uses two 64-aligned "
        "slots (%zu bytes, offsets %zu %zu %zu %zu)",
        top, chain[0].offset, chain[1].offset, chain[2].offset,
        chain[3].offset);

  for (int i = 0; i < 4; i++)
    chain[i].pinned = true;
  top = dg_memplan_place(chain, 4, 64, 64, &oom);
  CHECK(top == 64 + 3 * 1024 + 1000 && chain[3].offset == 64 + 3 * 1024,
        "memplan: pinned blocks never share: stacked from the base (%zu "
        "bytes)",
        top);

  /* Live at step 5: [0,100) and [300,400); a 150-byte block fits at 100,
   * a 250-byte one only above 400. */
  dg_mem_block gap[4] = {{100, 0, 9, false, 0},
                         {200, 0, 1, false, 0},
                         {100, 0, 9, false, 0},
                         {150, 5, 6, false, 0}};
  top = dg_memplan_place(gap, 4, 1, 0, &oom);
  CHECK(gap[3].offset == 100 && top == 400,
        "memplan: a block takes the lowest gap between live blocks (offset "
        "%zu, arena %zu)",
        gap[3].offset, top);
  gap[3].size = 250;
  top = dg_memplan_place(gap, 4, 1, 0, &oom);
  CHECK(gap[3].offset == 400 && top == 650,
        "memplan: a block too big for the gap goes above (offset %zu)",
        gap[3].offset);

  dg_mem_block huge[2] = {{SIZE_MAX / 2 + 1, 0, 1, false, 0},
                          {SIZE_MAX / 2 + 1, 1, 2, false, 0}};
  top = dg_memplan_place(huge, 2, 64, 0, &oom);
  CHECK(top == SIZE_MAX && !oom,
        "memplan: an arena past SIZE_MAX is reported as overflow");
  top = dg_memplan_place(NULL, 0, 64, 100, &oom);
  CHECK(top == 100 && !oom, "memplan: no blocks: the arena is the base");
}

static void shared_buffers(void) {
  int clashes = 0, small = 0, pinned_shared = 0, trials = 300;
  t_seed(11);
  for (int trial = 0; trial < trials; trial++) {
    dg_mem_block b[64];
    size_t sizes[64];
    int n = t_range(1, 64);
    for (int i = 0; i < n; i++) {
      int f = t_range(0, 40);
      b[i] = (dg_mem_block){(size_t)t_range(1, 5000), f, f + t_range(0, 10),
                            t_range(0, 9) == 0, 0};
    }
    int nb = dg_memplan_share(b, n, sizes);
    for (int i = 0; i < n; i++) {
      small +=
          nb < 1 || b[i].offset >= (size_t)nb || sizes[b[i].offset] < b[i].size;
      for (int j = 0; j < i; j++)
        if (b[i].offset == b[j].offset) {
          clashes += live_together(&b[i], &b[j]);
          pinned_shared += b[i].pinned || b[j].pinned;
        }
    }
  }
  CHECK(!clashes && !small && !pinned_shared,
        "memplan share: %d random plans: %d pairs live together in one "
        "buffer, %d blocks in a buffer too small, %d pinned blocks sharing",
        trials, clashes, small, pinned_shared);
  /* Dead at step 2: buffers of 100 and 300 bytes; 90 takes the 100. */
  dg_mem_block c[4] = {{300, 0, 1, false, 0},
                       {100, 0, 1, false, 0},
                       {90, 2, 3, false, 0},
                       {400, 2, 3, false, 0}};
  size_t sizes[4];
  int nb = dg_memplan_share(c, 4, sizes);
  CHECK(nb == 3 && c[2].offset == 1 && c[3].offset == 2 && sizes[2] == 400,
        "memplan share: best fit among dead buffers, a new one when none "
        "is big enough (%d buffers, 90 bytes in buffer %zu)",
        nb, c[2].offset);
}

static dg_graph *relu_chain(dg_context *ctx, int device) {
  dg_graph *g = dg_graph_create(ctx, "chain");
  dg_tensor_desc d = {.dtype = DG_DTYPE_F32, .rank = 4, .dims = {1, 4, 16, 16}};
  dg_graph_set_device(g, device);
  dg_tensor t = dg_graph_input(g, "x", &d);
  for (int i = 0; i < 3; i++)
    t = dg_graph_relu(g, NULL, t);
  dg_graph_output(g, "y", t, DG_LAYOUT_NCHW);
  return g;
}

static void lifetimes(dg_context *ctx) {
  dg_graph *g = relu_chain(ctx, -1);
  const dg_ir *ir = &g->ir;
  int first[16], last[16], nodes[3] = {0, 1, 2}, touched = 0;
  uint32_t order[16];
  bool fits = ir->tensor_count < 16 && ir->node_count == 3;
  if (fits)
    touched = dg_memplan_lifetimes(ir, nodes + 1, 2, first, last, order);
  /* Steps count from the sequence's first node (node 1). */
  uint32_t x1 = fits ? ir->nodes[1].inputs[0] : 0;
  uint32_t y1 = fits ? ir->nodes[1].output : 0;
  uint32_t y2 = fits ? ir->nodes[2].output : 0;
  uint32_t in = fits ? ir->nodes[0].inputs[0] : 0;
  CHECK(fits && first[x1] == 0 && last[x1] == 0 && first[y1] == 0 &&
            last[y1] == 1 && first[y2] == 1 && last[y2] == 1 &&
            first[in] == -1 && touched == 3 && order[0] == y1 &&
            order[1] == x1 && order[2] == y2,
        "memplan: lifetimes over a node sequence, untouched tensors -1, "
        "the touched ones listed once in order of first use");
  dg_graph_destroy(g);
}

/* The host bytes the plan table reports for a compiled graph. */
static long host_bytes(dg_session *s) {
  char buf[8192] = "";
  FILE *f = fmemopen(buf, sizeof buf - 1, "w");
  if (!f)
    return -1;
  dg_plan_write(dg_session_plan(s), DG_PLAN_FORMAT_TABLE, f);
  fclose(f);
  const char *at = strstr(buf, "segment(s), ");
  long v = -1;
  if (!at || sscanf(at, "segment(s), %ld bytes of host memory", &v) != 1)
    return -1;
  return v;
}

static void host_plan(dg_context *ctx) {
  int own = -1; /* a device with memory of its own */
  for (int i = 0; i < dg_context_device_count(ctx) && own < 0; i++) {
    dg_device_info in;
    if (dg_context_device_info(ctx, i, &in) == DG_OK &&
        (in.kind == DG_DEVICE_VULKAN || in.kind == DG_DEVICE_OPENCL))
      own = i;
  }
  dg_compile_options co = {.policy = DG_POLICY_STRICT};
  dg_graph *g = relu_chain(ctx, 0);
  dg_session *s = NULL;
  dg_status st = dg_graph_compile(g, &co, &s, NULL);
  long cpu = st == DG_OK ? host_bytes(s) : -1;
  /* 4096-byte values: a and b alternate, the output reuses a's slot. */
  CHECK(cpu == 8192,
        "host plan: a three-relu chain on the CPU gets two "
        "4096-byte slots (%ld bytes)",
        cpu);
  dg_session_destroy(s);
  dg_graph_destroy(g);
  if (own < 0) {
    t_skip("host plan on a device with its own memory: no Vulkan or OpenCL "
           "device here");
    return;
  }
  g = relu_chain(ctx, own);
  s = NULL;
  st = dg_graph_compile(g, &co, &s, NULL);
  long dev = st == DG_OK ? host_bytes(s) : -1;
  CHECK(dev == 4096,
        "host plan: the same chain on device %d holds only its "
        "output on the host (%ld bytes)",
        own, dev);
  float x[1024], y[1024];
  for (int i = 0; i < 1024; i++)
    x[i] = (float)(i % 7) - 3.0f;
  dg_binding in = {"x", x, sizeof x}, out = {"y", y, sizeof y};
  st = s ? dg_session_run(s, &in, 1, &out, 1, NULL) : DG_ERROR_DEVICE;
  int wrong = 0;
  for (int i = 0; i < 1024; i++)
    wrong += y[i] != (x[i] > 0 ? x[i] : 0);
  CHECK(st == DG_OK && !wrong, "host plan: and it runs right (%d wrong)",
        wrong);
  dg_session_destroy(s);
  dg_graph_destroy(g);
}

int main(void) {
  random_blocks();
  worked_cases();
  shared_buffers();
  dg_context_options o = {.disable_cache = 1};
  dg_context *ctx = NULL;
  if (dg_context_create(&o, &ctx) != DG_OK) {
    CHECK(0, "context");
    return t_exit();
  }
  lifetimes(ctx);
  host_plan(ctx);
  dg_context_destroy(ctx);
  return t_exit();
}
