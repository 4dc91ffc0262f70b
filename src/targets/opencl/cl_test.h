/* Test hooks of the OpenCL target, for tests/test_opencl.c (plain C: no
 * OpenCL types, so tests need no CL headers).
 *
 * Environment variables read by the target:
 *   DG_TEST_OPENCL_FAIL_ALLOC=N  the N-th clCreateBuffer counted from when
 *       the variable last changed value fails with
 *       CL_MEM_OBJECT_ALLOCATION_FAILURE (so a test can loop N = 1, 2, ...)
 *   DG_TEST_OPENCL_BROKEN_SOURCE=1  programs are built from a source with a
 *       compile error appended (never cached), to test build diagnostics.
 */
#ifndef DG_CL_TEST_H
#define DG_CL_TEST_H

typedef struct dg_opencl_stats {
  int source_builds;       /* programs built from source */
  int cache_loads;         /* programs created from a cached binary */
  int cache_rejects;       /* cache entries found corrupt or foreign */
  int cache_writes;        /* cache entries written */
  int buffers;             /* buffers created and not yet released */
  int host_buffers;        /* tensor buffers ever created host-accessible */
  int staging_buffers;     /* segments' host staging buffers ever made */
  int estimate_mismatches; /* nodes compiled with another kernel than the
                              cost model priced (a bug if ever non-zero) */
  int staged_tensors;      /* run inputs and outputs copied through the host */
  int resident_copies;     /* ... copied on the device from or to a dg_buffer */
} dg_opencl_stats;

/* Counters since the process started. */
void dg_cl_get_stats(dg_opencl_stats *out);

/* The cache file an OpenCL device's program uses (for tests that damage
 * it); returns 0 when there is none or dev is not an OpenCL device. */
typedef struct dg_device dg_device;
int dg_cl_cache_path(const dg_device *dev, char *buf, unsigned long size);

/* Waits, without a bound, until everything queued on an OpenCL device
 * has finished (clFinish), so that a test can look at what a timed-out
 * run's work did once it ended; returns 0 when dev is not an OpenCL
 * device or clFinish failed. */
int dg_cl_test_finish(const dg_device *dev);

#endif
