/* Our own declarations of the kernel interfaces the NPU backends use,
 * written from the facts in docs/npu.md, "Kernel drivers" (layouts and
 * ioctl numbers of include/uapi/drm/rocket_accel.h and Rockchip's
 * rknpu_ioctl.h); the kernels' headers are not needed to build. The fake
 * kernel of the tests (tests/npu/fake_npu.c) reads the same declarations,
 * so a layout mistake here would not be caught by it: the sizes are
 * pinned by the _Static_asserts below, against the numbers recorded
 * there. */
#ifndef DG_NPU_UAPI_H
#define DG_NPU_UAPI_H

#include <stdint.h>
#include <sys/ioctl.h>

/* ---- DRM core (include/uapi/drm/drm.h) ---- */
#define NPU_DRM_IOCTL_BASE 'd'
#define NPU_DRM_COMMAND_BASE 0x40

struct dg_npu_drm_version {
  int version_major, version_minor, version_patchlevel;
  unsigned long name_len; /* __kernel_size_t */
  char *name;
  unsigned long date_len;
  char *date;
  unsigned long desc_len;
  char *desc;
};
struct npu_drm_gem_close {
  uint32_t handle, pad;
};
#define NPU_DRM_IOCTL_VERSION                                                  \
  _IOWR(NPU_DRM_IOCTL_BASE, 0x00, struct dg_npu_drm_version)
#define NPU_DRM_IOCTL_GEM_CLOSE                                                \
  _IOW(NPU_DRM_IOCTL_BASE, 0x09, struct npu_drm_gem_close)

/* ---- rocket (mainline accel) ---- */
struct npu_rocket_create_bo {
  uint32_t size;        /* in */
  uint32_t handle;      /* out */
  uint64_t dma_address; /* out: IOVA in this fd's address space */
  uint64_t offset;      /* out: for mmap on the same fd */
};
struct npu_rocket_prep_bo {
  uint32_t handle, reserved;
  int64_t timeout_ns; /* absolute CLOCK_MONOTONIC deadline */
};
struct npu_rocket_fini_bo {
  uint32_t handle, reserved;
};
struct npu_rocket_task {
  uint32_t regcmd;       /* IOVA of the list (32 bits: IOVAs < 4 GiB) */
  uint32_t regcmd_count; /* 64-bit words */
};
struct npu_rocket_job {
  uint64_t tasks, in_bo_handles, out_bo_handles; /* user pointers */
  uint32_t task_count, task_struct_size;
  uint32_t in_bo_handle_count, out_bo_handle_count;
};
struct npu_rocket_submit {
  uint64_t jobs;
  uint32_t job_count, job_struct_size;
  uint64_t reserved;
};
#define NPU_ROCKET_IOCTL_CREATE_BO                                             \
  _IOWR(NPU_DRM_IOCTL_BASE, NPU_DRM_COMMAND_BASE + 0x00,                       \
        struct npu_rocket_create_bo)
#define NPU_ROCKET_IOCTL_SUBMIT                                                \
  _IOW(NPU_DRM_IOCTL_BASE, NPU_DRM_COMMAND_BASE + 0x01,                        \
       struct npu_rocket_submit)
#define NPU_ROCKET_IOCTL_PREP_BO                                               \
  _IOW(NPU_DRM_IOCTL_BASE, NPU_DRM_COMMAND_BASE + 0x02,                        \
       struct npu_rocket_prep_bo)
#define NPU_ROCKET_IOCTL_FINI_BO                                               \
  _IOW(NPU_DRM_IOCTL_BASE, NPU_DRM_COMMAND_BASE + 0x03,                        \
       struct npu_rocket_fini_bo)

/* ---- rknpu (Rockchip vendor DRM driver) ---- */
enum {
  NPU_RKNPU_GET_HW_VERSION = 0,
  NPU_RKNPU_GET_DRV_VERSION = 1,
  NPU_RKNPU_ACT_RESET = 6,
  NPU_RKNPU_POWER_ON = 20,
  NPU_RKNPU_POWER_OFF = 21,
};
enum {
  NPU_RKNPU_MEM_NON_CONTIGUOUS = 1 << 0,
  NPU_RKNPU_MEM_CACHEABLE = 1 << 1,
  NPU_RKNPU_MEM_KERNEL_MAPPING = 1 << 3,
  NPU_RKNPU_MEM_IOMMU = 1 << 4,
  NPU_RKNPU_MEM_ZEROING = 1 << 5,
};
enum { NPU_RKNPU_SYNC_TO_DEVICE = 1, NPU_RKNPU_SYNC_FROM_DEVICE = 2 };
enum {
  NPU_RKNPU_JOB_PC = 1,
  NPU_RKNPU_JOB_NONBLOCK = 2,
  NPU_RKNPU_JOB_PINGPONG = 4
};

struct npu_rknpu_action {
  uint32_t flags, value;
};
/* Drivers before 0.9.8 stop after sram_size (40 bytes): the size is part
 * of the ioctl number, so the layout is picked from the version. */
struct npu_rknpu_mem_create {
  uint32_t handle, flags;
  uint64_t size, obj_addr, dma_addr, sram_size;
  int32_t iommu_domain_id; /* 0.9.8+ */
  uint32_t core_mask;      /* 0.9.8+ */
};
#define NPU_RKNPU_MEM_CREATE_OLD_SIZE 40
struct npu_rknpu_mem_map {
  uint32_t handle, reserved;
  uint64_t offset;
};
struct npu_rknpu_mem_destroy {
  uint32_t handle, reserved;
  uint64_t obj_addr;
};
struct npu_rknpu_mem_sync {
  uint32_t flags, reserved;
  uint64_t obj_addr, offset, size;
};
struct __attribute__((packed)) npu_rknpu_task {
  uint32_t flags, op_idx, enable_mask, int_mask, int_clear, int_status;
  uint32_t regcfg_amount; /* words without the 4 trailer words */
  uint32_t regcfg_offset;
  uint64_t regcmd_addr;
};
struct npu_rknpu_subcore_task {
  uint32_t task_start, task_number;
};
struct npu_rknpu_submit {
  uint32_t flags, timeout; /* timeout in ms */
  uint32_t task_start, task_number, task_counter;
  int32_t priority;
  uint64_t task_obj_addr;
  uint32_t iommu_domain_id, reserved; /* older: u64 regcfg_obj_addr */
  uint64_t task_base_addr;
  int64_t hw_elapse_time; /* older: u64 user_data */
  uint32_t core_mask;
  int32_t fence_fd;
  struct npu_rknpu_subcore_task subcore_task[5];
};
#define NPU_RKNPU_IOWR(nr, type)                                               \
  _IOWR(NPU_DRM_IOCTL_BASE, NPU_DRM_COMMAND_BASE + (nr), type)
#define NPU_RKNPU_IOCTL_ACTION NPU_RKNPU_IOWR(0x00, struct npu_rknpu_action)
#define NPU_RKNPU_IOCTL_SUBMIT NPU_RKNPU_IOWR(0x01, struct npu_rknpu_submit)
#define NPU_RKNPU_IOCTL_MEM_CREATE                                             \
  NPU_RKNPU_IOWR(0x02, struct npu_rknpu_mem_create)
#define NPU_RKNPU_IOCTL_MEM_CREATE_OLD                                         \
  _IOC(_IOC_READ | _IOC_WRITE, NPU_DRM_IOCTL_BASE,                             \
       NPU_DRM_COMMAND_BASE + 0x02, NPU_RKNPU_MEM_CREATE_OLD_SIZE)
#define NPU_RKNPU_IOCTL_MEM_MAP NPU_RKNPU_IOWR(0x03, struct npu_rknpu_mem_map)
#define NPU_RKNPU_IOCTL_MEM_DESTROY                                            \
  NPU_RKNPU_IOWR(0x04, struct npu_rknpu_mem_destroy)
#define NPU_RKNPU_IOCTL_MEM_SYNC NPU_RKNPU_IOWR(0x05, struct npu_rknpu_mem_sync)

/* Layouts pinned to the sizes the kernels check (docs/npu.md, "rocket"
 * and "rknpu"). */
_Static_assert(sizeof(struct npu_rocket_create_bo) == 24, "rocket create_bo");
_Static_assert(sizeof(struct npu_rocket_submit) == 24, "rocket submit");
_Static_assert(sizeof(struct npu_rocket_job) == 40, "rocket job");
_Static_assert(sizeof(struct npu_rocket_task) == 8, "rocket task");
_Static_assert(sizeof(struct npu_rocket_prep_bo) == 16, "rocket prep_bo");
_Static_assert(sizeof(struct npu_rknpu_task) == 40, "rknpu task");
_Static_assert(sizeof(struct npu_rknpu_mem_create) == 48, "rknpu mem_create");
_Static_assert(sizeof(struct npu_rknpu_submit) == 104, "rknpu submit");
_Static_assert(NPU_RKNPU_IOCTL_MEM_CREATE == 0xc0306442u, "new ioctl number");
_Static_assert(NPU_RKNPU_IOCTL_MEM_CREATE_OLD == 0xc0286442u, "old number");

#endif
