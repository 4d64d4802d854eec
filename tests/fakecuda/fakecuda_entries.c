/* libfakecuda.so, part 2: the driver entry points, served through cuGetProcAddress_v2. Each
 * checks what the real driver checks where a wrong call from gclaunch would otherwise go
 * unnoticed (a current context, live handles, the exact parameter buffer size). */
#include "fakecuda_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_SMEM_OPTIN 232448

/* Device 0 is an H200 (sm_90); device 1, present with fakecuda_set_devices(2), a B200 (sm_100):
 * two architectures whose parameter layouts differ. */
static const struct { const char *name; int major, sms; size_t memory; } fake_devices[FAKE_MAX_DEVICES] = {
    {"Fake H200", 9, 132, (size_t)141 << 30},
    {"Fake B200", 10, 148, (size_t)180 << 30},
};

static const struct { int code; const char *name, *text; } error_table[] = {
    {0, "CUDA_SUCCESS", "no error"},
    {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {34, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"},
    {100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {200, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {209, "CUDA_ERROR_NO_BINARY_FOR_GPU", "no kernel image is available for execution on the device"},
    {218, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {400, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
    {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"},
    {709, "CUDA_ERROR_CONTEXT_IS_DESTROYED", "context is destroyed"},
    {401, "CUDA_ERROR_ILLEGAL_STATE", "the operation cannot be performed in the present state"},
    {600, "CUDA_ERROR_NOT_READY", "device not ready"},
    {714, "CUDA_ERROR_HARDWARE_STACK_ERROR", "hardware stack error"},
    {715, "CUDA_ERROR_ILLEGAL_INSTRUCTION", "an illegal instruction was encountered"},
    {716, "CUDA_ERROR_MISALIGNED_ADDRESS", "misaligned address"},
    {717, "CUDA_ERROR_INVALID_ADDRESS_SPACE", "operation not supported on global/shared address space"},
    {718, "CUDA_ERROR_INVALID_PC", "invalid program counter"},
    {719, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {801, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", "operation not permitted when stream is capturing"},
    {901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", "operation failed due to a previous error during capture"},
    {402, "CUDA_ERROR_LOSSY_QUERY", "attempted a lossy query (edge data)"},
    {912, "CUDA_ERROR_INVALID_CLUSTER_SIZE", "invalid cluster size"},
    {999, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

static CUresult error_lookup(CUresult e, const char **out, int want_text) {
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < sizeof error_table / sizeof *error_table; i++)
    if (error_table[i].code == (int)e) {
      *out = want_text ? error_table[i].text : error_table[i].name;
      return CUDA_SUCCESS;
    }
  *out = NULL;
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult fake_cuGetErrorName(CUresult e, const char **s) {
  ENTER(cuGetErrorName);
  return error_lookup(e, s, 0);
}

CUresult fake_cuGetErrorString(CUresult e, const char **s) {
  ENTER(cuGetErrorString);
  return error_lookup(e, s, 1);
}

CUresult fake_cuInit(unsigned flags) {
  ENTER(cuInit);
  if (flags) return CUDA_ERROR_INVALID_VALUE;
  atomic_store(&fake_initialized, 1);
  return CUDA_SUCCESS;
}

CUresult fake_cuDriverGetVersion(int *v) {
  ENTER(cuDriverGetVersion);
  if (!v) return CUDA_ERROR_INVALID_VALUE;
  *v = atomic_load(&fake_driver_version);
  return CUDA_SUCCESS;
}

/* --- devices and the primary context ------------------------------------------------------- */

CUresult fake_cuDeviceGetCount(int *n) {
  ENTER(cuDeviceGetCount);
  if (!n) return CUDA_ERROR_INVALID_VALUE;
  *n = atomic_load(&fake_device_count);
  return CUDA_SUCCESS;
}

/* The device a call names, for its lost state: d, or -1 when d is not a device. */
static int dev_scope(CUdevice d) { return fake_device_valid(d) ? d : -1; }

CUresult fake_cuDeviceGet(CUdevice *d, int ordinal) {
  ENTER_DEV(cuDeviceGet, dev_scope(ordinal));
  if (!d) return CUDA_ERROR_INVALID_VALUE;
  if (!fake_device_valid(ordinal)) return CUDA_ERROR_INVALID_DEVICE;
  *d = ordinal;
  return CUDA_SUCCESS;
}

CUresult fake_cuDeviceGetName(char *name, int len, CUdevice d) {
  ENTER_DEV(cuDeviceGetName, dev_scope(d));
  if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  if (!fake_device_valid(d)) return CUDA_ERROR_INVALID_DEVICE;
  snprintf(name, (size_t)len, "%s", fake_devices[d].name);
  return CUDA_SUCCESS;
}

int fake_device_major(int d) { return fake_devices[d].major; }

static int device_attribute(CUdevice_attribute a, CUdevice d) {
  switch (a) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: return fake_devices[d].major;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: return 0;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: return fake_devices[d].sms;
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: return 1024;
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: return 1024;
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: return 64;
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: return 2147483647;
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: return 65535;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: return 49152;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: return FAKE_SMEM_OPTIN;
  case CU_DEVICE_ATTRIBUTE_WARP_SIZE: return 32;
  case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: return 1;
  case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH: return 1;
  case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: return 1;
  default: return 0;
  }
}

CUresult fake_cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d) {
  ENTER_DEV(cuDeviceGetAttribute, dev_scope(d));
  if (!v) return CUDA_ERROR_INVALID_VALUE;
  if (!fake_device_valid(d)) return CUDA_ERROR_INVALID_DEVICE;
  *v = device_attribute(a, d);
  return CUDA_SUCCESS;
}

CUresult fake_cuDeviceTotalMem(size_t *bytes, CUdevice d) {
  ENTER_DEV(cuDeviceTotalMem, dev_scope(d));
  if (!bytes) return CUDA_ERROR_INVALID_VALUE;
  if (!fake_device_valid(d)) return CUDA_ERROR_INVALID_DEVICE;
  *bytes = fake_devices[d].memory;
  return CUDA_SUCCESS;
}

/* free: the device's memory less its live allocations, or FAKECUDA_MEM_FREE (bytes) when set. */
CUresult fake_cuMemGetInfo(size_t *free_bytes, size_t *total) {
  ENTER(cuMemGetInfo);
  NEED_CONTEXT();
  if (!free_bytes || !total) return CUDA_ERROR_INVALID_VALUE;
  int d = fake_context_device(fake_current);
  size_t used = 0;
  pthread_mutex_lock(&fake_lock);
  for (fake_alloc *a = fake_allocs; a; a = a->next) used += a->device == d ? a->size : 0;
  pthread_mutex_unlock(&fake_lock);
  *total = fake_devices[d].memory;
  *free_bytes = used < *total ? *total - used : 0;
  const char *env = getenv("FAKECUDA_MEM_FREE");
  if (env && *env) *free_bytes = (size_t)strtoull(env, NULL, 0);
  return CUDA_SUCCESS;
}

CUresult fake_cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) {
  ENTER_DEV(cuDevicePrimaryCtxRetain, dev_scope(d));
  if (!c) return CUDA_ERROR_INVALID_VALUE;
  if (!fake_device_valid(d)) return CUDA_ERROR_INVALID_DEVICE;
  pthread_mutex_lock(&fake_lock);
  fake_live[LIVE_RETAIN]++;
  fake_retains[d]++;
  pthread_mutex_unlock(&fake_lock);
  *c = (CUcontext)&fake_primary_context[d];
  return CUDA_SUCCESS;
}

/* Unlinks and returns device d's allocations. Under fake_lock. */
static fake_alloc *take_allocations(int d) {
  fake_alloc *taken = NULL, **link = &fake_allocs;
  while (*link) {
    fake_alloc *a = *link;
    if (a->device != d) {
      link = &a->next;
      continue;
    }
    *link = a->next;
    a->next = taken;
    taken = a;
    fake_live[LIVE_MEMORY]--;
  }
  return taken;
}

CUresult fake_cuDevicePrimaryCtxRelease(CUdevice d) {
  ENTER_DEV(cuDevicePrimaryCtxRelease, dev_scope(d));
  if (d < 0 || d >= FAKE_MAX_DEVICES) return CUDA_ERROR_INVALID_DEVICE;
  CUresult rc = CUDA_SUCCESS;
  fake_alloc *freed = NULL;
  pthread_mutex_lock(&fake_lock);
  if (fake_retains[d] > 0) fake_live[LIVE_RETAIN]--, fake_retains[d]--;
  else rc = CUDA_ERROR_INVALID_CONTEXT; /* released more often than retained */
  /* The last release destroys the primary context and with it its allocations, as the real
   * driver does: after a sticky error that is the only way memory comes back. */
  if (rc == CUDA_SUCCESS && fake_retains[d] == 0) freed = take_allocations(d);
  pthread_mutex_unlock(&fake_lock);
  while (freed) {
    fake_alloc *next = freed->next;
    free(freed->base);
    free(freed);
    freed = next;
  }
  return rc;
}

CUresult fake_cuCtxSetCurrent(CUcontext c) {
  ENTER_DEV(cuCtxSetCurrent, c ? fake_context_device(c) : FAKE_DEV_CURRENT);
  if (c && fake_context_device(c) < 0) return CUDA_ERROR_INVALID_CONTEXT;
  fake_current = c;
  return CUDA_SUCCESS;
}

CUresult fake_cuCtxGetCurrent(CUcontext *c) {
  ENTER(cuCtxGetCurrent);
  if (!c) return CUDA_ERROR_INVALID_VALUE;
  *c = fake_current;
  return CUDA_SUCCESS;
}

CUresult fake_cuCtxSynchronize(void) {
  ENTER(cuCtxSynchronize);
  NEED_CONTEXT();
  return CUDA_SUCCESS;
}

