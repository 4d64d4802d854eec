/* libfakecuda.so, part 4: launches (recorded, with the parameter bytes the device would see, or
 * captured into a graph on a capturing stream), tensor maps and cuGetProcAddress_v2. Streams,
 * events and copies are in fakecuda_stream.c, graphs in fakecuda_graph.c. */
#include "fakecuda_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


/* --- launch ----------------------------------------------------------------------------------- */

static size_t param_area(const kernel_table *t) {
  size_t end = 0;
  for (size_t i = 0; i < t->count; i++)
    if (t->offsets[i] + t->sizes[i] > end) end = t->offsets[i] + t->sizes[i];
  return end;
}

/* extra = {BUFFER_POINTER, p, BUFFER_SIZE, &size, END}: the size must be the kernel's exact
 * parameter area (the real driver rejects a larger one and reads garbage past a smaller one). */
static CUresult pack_extra(const kernel_table *t, void **extra, fakecuda_launch *rec) {
  const void *buf = NULL;
  const size_t *size = NULL;
  for (size_t i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
    if (i > 8) return CUDA_ERROR_INVALID_VALUE;
    if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) buf = extra[i + 1];
    else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) size = extra[i + 1];
    else return CUDA_ERROR_INVALID_VALUE;
  }
  if (!buf || !size || *size != param_area(t)) return CUDA_ERROR_INVALID_VALUE;
  memcpy(rec->params, buf, *size);
  rec->via_extra = 1;
  return CUDA_SUCCESS;
}

CUresult fake_pack(const kernel_table *t, void **params, void **extra, fakecuda_launch *rec) {
  rec->param_bytes = param_area(t);
  if (rec->param_bytes > FAKECUDA_MAX_PARAM_BYTES) return CUDA_ERROR_INVALID_VALUE;
  if (params && extra) return CUDA_ERROR_INVALID_VALUE;
  if (extra) return pack_extra(t, extra, rec);
  if (t->count && !params) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < t->count; i++) {
    if (!params[i]) return CUDA_ERROR_INVALID_VALUE;
    memcpy(rec->params + t->offsets[i], params[i], t->sizes[i]);
  }
  return CUDA_SUCCESS;
}

static CUresult read_attributes(const CUlaunchConfig *c, fakecuda_launch *rec) {
  if (c->numAttrs && !c->attrs) return CUDA_ERROR_INVALID_VALUE;
  for (unsigned i = 0; i < c->numAttrs; i++) {
    const CUlaunchAttribute *a = &c->attrs[i];
    switch (a->id) {
    case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
      rec->cluster[0] = a->value.clusterDim.x;
      rec->cluster[1] = a->value.clusterDim.y;
      rec->cluster[2] = a->value.clusterDim.z;
      break;
    case CU_LAUNCH_ATTRIBUTE_COOPERATIVE: rec->cooperative = a->value.cooperative; break;
    case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION:
      rec->programmatic = a->value.programmaticStreamSerializationAllowed;
      break;
    case CU_LAUNCH_ATTRIBUTE_PRIORITY: rec->priority = a->value.priority; break;
    default: break;
    }
  }
  for (int d = 0; d < 3 && rec->cluster[0]; d++)
    if (!rec->cluster[d] || rec->grid[d] % rec->cluster[d]) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
  return CUDA_SUCCESS;
}

static CUresult check_shape(const fake_function *k, const fakecuda_launch *rec) {
  unsigned long long threads = 1;
  for (int d = 0; d < 3; d++) {
    if (!rec->grid[d] || !rec->block[d]) return CUDA_ERROR_INVALID_VALUE;
    threads *= rec->block[d];
  }
  if (threads > (unsigned long long)k->attrs[CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK])
    return CUDA_ERROR_INVALID_VALUE;
  if (rec->shared_bytes > (unsigned)k->attrs[CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES])
    return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

void fake_record_launch(const fakecuda_launch *rec) {
  pthread_mutex_lock(&fake_lock);
  fake_launches++;
  fake_last_launch = *rec;
  fake_launches_dev[rec->device]++;
  fake_last_launch_dev[rec->device] = *rec;
  fake_digest_sum += fakecuda_digest(rec->params, rec->param_bytes);
  pthread_mutex_unlock(&fake_lock);
}

/* Which device's context a launch on stream s runs in, as the H200's driver decides (driver 580;
 * tests/gpu/test_launch.c checks it there):
 * a created stream's own, whatever is current (none included); for a default stream the
 * current context's (INVALID_CONTEXT without one). *device < 0 with the error otherwise. */
static CUresult launch_device(CUstream s, int *device) {
  if (s && s != CU_STREAM_LEGACY && s != CU_STREAM_PER_THREAD) {
    *device = ((const int *)s)[1];
    pthread_mutex_lock(&fake_lock);
    long retained = fake_retains[*device];
    pthread_mutex_unlock(&fake_lock);
    return retained > 0 ? CUDA_SUCCESS : CUDA_ERROR_CONTEXT_IS_DESTROYED;
  }
  NEED_CONTEXT();
  *device = fake_context_device(fake_current);
  return CUDA_SUCCESS;
}

static CUresult launch(const CUlaunchConfig *c, CUfunction f, void **params, void **extra) {
  fake_function *k = fake_function_of(f);
  if (!c) return CUDA_ERROR_INVALID_VALUE;
  if (!k || !fake_valid_stream(c->hStream)) return CUDA_ERROR_INVALID_HANDLE;
  int device;
  CUresult ctx_rc = launch_device(c->hStream, &device);
  if (ctx_rc != CUDA_SUCCESS) return ctx_rc;
  /* The function must be of that context: the real driver says INVALID_HANDLE otherwise (a
   * default stream with another context current, or a stream of another context). */
  if (k->device != device) return CUDA_ERROR_INVALID_HANDLE;
  fakecuda_launch *rec = calloc(1, sizeof *rec); /* 32 KiB: not on a worker thread's stack */
  if (!rec) return CUDA_ERROR_OUT_OF_MEMORY;
  rec->device = device;
  snprintf(rec->kernel, sizeof rec->kernel, "%s", k->table.name);
  unsigned dims[6] = {c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY, c->blockDimZ};
  memcpy(rec->grid, dims, sizeof rec->grid);
  memcpy(rec->block, dims + 3, sizeof rec->block);
  rec->shared_bytes = c->sharedMemBytes;
  rec->stream = c->hStream;
  CUresult rc = read_attributes(c, rec);
  pthread_mutex_lock(&fake_lock);
  if (rc == CUDA_SUCCESS) rc = check_shape(k, rec);
  if (rc == CUDA_SUCCESS) rc = fake_pack(&k->table, params, extra, rec);
  pthread_mutex_unlock(&fake_lock);
  /* On a capturing stream the launch becomes a graph node instead of running. */
  if (rc == CUDA_SUCCESS && !fake_capture_kernel(c->hStream, k, rec, &rc)) fake_record_launch(rec);
  free(rec);
  return rc;
}

CUresult fake_cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params, void **extra) {
  ENTER(cuLaunchKernelEx);
  return launch(c, f, params, extra);
}

CUresult fake_cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                             unsigned by, unsigned bz, unsigned smem, CUstream s, void **params,
                             void **extra) {
  ENTER(cuLaunchKernel);
  CUlaunchConfig c = {gx, gy, gz, bx, by, bz, smem, s, NULL, 0};
  return launch(&c, f, params, extra);
}

/* --- tensor maps: the checks the header documents, then 128 bytes anyone can recompute ------- */

static CUresult check_tensormap(cuuint32_t rank, const void *addr, const cuuint64_t *dims,
                                const cuuint64_t *strides, const cuuint32_t *box,
                                const cuuint32_t *estrides) {
  /* Addresses from 2^57 up are refused: undocumented, measured on driver 580 (H100);
   * address 0 is encoded (the same driver: template maps). */
  if (rank < 1 || rank > 5 || ((uintptr_t)addr & 15) ||
      (uint64_t)(uintptr_t)addr >= (UINT64_C(1) << 57) || !dims || !box || !estrides ||
      (rank > 1 && !strides))
    return CUDA_ERROR_INVALID_VALUE;
  for (cuuint32_t i = 0; i < rank; i++) {
    if (!dims[i] || dims[i] > ((cuuint64_t)1 << 32) || !box[i] || box[i] > 256 || !estrides[i] ||
        estrides[i] > 8)
      return CUDA_ERROR_INVALID_VALUE;
    if (i + 1 < rank && (strides[i] % 16 || strides[i] >= ((cuuint64_t)1 << 40)))
      return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

/* Layout of the fake descriptor: u64 address, u32 type, u32 rank, u64 dims[5], u64 strides[4],
 * then 20 bytes of box (tiled: u32 box[5]; im2col: u32 channels, u32 pixels, i16 lower[2],
 * i16 upper[2] -- W and H, i16 lower D, i16 upper D), u8 element strides[5], u8 interleave,
 * swizzle, l2, oob, then to byte 128 0xFA (tiled) or 0x1C (im2col). Every argument the driver
 * takes is in the bytes, so two encodes are equal exactly when their arguments are, and
 * cuTensorMapReplaceAddress patches exactly what a fresh encode at another address changes. */
/* The first 8 bytes for address a of a map with interleave il (fakecuda_set_tmap_layout). */
static uint64_t address_word(uint64_t a, int il) {
  int mode = atomic_load(&fake_tmap_layout);
  if (mode == 3) return a | 0xAu | (uint64_t)(0x50u | (unsigned)il) << 57; /* bits 0-3, 57-63 */
  return mode == 1 || (mode == 2 && il) ? a >> 4 : a;
}

static void fake_descriptor(unsigned char b[128], CUtensorMapDataType type, cuuint32_t rank,
                            void *addr, const cuuint64_t *dims, const cuuint64_t *strides,
                            const cuuint32_t *estrides, CUtensorMapInterleave il,
                            CUtensorMapSwizzle sw, CUtensorMapL2promotion l2,
                            CUtensorMapFloatOOBfill oob, unsigned char tail) {
  memset(b, 0, 117);
  memset(b + 117, tail, 128 - 117);
  uint64_t a = address_word((uint64_t)(uintptr_t)addr, (int)il);
  uint32_t t = (uint32_t)type;
  memcpy(b, &a, 8);
  memcpy(b + 8, &t, 4);
  memcpy(b + 12, &rank, 4);
  memcpy(b + 16, dims, rank * 8);
  if (rank > 1) memcpy(b + 56, strides, (rank - 1) * 8);
  for (cuuint32_t i = 0; i < rank; i++) b[108 + i] = (unsigned char)estrides[i];
  b[113] = (unsigned char)il, b[114] = (unsigned char)sw, b[115] = (unsigned char)l2;
  b[116] = (unsigned char)oob;
}

/* fakecuda_set_tmap_bit85: bit 85 set on a Blackwell-like device (compute capability >= 10). */
static void fake_bit85(unsigned char *b) {
  int dev = fake_context_device(fake_current);
  int mode = atomic_load(&fake_tmap_bit85);
  if (dev >= 0 && (mode == 2 || (mode == 1 && fake_device_major(dev) >= 10))) b[10] |= 1u << 5;
}

CUresult fake_cuTensorMapEncodeTiled(CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank,
                                     void *addr, const cuuint64_t *dims, const cuuint64_t *strides,
                                     const cuuint32_t *box, const cuuint32_t *estrides,
                                     CUtensorMapInterleave il, CUtensorMapSwizzle sw,
                                     CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
  ENTER(cuTensorMapEncodeTiled);
  NEED_CONTEXT_COUNTED(cuTensorMapEncodeTiled);
  if (!map) return CUDA_ERROR_INVALID_VALUE;
  CUresult rc = check_tensormap(rank, addr, dims, strides, box, estrides);
  if (rc != CUDA_SUCCESS) return rc;
  unsigned char b[128];
  fake_descriptor(b, type, rank, addr, dims, strides, estrides, il, sw, l2, oob, 0xFA);
  memcpy(b + 88, box, rank * 4);
  fake_bit85(b);
  memcpy(map, b, sizeof b);
  return CUDA_SUCCESS;
}

/* As the real driver: rank 3-5, channels 1-256, pixels 1-1024, corners in the rank's range. */
CUresult fake_cuTensorMapEncodeIm2col(CUtensorMap *map, CUtensorMapDataType type,
                                      cuuint32_t rank, void *addr, const cuuint64_t *dims,
                                      const cuuint64_t *strides, const int *lower,
                                      const int *upper, cuuint32_t channels, cuuint32_t pixels,
                                      const cuuint32_t *estrides, CUtensorMapInterleave il,
                                      CUtensorMapSwizzle sw, CUtensorMapL2promotion l2,
                                      CUtensorMapFloatOOBfill oob) {
  ENTER(cuTensorMapEncodeIm2col);
  NEED_CONTEXT_COUNTED(cuTensorMapEncodeIm2col);
  static const cuuint32_t ones[5] = {1, 1, 1, 1, 1};
  if (!map || !lower || !upper || rank < 3 || !channels || channels > 256 || !pixels ||
      pixels > 1024)
    return CUDA_ERROR_INVALID_VALUE;
  CUresult rc = check_tensormap(rank, addr, dims, strides, ones, estrides);
  if (rc != CUDA_SUCCESS) return rc;
  int limit = rank == 3 ? 32768 : rank == 4 ? 128 : 16;
  for (cuuint32_t i = 0; i + 2 < rank; i++)
    if (lower[i] < -limit || lower[i] >= limit || upper[i] < -limit || upper[i] >= limit)
      return CUDA_ERROR_INVALID_VALUE;
  unsigned char b[128];
  fake_descriptor(b, type, rank, addr, dims, strides, estrides, il, sw, l2, oob, 0x1C);
  int16_t corners[4] = {(int16_t)lower[0], (int16_t)(rank > 3 ? lower[1] : 0), (int16_t)upper[0],
                        (int16_t)(rank > 3 ? upper[1] : 0)};
  memcpy(b + 88, &channels, 4);
  memcpy(b + 92, &pixels, 4);
  memcpy(b + 96, corners, sizeof corners);
  int16_t depth[2] = {(int16_t)(rank > 4 ? lower[2] : 0), (int16_t)(rank > 4 ? upper[2] : 0)};
  memcpy(b + 104, depth, sizeof depth);
  fake_bit85(b);
  memcpy(map, b, sizeof b);
  return CUDA_SUCCESS;
}

/* As the header documents: the new address nonzero, with the map's alignment rule (32 bytes
 * with 32-byte interleave, else 16), and below 2^57 as the encode (both measured on driver 580).
 * Refuses bytes that no fake encode wrote. */
CUresult fake_cuTensorMapReplaceAddress(CUtensorMap *map, void *addr) {
  ENTER(cuTensorMapReplaceAddress);
  NEED_CONTEXT();
  if (!map || !addr) return CUDA_ERROR_INVALID_VALUE;
  unsigned char *b = (unsigned char *)map;
  if (b[127] != 0xFA && b[127] != 0x1C) return CUDA_ERROR_INVALID_VALUE;
  uintptr_t align = b[113] == CU_TENSOR_MAP_INTERLEAVE_32B ? 32 : 16;
  uint64_t a = (uint64_t)(uintptr_t)addr;
  if (a % align || a >= (UINT64_C(1) << 57)) return CUDA_ERROR_INVALID_VALUE;
  a = address_word(a, b[113]);
  memcpy(b, &a, 8);
  fake_bit85(b); /* as a driver that recomputes it for the new address would */
  return CUDA_SUCCESS;
}

/* --- the bootstrap symbol ---------------------------------------------------------------------- */

FAKE_API CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
                                      cuuint64_t flags, CUdriverProcAddressQueryResult *status) {
  atomic_fetch_add(&fake_calls[E_COUNT], 1);
  (void)flags;
  if (!symbol || !pfn || version < 2000) return CUDA_ERROR_INVALID_VALUE;
  *pfn = NULL;
  CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  int e = fake_lookup_entry(symbol);
  pthread_mutex_lock(&fake_lock);
  int hide = e >= 0 && fake_hidden[e];
  pthread_mutex_unlock(&fake_lock);
#define X_RESOLVE(name, ver)                                                                      \
  if (e == E_##name && !hide) {                                                                   \
    PFN_##name##_v##ver typed = fake_##name;                                                      \
    *pfn = (void *)typed;                                                                         \
    found = CU_GET_PROC_ADDRESS_SUCCESS;                                                          \
  }
  FAKE_ENTRIES(X_RESOLVE)
#undef X_RESOLVE
  /* As the real driver: the ABI of the version asked for, or the newest the driver has. */
  if (*pfn && e == E_cuGraphGetEdges && (version < 12030 || atomic_load(&fake_driver_version) < 12030)) {
    PFN_cuGraphGetEdges_v10000 old = fake_cuGraphGetEdges_v1;
    *pfn = (void *)old;
  }
  if (status) *status = found;
  return CUDA_SUCCESS;
}
