/* libfakecuda.so, part 5: streams (with their device and capture state), events (the host
 * clock), asynchronous copies (done at once, or captured as graph nodes), pinned host memory and
 * occupancy (a simple formula, see fakecuda.h). */
#include "fakecuda_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FAKE_SMEM_PER_SM 233472 /* 228 KiB, as sm_90 */

/* Not instrumented (like the real driver): a handle checked by gcl_stream_check may point into
 * memory that is mapped but is ASan's own (its shadow), which instrumented code cannot read. */
__attribute__((no_sanitize("address", "undefined"))) int fake_valid_stream(const void *s) {
  if (!s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD) return 1;
  uint32_t magic;
  memcpy(&magic, s, sizeof magic); /* any alignment */
  return magic == STREAM_MAGIC;
}

static fake_stream *stream_of(CUstream s) {
  return s && s != CU_STREAM_LEGACY && s != CU_STREAM_PER_THREAD ? (fake_stream *)s : NULL;
}

/* A live stream of the current context's device (or a default stream). */
static CUresult stream_here(CUstream s) {
  if (!fake_valid_stream(s)) return CUDA_ERROR_INVALID_HANDLE;
  fake_stream *st = stream_of(s);
  return st && (int)st->device != fake_context_device(fake_current) ? CUDA_ERROR_INVALID_HANDLE
                                                                      : CUDA_SUCCESS;
}

static void count_live(int kind, int delta) {
  pthread_mutex_lock(&fake_lock);
  fake_live[kind] += delta;
  pthread_mutex_unlock(&fake_lock);
}

/* --- streams ------------------------------------------------------------------------------- */

CUresult fake_cuCtxGetStreamPriorityRange(int *least, int *greatest) {
  ENTER(cuCtxGetStreamPriorityRange);
  NEED_CONTEXT();
  if (least) *least = 0;
  if (greatest) *greatest = -5; /* a range of 6 levels, as the driver reports for recent GPUs (unmeasured here) */
  return CUDA_SUCCESS;
}

static CUresult new_stream(CUstream *s, unsigned flags, int priority) {
  if (!s || flags > 1) return CUDA_ERROR_INVALID_VALUE;
  fake_stream *st = calloc(1, sizeof *st);
  if (!st) return CUDA_ERROR_OUT_OF_MEMORY;
  st->magic = STREAM_MAGIC;
  st->device = (uint32_t)fake_context_device(fake_current);
  st->priority = priority < -5 ? -5 : priority > 0 ? 0 : priority; /* the driver clamps */
  count_live(LIVE_STREAM, 1);
  *s = (CUstream)st;
  return CUDA_SUCCESS;
}

CUresult fake_cuStreamCreate(CUstream *s, unsigned flags) {
  ENTER(cuStreamCreate);
  NEED_CONTEXT();
  return new_stream(s, flags, 0);
}

CUresult fake_cuStreamCreateWithPriority(CUstream *s, unsigned flags, int priority) {
  ENTER(cuStreamCreateWithPriority);
  NEED_CONTEXT();
  return new_stream(s, flags, priority);
}

CUresult fake_cuStreamDestroy(CUstream s) {
  ENTER(cuStreamDestroy);
  fake_stream *st = stream_of(s);
  if (!st || st->magic != STREAM_MAGIC) return CUDA_ERROR_INVALID_HANDLE;
  if (st->capture) fake_graph_free(st->capture);
  fake_capture_list(st, 0);
  st->magic = 0;
  free(st);
  count_live(LIVE_STREAM, -1);
  return CUDA_SUCCESS;
}

CUresult fake_cuStreamGetPriority(CUstream s, int *priority) {
  ENTER(cuStreamGetPriority);
  if (!priority) return CUDA_ERROR_INVALID_VALUE;
  if (!fake_valid_stream(s)) return CUDA_ERROR_INVALID_HANDLE;
  fake_stream *st = stream_of(s);
  *priority = st ? st->priority : 0;
  return CUDA_SUCCESS;
}

/* The stream's context: the primary context of its device, or the current one for a default
 * stream. */
CUresult fake_cuStreamGetCtx(CUstream s, CUcontext *out) {
  ENTER(cuStreamGetCtx);
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  if (!fake_valid_stream(s)) return CUDA_ERROR_INVALID_HANDLE;
  fake_stream *st = stream_of(s);
  if (!st) {
    if (!fake_current) return CUDA_ERROR_INVALID_CONTEXT;
    *out = fake_current;
    return CUDA_SUCCESS;
  }
  *out = (CUcontext)&fake_primary_context[st->device];
  return CUDA_SUCCESS;
}

/* As the real driver: synchronizing a capturing stream is refused and invalidates the capture;
 * synchronizing any stream while this thread captures is refused (fake_capture_forbids). */
CUresult fake_cuStreamSynchronize(CUstream s) {
  ENTER(cuStreamSynchronize);
  if (!fake_valid_stream(s)) return CUDA_ERROR_INVALID_HANDLE;
  fake_stream *st = stream_of(s);
  if (st && st->capturing) {
    st->invalidated = 1;
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  return fake_capture_forbids() ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS;
}

/* --- events -------------------------------------------------------------------------------- */

typedef struct fake_event {
  uint32_t magic, device;
  int recorded;
  double at_ms;
} fake_event;

static fake_event *event_of(CUevent e) {
  fake_event *ev = (fake_event *)e;
  return ev && ev->magic == EVENT_MAGIC ? ev : NULL;
}

CUresult fake_cuEventCreate(CUevent *e, unsigned flags) {
  ENTER(cuEventCreate);
  NEED_CONTEXT();
  if (!e || flags > 15) return CUDA_ERROR_INVALID_VALUE;
  fake_event *ev = calloc(1, sizeof *ev);
  if (!ev) return CUDA_ERROR_OUT_OF_MEMORY;
  ev->magic = EVENT_MAGIC;
  ev->device = (uint32_t)fake_context_device(fake_current);
  count_live(LIVE_EVENT, 1);
  *e = (CUevent)ev;
  return CUDA_SUCCESS;
}

CUresult fake_cuEventDestroy(CUevent e) {
  ENTER(cuEventDestroy);
  fake_event *ev = event_of(e);
  if (!ev) return CUDA_ERROR_INVALID_HANDLE;
  ev->magic = 0;
  free(ev);
  count_live(LIVE_EVENT, -1);
  return CUDA_SUCCESS;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The event and the stream must be of one device, as the real driver requires. */
CUresult fake_cuEventRecord(CUevent e, CUstream s) {
  ENTER(cuEventRecord);
  fake_event *ev = event_of(e);
  fake_stream *st = stream_of(s);
  if (!ev || !fake_valid_stream(s) || (st && st->device != ev->device)) return CUDA_ERROR_INVALID_HANDLE;
  ev->recorded = 1;
  ev->at_ms = now_ms();
  return CUDA_SUCCESS;
}

CUresult fake_cuEventSynchronize(CUevent e) {
  ENTER(cuEventSynchronize);
  if (fake_capture_forbids()) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  return event_of(e) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* Work is done at once here: every event is complete (inject 600 to see NOT_READY). */
CUresult fake_cuEventQuery(CUevent e) {
  ENTER(cuEventQuery);
  if (fake_capture_forbids()) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  return event_of(e) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* The host time between the two records; as the real driver, CUDA_ERROR_INVALID_HANDLE when
 * either event was never recorded. */
CUresult fake_cuEventElapsedTime(float *ms, CUevent a, CUevent b) {
  ENTER(cuEventElapsedTime);
  if (!ms) return CUDA_ERROR_INVALID_VALUE;
  const fake_event *x = event_of(a), *y = event_of(b);
  if (!x || !y || !x->recorded || !y->recorded) return CUDA_ERROR_INVALID_HANDLE;
  *ms = (float)(y->at_ms - x->at_ms);
  return CUDA_SUCCESS;
}

CUresult fake_cuStreamWaitEvent(CUstream s, CUevent e, unsigned flags) {
  ENTER(cuStreamWaitEvent);
  if (!fake_valid_stream(s) || !event_of(e)) return CUDA_ERROR_INVALID_HANDLE;
  return flags ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

/* --- asynchronous copies: checked like the synchronous ones, done at once or captured ------ */

static CUresult copy_async(CUstream s, void *dst, const void *src, size_t n, uint32_t value,
                           uint32_t width) {
  NEED_CONTEXT();
  CUresult rc = stream_here(s);
  if (rc != CUDA_SUCCESS) return rc;
  if (fake_capture_copy(s, dst, src, n, value, width, &rc)) return rc;
  fake_node node = {.dst = dst, .src = src, .bytes = n, .value = value, .width = width};
  fake_run_copy(&node);
  return CUDA_SUCCESS;
}

CUresult fake_cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t n, CUstream s) {
  ENTER(cuMemcpyHtoDAsync);
  if (!src || !fake_in_device_memory(dst, n)) return CUDA_ERROR_INVALID_VALUE;
  return copy_async(s, (void *)(uintptr_t)dst, src, n, 0, 0);
}

CUresult fake_cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t n, CUstream s) {
  ENTER(cuMemcpyDtoHAsync);
  if (!dst || !fake_in_device_memory(src, n)) return CUDA_ERROR_INVALID_VALUE;
  return copy_async(s, dst, (const void *)(uintptr_t)src, n, 0, 0);
}

CUresult fake_cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
  ENTER(cuMemcpyDtoDAsync);
  if (!fake_in_device_memory(dst, n) || !fake_in_device_memory(src, n)) return CUDA_ERROR_INVALID_VALUE;
  return copy_async(s, (void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n, 0, 0);
}

CUresult fake_cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, CUstream s) {
  ENTER(cuMemsetD8Async);
  if (!fake_in_device_memory(dst, n)) return CUDA_ERROR_INVALID_VALUE;
  return copy_async(s, (void *)(uintptr_t)dst, NULL, n, v, 1);
}

CUresult fake_cuMemsetD32Async(CUdeviceptr dst, unsigned v, size_t n, CUstream s) {
  ENTER(cuMemsetD32Async);
  if (dst % 4 || n > ((size_t)1 << 60) || !fake_in_device_memory(dst, n * 4)) return CUDA_ERROR_INVALID_VALUE;
  return copy_async(s, (void *)(uintptr_t)dst, NULL, n * 4, v, 4);
}

void fake_run_copy(const fake_node *n) {
  if (n->src) {
    memmove(n->dst, n->src, n->bytes);
  } else if (n->width == 1) {
    memset(n->dst, (int)n->value, n->bytes);
  } else {
    for (size_t i = 0; i < n->bytes / 4; i++) memcpy((char *)n->dst + 4 * i, &n->value, 4);
  }
}

/* --- pinned host memory: tracked so that tests see every allocation freed ------------------- */

typedef struct host_block {
  struct host_block *next;
  void *p;
} host_block;
static host_block *host_blocks;

CUresult fake_cuMemHostAlloc(void **p, size_t bytes, unsigned flags) {
  ENTER(cuMemHostAlloc);
  NEED_CONTEXT();
  if (!p || !bytes || flags > 15) return CUDA_ERROR_INVALID_VALUE;
  host_block *b = malloc(sizeof *b);
  void *mem = aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
  if (!b || !mem) {
    free(b);
    free(mem);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  b->p = mem;
  pthread_mutex_lock(&fake_lock);
  b->next = host_blocks;
  host_blocks = b;
  fake_live[LIVE_HOST]++;
  pthread_mutex_unlock(&fake_lock);
  *p = mem;
  return CUDA_SUCCESS;
}

CUresult fake_cuMemFreeHost(void *p) {
  ENTER(cuMemFreeHost);
  pthread_mutex_lock(&fake_lock);
  host_block **link = &host_blocks;
  while (*link && (*link)->p != p) link = &(*link)->next;
  host_block *b = *link;
  if (b) *link = b->next, fake_live[LIVE_HOST]--;
  pthread_mutex_unlock(&fake_lock);
  if (!b) return CUDA_ERROR_INVALID_VALUE;
  free(b->p);
  free(b);
  return CUDA_SUCCESS;
}

/* --- occupancy ----------------------------------------------------------------------------- */

/* Blocks per SM: the least of 32, 2048 threads / warps-rounded block, 65536 registers / the
 * block's, and 228 KiB / (static + dynamic shared memory + 1 KiB reserved per block). */
static int blocks_per_sm(const fake_function *f, int block, size_t smem) {
  int warps = (block + 31) / 32, regs = f->attrs[CU_FUNC_ATTRIBUTE_NUM_REGS];
  int n = 32;
  if (2048 / (warps * 32) < n) n = 2048 / (warps * 32);
  if (regs > 0 && 65536 / (regs * warps * 32) < n) n = 65536 / (regs * warps * 32);
  size_t per_block = smem + (size_t)f->attrs[CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES] + 1024;
  if (FAKE_SMEM_PER_SM / per_block < (size_t)n) n = (int)(FAKE_SMEM_PER_SM / per_block);
  return n;
}

CUresult fake_cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, CUfunction f, int block, size_t smem) {
  ENTER(cuOccupancyMaxActiveBlocksPerMultiprocessor);
  fake_function *fn = fake_function_of(f);
  if (!n || block <= 0) return CUDA_ERROR_INVALID_VALUE;
  if (!fn) return CUDA_ERROR_INVALID_HANDLE;
  pthread_mutex_lock(&fake_lock);
  *n = block > fn->attrs[CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK] ? 0 : blocks_per_sm(fn, block, smem);
  pthread_mutex_unlock(&fake_lock);
  return CUDA_SUCCESS;
}

/* Clusters: SMs x blocks per SM / cluster size; more than 8 blocks need the non-portable
 * attribute, more than 16 are never possible (sm_90). */
CUresult fake_cuOccupancyMaxActiveClusters(int *n, CUfunction f, const CUlaunchConfig *c) {
  ENTER(cuOccupancyMaxActiveClusters);
  fake_function *fn = fake_function_of(f);
  if (!n || !c || (c->numAttrs && !c->attrs)) return CUDA_ERROR_INVALID_VALUE;
  if (!fn) return CUDA_ERROR_INVALID_HANDLE;
  unsigned size = 0;
  for (unsigned i = 0; i < c->numAttrs; i++)
    if (c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
      size = c->attrs[i].value.clusterDim.x * c->attrs[i].value.clusterDim.y * c->attrs[i].value.clusterDim.z;
  pthread_mutex_lock(&fake_lock);
  int nonportable = fn->attrs[CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED];
  int per_sm = blocks_per_sm(fn, (int)(c->blockDimX * c->blockDimY * c->blockDimZ), c->sharedMemBytes);
  pthread_mutex_unlock(&fake_lock);
  if (size == 0 || size > 16 || (size > 8 && !nonportable)) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
  int sms = fn->device == 0 ? 132 : 148;
  *n = sms * per_sm / (int)size;
  return CUDA_SUCCESS;
}
