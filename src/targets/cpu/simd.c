/* Run-time choice of the SIMD level used by the CPU kernels.
 *
 * The level is detected once and cached; DG_CPU_SIMD may only lower it so
 * that a test can exercise every path the machine supports, never enable a
 * path the CPU would fault on.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* syscall(), for the AMX grant */
#include "core/env.h"
#include "cpu_kernels.h"

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif
#if (defined(__x86_64__) || defined(__i386__)) && defined(__linux__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* The only mutable global: -1 until the first query. A race between two
 * first queries is harmless because both compute the same value. */
static _Atomic int simd_level = -1;

/* AMX-INT8 (the int8 GEMM's tile kernel, qgemm_x86.c): the CPU has it
 * (CPUID 7.0 EDX bits 24 and 25), the OS saves tile state (XCR0 bits 17
 * and 18), and Linux grants this process the tile data
 * (ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA, since 5.16; a sandbox
 * that refuses the call leaves the VNNI kernels). Asked once: the grant
 * is the process's, for every thread. */
#if defined(__x86_64__) || defined(__i386__)
static int amx_ask(void) {
#if defined(__x86_64__) && defined(__linux__)
  unsigned a, b, c, d;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(d & (1u << 24)) ||
      !(d & (1u << 25)))
    return 0;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) /* OSXSAVE */
    return 0;
  unsigned lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  if ((lo & (3u << 17)) != (3u << 17))
    return 0;
  const long arch_req_xcomp_perm = 0x1023, xfeature_xtiledata = 18;
  return syscall(SYS_arch_prctl, arch_req_xcomp_perm, xfeature_xtiledata) == 0;
#else
  return 0;
#endif
}

/* amx_ask's answer, kept (-1 until asked): detect() runs again at every
 * dg_cpu_simd_force, and two first askers agree, as for simd_level. */
static _Atomic int amx_answer = -1;

static int amx_usable(void) {
  int a = atomic_load_explicit(&amx_answer, memory_order_relaxed);
  if (a < 0) {
    a = amx_ask();
    atomic_store_explicit(&amx_answer, a, memory_order_relaxed);
  }
  return a;
}
#endif

static int detect(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("fma")) {
    /* VNNI is only used by qgemm; without it qgemm uses the int16 path. */
    if (__builtin_cpu_supports("avx512vnni"))
      return amx_usable() ? DG_CPU_SIMD_AMX : DG_CPU_SIMD_AVX512_VNNI;
    return DG_CPU_SIMD_AVX512;
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return DG_CPU_SIMD_AVX2;
  return DG_CPU_SIMD_PORTABLE;
#elif defined(__aarch64__)
  return DG_CPU_SIMD_NEON;
#else
  return DG_CPU_SIMD_PORTABLE;
#endif
}

/* Lowers `level` to what `name` asks for; unknown names change nothing. */
static int lower_to(int level, const char *name) {
  if (!name || !*name)
    return level;
  int want = level;
  if (!strcmp(name, "portable"))
    want = DG_CPU_SIMD_PORTABLE;
  else if (!strcmp(name, "avx2"))
    want = DG_CPU_SIMD_AVX2;
  else if (!strcmp(name, "avx512"))
    want = DG_CPU_SIMD_AVX512_VNNI; /* clipped to what exists below */
  else if (!strcmp(name, "amx"))
    want = DG_CPU_SIMD_AMX;
  else if (!strcmp(name, "neon"))
    want = DG_CPU_SIMD_NEON;
  /* NEON and the x86 levels are not comparable: only "portable" lowers
   * NEON, and "neon" never applies on x86. */
  if (level == DG_CPU_SIMD_NEON)
    return want == DG_CPU_SIMD_PORTABLE ? want : level;
  if (want == DG_CPU_SIMD_NEON)
    return level;
  return want < level ? want : level;
}

int dg_cpu_simd_level(void) {
  int level = atomic_load_explicit(&simd_level, memory_order_relaxed);
  if (level < 0) {
    level = lower_to(detect(), dg_env(DG_ENV_CPU_SIMD));
    atomic_store_explicit(&simd_level, level, memory_order_relaxed);
  }
  return level;
}

void dg_cpu_simd_force(const char *name) {
  /* Starts from the hardware level, so forcing "avx512" after "portable"
   * restores the fast path (tests switch back and forth). */
  int level = lower_to(detect(), name);
  atomic_store_explicit(&simd_level, level, memory_order_relaxed);
}

int dg_cpu_neon_has_dot(void) {
#if defined(__aarch64__) && defined(__linux__)
  /* HWCAP_ASIMDDP (arch/arm64/include/uapi/asm/hwcap.h): the kernel's
   * word for ARMv8.2's SDOT/UDOT. Cheap to ask: getauxval reads a copy. */
  const unsigned long asimddp = 1ul << 20;
  return dg_cpu_simd_level() == DG_CPU_SIMD_NEON &&
         (getauxval(AT_HWCAP) & asimddp) != 0;
#else
  return 0;
#endif
}

const char *dg_cpu_simd_name(void) {
  switch (dg_cpu_simd_level()) {
  case DG_CPU_SIMD_AMX:
    return "amx";
  case DG_CPU_SIMD_AVX512_VNNI:
  case DG_CPU_SIMD_AVX512:
    return "avx512";
  case DG_CPU_SIMD_AVX2:
    return "avx2";
  case DG_CPU_SIMD_NEON:
    return "neon";
  default:
    return "portable";
  }
}
