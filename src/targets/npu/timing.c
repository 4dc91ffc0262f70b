/* The NPU timing model (timing.h); its constants, one table, with their
 * sources in docs/npu.md ("Timing model"). */
#include "timing.h"

/* The model's constants. */
static const struct {
  double clock_mhz;        /* the NPU's clock: 1 GHz */
  double int8_macs;        /* int8 MACs per cycle per core: 1024 (2 TOPS) */
  double f16_macs;         /* fp16: a quarter of int8 (assumed) */
  double efficiency;       /* of the MAC array on dense convs: calibrated */
  double depthwise_factor; /* a depthwise task uses 1 kernel of 32 */
  double ddr_gbps;         /* NPU share of DRAM bandwidth: calibrated */
  double irq_us;           /* a completion interrupt and restart (Mesa) */
  double submit_us;        /* per job: submit and cache syncs (Mesa) */
  double pc_task_us;       /* rknpu: the PC fetching a task's list */
  double host_gbps;        /* CPU packing/unpacking, one A76 core */
  double cube_gbps;        /* cube to cube copies between NPU nodes */
} M = {1000.0, 1024.0, 256.0, 0.45, 1.0 / 32, 7.0, 50.0, 12.0, 2.0, 2.0, 8.0};

static double task_macs(const npu_task *t) {
  const npu_conv_desc *d = &t->d;
  double per_out = (double)d->k_h * d->k_w * (d->depthwise ? 1 : d->in_c);
  return per_out * d->out_c * d->out_h * d->out_w;
}

void dg_npu_timing_conv(const npu_conv *c, npu_timing *t) {
  *t = (npu_timing){0};
  double rate = (c->f16 ? M.f16_macs : M.int8_macs) * M.clock_mhz *
                M.efficiency; /* MACs per us */
  double busy = 0, per_core[3] = {0, 0, 0}, ddr_all = 0;
  for (int i = 0; i < c->task_count; i++) {
    const npu_task *k = &c->tasks[i];
    double mac_us =
        task_macs(k) / (rate * (k->d.depthwise ? M.depthwise_factor : 1.0));
    /* A slice that keeps its block's weights in the CBUF does not fetch
     * them (on one core; split over three, a core's first slice does). */
    double io = (double)k->plan.input_bytes + k->plan.output_bytes;
    double w = k->plan.weight_bytes;
    double ddr_us = (io + (dg_npu_task_reuses_weights(c, i, 1) ? 0 : w)) /
                    (M.ddr_gbps * 1e3);
    double ddr3_us = (io + (dg_npu_task_reuses_weights(c, i, 3) ? 0 : w)) /
                     (M.ddr_gbps * 1e3);
    t->compute_us += mac_us;
    t->ddr_us += ddr_us;
    ddr_all += ddr3_us;
    busy += mac_us > ddr_us ? mac_us : ddr_us;
    per_core[i % 3] += mac_us;
  }
  int jobs = (c->task_count + NPU_JOB_MAX_TASKS - 1) / NPU_JOB_MAX_TASKS;
  t->task_us = M.pc_task_us * c->task_count;
  t->job_us = (M.submit_us + M.irq_us) * jobs;
  double elem = c->f16 ? 2 : 1;
  double in_bytes = elem * c->C * c->H * c->W;
  double out_bytes = c->out_on_npu ? 0 : elem * c->O * c->OH * c->OW;
  /* An input from another NPU node's cubes is a copy of rows, not a
   * layout conversion; an output only NPU nodes read is not unpacked. */
  t->host_us = (c->from_npu ? 0 : in_bytes) / (M.host_gbps * 1e3) +
               (c->from_npu ? in_bytes : 0) / (M.cube_gbps * 1e3) +
               out_bytes / (M.host_gbps * 1e3);
  t->total_us = t->task_us + t->job_us + t->host_us + busy;
  t->rocket_us =
      M.irq_us * c->task_count + M.submit_us * jobs + t->host_us + busy;
  /* Three cores: each runs a third of the tasks (and their fetches, and
   * a job with its interrupt each); DRAM is one for all. */
  double slowest = per_core[0];
  for (int k = 1; k < 3; k++)
    slowest = per_core[k] > slowest ? per_core[k] : slowest;
  int per = (c->task_count + 2) / 3; /* tasks of the busiest core */
  double fixed3 = M.pc_task_us * per +
                  (M.submit_us + M.irq_us) *
                      ((per + NPU_JOB_MAX_TASKS - 1) / NPU_JOB_MAX_TASKS);
  double work3 = slowest > ddr_all ? slowest : ddr_all;
  t->total3_us = fixed3 + t->host_us + work3;
}
