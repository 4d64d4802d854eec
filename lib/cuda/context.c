/* Devices and contexts: a gcl_context retains a device's primary context. */
#include "cuda_internal.h"

#include <stdio.h>
#include <stdlib.h>

gcl_status gcl_device_count(int *count) {
  if (!count) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_device_count: count is NULL");
  gcl_status s = gcl__cu_load();
  if (s != GCL_OK) return s;
  int n = 0;
  CUresult rc = gcl__cu.cuDeviceGetCount(&n);
  if (rc != CUDA_SUCCESS) return gcl__cu_fail(rc, "cuDeviceGetCount");
  *count = n;
  return GCL_OK;
}

static gcl_status device_handle(int device, CUdevice *out, const char *fn) {
  gcl_status s = gcl__cu_load();
  if (s != GCL_OK) return s;
  int n = 0;
  CUresult rc = gcl__cu.cuDeviceGetCount(&n);
  if (rc != CUDA_SUCCESS) return gcl__cu_fail(rc, "cuDeviceGetCount");
  if (device < 0 || device >= n)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: device out of range: expected 0 ... %d, got %d",
                     fn, n - 1, device);
  rc = gcl__cu.cuDeviceGet(out, device);
  if (rc != CUDA_SUCCESS) return gcl__cu_fail(rc, "cuDeviceGet(%d)", device);
  return GCL_OK;
}

static gcl_status attribute(CUdevice dev, CUdevice_attribute a, const char *what, int *out) {
  CUresult rc = gcl__cu.cuDeviceGetAttribute(out, a, dev);
  if (rc != CUDA_SUCCESS) return gcl__cu_fail(rc, "cuDeviceGetAttribute(%s)", what);
  return GCL_OK;
}

gcl_status gcl_device_query(int device, gcl_device_info *info) {
  if (!info) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_device_query: info is NULL");
  CUdevice dev;
  gcl_status s = device_handle(device, &dev, __func__);
  if (s != GCL_OK) return s;
  gcl_device_info d = {0};
  CUresult rc = gcl__cu.cuDeviceGetName(d.name, (int)sizeof d.name, dev);
  if (rc != CUDA_SUCCESS) return gcl__cu_fail(rc, "cuDeviceGetName(%d)", device);
  int major = 0, minor = 0;
  if ((s = attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "cc major", &major)) ||
      (s = attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "cc minor", &minor)) ||
      (s = attribute(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "SMs", &d.multiprocessors)) ||
      (s = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "threads",
                     &d.max_threads_per_block)) ||
      (s = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, "smem optin",
                     &d.max_shared_per_block_optin)))
    return s;
  d.sm = major * 10 + minor;
  rc = gcl__cu.cuDeviceTotalMem(&d.total_memory, dev);
  if (rc != CUDA_SUCCESS) return gcl__cu_fail(rc, "cuDeviceTotalMem(%d)", device);
  *info = d;
  return GCL_OK;
}

gcl_status gcl_context_create(int device, gcl_context **out) {
  if (!out) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_context_create: out is NULL");
  CUdevice dev;
  gcl_status s = device_handle(device, &dev, __func__);
  if (s != GCL_OK) return s;
  int major = 0, minor = 0;
  if ((s = attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "cc major", &major)) ||
      (s = attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "cc minor", &minor)))
    return s;
  gcl_context *ctx = gcl__calloc(1, sizeof *ctx);
  if (!ctx) return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "gcl_context_create: out of memory");
  CUresult rc = gcl__cu.cuDevicePrimaryCtxRetain(&ctx->ctx, dev);
  if (rc != CUDA_SUCCESS) {
    gcl__free(ctx);
    return gcl__cu_fail(rc, "cuDevicePrimaryCtxRetain(device %d)", device);
  }
  ctx->device = device;
  ctx->dev = dev;
  ctx->sm = major * 10 + minor;
  *out = ctx;
  return GCL_OK;
}

void gcl_context_destroy(gcl_context *ctx) {
  if (!ctx) return;
  if (gcl__context_bind(ctx) == GCL_OK) gcl__deferred_destroy(ctx);
  gcl__cu.cuDevicePrimaryCtxRelease(ctx->dev);
  gcl__free(ctx);
}

int gcl_context_device(const gcl_context *ctx) { return ctx ? ctx->device : -1; }
int gcl_context_sm(const gcl_context *ctx) { return ctx ? ctx->sm : 0; }

gcl_status gcl__context_bind(gcl_context *ctx) {
  gcl_status fault = gcl__fault_check(); /* after a kernel fault, no call reaches the driver */
  if (fault != GCL_OK) return fault;
  CUcontext cur = NULL;
  if (gcl__cu.cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur == ctx->ctx) return GCL_OK;
  CUresult rc = gcl__cu.cuCtxSetCurrent(ctx->ctx);
  if (rc != CUDA_SUCCESS) return gcl__cu_fail(rc, "cuCtxSetCurrent(device %d)", ctx->device);
  return GCL_OK;
}

gcl_status gcl_context_bind(gcl_context *ctx) {
  if (!ctx) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_context_bind: ctx is NULL");
  return gcl__context_bind(ctx);
}

/* ctx is not NULL and is made current; fn is the public function, for the message. */
#define GCL_CTX_GUARD(ctx)                                                                        \
  do {                                                                                            \
    if (!(ctx)) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: ctx is NULL", __func__);       \
    gcl_status bind_status = gcl__context_bind(ctx);                                              \
    if (bind_status != GCL_OK) return bind_status;                                                \
  } while (0)

gcl_status gcl_mem_alloc(gcl_context *ctx, size_t bytes, uint64_t *address) {
  GCL_CTX_GUARD(ctx);
  if (!address) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_mem_alloc: address is NULL");
  gcl__deferred_drain(ctx);
  CUdeviceptr p = 0;
  CUresult rc = gcl__cu.cuMemAlloc(&p, bytes);
  if (rc != CUDA_SUCCESS) return gcl__cu_fail(rc, "cuMemAlloc(%zu bytes)", bytes);
  *address = (uint64_t)p;
  return GCL_OK;
}

static void mem_free_deferred(void *address) { gcl__cu.cuMemFree((CUdeviceptr)(uintptr_t)address); }

gcl_status gcl_mem_free(gcl_context *ctx, uint64_t address) {
  GCL_CTX_GUARD(ctx);
  /* A capturing thread's cuMemFree is refused and breaks its capture: freed when it ends. */
  if (gcl__capture_mine())
    return address ? gcl__defer_call(ctx, mem_free_deferred, (void *)(uintptr_t)address) : GCL_OK;
  gcl__deferred_drain(ctx);
  CUresult rc = gcl__cu.cuMemFree((CUdeviceptr)address);
  if (rc != CUDA_SUCCESS) return gcl__cu_fail(rc, "cuMemFree(0x%llx)", (unsigned long long)address);
  return GCL_OK;
}

gcl_status gcl_mem_upload(gcl_context *ctx, uint64_t dst, const void *src, size_t bytes) {
  GCL_CTX_GUARD(ctx);
  CUresult rc = gcl__cu.cuMemcpyHtoD((CUdeviceptr)dst, src, bytes);
  if (rc != CUDA_SUCCESS) return gcl__cu_fail(rc, "cuMemcpyHtoD(%zu bytes)", bytes);
  return GCL_OK;
}

gcl_status gcl_mem_download(gcl_context *ctx, void *dst, uint64_t src, size_t bytes) {
  GCL_CTX_GUARD(ctx);
  CUresult rc = gcl__cu.cuMemcpyDtoH(dst, (CUdeviceptr)src, bytes);
  if (rc != CUDA_SUCCESS) return gcl__cu_fail(rc, "cuMemcpyDtoH(%zu bytes)", bytes);
  return GCL_OK;
}

gcl_status gcl_mem_fill_u8(gcl_context *ctx, uint64_t dst, uint8_t value, size_t bytes) {
  GCL_CTX_GUARD(ctx);
  CUresult rc = gcl__cu.cuMemsetD8((CUdeviceptr)dst, value, bytes);
  if (rc != CUDA_SUCCESS) return gcl__cu_fail(rc, "cuMemsetD8(%zu bytes)", bytes);
  return GCL_OK;
}

gcl_status gcl_mem_copy(gcl_context *ctx, uint64_t dst, uint64_t src, size_t bytes) {
  GCL_CTX_GUARD(ctx);
  CUresult rc = gcl__cu.cuMemcpyDtoD((CUdeviceptr)dst, (CUdeviceptr)src, bytes);
  if (rc != CUDA_SUCCESS) return gcl__cu_fail(rc, "cuMemcpyDtoD(%zu bytes)", bytes);
  return GCL_OK;
}

gcl_status gcl_context_synchronize(gcl_context *ctx) {
  GCL_CTX_GUARD(ctx);
  CUresult rc = gcl__cu.cuCtxSynchronize();
  if (rc != CUDA_SUCCESS) return gcl__cu_fail(rc, "cuCtxSynchronize(device %d)", ctx->device);
  gcl__deferred_drain(ctx);
  return GCL_OK;
}
