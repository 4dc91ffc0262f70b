/* DG_VK_PIPELINE_STATS=1 (debugging and tuning): on devices with
 * VK_KHR_pipeline_executable_properties, every compute pipeline is created
 * with statistics captured, and the driver's statistics (registers,
 * shared memory, spills, ... whatever it reports) are printed to stderr,
 * one line per pipeline. This is how a kernel's occupancy is read on a
 * driver without a shader profiler. */
#include "core/env.h"
#include "vk_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool dg_vk_pipeline_stats_wanted(const VkExtensionProperties *ext,
                                 uint32_t ne) {
  const char *e = dg_env(DG_ENV_VK_PIPELINE_STATS);
  if (!e || strcmp(e, "1"))
    return false;
  for (uint32_t i = 0; i < ne; i++)
    if (!strcmp(ext[i].extensionName,
                VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME))
      return true;
  return false;
}

static void print_value(const VkPipelineExecutableStatisticKHR *st) {
  switch (st->format) {
  case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR:
    fprintf(stderr, " %s=%s", st->name, st->value.b32 ? "true" : "false");
    break;
  case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR:
    fprintf(stderr, " %s=%lld", st->name, (long long)st->value.i64);
    break;
  case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR:
    fprintf(stderr, " %s=%llu", st->name, (unsigned long long)st->value.u64);
    break;
  case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR:
    fprintf(stderr, " %s=%g", st->name, st->value.f64);
    break;
  default:
    break;
  }
}

void dg_vk_pipeline_stats_print(vk_device *vd, const char *shader,
                                const uint32_t *spec, int spec_count,
                                VkPipeline pipe) {
  PFN_vkGetPipelineExecutablePropertiesKHR props =
      (PFN_vkGetPipelineExecutablePropertiesKHR)vkGetDeviceProcAddr(
          vd->dev, "vkGetPipelineExecutablePropertiesKHR");
  PFN_vkGetPipelineExecutableStatisticsKHR stats =
      (PFN_vkGetPipelineExecutableStatisticsKHR)vkGetDeviceProcAddr(
          vd->dev, "vkGetPipelineExecutableStatisticsKHR");
  if (!props || !stats)
    return;
  VkPipelineInfoKHR pi = {.sType = VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR,
                          .pipeline = pipe};
  uint32_t ne = 0;
  if (props(vd->dev, &pi, &ne, NULL) != VK_SUCCESS)
    return;
  for (uint32_t x = 0; x < ne; x++) {
    VkPipelineExecutableInfoKHR ei = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR,
        .pipeline = pipe,
        .executableIndex = x};
    uint32_t ns = 0;
    if (stats(vd->dev, &ei, &ns, NULL) != VK_SUCCESS || !ns)
      continue;
    VkPipelineExecutableStatisticKHR *st = calloc(ns, sizeof *st);
    if (!st)
      return;
    for (uint32_t i = 0; i < ns; i++)
      st[i].sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR;
    if (stats(vd->dev, &ei, &ns, st) >= VK_SUCCESS) {
      fprintf(stderr, "directgraph: vulkan pipeline %s", shader);
      for (int i = 0; i < spec_count; i++)
        fprintf(stderr, "%s%u", i ? "," : " spec=", spec[i]);
      fprintf(stderr, ":");
      for (uint32_t i = 0; i < ns; i++)
        print_value(&st[i]);
      fprintf(stderr, "\n");
    }
    free(st);
  }
}
