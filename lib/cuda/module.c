/* Modules: cubin, fatbin or PTX images loaded context-independently (cuLibraryLoadData), and CUDA
 * source compiled with NVRTC (nvrtc.c). A module keeps its context pointer and owns its kernels.
 * The format comes from lib/core (gcl__image_format), the file from gcl__read_file. */
#include "cuda_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *format_name(gcl_format f) {
  return f == GCL_IMAGE_CUBIN ? "cubin" : f == GCL_IMAGE_FATBIN ? "fatbin" : "PTX";
}

static bool load_error_is_image(CUresult rc) {
  return rc == CUDA_ERROR_INVALID_IMAGE || rc == CUDA_ERROR_INVALID_PTX ||
         rc == CUDA_ERROR_UNSUPPORTED_PTX_VERSION || rc == CUDA_ERROR_NO_BINARY_FOR_GPU ||
         rc == CUDA_ERROR_INVALID_SOURCE;
}

/* cuLibraryLoadData with the JIT log buffers of m. PTX must be NUL-terminated for the driver. */
static gcl_status load_image(gcl_module *m, const void *data, size_t size, gcl_format f) {
  char *copy = NULL;
  if (f == GCL_IMAGE_PTX && memchr(data, 0, size) == NULL) {
    if (!(copy = gcl__malloc(size + 1))) return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "PTX copy of %zu bytes", size);
    memcpy(copy, data, size);
    copy[size] = 0;
    data = copy;
  }
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                         CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void *vals[] = {m->jit_error, (void *)(uintptr_t)sizeof m->jit_error, m->jit_info,
                  (void *)(uintptr_t)sizeof m->jit_info};
  gcl_status s = gcl__context_bind(m->ctx); /* the JIT targets the current context's device */
  CUresult rc = CUDA_SUCCESS;
  if (s == GCL_OK) rc = gcl__cu.cuLibraryLoadData(&m->lib, data, opts, vals, 4, NULL, NULL, 0);
  gcl__free(copy);
  if (s != GCL_OK) return s;
  if (rc == CUDA_SUCCESS) return GCL_OK;
  s = gcl__cu_fail(rc, "cuLibraryLoadData(%s image, %zu bytes)", format_name(f), size);
  if (m->jit_error[0]) {
    gcl__fail_append("\nJIT log:\n");
    gcl__fail_append(m->jit_error);
  }
  return load_error_is_image(rc) ? GCL_ERROR_BAD_IMAGE : s;
}

/* Reads the image's records into m->records (see cuda_internal.h). A failure here fails nothing:
 * the reason is kept for messages and this thread's last error is left as it was. */
static void read_records(gcl_module *m, const void *data, size_t size) {
  char saved[GCL__MESSAGE_MAX];
  snprintf(saved, sizeof saved, "%s", gcl_last_error());
  int saved_cuda = gcl_last_cuda_error();
  gcl_status s = gcl_image_parse(data, size, m->ctx->sm, &m->records);
  if (s == GCL_ERROR_NOT_FOUND) s = gcl_image_parse(data, size, 0, &m->records); /* no entry for sm */
  if (s != GCL_OK) {
    m->records = NULL;
    snprintf(m->records_why, sizeof m->records_why, "%s", gcl_last_error());
    gcl__fail(s, "%s", saved); /* restores the text; the status is not returned */
    gcl__set_last_cuda_error(saved_cuda);
  }
  m->nvshmem = gcl_image_uses_nvshmem(m->records) == 1;
}

static gcl_status module_new(gcl_context *ctx, gcl_module **out) {
  gcl_status s = gcl__cu_load();
  if (s != GCL_OK) return s;
  gcl_module *m = gcl__calloc(1, sizeof *m);
  if (!m) return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "module: out of memory");
  m->ctx = ctx;
  *out = m;
  return GCL_OK;
}

gcl_status gcl_module_load_data(gcl_context *ctx, const void *data, size_t size, gcl_module **out) {
  if (!out) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_module_load_data: out is NULL");
  if (!ctx) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_module_load_data: ctx is NULL");
  if (!data) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_module_load_data: data is NULL");
  gcl_format f;
  gcl_module *m = NULL;
  gcl_status s = gcl__image_format(data, size, &f);
  if (s == GCL_OK) s = module_new(ctx, &m);
  if (s == GCL_OK && (s = load_image(m, data, size, f)) != GCL_OK) gcl__free(m);
  if (s == GCL_OK) read_records(m, data, size);
  if (s == GCL_OK) snprintf(m->name, sizeof m->name, "image of %zu bytes", size);
  if (s == GCL_OK) *out = m;
  return s;
}

gcl_status gcl_module_load_file(gcl_context *ctx, const char *path, gcl_module **out) {
  if (!out) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_module_load_file: out is NULL");
  if (!path) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_module_load_file: path is NULL");
  if (!ctx) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_module_load_file: ctx is NULL");
  void *data = NULL;
  size_t size = 0;
  gcl_status s = gcl__read_image_file(path, &data, &size);
  if (s != GCL_OK) return s;
  s = gcl_module_load_data(ctx, data, size, out);
  gcl__free(data);
  if (s == GCL_OK) snprintf((*out)->name, sizeof (*out)->name, "%s", path);
  if (s != GCL_OK) {
    gcl__fail_append(" (file '");
    gcl__fail_append(path);
    gcl__fail_append("')");
  }
  return s;
}

gcl_status gcl_module_compile(gcl_context *ctx, const char *source, const char *name,
                              const char *const *options, size_t option_count, gcl_module **out) {
  if (!out) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_module_compile: out is NULL");
  if (!ctx) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_module_compile: ctx is NULL");
  if (!source) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_module_compile: source is NULL");
  if (option_count && !options)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_module_compile: options is NULL with option_count %zu", option_count);
  void *image = NULL;
  size_t size = 0;
  char *log = NULL;
  gcl_module *m = NULL;
  gcl_status s = gcl__nvrtc_compile(source, name, options, option_count, ctx->sm, &image, &size, &log);
  gcl_format f = GCL_IMAGE_CUBIN;
  if (s == GCL_OK) s = gcl__image_format(image, size, &f);
  if (s == GCL_OK) s = module_new(ctx, &m);
  if (s == GCL_OK && (s = load_image(m, image, size, f)) != GCL_OK) gcl__free(m);
  if (s == GCL_OK) read_records(m, image, size);
  gcl__free(image);
  if (s != GCL_OK) {
    gcl__free(log);
    return s;
  }
  m->compile_log = log;
  snprintf(m->name, sizeof m->name, "%s", name ? name : "gclaunch.cu");
  *out = m;
  return GCL_OK;
}

const char *gcl_module_log(const gcl_module *mod) {
  if (!mod) return "";
  if (mod->compile_log) return mod->compile_log;
  return mod->jit_error[0] ? mod->jit_error : mod->jit_info;
}

/* Tombstones of the kernels of destroyed modules (gclaunch.h "Stale kernels"): kept so that a
 * stale gcl_kernel pointer always points at a kernel that says it is stale -- never at freed
 * memory that a new kernel may occupy -- and its CUfunction, which the driver may hand to
 * another module's kernel after the unload, is forgotten. A tombstone holds its name and lock
 * (C library memory, not the replaceable allocator's); its layout lives on only while args
 * made from it do (layout_internal.h). Freed at exit. */
static pthread_mutex_t graveyard_lock = PTHREAD_MUTEX_INITIALIZER;
static gcl_kernel *graveyard;

static void bury(gcl_kernel *k) {
  k->stale = true;
  k->mod = NULL;
  k->ctx = NULL;
  k->kern = NULL;
  k->fn = NULL;
  gcl__kernel_bury(k);
  pthread_mutex_lock(&graveyard_lock);
  k->next = graveyard;
  graveyard = k;
  pthread_mutex_unlock(&graveyard_lock);
}

__attribute__((destructor)) static void free_graveyard(void) {
  pthread_mutex_lock(&graveyard_lock);
  while (graveyard) {
    gcl_kernel *k = graveyard;
    graveyard = k->next;
    gcl__kernel_free(k);
  }
  pthread_mutex_unlock(&graveyard_lock);
}

static void library_unload(void *lib) { gcl__cu.cuLibraryUnload((CUlibrary)lib); }

void gcl_module_destroy(gcl_module *mod) {
  if (!mod) return;
  gcl__module_detach_quiet(mod); /* NVSHMEM writes into an attached library: detach first */
  while (mod->kernels) {
    gcl_kernel *k = mod->kernels;
    mod->kernels = k->next;
    bury(k);
  }
  if (mod->lib) {
    /* A capturing thread's unload is left to the end of its capture (deferred.c). */
    bool deferred =
        gcl__capture_mine() && gcl__defer_call(mod->ctx, library_unload, mod->lib) == GCL_OK;
    if (!deferred) library_unload(mod->lib);
  }
  gcl_image_destroy(mod->records);
  gcl__free(mod->compile_log);
  gcl__free(mod);
}
