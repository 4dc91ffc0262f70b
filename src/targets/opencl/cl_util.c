/* Error names and status mapping for CL return codes, and buffer creation
 * with the allocation-failure injection tests use (cl_test.h). */
#define _POSIX_C_SOURCE 200809L
#include "cl_internal.h"
#include "core/env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

dg_opencl_stats dg_cl_stats;
static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;

void dg_cl_stat_add(int *counter, int delta) {
  pthread_mutex_lock(&stats_lock);
  *counter += delta;
  pthread_mutex_unlock(&stats_lock);
}

void dg_cl_get_stats(dg_opencl_stats *out) {
  pthread_mutex_lock(&stats_lock);
  *out = dg_cl_stats;
  pthread_mutex_unlock(&stats_lock);
}

const char *dg_cl_error_name(cl_int err) {
  switch (err) {
#define E(x)                                                                   \
  case x:                                                                      \
    return #x;
    E(CL_SUCCESS)
    E(CL_DEVICE_NOT_FOUND)
    E(CL_DEVICE_NOT_AVAILABLE)
    E(CL_COMPILER_NOT_AVAILABLE)
    E(CL_MEM_OBJECT_ALLOCATION_FAILURE) E(CL_OUT_OF_RESOURCES) E(
        CL_OUT_OF_HOST_MEMORY) E(CL_PROFILING_INFO_NOT_AVAILABLE) E(CL_MEM_COPY_OVERLAP)
        E(CL_IMAGE_FORMAT_MISMATCH) E(CL_IMAGE_FORMAT_NOT_SUPPORTED) E(
            CL_BUILD_PROGRAM_FAILURE) E(CL_MAP_FAILURE) E(CL_MISALIGNED_SUB_BUFFER_OFFSET)
            E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) E(
                CL_COMPILE_PROGRAM_FAILURE) E(CL_LINKER_NOT_AVAILABLE) E(CL_LINK_PROGRAM_FAILURE)
                E(CL_DEVICE_PARTITION_FAILED) E(CL_KERNEL_ARG_INFO_NOT_AVAILABLE) E(
                    CL_INVALID_VALUE) E(CL_INVALID_DEVICE_TYPE) E(CL_INVALID_PLATFORM)
                    E(CL_INVALID_DEVICE) E(CL_INVALID_CONTEXT) E(
                        CL_INVALID_QUEUE_PROPERTIES) E(CL_INVALID_COMMAND_QUEUE)
                        E(CL_INVALID_HOST_PTR) E(CL_INVALID_MEM_OBJECT) E(
                            CL_INVALID_IMAGE_FORMAT_DESCRIPTOR) E(CL_INVALID_IMAGE_SIZE)
                            E(CL_INVALID_SAMPLER) E(CL_INVALID_BINARY) E(
                                CL_INVALID_BUILD_OPTIONS) E(CL_INVALID_PROGRAM)
                                E(CL_INVALID_PROGRAM_EXECUTABLE) E(
                                    CL_INVALID_KERNEL_NAME) E(CL_INVALID_KERNEL_DEFINITION)
                                    E(CL_INVALID_KERNEL) E(CL_INVALID_ARG_INDEX) E(
                                        CL_INVALID_ARG_VALUE) E(CL_INVALID_ARG_SIZE)
                                        E(CL_INVALID_KERNEL_ARGS) E(
                                            CL_INVALID_WORK_DIMENSION) E(CL_INVALID_WORK_GROUP_SIZE)
                                            E(CL_INVALID_WORK_ITEM_SIZE) E(
                                                CL_INVALID_GLOBAL_OFFSET)
                                                E(CL_INVALID_EVENT_WAIT_LIST) E(
                                                    CL_INVALID_EVENT) E(CL_INVALID_OPERATION)
                                                    E(CL_INVALID_GL_OBJECT) E(
                                                        CL_INVALID_BUFFER_SIZE)
                                                        E(CL_INVALID_MIP_LEVEL) E(
                                                            CL_INVALID_GLOBAL_WORK_SIZE)
                                                            E(CL_INVALID_PROPERTY) E(
                                                                CL_INVALID_IMAGE_DESCRIPTOR)
                                                                E(CL_INVALID_COMPILER_OPTIONS)
                                                                    E(CL_INVALID_LINKER_OPTIONS)
                                                                        E(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef E
  }
  return "unknown CL error";
}

dg_status dg_cl_status(cl_int err) {
  return err == CL_MEM_OBJECT_ALLOCATION_FAILURE ||
                 err == CL_OUT_OF_RESOURCES || err == CL_OUT_OF_HOST_MEMORY
             ? DG_ERROR_OUT_OF_MEMORY
             : DG_ERROR_DEVICE;
}

dg_status dg_cl_fail(dg_diagnostic *diag, cl_int err, int node_index,
                     const dg_node *node, const char *call) {
  dg_status st = dg_cl_status(err);
  char shown[DG_NAME_SHORT];
  dg_name_shorten(shown, sizeof shown, node ? node->name : NULL);
  if (node)
    dg_diag_set(diag, st, node_index, node->name, dg_op_name(node->op), call,
                "CL_SUCCESS", dg_cl_error_name(err),
                "opencl: %s failed with %s (%d) for node %d '%s' (%s)", call,
                dg_cl_error_name(err), (int)err, node_index, shown,
                dg_op_name(node->op));
  else
    dg_diag_set(diag, st, -1, NULL, call, call, "CL_SUCCESS",
                dg_cl_error_name(err), "opencl: %s failed with %s (%d)", call,
                dg_cl_error_name(err), (int)err);
  return st;
}

/* Injection state: the count restarts whenever the variable's value
 * changes, so a test can step N without a reset call. */
static pthread_mutex_t inject_lock = PTHREAD_MUTEX_INITIALIZER;
static char inject_seen[32];
static long inject_count;

static bool inject_failure(void) {
  const char *e = dg_env(DG_ENV_TEST_OPENCL_FAIL_ALLOC);
  bool fail = false;
  pthread_mutex_lock(&inject_lock);
  if (!e || !*e) {
    inject_seen[0] = 0;
  } else {
    if (strncmp(e, inject_seen, sizeof inject_seen)) {
      snprintf(inject_seen, sizeof inject_seen, "%s", e);
      inject_count = 0;
    }
    fail = ++inject_count == strtol(e, NULL, 10);
  }
  pthread_mutex_unlock(&inject_lock);
  return fail;
}

cl_mem dg_cl_buffer(cl_context ctx, cl_mem_flags flags, size_t size, void *host,
                    cl_int *err) {
  if (inject_failure()) {
    *err = CL_MEM_OBJECT_ALLOCATION_FAILURE;
    return NULL;
  }
  cl_mem m = clCreateBuffer(ctx, flags, size, host, err);
  if (m)
    dg_cl_stat_add(&dg_cl_stats.buffers, 1);
  return m;
}

void dg_cl_buffer_free(cl_mem m) {
  if (!m)
    return;
  clReleaseMemObject(m);
  dg_cl_stat_add(&dg_cl_stats.buffers, -1);
}
