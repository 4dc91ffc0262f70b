/* Shader modules and compute pipelines. Every module shares one
 * descriptor-set layout and one pipeline layout; pipelines are created on
 * first use and kept per device for the context's life, keyed by module
 * and specialisation constants, through the device's VkPipelineCache. */
#include "core/env.h"
#include "vk_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* In the enum's order, from the same lines of variants.def. */
const vk_variant dg_vk_variants[SH_COUNT_] = {
#define VK_VARIANT(id, name, source, khr, tile_m, tile_n, cost, defines)       \
  [SH_##id] = {#name, khr, tile_m, tile_n, VK_COST_##cost},
#include "variants.def"
#undef VK_VARIANT
};

VkResult dg_vk_pipelines_init(vk_device *vd) {
  VkDescriptorSetLayoutBinding b[VK_BINDINGS];
  for (int i = 0; i < VK_BINDINGS; i++)
    b[i] = (VkDescriptorSetLayoutBinding){
        .binding = (uint32_t)i,
        .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
        .descriptorCount = 1,
        .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
  VkDescriptorSetLayoutCreateInfo si = {
      .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
      .bindingCount = VK_BINDINGS,
      .pBindings = b};
  VkResult r = vkCreateDescriptorSetLayout(vd->dev, &si, NULL, &vd->set_layout);
  if (r != VK_SUCCESS)
    return r;
  VkPushConstantRange pr = {VK_SHADER_STAGE_COMPUTE_BIT, 0, VK_PUSH_BYTES};
  VkPipelineLayoutCreateInfo li = {
      .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
      .setLayoutCount = 1,
      .pSetLayouts = &vd->set_layout,
      .pushConstantRangeCount = 1,
      .pPushConstantRanges = &pr};
  return vkCreatePipelineLayout(vd->dev, &li, NULL, &vd->layout);
}

void dg_vk_pipelines_destroy(vk_device *vd) {
  for (int i = 0; i < vd->pipeline_count; i++)
    vkDestroyPipeline(vd->dev, vd->pipelines[i].pipeline, NULL);
  free(vd->pipelines);
  vd->pipelines = NULL;
  vd->pipeline_count = vd->pipeline_cap = 0;
  for (int i = 0; i < SH_COUNT_; i++)
    if (vd->modules[i])
      vkDestroyShaderModule(vd->dev, vd->modules[i], NULL);
  if (vd->layout)
    vkDestroyPipelineLayout(vd->dev, vd->layout, NULL);
  if (vd->set_layout)
    vkDestroyDescriptorSetLayout(vd->dev, vd->set_layout, NULL);
  if (vd->cache)
    vkDestroyPipelineCache(vd->dev, vd->cache, NULL);
}

/* DG_VK_SPIRV_DIR (a debugging and tuning knob): a module named NAME is
 * read from DIR/NAME.spv instead of the embedded one when that file
 * exists, so a shader variant can be tried on a machine without
 * rebuilding the library. Returns malloc'd words (caller frees) or NULL
 * when there is no override. */
static uint32_t *spirv_override(const char *name, size_t *words) {
  const char *dir = dg_env(DG_ENV_VK_SPIRV_DIR);
  if (!dir || !*dir)
    return NULL;
  char path[1024];
  snprintf(path, sizeof path, "%s/%s.spv", dir, name);
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  uint32_t *code = NULL;
  long size = -1;
  if (fseek(f, 0, SEEK_END) == 0)
    size = ftell(f);
  if (size > 0 && size % 4 == 0 && fseek(f, 0, SEEK_SET) == 0 &&
      (code = malloc((size_t)size)) != NULL &&
      fread(code, 1, (size_t)size, f) != (size_t)size) {
    free(code);
    code = NULL;
  }
  fclose(f);
  if (code) {
    *words = (size_t)size / 4;
    fprintf(stderr, "directgraph: vulkan: %s from %s\n", name, path);
  }
  return code;
}

/* Called with vd->lock held. */
static VkResult create(vk_device *vd, vk_shader sh, const uint32_t *spec,
                       int spec_count, VkPipeline *out) {
  VkResult r;
  if (!vd->modules[sh]) {
    size_t words;
    uint32_t *own = spirv_override(dg_vk_variants[sh].name, &words);
    const uint32_t *code =
        own ? own : dg_vk_spirv_find(dg_vk_variants[sh].name, &words);
    if (!code)
      return VK_ERROR_INITIALIZATION_FAILED; /* a build mismatch */
    VkShaderModuleCreateInfo mi = {
        .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
        .codeSize = words * 4,
        .pCode = code};
    r = vkCreateShaderModule(vd->dev, &mi, NULL, &vd->modules[sh]);
    free(own);
    if (r != VK_SUCCESS) {
      vd->modules[sh] = VK_NULL_HANDLE;
      return r;
    }
  }
  VkSpecializationMapEntry map[4];
  for (int i = 0; i < spec_count; i++)
    map[i] = (VkSpecializationMapEntry){(uint32_t)i, (uint32_t)(4 * i), 4};
  VkSpecializationInfo spi = {(uint32_t)spec_count, map, (size_t)spec_count * 4,
                              spec};
  VkComputePipelineCreateInfo ci = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .flags = vd->pipeline_stats
                   ? VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR
                   : 0,
      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = vd->modules[sh],
                .pName = "main",
                .pSpecializationInfo = spec_count ? &spi : NULL},
      .layout = vd->layout};
  r = vkCreateComputePipelines(vd->dev, vd->cache, 1, &ci, NULL, out);
  if (r == VK_SUCCESS)
    vd->cache_dirty = true;
  if (r == VK_SUCCESS && vd->pipeline_stats)
    dg_vk_pipeline_stats_print(vd, dg_vk_variants[sh].name, spec, spec_count,
                               *out);
  return r;
}

VkResult dg_vk_pipeline_get(vk_device *vd, vk_shader sh, const uint32_t *spec,
                            int spec_count, VkPipeline *out) {
  if (spec_count > 4)
    return VK_ERROR_INITIALIZATION_FAILED;
  pthread_mutex_lock(&vd->lock);
  for (int i = 0; i < vd->pipeline_count; i++) {
    vk_pipeline_entry *e = &vd->pipelines[i];
    if (e->shader == sh && e->spec_count == spec_count &&
        (!spec_count ||
         !memcmp(e->spec, spec, sizeof(uint32_t) * (size_t)spec_count))) {
      *out = e->pipeline;
      pthread_mutex_unlock(&vd->lock);
      return VK_SUCCESS;
    }
  }
  VkResult r = VK_ERROR_OUT_OF_HOST_MEMORY;
  if (vd->pipeline_count == vd->pipeline_cap) {
    int cap = vd->pipeline_cap ? 2 * vd->pipeline_cap : 32;
    vk_pipeline_entry *p = realloc(vd->pipelines, sizeof *p * (size_t)cap);
    if (!p)
      goto done;
    vd->pipelines = p;
    vd->pipeline_cap = cap;
  }
  VkPipeline pipe;
  r = create(vd, sh, spec, spec_count, &pipe);
  if (r != VK_SUCCESS)
    goto done;
  vk_pipeline_entry *e = &vd->pipelines[vd->pipeline_count++];
  memset(e, 0, sizeof *e);
  e->shader = sh;
  e->spec_count = spec_count;
  if (spec_count)
    memcpy(e->spec, spec, sizeof(uint32_t) * (size_t)spec_count);
  e->pipeline = pipe;
  *out = pipe;
done:
  pthread_mutex_unlock(&vd->lock);
  return r;
}
