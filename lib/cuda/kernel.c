/* Kernels: looked up by name in a module, their real parameter layout read from the driver
 * (cuFuncGetParamInfo, for as many parameters as the module's records list: driver_params) and
 * an optional declared signature checked against it. Everything the launch path needs is
 * computed here, once. */
#include "cuda_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The number of parameters the module's records give kernel name; false when they say nothing
 * of it (records unreadable, or no kernel of that name in them). *what names the source for
 * messages ("cubin", "PTX", "fatbin"). */
static bool records_param_count(const gcl_module *m, const char *name, size_t *count,
                                const char **what) {
  size_t k;
  gcl_image_kernel_info info;
  if (!m->records || gcl_image_find_kernel(m->records, name, &k) != GCL_OK ||
      gcl_image_kernel(m->records, k, &info) != GCL_OK)
    return false;
  *count = info.param_count;
  *what = gcl_format_name(gcl_image_format(m->records));
  return true;
}

/* How many parameters kernel k has. CUDA 13.0 has no count query, and asking the driver for
 * index 0, 1, ... until it fails makes one failing call per lookup, which compute-sanitizer
 * (defaults) reports as an API error in the user's program (docs/facts.md "Driver loading").
 * So the count comes from the module's own records (read once at load: module.c), and the driver is asked only for the
 * indices below it (driver_params). Only when the records say nothing of k -- an image gclaunch
 * cannot read (an LZ4-compressed fatbin entry, zstd without libzstd), or a kernel missing from
 * them -- is the driver probed until it refuses an index, as before: that lookup makes one
 * failing cuFuncGetParamInfo call. *probe says which; *what names the records. */
static gcl_status param_count(const gcl_kernel *k, size_t *count, bool *probe, const char **what) {
  size_t n = 0, off, size;
  *probe = !records_param_count(k->mod, k->name, count, what);
  if (!*probe) return GCL_OK;
  CUresult rc = CUDA_SUCCESS;
  while (n <= GCL_PARAM_LIMIT && (rc = gcl__cu.cuFuncGetParamInfo(k->fn, n, &off, &size)) == CUDA_SUCCESS) n++;
  if (n > GCL_PARAM_LIMIT || rc != CUDA_ERROR_INVALID_VALUE) /* past the last: INVALID_VALUE */
    return gcl__cu_fail(rc, "cuFuncGetParamInfo(kernel '%s', parameter %zu)", k->name, n);
  *count = n;
  return GCL_OK;
}

/* The driver's layout: offsets and sizes of parameters 0 ... count-1, each confirmed by
 * cuFuncGetParamInfo. When the records list a parameter the driver refuses, the image and what
 * the driver loaded disagree: GCL_ERROR_BAD_IMAGE naming the kernel, both counts and the driver's
 * error, and nothing past it is asked (a kernel with more parameters than its records list is
 * not detected: that would take the failing call this avoids; a declared signature with more
 * parameters than the records is still refused by check_declared). *known is false when the
 * driver lacks cuFuncGetParamInfo (older than 12.4). */
static gcl_status driver_params(gcl_kernel *k, bool *known) {
  *known = gcl__cu.cuFuncGetParamInfo != NULL;
  if (!*known) return GCL_OK;
  bool probe = false;
  const char *what = "";
  size_t n = 0;
  gcl_status s = param_count(k, &n, &probe, &what);
  if (s != GCL_OK) return s;
  if (n > GCL_PARAM_LIMIT) /* every parameter takes a byte at least */
    return gcl__fail(GCL_ERROR_BAD_IMAGE, "kernel '%s': the module's %s records list %zu "
                     "parameters, more than %d bytes of parameters can hold", k->name, what, n,
                     GCL_PARAM_LIMIT);
  k->offsets = gcl__calloc(n + 1, sizeof *k->offsets);
  k->sizes = gcl__calloc(n + 1, sizeof *k->sizes);
  if (!k->offsets || !k->sizes) return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "kernel '%s': %zu parameters", k->name, n);
  for (size_t i = 0; i < n; i++) {
    CUresult rc = gcl__cu.cuFuncGetParamInfo(k->fn, i, &k->offsets[i], &k->sizes[i]);
    if (rc == CUDA_SUCCESS) continue;
    if (probe || rc != CUDA_ERROR_INVALID_VALUE)
      return gcl__cu_fail(rc, "cuFuncGetParamInfo(kernel '%s', parameter %zu)", k->name, i);
    gcl__fail(GCL_ERROR_BAD_IMAGE, "kernel '%s' on device %d (sm_%d): the module's %s records "
              "list %zu parameters, but the driver has no parameter %zu "
              "(cuFuncGetParamInfo: CUDA_ERROR_INVALID_VALUE): the image and the kernel the driver "
              "loaded disagree", k->name, k->ctx->device, k->ctx->sm, what, n, i);
    gcl__set_last_cuda_error((int)rc);
    return GCL_ERROR_BAD_IMAGE;
  }
  k->param_count = n;
  return GCL_OK;
}

/* Labels parameter i; for a tensor map (or an array of them) whose placement differs, a hint
 * about the header the kernel was built with: CUDA 12's CUtensorMap is 64-aligned, CUDA 13's 128. */
static const char *describe(const gcl_layout *layout, size_t i, char *label, size_t cap) {
  gcl_field f;
  if (gcl_layout_param_field(layout, i, &f) != GCL_OK) {
    gcl__param_label(label, cap, i, NULL);
    return "";
  }
  const gcl_param_info info = f.info;
  gcl__param_label(label, cap, i, info.name);
  if (info.kind != GCL_PARAM_TENSORMAP && info.elem_kind != GCL_PARAM_TENSORMAP) return "";
  if (info.align > 64)
    return " (a kernel built with CUDA 12 headers has 64-aligned tensor maps: declare "
           "`tensormap align(64)`)";
  return " (a kernel built with CUDA 13 headers has 128-aligned tensor maps: declare `tensormap` "
         "without align)";
}

/* Compares the declared layout with the driver's, parameter by parameter. */
static gcl_status check_declared(const gcl_kernel *k, const gcl_layout *declared) {
  size_t count = gcl_layout_count(declared);
  if (count != k->param_count)
    return gcl__fail(GCL_ERROR_SIGNATURE_MISMATCH,
                     "kernel '%s' on device %d (sm_%d): the signature declares %zu parameters, "
                     "the kernel has %zu",
                     k->name, k->ctx->device, k->ctx->sm, count, k->param_count);
  for (size_t i = 0; i < count; i++) {
    size_t off = 0, size = 0;
    gcl_status s = gcl_layout_param(declared, i, &off, &size, NULL);
    if (s != GCL_OK) return s;
    if (off == k->offsets[i] && size == k->sizes[i]) continue;
    char label[160];
    const char *hint = describe(declared, i, label, sizeof label);
    /* Devices of different architectures place parameters differently: say which one. */
    return gcl__fail(GCL_ERROR_SIGNATURE_MISMATCH,
                     "kernel '%s' on device %d (sm_%d): %s: declared offset %zu size %zu, kernel "
                     "has offset %zu size %zu%s",
                     k->name, k->ctx->device, k->ctx->sm, label, off, size, k->offsets[i],
                     k->sizes[i], size == k->sizes[i] ? hint : "");
  }
  return GCL_OK;
}

/* Copies the typed layout's offsets and sizes (no driver layout to check against). */
static gcl_status adopt_declared(gcl_kernel *k, const gcl_layout *declared) {
  size_t n = gcl_layout_count(declared);
  k->offsets = gcl__calloc(n + 1, sizeof *k->offsets);
  k->sizes = gcl__calloc(n + 1, sizeof *k->sizes);
  if (!k->offsets || !k->sizes) return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "kernel '%s': %zu parameters", k->name, n);
  for (size_t i = 0; i < n; i++) {
    gcl_status s = gcl_layout_param(declared, i, &k->offsets[i], &k->sizes[i], NULL);
    if (s != GCL_OK) return s;
  }
  k->param_count = n;
  return GCL_OK;
}

static gcl_status typed_layout(gcl_kernel *k, const char *signature, bool driver_known) {
  gcl_signature *sig = NULL;
  gcl_status s = gcl_signature_parse(signature, &sig);
  if (s != GCL_OK) {
    gcl__fail_append(" (signature of kernel '");
    gcl__fail_append(k->name);
    gcl__fail_append("')");
    return s;
  }
  gcl_layout *declared = NULL;
  s = gcl_layout_create(sig, k->ctx->sm, &declared);
  gcl_signature_destroy(sig);
  if (s == GCL_OK) s = driver_known ? check_declared(k, declared) : adopt_declared(k, declared);
  if (s != GCL_OK) {
    gcl_layout_destroy(declared);
    return s;
  }
  k->layout = declared;
  return GCL_OK;
}

static gcl_status layout_of(gcl_kernel *k, const char *signature) {
  bool known = false;
  gcl_status s = driver_params(k, &known);
  if (s != GCL_OK) return s;
  if (signature) return typed_layout(k, signature, known);
  if (!known)
    return gcl__fail(GCL_ERROR_DRIVER_TOO_OLD,
                     "kernel '%s': the driver has no cuFuncGetParamInfo (CUDA < 12.4) to read the "
                     "parameter layout from; pass a signature", k->name);
  return gcl_layout_create_raw(k->param_count, k->offsets, k->sizes, k->ctx->sm, &k->layout);
}

static gcl_status func_attr(const gcl_kernel *k, CUfunction_attribute a, const char *what, int *v) {
  CUresult rc = gcl__cu.cuFuncGetAttribute(v, a, k->fn);
  if (rc != CUDA_SUCCESS) return gcl__cu_fail(rc, "cuFuncGetAttribute(kernel '%s', %s)", k->name, what);
  return GCL_OK;
}

/* What the launch checks need: thread limit, dynamic shared memory now and at most. */
static gcl_status launch_limits(gcl_kernel *k) {
  int threads = 0, stat = 0, dyn = 0, optin = 0;
  gcl_status s;
  if ((s = func_attr(k, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "max threads", &threads)) ||
      (s = func_attr(k, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, "static shared", &stat)) ||
      (s = func_attr(k, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, "max dynamic shared", &dyn)))
    return s;
  CUresult rc = gcl__cu.cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                                             k->ctx->dev);
  if (rc != CUDA_SUCCESS) return gcl__cu_fail(rc, "cuDeviceGetAttribute(shared memory opt-in)");
  k->max_threads = threads;
  k->smem_limit = optin > stat ? (size_t)(optin - stat) : 0;
  atomic_init(&k->smem_max, (size_t)(dyn > 0 ? dyn : 0));
  atomic_init(&k->nonportable, false);
  return GCL_OK;
}

static gcl_status resolve(gcl_kernel *k) {
  CUresult rc = gcl__cu.cuLibraryGetKernel(&k->kern, k->mod->lib, k->name);
  if (rc == CUDA_ERROR_NOT_FOUND) {
    gcl__fail(GCL_ERROR_NOT_FOUND, "kernel '%s' not found in the module (extern \"C\" kernels "
              "keep their name; C++ ones need the mangled name)", k->name);
    gcl__set_last_cuda_error((int)rc);
    return GCL_ERROR_NOT_FOUND;
  }
  if (rc != CUDA_SUCCESS) return gcl__cu_fail(rc, "cuLibraryGetKernel('%s')", k->name);
  gcl_status s = gcl__context_bind(k->ctx); /* cuKernelGetFunction needs it */
  if (s != GCL_OK) return s;
  rc = gcl__cu.cuKernelGetFunction(&k->fn, k->kern);
  if (rc != CUDA_SUCCESS) {
    s = gcl__cu_fail(rc, "cuKernelGetFunction('%s', device %d, sm_%d)", k->name, k->ctx->device,
                     k->ctx->sm);
    if (k->mod->jit_error[0]) {
      gcl__fail_append("\nJIT log:\n");
      gcl__fail_append(k->mod->jit_error);
    }
  }
  return s;
}

__attribute__((noinline)) gcl_status gcl__kernel_stale(const gcl_kernel *k, const char *fn) {
  if (!k->stale) return GCL_OK;
  return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: kernel '%s': its module was destroyed "
                   "(gcl_module_destroy); the driver may have given its function handle to another "
                   "module's kernel: look the kernel up again in a loaded module", fn, k->name);
}

int gcl_kernel_waits(const gcl_kernel *kernel) {
  return kernel && !kernel->stale ? kernel->waits : -1;
}

gcl_status gcl_kernel_set_launch_mode(gcl_kernel *kernel, gcl_launch_mode mode) {
  if (!kernel) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_kernel_set_launch_mode: kernel is NULL");
  gcl_status stale = gcl__kernel_stale(kernel, "gcl_kernel_set_launch_mode");
  if (stale != GCL_OK) return stale;
  if (mode != GCL_LAUNCH_KERNEL_PARAMS && mode != GCL_LAUNCH_EXTRA_BUFFER)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT,
                     "gcl_kernel_set_launch_mode: mode %d: expected GCL_LAUNCH_KERNEL_PARAMS (0) "
                     "or GCL_LAUNCH_EXTRA_BUFFER (1)", (int)mode);
  kernel->use_extra = mode == GCL_LAUNCH_EXTRA_BUFFER;
  return GCL_OK;
}

gcl_launch_mode gcl_kernel_launch_mode(const gcl_kernel *kernel) {
  return kernel && kernel->use_extra ? GCL_LAUNCH_EXTRA_BUFFER : GCL_LAUNCH_KERNEL_PARAMS;
}

static int is_tensormap_leaf(const gcl_field *leaf, const char *path, void *found) {
  (void)path;
  return *(bool *)found = leaf->info.kind == GCL_PARAM_TENSORMAP;
}

/* A tensor map anywhere in the parameters -- a tensormap, an element of tensormap[N], a member
 * of a struct (typed layouts only: raw bytes say nothing). */
static bool layout_has_tensormap(const gcl_layout *l) {
  bool found = false;
  return gcl_layout_visit_leaves(l, is_tensormap_leaf, &found) == GCL_OK && found;
}

gcl_status gcl_module_find_kernel(gcl_module *mod, const char *name, const char *signature, gcl_kernel **out) {
  /* The arguments are checked before mod is read. */
  if (!out) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_module_find_kernel: out is NULL");
  if (!mod) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_module_find_kernel: mod is NULL");
  if (!name || !*name) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_module_find_kernel: name is %s", name ? "empty" : "NULL");
  return gcl_module_find_kernel_on(mod, mod->ctx, name, signature, out);
}

gcl_status gcl_module_find_kernel_on(gcl_module *mod, gcl_context *ctx, const char *name,
                             const char *signature, gcl_kernel **out) {
  if (!out) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_module_find_kernel_on: out is NULL");
  if (!mod) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_module_find_kernel_on: mod is NULL");
  if (!ctx) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_module_find_kernel_on: ctx is NULL");
  if (!name || !*name) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_module_find_kernel_on: name is %s", name ? "empty" : "NULL");
  /* From the C library, not gcl_replace_allocator's: a kernel of a destroyed module stays as a
   * tombstone until exit (module.c), and must not keep the replaceable allocator busy. */
  gcl_kernel *k = calloc(1, sizeof *k);
  if (!k || !(k->name = strdup(name))) {
    free(k);
    return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "kernel '%s': out of memory", name);
  }
  k->mod = mod;
  k->ctx = ctx;
  pthread_mutex_init(&k->opt_lock, NULL);
  gcl_status s;
  if ((s = resolve(k)) || (s = layout_of(k, signature)) || (s = launch_limits(k))) {
    gcl__kernel_free(k);
    return s;
  }
  k->waits = -1; /* no records, or no kernel of that name in them: unknown */
  for (size_t i = 0; mod->records && i < gcl_image_kernel_count(mod->records); i++) {
    gcl_image_kernel_info info;
    if (gcl_image_kernel(mod->records, i, &info) == GCL_OK && strcmp(info.name, name) == 0)
      k->waits = gcl_image_kernel_waits(mod->records, i);
  }
  k->unattached = !gcl__kernel_attached(mod, ctx);
  gcl__layout_own(k->layout); /* args made from it keep it alive (layout_internal.h) */
  k->owned_layout = true;
  k->param_bytes = gcl_layout_size(k->layout);
  k->use_extra = false; /* kernelParams until gcl_kernel_set_launch_mode says otherwise */
  if (layout_has_tensormap(k->layout)) gcl__fault_note_tensormaps();
  k->next = mod->kernels;
  mod->kernels = k;
  *out = k;
  return GCL_OK;
}

/* Frees what a live kernel holds but its name and lock, and gives its layout reference back:
 * what is left is a tombstone (module.c). */
void gcl__kernel_bury(gcl_kernel *k) {
  if (k->layout) {
    if (k->layout && gcl__layout_orphan_of(k->layout) == NULL && k->stale)
      gcl__layout_orphan(k->layout, k->name);
    gcl__layout_release(k->layout); /* owned (gcl__layout_own), or never shared: see below */
  }
  k->layout = NULL;
  gcl__free(k->offsets);
  gcl__free(k->sizes);
  k->offsets = k->sizes = NULL;
}

void gcl__kernel_free(gcl_kernel *k) {
  if (!k) return;
  /* A kernel that failed its lookup never owned its layout: destroy it directly. */
  if (k->layout && !k->stale && !k->owned_layout) gcl_layout_destroy(k->layout), k->layout = NULL;
  gcl__kernel_bury(k);
  pthread_mutex_destroy(&k->opt_lock);
  free(k->name);
  free(k);
}

const gcl_layout *gcl_kernel_layout(const gcl_kernel *kernel) { return kernel ? kernel->layout : NULL; }

gcl_context *gcl_kernel_context(const gcl_kernel *kernel) { return kernel ? kernel->ctx : NULL; }

gcl_status gcl_kernel_attribute(const gcl_kernel *kernel, gcl_kernel_attr attr, int *value) {
  if (!kernel) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_kernel_attribute: kernel is NULL");
  if (!value) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_kernel_attribute: value is NULL");
  gcl_status stale = gcl__kernel_stale(kernel, "gcl_kernel_attribute");
  if (stale != GCL_OK) return stale;
  static const struct { CUfunction_attribute a; const char *what; } map[] = {
      [GCL_KERNEL_MAX_THREADS_PER_BLOCK] = {CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "max threads"},
      [GCL_KERNEL_STATIC_SHARED_BYTES] = {CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, "static shared"},
      [GCL_KERNEL_REGISTERS] = {CU_FUNC_ATTRIBUTE_NUM_REGS, "registers"},
      [GCL_KERNEL_MAX_DYNAMIC_SHARED_BYTES] = {CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, "max dynamic shared"},
      [GCL_KERNEL_LOCAL_BYTES] = {CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, "local bytes"},
      [GCL_KERNEL_PREFERRED_CARVEOUT] = {CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, "carveout"},
      [GCL_KERNEL_CLUSTER_SCHEDULING_POLICY] = {CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE,
                                                "cluster scheduling policy"},
      [GCL_KERNEL_NONPORTABLE_CLUSTER_SIZE_ALLOWED] = {CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
                                                       "non-portable cluster size"},
  };
  if ((unsigned)attr >= sizeof map / sizeof *map)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_kernel_attribute: attr %d out of range: expected 0 ... %zu", (int)attr, sizeof map / sizeof *map - 1);
  int v = 0;
  gcl_status s = gcl__context_bind(kernel->ctx);
  if (s == GCL_OK) s = func_attr(kernel, map[attr].a, map[attr].what, &v);
  if (s == GCL_OK) *value = v;
  return s;
}

/* The range attr accepts and its driver attribute; false for a read-only attribute. */
static bool settable(const gcl_kernel *k, gcl_kernel_attr attr, int *lo, int *hi,
                     CUfunction_attribute *a) {
  switch (attr) {
  case GCL_KERNEL_MAX_DYNAMIC_SHARED_BYTES:
    *lo = 0, *hi = (int)k->smem_limit, *a = CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
    return true;
  case GCL_KERNEL_PREFERRED_CARVEOUT: /* -1: the driver's default; else percent */
    *lo = -1, *hi = 100, *a = CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT;
    return true;
  case GCL_KERNEL_CLUSTER_SCHEDULING_POLICY:
    *lo = 0, *hi = 2, *a = CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE;
    return true;
  case GCL_KERNEL_NONPORTABLE_CLUSTER_SIZE_ALLOWED:
    *lo = 0, *hi = 1, *a = CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED;
    return true;
  default:
    return false;
  }
}

gcl_status gcl_kernel_set_attribute(gcl_kernel *kernel, gcl_kernel_attr attr, int value) {
  if (!kernel) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "kernel: expected a kernel, got NULL");
  gcl_status stale = gcl__kernel_stale(kernel, "gcl_kernel_set_attribute");
  if (stale != GCL_OK) return stale;
  int lo = 0, hi = 0;
  CUfunction_attribute a;
  if (!settable(kernel, attr, &lo, &hi, &a))
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "attr: %d is read-only or unknown (settable: "
                     "MAX_DYNAMIC_SHARED_BYTES, PREFERRED_CARVEOUT, CLUSTER_SCHEDULING_POLICY, "
                     "NONPORTABLE_CLUSTER_SIZE_ALLOWED)", (int)attr);
  if (value < lo || value > hi)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "value: expected %d ... %d for attr %d of kernel "
                     "'%s', got %d", lo, hi, (int)attr, kernel->name, value);
  gcl_status s = gcl__context_bind(kernel->ctx);
  if (s != GCL_OK) return s;
  pthread_mutex_lock(&kernel->opt_lock); /* the launch path's opt-ins read these lock-free */
  CUresult rc = gcl__cu.cuFuncSetAttribute(kernel->fn, a, value);
  if (rc == CUDA_SUCCESS && attr == GCL_KERNEL_MAX_DYNAMIC_SHARED_BYTES)
    atomic_store(&kernel->smem_max, (size_t)value);
  if (rc == CUDA_SUCCESS && attr == GCL_KERNEL_NONPORTABLE_CLUSTER_SIZE_ALLOWED)
    atomic_store(&kernel->nonportable, value != 0);
  pthread_mutex_unlock(&kernel->opt_lock);
  if (rc != CUDA_SUCCESS)
    return gcl__cu_fail(rc, "cuFuncSetAttribute(kernel '%s', attr %d = %d)", kernel->name,
                        (int)attr, value);
  return GCL_OK;
}

/* Raises the kernel's dynamic shared memory limit to bytes (once; later launches see it).
 * Kept out of line: gcl_launch's own code then has no call on its fast path. */
__attribute__((noinline)) gcl_status gcl__kernel_opt_in_shared(gcl_kernel *k, size_t bytes) {
  gcl_status s = GCL_OK;
  pthread_mutex_lock(&k->opt_lock);
  if (bytes > atomic_load(&k->smem_max)) {
    CUresult rc = gcl__cu.cuFuncSetAttribute(k->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)bytes);
    if (rc == CUDA_SUCCESS) atomic_store(&k->smem_max, bytes);
    else s = gcl__cu_fail(rc, "cuFuncSetAttribute(kernel '%s', max dynamic shared = %zu)", k->name, bytes);
  }
  pthread_mutex_unlock(&k->opt_lock);
  return s;
}

void *gcl_kernel_cu_function(const gcl_kernel *kernel) { return kernel ? (void *)kernel->fn : NULL; }

void *gcl_module_cu_library(const gcl_module *mod) { return mod ? (void *)mod->lib : NULL; }

void *gcl_context_cu_context(const gcl_context *ctx) { return ctx ? (void *)ctx->ctx : NULL; }
