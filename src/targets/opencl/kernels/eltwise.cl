/* Softmax along any axis, one row (len elements, inner apart) per
 * work-item, or log_softmax (E_LOGSM). relu, clip and sigmoid are
 * unary.cl's functions, add binary.cl's. */
#pragma OPENCL FP_CONTRACT ON

kernel __attribute__((reqd_work_group_size(WG1, 1, 1))) void
softmax_f32(const global void *x, global void *y, constant int *g) {
  const int row = get_global_id(0);
  const int inner = g[E_INNER], len = g[E_LEN];
  if (row >= g[E_OUTER] * inner)
    return;
  const int hio = g[E_HIO];
  const int o = row / inner, j = row - o * inner;
  const int base = o * len * inner + j;
  float mx = -INFINITY, s = 0.0f, lost = 0.0f;
  for (int k = 0; k < len; k++) {
    float v = ld_f(x, base + k * inner, hio);
    mx = v > mx ? v : mx;
  }
  for (int k = 0; k < len; k++) /* compensated: rows may be 64M long */
    ksum_add(&s, &lost, exp(ld_f(x, base + k * inner, hio) - mx));
  if (g[E_LOGSM]) {
    float ls = log(s);
    for (int k = 0; k < len; k++)
      st_f(y, base + k * inner, ld_f(x, base + k * inner, hio) - mx - ls, hio);
    return;
  }
  float inv = 1.0f / s;
  for (int k = 0; k < len; k++)
    st_f(y, base + k * inner, exp(ld_f(x, base + k * inner, hio) - mx) * inv,
         hio);
}
