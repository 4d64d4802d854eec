/* libfakecuda.so, part 3: device memory (host memory in disguise), libraries and kernels. */
#include "fakecuda_internal.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* --- memory: a CUdeviceptr is a host address, 256-byte aligned like the real allocator's ----- */

CUresult fake_cuMemAlloc(CUdeviceptr *p, size_t bytes) {
  ENTER(cuMemAlloc);
  NEED_CONTEXT();
  if (fake_capture_forbids()) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  if (!p || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  if (bytes > ((size_t)1 << 36)) return CUDA_ERROR_OUT_OF_MEMORY;
  fake_alloc *a = malloc(sizeof *a);
  void *base = aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (!a || !base) {
    free(a);
    free(base);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  a->base = base;
  a->size = bytes;
  a->device = fake_context_device(fake_current);
  pthread_mutex_lock(&fake_lock);
  a->next = fake_allocs;
  fake_allocs = a;
  fake_live[LIVE_MEMORY]++;
  pthread_mutex_unlock(&fake_lock);
  *p = (CUdeviceptr)(uintptr_t)base;
  return CUDA_SUCCESS;
}

CUresult fake_cuMemFree(CUdeviceptr p) {
  ENTER(cuMemFree);
  /* As driver 580 (gpu_graph_repoint measures it): a capturing thread's free is refused. */
  if (fake_capture_forbids()) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  pthread_mutex_lock(&fake_lock);
  fake_alloc **link = &fake_allocs;
  while (*link && (uintptr_t)(*link)->base != p) link = &(*link)->next;
  fake_alloc *a = *link;
  if (a) {
    *link = a->next;
    fake_live[LIVE_MEMORY]--;
  }
  pthread_mutex_unlock(&fake_lock);
  if (!a) return CUDA_ERROR_INVALID_VALUE;
  free(a->base);
  free(a);
  return CUDA_SUCCESS;
}

/* [p, p + n) lies in one live allocation. */
int fake_in_device_memory(CUdeviceptr p, size_t n) {
  int ok = 0;
  pthread_mutex_lock(&fake_lock);
  for (fake_alloc *a = fake_allocs; a && !ok; a = a->next) {
    uintptr_t base = (uintptr_t)a->base;
    ok = p >= base && p - base <= a->size && n <= a->size - (p - base);
  }
  pthread_mutex_unlock(&fake_lock);
  return ok;
}

CUresult fake_cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t n) {
  ENTER(cuMemcpyHtoD);
  NEED_CONTEXT();
  if (!src || !fake_in_device_memory(dst, n)) return CUDA_ERROR_INVALID_VALUE;
  memcpy((void *)(uintptr_t)dst, src, n);
  return CUDA_SUCCESS;
}

CUresult fake_cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t n) {
  ENTER(cuMemcpyDtoH);
  NEED_CONTEXT();
  if (!dst || !fake_in_device_memory(src, n)) return CUDA_ERROR_INVALID_VALUE;
  memcpy(dst, (const void *)(uintptr_t)src, n);
  return CUDA_SUCCESS;
}

CUresult fake_cuMemcpyDtoD(CUdeviceptr dst, CUdeviceptr src, size_t n) {
  ENTER(cuMemcpyDtoD);
  NEED_CONTEXT();
  if (!fake_in_device_memory(dst, n) || !fake_in_device_memory(src, n)) return CUDA_ERROR_INVALID_VALUE;
  memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
  return CUDA_SUCCESS;
}

CUresult fake_cuMemsetD8(CUdeviceptr dst, unsigned char v, size_t n) {
  ENTER(cuMemsetD8);
  NEED_CONTEXT();
  if (!fake_in_device_memory(dst, n)) return CUDA_ERROR_INVALID_VALUE;
  memset((void *)(uintptr_t)dst, v, n);
  return CUDA_SUCCESS;
}

/* --- libraries and kernels ------------------------------------------------------------------- */

static int image_format(const unsigned char *p) {
  if (memcmp(p, "\x7f" "ELF", 4) == 0) return 1;
  if (p[0] == 0x50 && p[1] == 0xed && p[2] == 0x55 && p[3] == 0xba) return 2;
  return p[0] >= 0x09 && p[0] < 0x7f ? 3 : 0;
}

/* Accepts any image (the fake cannot run it); records its first bytes for tests. */
CUresult fake_cuLibraryLoadData(CUlibrary *out, const void *code, CUjit_option *jit_opts,
                                void **jit_vals, unsigned jit_n, CUlibraryOption *lib_opts,
                                void **lib_vals, unsigned lib_n) {
  ENTER(cuLibraryLoadData);
  if (!out || !code || (jit_n && (!jit_opts || !jit_vals)) || (lib_n && (!lib_opts || !lib_vals)))
    return FAKE_RESULT(cuLibraryLoadData, CUDA_ERROR_INVALID_VALUE);
  fake_library *lib = calloc(1, sizeof *lib);
  if (!lib) return FAKE_RESULT(cuLibraryLoadData, CUDA_ERROR_OUT_OF_MEMORY);
  lib->magic = LIBRARY_MAGIC;
  fakecuda_library rec = {.format = image_format(code), .jit_options = jit_n};
  /* Only 4 bytes are sure to exist (gclaunch checked them); PTX text may be shorter than 16. */
  size_t head = rec.format == 3 ? strnlen(code, sizeof rec.head) : sizeof rec.head;
  memcpy(rec.head, code, head);
  pthread_mutex_lock(&fake_lock);
  fake_live[LIVE_LIBRARY]++;
  fake_libraries++;
  fake_last_lib = rec;
  pthread_mutex_unlock(&fake_lock);
  *out = (CUlibrary)lib;
  return FAKE_RESULT(cuLibraryLoadData, CUDA_SUCCESS);
}

static fake_library *library_of(CUlibrary l) {
  fake_library *lib = (fake_library *)l;
  return lib && lib->magic == LIBRARY_MAGIC ? lib : NULL;
}

/* Handle reuse (fakecuda_reuse_handles): unloaded kernels' memory, handed out again by
 * cuLibraryGetKernel, most recently unloaded first. */
static bool reuse_handles;
static fake_kernel *reusable;

FAKE_API void fakecuda_reuse_handles(int on) {
  pthread_mutex_lock(&fake_lock);
  reuse_handles = on != 0;
  while (!reuse_handles && reusable) {
    fake_kernel *k = reusable;
    reusable = k->next;
    free(k);
  }
  pthread_mutex_unlock(&fake_lock);
}

CUresult fake_cuLibraryUnload(CUlibrary l) {
  ENTER(cuLibraryUnload);
  fake_library *lib = library_of(l);
  if (!lib) return CUDA_ERROR_INVALID_HANDLE;
  while (lib->kernels) {
    fake_kernel *k = lib->kernels;
    lib->kernels = k->next;
    k->magic = 0;
    for (int d = 0; d < FAKE_MAX_DEVICES; d++) k->fn[d].magic = 0;
    pthread_mutex_lock(&fake_lock);
    if (reuse_handles) k->next = reusable, reusable = k, k = NULL;
    pthread_mutex_unlock(&fake_lock);
    free(k);
  }
  lib->magic = 0;
  free(lib);
  pthread_mutex_lock(&fake_lock);
  fake_live[LIVE_LIBRARY]--;
  pthread_mutex_unlock(&fake_lock);
  return CUDA_SUCCESS;
}

/* The table called name for device: the device's own, else the all-devices one, else any.
 * NULL if name was never declared. Under fake_lock. */
static const kernel_table *find_table(const char *name, int device) {
  const kernel_table *any = NULL, *all = NULL;
  for (size_t i = 0; i < fake_table_count; i++) {
    const kernel_table *t = &fake_tables[i];
    if (strcmp(t->name, name) != 0) continue;
    if (t->device == device) return t;
    if (t->device == -1) all = t;
    any = t;
  }
  return all ? all : any;
}

/* Fills k's per-device functions from the tables. 0 if name was declared. Under fake_lock. */
static int init_kernel(const char *name, fake_kernel *k) {
  if (!find_table(name, 0)) return -1;
  for (int d = 0; d < FAKE_MAX_DEVICES; d++) {
    fake_function *f = &k->fn[d];
    f->magic = FUNCTION_MAGIC;
    f->device = d;
    f->kern = k;
    f->table = *find_table(name, d);
    memcpy(f->attrs, fake_default_attrs, sizeof f->attrs);
  }
  k->table = k->fn[0].table;
  return 0;
}

CUresult fake_cuLibraryGetKernel(CUkernel *out, CUlibrary l, const char *name) {
  ENTER(cuLibraryGetKernel);
  fake_library *lib = library_of(l);
  if (!out || !name) return FAKE_RESULT(cuLibraryGetKernel, CUDA_ERROR_INVALID_VALUE);
  if (!lib) return FAKE_RESULT(cuLibraryGetKernel, CUDA_ERROR_INVALID_HANDLE);
  pthread_mutex_lock(&fake_lock);
  fake_kernel *k = reusable;
  if (k) reusable = k->next, memset(k, 0, sizeof *k);
  pthread_mutex_unlock(&fake_lock);
  if (!k) k = calloc(1, sizeof *k);
  if (!k) return FAKE_RESULT(cuLibraryGetKernel, CUDA_ERROR_OUT_OF_MEMORY);
  pthread_mutex_lock(&fake_lock);
  int found = init_kernel(name, k) == 0;
  if (found) {
    k->magic = KERNEL_MAGIC;
    k->lib = lib;
    k->next = lib->kernels;
    lib->kernels = k;
  }
  pthread_mutex_unlock(&fake_lock);
  if (!found) {
    free(k);
    return FAKE_RESULT(cuLibraryGetKernel, CUDA_ERROR_NOT_FOUND);
  }
  *out = (CUkernel)k;
  return FAKE_RESULT(cuLibraryGetKernel, CUDA_SUCCESS);
}

fake_kernel *fake_kernel_of(const void *handle) {
  fake_kernel *k = (fake_kernel *)handle;
  return k && k->magic == KERNEL_MAGIC ? k : NULL;
}

fake_function *fake_function_of(const void *handle) {
  fake_function *f = (fake_function *)handle;
  return f && f->magic == FUNCTION_MAGIC ? f : NULL;
}

/* The function of the current context's device: each device has its own handle and layout. */
CUresult fake_cuKernelGetFunction(CUfunction *out, CUkernel kern) {
  ENTER(cuKernelGetFunction);
  NEED_CONTEXT();
  fake_kernel *k = fake_kernel_of(kern);
  if (!out) return FAKE_RESULT(cuKernelGetFunction, CUDA_ERROR_INVALID_VALUE);
  if (!k) return FAKE_RESULT(cuKernelGetFunction, CUDA_ERROR_INVALID_HANDLE);
  *out = (CUfunction)&k->fn[fake_context_device(fake_current)];
  return FAKE_RESULT(cuKernelGetFunction, CUDA_SUCCESS);
}

static CUresult param_info(const kernel_table *t, size_t i, size_t *offset, size_t *size) {
  if (i >= t->count || (!offset && !size)) return CUDA_ERROR_INVALID_VALUE;
  if (offset) *offset = t->offsets[i];
  if (size) *size = t->sizes[i];
  return CUDA_SUCCESS;
}

CUresult fake_cuFuncGetParamInfo(CUfunction f, size_t i, size_t *offset, size_t *size) {
  ENTER(cuFuncGetParamInfo);
  fake_function *fn = fake_function_of(f);
  return FAKE_RESULT(cuFuncGetParamInfo, fn ? param_info(&fn->table, i, offset, size) : CUDA_ERROR_INVALID_HANDLE);
}

CUresult fake_cuKernelGetParamInfo(CUkernel kern, size_t i, size_t *offset, size_t *size) {
  ENTER(cuKernelGetParamInfo);
  fake_kernel *k = fake_kernel_of(kern);
  return FAKE_RESULT(cuKernelGetParamInfo, k ? param_info(&k->table, i, offset, size) : CUDA_ERROR_INVALID_HANDLE);
}

CUresult fake_cuFuncGetAttribute(int *v, CUfunction_attribute a, CUfunction f) {
  ENTER(cuFuncGetAttribute);
  fake_function *k = fake_function_of(f);
  if (!v || (int)a < 0 || a >= CU_FUNC_ATTRIBUTE_MAX) return FAKE_RESULT(cuFuncGetAttribute, CUDA_ERROR_INVALID_VALUE);
  if (!k) return FAKE_RESULT(cuFuncGetAttribute, CUDA_ERROR_INVALID_HANDLE);
  pthread_mutex_lock(&fake_lock);
  *v = k->attrs[a];
  pthread_mutex_unlock(&fake_lock);
  return FAKE_RESULT(cuFuncGetAttribute, CUDA_SUCCESS);
}

CUresult fake_cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v) {
  ENTER(cuFuncSetAttribute);
  fake_function *k = fake_function_of(f);
  if (!k) return CUDA_ERROR_INVALID_HANDLE;
  if ((int)a < 0 || a >= CU_FUNC_ATTRIBUTE_MAX) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&fake_lock);
  int static_smem = k->attrs[CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES];
  int ok = a != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES ||
           (v >= 0 && v <= 232448 - static_smem);
  if (ok) k->attrs[a] = v;
  pthread_mutex_unlock(&fake_lock);
  return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
