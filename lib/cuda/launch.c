/* The launch path: checks that need no driver, then one cuLaunchKernelEx. It allocates nothing
 * and does no layout work (gcl_module_find_kernel precomputed it); opting in to large dynamic shared
 * memory or non-portable clusters happens once per kernel, under a lock, off the common path.
 * The context is made current only when the driver needs it (see retry). */
#include "cuda_internal.h"

#include <limits.h>
#include <stdio.h>

static unsigned dim(unsigned v) { return v ? v : 1; }

/* Names the first parameter whose offset or size differs between the args and the kernel. */
static gcl_status layout_mismatch(const gcl_kernel *k, const gcl_layout *l) {
  size_t n = gcl_layout_count(l);
  if (n != k->param_count)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT,
                     "args: their layout has %zu parameters, kernel '%s' has %zu", n, k->name,
                     k->param_count);
  for (size_t i = 0; i < n; i++) {
    size_t off = 0, size = 0;
    gcl_layout_param(l, i, &off, &size, NULL);
    if (off == k->offsets[i] && size == k->sizes[i]) continue;
    char label[160];
    gcl_field f;
    gcl__param_label(label, sizeof label, i, gcl_layout_param_field(l, i, &f) == GCL_OK ? f.info.name : NULL);
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT,
                     "args: %s has offset %zu size %zu, kernel '%s' has offset %zu size %zu "
                     "(create the args from gcl_kernel_layout)",
                     label, off, size, k->name, k->offsets[i], k->sizes[i]);
  }
  return GCL_OK;
}

/* O(1) and call-free on the common path (args made from the kernel's own layout: the struct is
 * read inline, args_internal.h); args of another layout object are accepted when every offset
 * and size equals the kernel's -- compared one by one, as no digest can prove equality. */
gcl_status gcl__launch_check_args(const gcl_kernel *k, const gcl_args *args) {
  const gcl_layout *l = args->layout;
  if (l != k->layout) {
    if (!l) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "args: they have no layout");
    const char *stale = gcl__layout_orphan_of(l);
    if (stale)
      return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "args: they were made for kernel '%s', whose "
                       "module was destroyed (gcl_module_destroy); kernel '%s' is not theirs",
                       stale, k->name);
    gcl_status s = layout_mismatch(k, l);
    if (s != GCL_OK) return s;
  }
  if (args->unset == 0) return GCL_OK;
  const void *data;
  size_t size;
  gcl_status s = gcl_args_buffer(args, &data, &size); /* names the unset parameter */
  if (s != GCL_OK) return s;
  return gcl__fail(GCL_ERROR_UNSET_ARGUMENT, "args: %zu parameters of kernel '%s' were never set",
                   gcl__args_unset_count(args), k->name);
}

/* PDL on a kernel whose code never executes griddepcontrol.wait: it may read its predecessor's
 * output before that kernel wrote it. Unknown (-1) is let through (gclaunch.h). */
static gcl_status check_pdl(const gcl_kernel *k, const gcl_launch_config *c) {
  if (!c->programmatic_dependent_launch || k->waits != 0 || (c->flags & GCL_LAUNCH_PDL_UNCHECKED))
    return GCL_OK;
  return gcl__fail(GCL_ERROR_INVALID_CONFIG,
                   "config.programmatic_dependent_launch: kernel '%s' never executes "
                   "griddepcontrol.wait (cudaGridDependencySynchronize), so it may start reading "
                   "before the previous kernel on the stream has written; add the wait, launch "
                   "without PDL, or set GCL_LAUNCH_PDL_UNCHECKED in config.flags", k->name);
}

static gcl_status check_config(const gcl_kernel *k, const gcl_launch_config *c) {
  for (size_t i = 0; i < sizeof c->reserved / sizeof *c->reserved; i++) /* the growth rule */
    if (c->reserved[i])
      return gcl__fail(GCL_ERROR_INVALID_CONFIG, "gcl_launch: config.reserved[%zu] is %llu, expected 0 (zero-initialise the config)",
                       i, (unsigned long long)c->reserved[i]);
  if (c->flags & ~(uint64_t)GCL_LAUNCH_PDL_UNCHECKED)
    return gcl__fail(GCL_ERROR_INVALID_CONFIG, "gcl_launch: config.flags is 0x%llx, expected 0 or "
                     "GCL_LAUNCH_PDL_UNCHECKED (0x1)", (unsigned long long)c->flags);
  gcl_status pdl = check_pdl(k, c);
  if (pdl != GCL_OK) return pdl;
  unsigned gd[3], bd[3];
  gcl_status s;
  if ((s = gcl__config_dims(c->grid, "grid", gd)) || (s = gcl__config_dims(c->block, "block", bd)))
    return s;
  unsigned long long threads =
      (unsigned long long)dim(c->block[0]) * dim(c->block[1]) * dim(c->block[2]);
  if (threads > (unsigned long long)k->max_threads)
    return gcl__fail(GCL_ERROR_INVALID_CONFIG,
                     "config.block: %ux%ux%u = %llu threads, kernel '%s' allows at most %d",
                     dim(c->block[0]), dim(c->block[1]), dim(c->block[2]), threads, k->name,
                     k->max_threads);
  for (int i = 0; i < 3; i++) {
    unsigned cl = dim(c->cluster[i]), g = dim(c->grid[i]);
    bool any = c->cluster[0] || c->cluster[1] || c->cluster[2];
    if (any && g % cl != 0)
      return gcl__fail(GCL_ERROR_INVALID_CONFIG,
                       "config.cluster[%d] = %u does not divide config.grid[%d] = %u (kernel '%s')",
                       i, cl, i, g, k->name);
  }
  if (c->shared_bytes > k->smem_limit || c->shared_bytes > UINT_MAX)
    return gcl__fail(GCL_ERROR_INVALID_CONFIG,
                     "config.shared_bytes: %zu, kernel '%s' can have at most %zu bytes of dynamic "
                     "shared memory on this device (opt-in limit minus its static shared memory)",
                     c->shared_bytes, k->name, k->smem_limit);
  return GCL_OK;
}

__attribute__((noinline)) static gcl_status allow_nonportable(gcl_kernel *k) {
  gcl_status s = GCL_OK;
  pthread_mutex_lock(&k->opt_lock);
  if (!atomic_load(&k->nonportable)) {
    CUresult rc = gcl__cu.cuFuncSetAttribute(k->fn, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
    if (rc == CUDA_SUCCESS) atomic_store(&k->nonportable, true);
    else s = gcl__cu_fail(rc, "cuFuncSetAttribute(kernel '%s', non-portable cluster size)", k->name);
  }
  pthread_mutex_unlock(&k->opt_lock);
  return s;
}

/* Opts the kernel in to what c needs beyond its present limits (more dynamic shared memory,
 * non-portable clusters), its context made current first (cuFuncSetAttribute); nothing, and no
 * binding, when it needs neither. */
static gcl_status opt_ins(gcl_kernel *k, const gcl_launch_config *c) {
  bool smem = c->shared_bytes > atomic_load_explicit(&k->smem_max, memory_order_acquire);
  unsigned long long cluster =
      (unsigned long long)dim(c->cluster[0]) * dim(c->cluster[1]) * dim(c->cluster[2]);
  bool nonportable = cluster > 8 && !atomic_load_explicit(&k->nonportable, memory_order_acquire);
  if (!smem && !nonportable) return GCL_OK;
  gcl_status s = gcl__context_bind(k->ctx);
  if (s == GCL_OK && smem) s = gcl__kernel_opt_in_shared(k, c->shared_bytes);
  if (s == GCL_OK && nonportable) s = allow_nonportable(k);
  return s;
}

static unsigned attributes(const gcl_launch_config *c, CUlaunchAttribute *a) {
  unsigned n = 0;
  if (c->cluster[0] || c->cluster[1] || c->cluster[2])
    a[n++] = (CUlaunchAttribute){.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
                                 .value.clusterDim = {dim(c->cluster[0]), dim(c->cluster[1]), dim(c->cluster[2])}};
  if (c->cooperative)
    a[n++] = (CUlaunchAttribute){.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE, .value.cooperative = 1};
  if (c->programmatic_dependent_launch)
    a[n++] = (CUlaunchAttribute){.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
                                 .value.programmaticStreamSerializationAllowed = 1};
  if (c->priority)
    a[n++] = (CUlaunchAttribute){.id = CU_LAUNCH_ATTRIBUTE_PRIORITY, .value.priority = c->priority};
  return n;
}

static gcl_status launch_failed(const gcl_kernel *k, const CUlaunchConfig *cfg, CUresult rc) {
  gcl_status s = gcl__cu_fail(rc, "cuLaunchKernelEx(kernel '%s', grid %ux%ux%u, block %ux%ux%u, "
                              "%u bytes shared, %u attributes, %s)",
                              k->name, cfg->gridDimX, cfg->gridDimY, cfg->gridDimZ, cfg->blockDimX,
                              cfg->blockDimY, cfg->blockDimZ, cfg->sharedMemBytes, cfg->numAttrs,
                              k->use_extra ? "extra buffer" : "kernelParams");
  if (rc == CUDA_ERROR_INVALID_CLUSTER_SIZE || rc == CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE ||
      rc == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)
    return GCL_ERROR_INVALID_CONFIG;
  return s;
}

/* The config most launches use, checked inline and without a call: reserved zero, grid and block
 * by the rule (x given, no 0 before a given dimension), no cluster, cooperative, PDL or priority
 * attribute, at most the kernel's threads and its present dynamic shared memory (no opt-in). True
 * fills *cfg; false says nothing about validity: check_config then decides, and names the field. */
static inline bool plain_config(const gcl_kernel *k, const gcl_launch_config *c, CUlaunchConfig *cfg) {
  uint64_t other = (uint64_t)c->cluster[0] | c->cluster[1] | c->cluster[2] |
                   (uint64_t)c->cooperative | (uint64_t)c->programmatic_dependent_launch |
                   (uint32_t)c->priority;
  for (size_t i = 0; i < sizeof c->reserved / sizeof *c->reserved; i++) other |= c->reserved[i];
  other |= c->flags;
  const unsigned *g = c->grid, *b = c->block;
  if (other || !g[0] || (!g[1] && g[2]) || !b[0] || (!b[1] && b[2])) return false;
  unsigned by = dim(b[1]), bz = dim(b[2]);
  if ((uint64_t)b[0] * by * bz > (uint64_t)k->max_threads ||
      c->shared_bytes > atomic_load_explicit(&k->smem_max, memory_order_acquire))
    return false;
  *cfg = (CUlaunchConfig){g[0], dim(g[1]), dim(g[2]), b[0], by, bz, (unsigned)c->shared_bytes,
                          (CUstream)c->stream, NULL, 0};
  return true;
}

/* Everything else: the args' layout and unset parameters, the full config checks, the opt-ins,
 * the attributes into attrs[4]. Out of line, off the common path. */
__attribute__((noinline)) static gcl_status prepare(gcl_kernel *k, const gcl_launch_config *c,
                                                    const gcl_args *args, CUlaunchConfig *cfg,
                                                    CUlaunchAttribute *attrs) {
  gcl_status s;
  if ((s = gcl__launch_check_args(k, args)) || (s = check_config(k, c)) || (s = opt_ins(k, c)) ||
      (c->cooperative && (s = gcl__launch_check_resident(k, c, false))))
    return s;
  *cfg = (CUlaunchConfig){dim(c->grid[0]), dim(c->grid[1]), dim(c->grid[2]), dim(c->block[0]),
                          dim(c->block[1]), dim(c->block[2]), (unsigned)c->shared_bytes,
                          (CUstream)c->stream, attrs, 0};
  cfg->numAttrs = attributes(c, attrs);
  return GCL_OK;
}

static inline CUresult submit(const gcl_kernel *k, const CUlaunchConfig *cfg, const gcl_args *args) {
  if (k->param_count == 0) return gcl__cu.cuLaunchKernelEx(cfg, k->fn, NULL, NULL);
  if (k->use_extra) {
    size_t size = k->param_bytes; /* exactly the kernel's area: larger fails, smaller corrupts */
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, (void *)gcl__args_data(args),
                     CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
    return gcl__cu.cuLaunchKernelEx(cfg, k->fn, NULL, extra);
  }
  return gcl__cu.cuLaunchKernelEx(cfg, k->fn, gcl__args_param_pointers(args), NULL);
}

/* The driver refused the launch. On a stream of the kernel's context it runs the launch in that
 * context whatever is current, none included; on the default stream it needs the context
 * current (measured on the H200, driver 580: 201 INVALID_CONTEXT with none, 400 INVALID_HANDLE
 * with another; tests/gpu/test_launch.c the_launch_runs_in_the_kernels_context...). So
 * when one of those came back and the kernel's context was not current: bind it and launch once
 * more. If that fails too, the previous context is made current again (a failed call changes
 * nothing) and the second error is reported. */
__attribute__((noinline)) static gcl_status retry(gcl_kernel *k, const CUlaunchConfig *cfg,
                                                  const gcl_args *args, CUresult rc) {
  bool context_error = rc == CUDA_ERROR_INVALID_CONTEXT || rc == CUDA_ERROR_INVALID_HANDLE ||
                       rc == CUDA_ERROR_CONTEXT_IS_DESTROYED;
  if (!context_error) return launch_failed(k, cfg, rc);
  CUcontext cur = NULL; /* unknown (the query failed: a destroyed context, say): bind anyway */
  bool known = gcl__cu.cuCtxGetCurrent(&cur) == CUDA_SUCCESS;
  if (known && cur == k->ctx->ctx) return launch_failed(k, cfg, rc); /* not for want of it */
  gcl_status s = gcl__context_bind(k->ctx);
  if (s != GCL_OK) return s;
  rc = submit(k, cfg, args);
  if (rc == CUDA_SUCCESS) return GCL_OK;
  if (known) gcl__cu.cuCtxSetCurrent(cur);
  return launch_failed(k, cfg, rc);
}

/* The common launch: the args and config checked inline (plain_config, the args' layout),
 * no driver call before the launch itself -- the context is bound only when the driver asks for
 * it (retry) -- and no call through the PLT. */
gcl_status gcl_launch(gcl_kernel *kernel, const gcl_launch_config *config, const gcl_args *args) {
  if (!kernel) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_launch: kernel is NULL");
  if (!config) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_launch: config is NULL");
  if (!args) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_launch: args is NULL");
  if (kernel->stale | kernel->unattached) /* a tombstone, or NVSHMEM's state unset: an illegal address */
    return kernel->stale ? gcl__kernel_stale(kernel, "gcl_launch") : gcl__kernel_unattached(kernel, "gcl_launch");
  if (gcl__faulted()) return gcl__fault_check(); /* after a kernel fault: no driver call at all */
  CUlaunchConfig cfg;
  CUlaunchAttribute attrs[4];
  bool args_ok = args->layout == kernel->layout && args->unset == 0; /* the fast path of
                                                        gcl__launch_check_args, inline */
  if (!args_ok || !plain_config(kernel, config, &cfg)) {
    gcl_status s = prepare(kernel, config, args, &cfg, attrs);
    if (s != GCL_OK) return s;
  }
  CUresult rc = submit(kernel, &cfg, args);
  return rc == CUDA_SUCCESS ? GCL_OK : retry(kernel, &cfg, args, rc);
}

gcl_status gcl_launch_check(gcl_kernel *kernel, const gcl_launch_config *config,
                            const gcl_args *args) {
  if (!kernel) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_launch_check: kernel is NULL");
  if (!config) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_launch_check: config is NULL");
  gcl_status s = gcl__kernel_stale(kernel, "gcl_launch_check");
  if (s == GCL_OK && kernel->unattached) s = gcl__kernel_unattached(kernel, "gcl_launch_check");
  if (s == GCL_OK && gcl__faulted()) s = gcl__fault_check();
  if (s == GCL_OK && args) s = gcl__launch_check_args(kernel, args);
  if (s == GCL_OK) s = check_config(kernel, config);
  if (s == GCL_OK) s = opt_ins(kernel, config);
  bool cluster = config->cluster[0] || config->cluster[1] || config->cluster[2];
  if (s == GCL_OK && (config->cooperative || cluster))
    s = gcl__launch_check_resident(kernel, config, cluster);
  return s;
}
