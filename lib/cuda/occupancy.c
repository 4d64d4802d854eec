/* Occupancy: how many blocks (or clusters) of a kernel fit on the device at once, and the
 * persistent launch config built from it (grid = SMs x blocks per SM, every block resident). */
#include "cuda_internal.h"

#include <limits.h>

/* The block size and dynamic shared memory are ones the kernel can launch with; raises the
 * kernel's dynamic shared memory limit as gcl_launch would, so the driver counts what a launch
 * will get. */
static gcl_status check_shape(gcl_kernel *k, unsigned block_threads, size_t smem) {
  gcl_status stale = gcl__kernel_stale(k, "occupancy");
  if (stale != GCL_OK) return stale;
  if (block_threads == 0 || block_threads > (unsigned)k->max_threads)
    return gcl__fail(GCL_ERROR_INVALID_CONFIG, "block_threads: expected 1 ... %d (kernel '%s'), "
                     "got %u", k->max_threads, k->name, block_threads);
  if (smem > k->smem_limit)
    return gcl__fail(GCL_ERROR_INVALID_CONFIG, "dynamic_smem: %zu bytes, kernel '%s' can have at "
                     "most %zu on this device", smem, k->name, k->smem_limit);
  gcl_status s = gcl__context_bind(k->ctx);
  if (s == GCL_OK && smem > atomic_load(&k->smem_max)) s = gcl__kernel_opt_in_shared(k, smem);
  return s;
}

static gcl_status blocks_per_sm(gcl_kernel *k, unsigned block_threads, size_t smem, int *out) {
  gcl_status s = check_shape(k, block_threads, smem);
  if (s != GCL_OK) return s;
  int n = 0;
  CUresult rc = gcl__cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, k->fn, (int)block_threads, smem);
  if (rc != CUDA_SUCCESS)
    return gcl__cu_fail(rc, "cuOccupancyMaxActiveBlocksPerMultiprocessor(kernel '%s', %u threads, "
                        "%zu bytes shared)", k->name, block_threads, smem);
  *out = n;
  return GCL_OK;
}

gcl_status gcl_kernel_occupancy(const gcl_kernel *k, unsigned block_threads, size_t dynamic_smem,
                                int *blocks) {
  if (!k) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "k: expected a kernel, got NULL");
  if (!blocks) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "blocks_per_sm: expected a pointer, got NULL");
  /* The opt-in changes only the kernel's shared memory limit, which a launch would raise too. */
  return blocks_per_sm((gcl_kernel *)k, block_threads, dynamic_smem, blocks);
}

/* Blocks per SM (at least 1, or an error saying why none fits) times the SM count. */
static gcl_status resident_blocks(gcl_kernel *k, unsigned block_threads, size_t smem,
                                  unsigned *out) {
  int per_sm = 0, sms = 0;
  gcl_status s = blocks_per_sm(k, block_threads, smem, &per_sm);
  if (s != GCL_OK) return s;
  if (per_sm <= 0)
    return gcl__fail(GCL_ERROR_INVALID_CONFIG, "kernel '%s': not one block of %u threads with %zu "
                     "bytes of dynamic shared memory fits on an SM (registers or shared memory)",
                     k->name, block_threads, smem);
  CUresult rc = gcl__cu.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, k->ctx->dev);
  if (rc != CUDA_SUCCESS) return gcl__cu_fail(rc, "cuDeviceGetAttribute(SM count, device %d)", k->ctx->device);
  *out = (unsigned)per_sm * (unsigned)sms;
  return GCL_OK;
}

gcl_status gcl_kernel_max_cooperative_grid(const gcl_kernel *k, unsigned block_threads,
                                           size_t dynamic_smem, unsigned *blocks) {
  if (!k) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "k: expected a kernel, got NULL");
  if (!blocks) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "blocks: expected a pointer, got NULL");
  return resident_blocks((gcl_kernel *)k, block_threads, dynamic_smem, blocks);
}

gcl_status gcl_kernel_persistent_config(const gcl_kernel *k, unsigned block_threads,
                                        size_t dynamic_smem, gcl_launch_config *config) {
  if (!k) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "k: expected a kernel, got NULL");
  if (!config) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "config: expected a pointer, got NULL");
  unsigned grid = 0;
  gcl_status s = resident_blocks((gcl_kernel *)k, block_threads, dynamic_smem, &grid);
  if (s != GCL_OK) return s;
  config->grid[0] = grid, config->grid[1] = 1, config->grid[2] = 1;
  config->block[0] = block_threads, config->block[1] = 1, config->block[2] = 1;
  config->shared_bytes = dynamic_smem;
  return GCL_OK;
}

gcl_status gcl_kernel_active_clusters(const gcl_kernel *k, const gcl_launch_config *config,
                                      int *clusters) {
  if (!k) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "k: expected a kernel, got NULL");
  if (!config) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "config: expected a config, got NULL");
  if (!clusters) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "clusters: expected a pointer, got NULL");
  unsigned c[3], b[3];
  gcl_status s;
  if ((s = gcl__config_dims(config->cluster, "cluster", c)) ||
      (s = gcl__config_dims(config->block, "block", b)))
    return s;
  unsigned long long threads = (unsigned long long)b[0] * b[1] * b[2];
  s = check_shape((gcl_kernel *)k, threads > UINT_MAX ? 0 : (unsigned)threads, config->shared_bytes);
  if (s != GCL_OK) return s;
  CUlaunchAttribute a = {.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, .value.clusterDim = {c[0], c[1], c[2]}};
  CUlaunchConfig lc = {c[0], c[1], c[2], b[0], b[1], b[2], (unsigned)config->shared_bytes, NULL, &a, 1};
  int n = 0;
  CUresult rc = gcl__cu.cuOccupancyMaxActiveClusters(&n, k->fn, &lc);
  if (rc != CUDA_SUCCESS)
    return gcl__cu_fail(rc, "cuOccupancyMaxActiveClusters(kernel '%s', cluster %ux%ux%u, block "
                        "%ux%ux%u)", k->name, c[0], c[1], c[2], b[0], b[1], b[2]);
  *clusters = n;
  return GCL_OK;
}

gcl_status gcl__launch_check_resident(gcl_kernel *k, const gcl_launch_config *c, bool clusters) {
  unsigned g[3], b[3], cl[3];
  gcl_status s;
  if ((s = gcl__config_dims(c->grid, "grid", g)) || (s = gcl__config_dims(c->block, "block", b)))
    return s;
  unsigned long long blocks = (unsigned long long)g[0] * g[1] * g[2];
  unsigned long long threads = (unsigned long long)b[0] * b[1] * b[2];
  const char *what = c->cooperative ? "cooperative" : "cluster";
  if (!clusters) {
    int per_sm = 0, sms = 0;
    if ((s = blocks_per_sm(k, threads > UINT_MAX ? 0 : (unsigned)threads, c->shared_bytes, &per_sm)))
      return s;
    CUresult rc = gcl__cu.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, k->ctx->dev);
    if (rc != CUDA_SUCCESS)
      return gcl__cu_fail(rc, "cuDeviceGetAttribute(SM count, device %d)", k->ctx->device);
    unsigned long long most = (unsigned long long)(per_sm > 0 ? per_sm : 0) * (unsigned)sms;
    if (blocks <= most) return GCL_OK;
    return gcl__fail(GCL_ERROR_INVALID_CONFIG,
                     "config.grid: cooperative launch of kernel '%s': grid %ux%ux%u = %llu blocks, "
                     "at most %llu can be resident at once (%d blocks of %llu threads with %zu "
                     "bytes of dynamic shared memory per SM x %d SMs on device %d)",
                     k->name, g[0], g[1], g[2], blocks, most, per_sm, threads, c->shared_bytes, sms,
                     k->ctx->device);
  }
  int most = 0;
  if ((s = gcl_kernel_active_clusters(k, c, &most)) != GCL_OK) return s;
  if ((s = gcl__config_dims(c->cluster, "cluster", cl)) != GCL_OK) return s;
  unsigned long long size = (unsigned long long)cl[0] * cl[1] * cl[2], count = blocks / size;
  if (most < 1)
    return gcl__fail(GCL_ERROR_INVALID_CONFIG,
                     "config.cluster: %s launch of kernel '%s': not one cluster of %ux%ux%u = %llu "
                     "blocks of %llu threads with %zu bytes of dynamic shared memory fits on "
                     "device %d (cuOccupancyMaxActiveClusters: 0)",
                     what, k->name, cl[0], cl[1], cl[2], size, threads, c->shared_bytes,
                     k->ctx->device);
  if (!c->cooperative || count <= (unsigned long long)most) return GCL_OK;
  return gcl__fail(GCL_ERROR_INVALID_CONFIG,
                   "config.grid: cooperative launch of kernel '%s': grid %ux%ux%u = %llu clusters "
                   "of %ux%ux%u blocks, at most %d clusters (%llu threads each block, %zu bytes of "
                   "dynamic shared memory) can be resident at once on device %d",
                   k->name, g[0], g[1], g[2], count, cl[0], cl[1], cl[2], most, threads,
                   c->shared_bytes, k->ctx->device);
}
