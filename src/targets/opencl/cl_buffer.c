/* Device buffers (graph.h's dg_buffer) on an OpenCL device: one cl_mem,
 * which a run copies on the device into and out of its segment's own
 * buffers (cl_segment.c), and which the host reads and writes with
 * blocking transfers. OpenCL deletes a buffer only once the commands
 * using it are done, so a destroy never frees memory under the device. */
#include "cl_internal.h"

#include <stdlib.h>

dg_status dg_cl_buffer_new(dg_device *dev, size_t bytes, void **out,
                           dg_diagnostic *diag) {
  dg_cl_device *d = dev->impl;
  cl_int err = CL_SUCCESS;
  cl_mem_flags flags = CL_MEM_READ_WRITE;
  if (d->host_unified)
    flags |= CL_MEM_ALLOC_HOST_PTR;
  cl_mem m = dg_cl_buffer(d->context, flags, bytes, NULL, &err);
  *out = m;
  if (m)
    return DG_OK;
  dg_status st = dg_cl_fail(diag, err, -1, NULL, "clCreateBuffer (dg_buffer)");
  return st == DG_OK ? DG_ERROR_DEVICE : st;
}

void dg_cl_buffer_release(dg_device *dev, void *buf) {
  (void)dev;
  dg_cl_buffer_free(buf);
}

/* The queue is in order and every run waits for its work, so a blocking
 * transfer waits only for itself; after a time-out the device is not used
 * again (its queue may never drain), as its runs are not. */
dg_status dg_cl_buffer_copy(dg_device *dev, void *buf, void *host, size_t bytes,
                            bool to_device, dg_diagnostic *diag) {
  dg_cl_device *d = dev->impl;
  const char *call = to_device ? "clEnqueueWriteBuffer (dg_buffer_write)"
                               : "clEnqueueReadBuffer (dg_buffer_read)";
  if (atomic_load(&d->timed_out)) {
    dg_diag_set(diag, DG_ERROR_DEVICE, -1, NULL, call, NULL, NULL, "timed out",
                "opencl (%s): the device timed out in an earlier run and is "
                "not used again",
                d->name);
    return DG_ERROR_DEVICE;
  }
  cl_int err = to_device ? clEnqueueWriteBuffer(d->queue, buf, CL_TRUE, 0,
                                                bytes, host, 0, NULL, NULL)
                         : clEnqueueReadBuffer(d->queue, buf, CL_TRUE, 0, bytes,
                                               host, 0, NULL, NULL);
  return err == CL_SUCCESS ? DG_OK : dg_cl_fail(diag, err, -1, NULL, call);
}
