/* Prints our generator's command list for one-task convs read from stdin,
 * for tests/npu/mesa_compare.py (Mesa's captured lists against ours).
 * A line: in_c in_h in_w out_c out_h out_w k stride pad_top pad_left dw
 * x_zp w_zp y_zp multiplier(fp32 bits, hex) reuse(0/1); the int8 domain
 * (zero points signed). Out: "list N" and its words as "target value
 * register" in hex (addresses 0 plus the task's offsets: none), or
 * "fail REASON". WEIGHT_REUSE is set where reuse is 1 (what the runtime
 * sets for a slice whose weights its core holds, conv_exec.c). */
#include "targets/npu/gen.h"

#include <stdio.h>
#include <string.h>

int main(void) {
  char line[512];
  int n = 0;
  while (fgets(line, sizeof line, stdin)) {
    int v[16];
    unsigned mbits;
    if (sscanf(line, "%d %d %d %d %d %d %d %d %d %d %d %d %d %d %x %d", &v[0],
               &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9],
               &v[10], &v[11], &v[12], &v[13], &mbits, &v[14]) != 16) {
      printf("fail unreadable request: %s", line);
      return 1;
    }
    float m;
    memcpy(&m, &mbits, sizeof m);
    npu_conv_desc d = {.in_c = v[0],
                       .in_h = v[1],
                       .in_w = v[2],
                       .out_c = v[3],
                       .out_h = v[4],
                       .out_w = v[5],
                       .k_h = v[6],
                       .k_w = v[6],
                       .stride_y = v[7],
                       .stride_x = v[7],
                       .pad_top = v[8],
                       .pad_left = v[9],
                       .depthwise = v[10] != 0,
                       .x_zp = v[11],
                       .w_zp = v[12],
                       .y_zp = v[13],
                       .multiplier = m};
    npu_stream s;
    char why[256];
    printf("list %d\n", n++);
    if (!dg_npu_gen_conv(&d, &s, why, sizeof why)) {
      printf("fail %s\n", why);
      continue;
    }
    if (v[14])
      dg_npu_stream_weight_reuse(&s);
    for (int i = 0; i < s.count; i++)
      printf("%04x %08x %04x\n", npu_word_target(s.words[i]),
             npu_word_value(s.words[i]), npu_word_offset(s.words[i]));
  }
  return 0;
}
