/* The library's two exported entry points and the OrtEpFactory: one
 * factory, bound to the CPU hardware device that ORT always reports. The
 * EP drives directgraph's own devices (CPU, Vulkan, OpenCL, NPU) behind
 * it, on host memory, so ORT needs no allocator or data transfer from us. */
#include "ep_internal.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

/* The layout ORT reads (slot k at byte 8k on LP64; slot 0 is the version). */
#define SLOT_AT(type, member, k)                                              \
  _Static_assert(offsetof(type, member) == (k) * sizeof(void *),             \
                 #member " must be slot " #k)
SLOT_AT(dg_ort_ep_factory, GetName, 1);
SLOT_AT(dg_ort_ep_factory, CreateEp, 4);
SLOT_AT(dg_ort_ep_factory, GetVersion, 7);
SLOT_AT(dg_ort_ep_factory, CreateDataTransfer, 11);
SLOT_AT(dg_ort_ep_factory, CreateSyncStreamForDevice, 13);
SLOT_AT(dg_ort_ep, GetCapability, 2);
SLOT_AT(dg_ort_ep, ReleaseNodeComputeInfos, 4);
SLOT_AT(dg_ort_ep, GetCompiledModelCompatibilityInfo, 12);
SLOT_AT(dg_ort_node_compute_info, ReleaseState, 3);

static const char *factory_name(const dg_ort_ep_factory *f) {
  (void)f;
  return DG_EP_NAME;
}
static const char *factory_vendor(const dg_ort_ep_factory *f) {
  (void)f;
  return DG_EP_VENDOR;
}
static uint32_t factory_vendor_id(const dg_ort_ep_factory *f) {
  (void)f;
  return 0; /* not a PCI vendor */
}
static const char *factory_version(const dg_ort_ep_factory *f) {
  (void)f;
  return dg_version_string(); /* semantic version, as ORT wants */
}

static OrtStatus *supported_devices(dg_ort_ep_factory *self,
                                    const OrtHardwareDevice *const *devices,
                                    size_t num_devices, OrtEpDevice **out,
                                    size_t max_out, size_t *num_out) {
  ep_factory *f = (ep_factory *)self;
  *num_out = 0;
  for (size_t i = 0; i < num_devices && *num_out < max_out; i++) {
    if (DG_ORT_FN(f->ort.api, ORT_SLOT_HardwareDevice_Type,
                  ort_hw_type_fn)(devices[i]) != ORT_HW_CPU)
      continue;
    OrtStatus *st = DG_ORT_FN(f->ort.ep_api, ORT_EPSLOT_CreateEpDevice,
                              ort_create_ep_device_fn)(self, devices[i], NULL,
                                                       NULL, &out[*num_out]);
    if (st)
      return st;
    ++*num_out;
    break; /* one binding is enough: directgraph picks devices itself */
  }
  return NULL;
}

static OrtStatus *validate_compat(dg_ort_ep_factory *self,
                                  const OrtHardwareDevice *const *devices,
                                  size_t n, const char *info, int *compat) {
  (void)self, (void)devices, (void)n, (void)info;
  *compat = 0; /* "not applicable": we write no compiled models */
  return NULL;
}

static OrtStatus *create_allocator(dg_ort_ep_factory *self,
                                   const OrtMemoryInfo *info,
                                   const OrtKeyValuePairs *options,
                                   void **allocator) {
  (void)self, (void)info, (void)options;
  *allocator = NULL; /* host memory only: ORT's own allocator serves */
  return NULL;
}

static void release_allocator(dg_ort_ep_factory *self, void *allocator) {
  (void)self, (void)allocator;
}

/* Must exist (ORT calls it at registration); NULL means "none needed". */
static OrtStatus *create_data_transfer(dg_ort_ep_factory *self, void **out) {
  (void)self;
  *out = NULL;
  return NULL;
}

static bool stream_aware(const dg_ort_ep_factory *self) {
  (void)self;
  return false;
}

static OrtStatus *create_stream(dg_ort_ep_factory *self, const void *dev,
                                const OrtKeyValuePairs *options,
                                void **stream) {
  (void)self, (void)dev, (void)options;
  *stream = NULL;
  return NULL;
}

static const char *ep_get_name(const dg_ort_ep *self) {
  (void)self;
  return DG_EP_NAME;
}

static OrtStatus *create_ep(dg_ort_ep_factory *self,
                            const OrtHardwareDevice *const *devices,
                            const OrtKeyValuePairs *const *metadata,
                            size_t num_devices, const OrtSessionOptions *so,
                            const OrtLogger *logger, void **out) {
  ep_factory *f = (ep_factory *)self;
  char err[512];
  (void)devices, (void)metadata, (void)num_devices, (void)logger;
  *out = NULL;
  ep_state *ep = calloc(1, sizeof *ep);
  if (!ep)
    return ep_error(&f->ort, ORT_CODE_FAIL, DG_EP_NAME ": out of memory");
  ep->ort = f->ort;
  if (!ep_options_read(&f->ort, so, &ep->opts, err, sizeof err)) {
    free(ep);
    return ep_error(&f->ort, ORT_CODE_INVALID_ARGUMENT,
                    DG_EP_NAME ": invalid EP option: %s", err);
  }
  dg_context_options co = {.device_kinds = ep->opts.device_kinds};
  dg_status st = dg_context_create(&co, &ep->ctx);
  if (st != DG_OK) {
    free(ep);
    return ep_error(&f->ort, ORT_CODE_EP_FAIL,
                    DG_EP_NAME ": dg_context_create failed: %s",
                    dg_status_string(st));
  }
  for (int i = 0; i < ep->opts.device_count; i++)
    if (ep->opts.devices[i] >= dg_context_device_count(ep->ctx)) {
      OrtStatus *e = ep_error(&f->ort, ORT_CODE_INVALID_ARGUMENT,
                              DG_EP_NAME ": EP option devices: no device %d "
                              "(this machine has %d)", ep->opts.devices[i],
                              dg_context_device_count(ep->ctx));
      dg_context_destroy(ep->ctx);
      free(ep);
      return e;
    }
  ep->base.ort_version_supported = DG_ORT_EP_VERSION;
  ep->base.GetName = ep_get_name;
  ep->base.GetCapability = ep_get_capability;
  ep->base.Compile = ep_compile;
  ep->base.ReleaseNodeComputeInfos = ep_release_compute_infos;
  *out = &ep->base;
  return NULL;
}

static void release_ep(dg_ort_ep_factory *self, void *p) {
  (void)self;
  ep_state *ep = p;
  if (!ep)
    return;
  /* ORT releases every compute info (and so every session) first. */
  dg_context_destroy(ep->ctx);
  free(ep);
}

EXPORT OrtStatus *CreateEpFactories(const char *registration_name,
                                    const dg_ort_api_base *api_base,
                                    const OrtLogger *default_logger,
                                    dg_ort_ep_factory **factories,
                                    size_t max_factories,
                                    size_t *num_factories) {
  (void)registration_name, (void)default_logger;
  *num_factories = 0;
  dg_ort_table api = api_base->get_api(DG_EP_API_VERSION);
  if (!api)
    return NULL; /* an ORT older than 1.23: offer nothing */
  ep_ort ort = {api, NULL};
  ort.ep_api = DG_ORT_FN(api, ORT_SLOT_GetEpApi, ort_get_ep_api_fn)();
  if (!ort.ep_api)
    return ep_error(&ort, ORT_CODE_FAIL, DG_EP_NAME ": no OrtEpApi");
  if (max_factories < 1)
    return ep_error(&ort, ORT_CODE_INVALID_ARGUMENT,
                    DG_EP_NAME ": no room for a factory");
  ep_factory *f = calloc(1, sizeof *f);
  if (!f)
    return ep_error(&ort, ORT_CODE_FAIL, DG_EP_NAME ": out of memory");
  f->ort = ort;
  f->api_base = api_base;
  dg_ort_ep_factory *b = &f->base;
  b->ort_version_supported = DG_ORT_EP_VERSION;
  b->GetName = factory_name;
  b->GetVendor = factory_vendor;
  b->GetSupportedDevices = supported_devices;
  b->CreateEp = create_ep;
  b->ReleaseEp = release_ep;
  b->GetVendorId = factory_vendor_id;
  b->GetVersion = factory_version;
  b->ValidateCompiledModelCompatibilityInfo = validate_compat;
  b->CreateAllocator = create_allocator;
  b->ReleaseAllocator = release_allocator;
  b->CreateDataTransfer = create_data_transfer;
  b->IsStreamAware = stream_aware;
  b->CreateSyncStreamForDevice = create_stream;
  factories[0] = b;
  *num_factories = 1;
  return NULL;
}

EXPORT OrtStatus *ReleaseEpFactory(dg_ort_ep_factory *factory) {
  free(factory); /* base is the first member of ep_factory */
  return NULL;
}
