// The pooling window rules of the reference (src/ops/pool.c), shared by
// pool.comp and qavg_pool.comp.

// The taps [lo, hi) of a window starting at s0 (k taps, dilation d)
// that fall in [0, n), as cpu_ops.c's pool_taps. With n the input's
// extent plus its end padding, hi alone counts the taps inside the padded
// input (every tap from the start, which is never before the begin
// padding).
ivec2 taps(int s0, int k, int d, int n) {
  int lo = s0 < 0 ? (-s0 + d - 1) / d : 0;
  int hi = s0 >= n ? 0 : min(k, (n - 1 - s0) / d + 1);
  return ivec2(lo, max(hi, lo));
}
