/* Opens libcuda.so.1 and NVRTC at run time (never linked, through gcl__lib_open), resolves their
 * entry points once. */
#include "driver.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct load_result {
  gcl_status status;
  char message[GCL__MESSAGE_MAX];
  char path[1024];
  CUresult cuda_error; /* the driver call's result behind the failure, 0 for none */
} load_result;

static pthread_once_t cu_once = PTHREAD_ONCE_INIT;
static load_result cu_result;
static int cu_driver_version;

static gcl_status record(load_result *r, gcl_status s, const char *fmt, ...) GCL__PRINTF(3, 4);
static gcl_status record(load_result *r, gcl_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->message, sizeof r->message, fmt, ap);
  va_end(ap);
  r->status = s;
  return s;
}

static gcl_status classify_init(load_result *r, CUresult rc, const char *call) {
  r->cuda_error = rc;
  if (rc == CUDA_ERROR_STUB_LIBRARY)
    return record(r, GCL_ERROR_STUB_DRIVER,
                  "no usable CUDA driver: '%s' is the toolkit's stub library (%s returned "
                  "CUDA_ERROR_STUB_LIBRARY, 34); install the NVIDIA driver",
                  r->path, call);
  if (rc == CUDA_ERROR_NO_DEVICE)
    return record(r, GCL_ERROR_NO_DEVICE,
                  "no CUDA device: the driver '%s' loaded but %s returned CUDA_ERROR_NO_DEVICE "
                  "(100)",
                  r->path, call);
  return record(r, GCL_ERROR_DRIVER, "CUDA driver '%s': %s failed: %s", r->path, call,
                gcl__cu_error_name(rc));
}

typedef CUresult (*get_proc_fn)(const char *, void **, int, cuuint64_t,
                                CUdriverProcAddressQueryResult *);

static gcl_status resolve(load_result *r, get_proc_fn get_proc, const char *name, int version,
                          int required, void **slot) {
  CUdriverProcAddressQueryResult q = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  void *pfn = NULL;
  CUresult rc = get_proc(name, &pfn, version, CU_GET_PROC_ADDRESS_DEFAULT, &q);
  if (rc != CUDA_SUCCESS) return classify_init(r, rc, "cuGetProcAddress_v2");
  if (pfn && q == CU_GET_PROC_ADDRESS_SUCCESS) {
    *slot = pfn;
    return GCL_OK;
  }
  *slot = NULL;
  if (!required) return GCL_OK;
  return record(r, GCL_ERROR_DRIVER_TOO_OLD,
                "CUDA driver '%s' lacks %s (ABI %d): %s; a driver for CUDA >= 12.4 is needed",
                r->path, name, version,
                q == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT ? "version not sufficient"
                                                               : "symbol not found");
}

static void cu_load_once(void) {
  load_result *r = &cu_result;
  const char *env = getenv("GCL_LIBCUDA");
  static gcl__lib_search found;
  snprintf(r->path, sizeof r->path, "%s", env && *env ? env : "libcuda.so.1");
  void *lib = gcl__lib_open(&found, r->path, RTLD_NOW | RTLD_LOCAL, "cuGetProcAddress_v2");
  if (!lib) {
    record(r, GCL_ERROR_NO_DRIVER, "no CUDA driver: dlopen(\"%s\") failed: %s", r->path, found.reason);
    return;
  }
  snprintf(r->path, sizeof r->path, "%s", found.path);
  get_proc_fn get_proc = (get_proc_fn)dlsym(lib, "cuGetProcAddress_v2");
  if (!get_proc) {
    record(r, GCL_ERROR_DRIVER_TOO_OLD,
           "CUDA driver '%s' has no cuGetProcAddress_v2 (a driver for CUDA >= 12.0 is needed)",
           r->path);
    return;
  }
  void *slot;
  if (resolve(r, get_proc, "cuDriverGetVersion", 2020, 1, &slot) != GCL_OK) return;
  gcl__cu.cuDriverGetVersion = (PFN_cuDriverGetVersion_v2020)slot;
  CUresult rc = gcl__cu.cuDriverGetVersion(&cu_driver_version);
  if (rc != CUDA_SUCCESS) {
    classify_init(r, rc, "cuDriverGetVersion");
    return;
  }
  /* An optional entry of an ABI newer than the driver is left NULL: such a driver answers the
   * request with the newest ABI it has, whose signature is not the typedef's. */
#define GCL_X_RESOLVE(name, version, required)                                                    \
  if (resolve(r, get_proc, #name, version, required, &slot) != GCL_OK) return;                    \
  gcl__cu.name = required || version <= cu_driver_version ? (PFN_##name##_v##version)slot : NULL;
  GCL_CU_ENTRY_POINTS(GCL_X_RESOLVE)
#undef GCL_X_RESOLVE
#define GCL_X_RESOLVE_OLD(field, name, version)                                                   \
  if (resolve(r, get_proc, #name, version, 0, &slot) != GCL_OK) return;                          \
  gcl__cu.field = (PFN_##name##_v##version)slot;
  GCL_CU_OLD_ENTRY_POINTS(GCL_X_RESOLVE_OLD)
#undef GCL_X_RESOLVE_OLD
  rc = gcl__cu.cuInit(0);
  if (rc != CUDA_SUCCESS) {
    classify_init(r, rc, "cuInit");
    return;
  }
  r->status = GCL_OK;
}

gcl_status gcl__cu_load(void) {
  pthread_once(&cu_once, cu_load_once);
  if (cu_result.status != GCL_OK) {
    gcl__fail(cu_result.status, "%s", cu_result.message);
    gcl__set_last_cuda_error((int)cu_result.cuda_error);
    return cu_result.status;
  }
  return gcl__fault_check();
}

gcl_status gcl_driver_init(void) { return gcl__cu_load(); }

const char *gcl_driver_path(void) {
  pthread_once(&cu_once, cu_load_once);
  return cu_result.path;
}

gcl_status gcl_driver_version(int *version) {
  if (!version) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_driver_version: version is NULL");
  pthread_once(&cu_once, cu_load_once);
  if (cu_driver_version == 0) return gcl__cu_load();
  *version = cu_driver_version;
  return GCL_OK;
}

/* --- NVRTC ------------------------------------------------------------------------------------ */

static pthread_once_t nvrtc_once = PTHREAD_ONCE_INIT;
static load_result nvrtc_result;

static void nvrtc_load_once(void) {
  load_result *r = &nvrtc_result;
  char cuda_path13[512] = "", cuda_path12[512] = "";
  const char *env = getenv("GCL_LIBNVRTC");
  const char *cuda_path = getenv("CUDA_PATH");
  if (cuda_path && *cuda_path) {
    snprintf(cuda_path13, sizeof cuda_path13, "%s/lib64/libnvrtc.so.13", cuda_path);
    snprintf(cuda_path12, sizeof cuda_path12, "%s/lib64/libnvrtc.so.12", cuda_path);
  }
  const char *const defaults[] = {"libnvrtc.so.13", "libnvrtc.so.12", cuda_path13, cuda_path12,
                                  "/usr/local/cuda/lib64/libnvrtc.so.13",
                                  "/usr/local/cuda/lib64/libnvrtc.so.12"};
  static gcl__lib_search found;
  void *lib = NULL;
  if (env && *env) lib = gcl__lib_open(&found, env, RTLD_NOW | RTLD_LOCAL, "nvrtcVersion");
  for (size_t i = 0; !(env && *env) && !lib && i < sizeof defaults / sizeof *defaults; i++)
    lib = gcl__lib_open(&found, defaults[i], RTLD_NOW | RTLD_LOCAL, "nvrtcVersion");
  if (!lib) {
    record(r, GCL_ERROR_NO_NVRTC, "NVRTC not found: tried %s", found.tried);
    snprintf(r->path, sizeof r->path, "%s", "(not found)");
    return;
  }
  snprintf(r->path, sizeof r->path, "%s", found.path);
#define GCL_X_SYM(name)                                                                           \
  gcl__nvrtc.name = (__typeof__(&name))dlsym(lib, #name);                                        \
  if (!gcl__nvrtc.name) {                                                                         \
    record(r, GCL_ERROR_NO_NVRTC, "NVRTC '%s' lacks %s", r->path, #name);                        \
    return;                                                                                       \
  }
  GCL_NVRTC_ENTRY_POINTS(GCL_X_SYM)
#undef GCL_X_SYM
  r->status = GCL_OK;
  r->message[0] = 0;
}

gcl_status gcl__nvrtc_load(void) {
  pthread_once(&nvrtc_once, nvrtc_load_once);
  if (nvrtc_result.status != GCL_OK)
    return gcl__fail(nvrtc_result.status, "%s", nvrtc_result.message);
  return GCL_OK;
}

gcl_status gcl_nvrtc_init(void) { return gcl__nvrtc_load(); }

const char *gcl_nvrtc_path(void) {
  pthread_once(&nvrtc_once, nvrtc_load_once);
  return nvrtc_result.path;
}

gcl_status gcl_nvrtc_version(int *major, int *minor) {
  if (!major || !minor)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_nvrtc_version: %s is NULL", major ? "minor" : "major");
  gcl_status s = gcl__nvrtc_load();
  if (s != GCL_OK) return s;
  int ma = 0, mi = 0;
  nvrtcResult rc = gcl__nvrtc.nvrtcVersion(&ma, &mi);
  if (rc != NVRTC_SUCCESS)
    return gcl__fail(GCL_ERROR_COMPILE, "nvrtcVersion: %s", gcl__nvrtc.nvrtcGetErrorString(rc));
  *major = ma;
  *minor = mi;
  return GCL_OK;
}

gcl_status gcl_nvrtc_archs(int *archs, size_t cap, size_t *count) {
  if (!count) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_nvrtc_archs: count is NULL");
  if (cap && !archs)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_nvrtc_archs: archs is NULL with cap %zu", cap);
  gcl_status s = gcl__nvrtc_load();
  if (s != GCL_OK) return s;
  int n = 0;
  nvrtcResult rc = gcl__nvrtc.nvrtcGetNumSupportedArchs(&n);
  if (rc != NVRTC_SUCCESS || n < 0 || n > 256)
    return gcl__fail(GCL_ERROR_COMPILE, "nvrtcGetNumSupportedArchs failed (%d)", (int)rc);
  int all[256];
  rc = gcl__nvrtc.nvrtcGetSupportedArchs(all);
  if (rc != NVRTC_SUCCESS)
    return gcl__fail(GCL_ERROR_COMPILE, "nvrtcGetSupportedArchs failed (%d)", (int)rc);
  for (size_t i = 0; i < cap && i < (size_t)n; i++) archs[i] = all[i];
  *count = (size_t)n;
  return GCL_OK;
}
