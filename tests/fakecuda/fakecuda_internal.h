/* State shared by fakecuda.c (control API) and fakecuda_entries.c (the driver). Internal. */
#ifndef FAKECUDA_INTERNAL_H
#define FAKECUDA_INTERNAL_H

#include "fakecuda.h"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <pthread.h>
#include <stdatomic.h>

#define FAKE_API __attribute__((visibility("default")))

/* name, ABI version: every entry point the fake serves. */
#define FAKE_ENTRIES(X)                                                                           \
  X(cuInit, 2000) X(cuDriverGetVersion, 2020) X(cuGetErrorName, 6000) X(cuGetErrorString, 6000)   \
  X(cuDeviceGetCount, 2000) X(cuDeviceGet, 2000) X(cuDeviceGetName, 2000)                         \
  X(cuDeviceGetAttribute, 2000) X(cuDeviceTotalMem, 3020) X(cuDevicePrimaryCtxRetain, 7000)       \
  X(cuDevicePrimaryCtxRelease, 11000) X(cuCtxSetCurrent, 4000) X(cuCtxGetCurrent, 4000)           \
  X(cuCtxSynchronize, 2000) X(cuMemAlloc, 3020) X(cuMemFree, 3020) X(cuMemcpyHtoD, 3020)          \
  X(cuMemcpyDtoH, 3020) X(cuMemcpyDtoD, 3020) X(cuMemsetD8, 3020) X(cuLibraryLoadData, 12000)     \
  X(cuLibraryUnload, 12000) X(cuLibraryGetKernel, 12000) X(cuKernelGetFunction, 12000)            \
  X(cuFuncGetParamInfo, 12040) X(cuKernelGetParamInfo, 12040) X(cuFuncGetAttribute, 2020)         \
  X(cuFuncSetAttribute, 9000) X(cuLaunchKernel, 4000) X(cuLaunchKernelEx, 11060)                  \
  X(cuTensorMapEncodeTiled, 12000) X(cuTensorMapEncodeIm2col, 12000) X(cuStreamCreate, 2000)      \
  X(cuStreamDestroy, 4000) X(cuTensorMapReplaceAddress, 12000)                                   \
  X(cuStreamSynchronize, 2000) X(cuEventCreate, 2000) X(cuEventDestroy, 4000)                     \
  X(cuEventRecord, 2000) X(cuEventSynchronize, 2000) X(cuEventElapsedTime, 2000)                  \
  X(cuStreamBeginCapture, 10010) X(cuStreamEndCapture, 10000)                                     \
  X(cuGraphInstantiateWithFlags, 11040) X(cuGraphLaunch, 10000) X(cuGraphDestroy, 10000)          \
  X(cuGraphExecDestroy, 10000) X(cuGraphGetNodes, 10000) X(cuGraphKernelNodeGetParams, 12000)     \
  X(cuGraphExecKernelNodeSetParams, 12000) X(cuGraphNodeGetType, 10000)                          \
  X(cuStreamCreateWithPriority, 5050) X(cuCtxGetStreamPriorityRange, 5050)                        \
  X(cuStreamWaitEvent, 3020) X(cuEventQuery, 2000) X(cuMemcpyHtoDAsync, 3020)                     \
  X(cuMemcpyDtoHAsync, 3020) X(cuMemcpyDtoDAsync, 3020) X(cuMemsetD8Async, 3020)                  \
  X(cuMemsetD32Async, 3020) X(cuMemHostAlloc, 2020) X(cuMemFreeHost, 2000)                        \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor, 6050) X(cuOccupancyMaxActiveClusters, 11070)     \
  X(cuGraphGetEdges, 12030) X(cuStreamGetCtx, 9020) X(cuStreamGetPriority, 5050)                 \
  X(cuGraphAddMemcpyNode, 10000) X(cuGraphExecMemcpyNodeSetParams, 10020)                         \
  X(cuGraphGetRootNodes, 10000) X(cuGraphAddDependencies, 10000) X(cuMemGetInfo, 3020)

enum {
#define X_ENUM(name, version) E_##name,
  FAKE_ENTRIES(X_ENUM)
#undef X_ENUM
  E_COUNT
};

extern const char *const fake_entry_names[E_COUNT];

/* fake_cuInit ... : each declared with the type of its PFN_ typedef, so that a definition with a
 * wrong signature fails to compile. */
#define X_DECL(name, version) __typeof__(*(PFN_##name##_v##version)0) fake_##name;
FAKE_ENTRIES(X_DECL)
#undef X_DECL

/* --- state ------------------------------------------------------------------------------------ */

typedef struct fault {
  int error;       /* 0: none */
  long after;      /* calls still to succeed */
  int once;
} fault;

#define FAKE_MAX_DEVICES 2

typedef struct kernel_table {
  char name[128];
  int device;      /* the device whose cuFuncGetParamInfo reports it; -1: every device */
  size_t count;
  size_t offsets[FAKECUDA_MAX_PARAMS], sizes[FAKECUDA_MAX_PARAMS];
} kernel_table;

/* A CUfunction: the kernel in one device's context, with that device's layout and attributes. */
typedef struct fake_function {
  uint32_t magic;
  int device;
  struct fake_kernel *kern;
  kernel_table table;
  int attrs[CU_FUNC_ATTRIBUTE_MAX];
} fake_function;

typedef struct fake_kernel {  /* a CUkernel: context-independent, one function per device */
  uint32_t magic;
  struct fake_library *lib;
  struct fake_kernel *next;
  kernel_table table;         /* device 0's (what cuKernelGetParamInfo reports) */
  fake_function fn[FAKE_MAX_DEVICES];
} fake_kernel;

typedef struct fake_library {
  uint32_t magic;
  fake_kernel *kernels;
} fake_library;

typedef struct fake_alloc {
  struct fake_alloc *next;
  int device;       /* freed with that device's primary context */
  void *base;
  size_t size;
} fake_alloc;

enum { KERNEL_MAGIC = 0x6b65726e, LIBRARY_MAGIC = 0x6c696272, STREAM_MAGIC = 0x73747265,
       EVENT_MAGIC = 0x6576656e, FUNCTION_MAGIC = 0x66756e63, GRAPH_MAGIC = 0x67726170,
       EXEC_MAGIC = 0x65786563, NODE_MAGIC = 0x6e6f6465 };

/* A graph node: a captured kernel launch (its record, parameters packed) or copy/fill. */
typedef struct fake_node {
  uint32_t magic;
  CUgraphNodeType type;        /* KERNEL, MEMCPY or MEMSET */
  fake_function *fn;           /* kernels */
  fakecuda_launch *rec;        /* kernels (owned) */
  void *dst;                   /* copies and fills */
  const void *src;             /* copies; NULL for a fill */
  size_t bytes;
  uint32_t value, width;       /* fills: value of width 1 or 4 bytes */
  CUgraphEdgeData in;          /* the edge from the node before it in the chain (zero: default;
                                  a PDL launch after a kernel: PROGRAMMATIC, from that kernel's
                                  PROGRAMMATIC port, as the driver captures it) */
} fake_node;

typedef struct fake_graph {    /* a CUgraph (a chain: node i depends on node i - 1) or CUgraphExec */
  uint32_t magic;
  int device;
  size_t count;
  fake_node **nodes;           /* owned */
  fake_node **origin;          /* exec only: the graph's node each copy came from (borrowed) */
} fake_graph;

/* A CUstream: magic and device first (read as two words by the launch checks). */
typedef struct fake_stream {
  uint32_t magic, device;
  int priority;
  int capturing, invalidated;  /* between cuStreamBeginCapture and cuStreamEndCapture */
  fake_graph *capture;         /* the graph being captured (owned until the end) */
  CUstreamCaptureMode mode;    /* the capture's */
  const void *thread;          /* the thread that began it */
  struct fake_stream *capture_next; /* the list of capturing streams (fake_lock) */
} fake_stream;

/* Capture modes (fakecuda_graph.c), as the real driver: while a stream captures in mode
 * THREAD_LOCAL or GLOBAL, the thread that began it may not make a potentially unsafe call;
 * while one captures in GLOBAL mode, no thread may. The fake's unsafe calls are the ones
 * measured on driver 580 (FACTS: THREAD_LOCAL): cuMemAlloc, cuEventQuery, cuEventSynchronize,
 * cuStreamSynchronize, cuGraphInstantiateWithFlags; each then fails with
 * CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and changes nothing. */
int fake_capture_forbids(void);
void fake_capture_list(fake_stream *s, int add);

enum { LIVE_RETAIN, LIVE_MEMORY, LIVE_LIBRARY, LIVE_STREAM, LIVE_EVENT, LIVE_HOST, LIVE_GRAPH,
       LIVE_EXEC, LIVE_COUNT };

/* All state below is guarded by fake_lock unless atomic; fake_current is per thread. */
extern pthread_mutex_t fake_lock;
extern atomic_long fake_calls[E_COUNT + 1]; /* + cuGetProcAddress_v2 */
/* Calls that returned an error: every refusal fake_enter makes (injected faults, a lost device,
 * before cuInit), and the entry's own refusals where it returns through FAKE_RESULT (the kernel
 * lookup's entry points: a call past the last parameter fails, as on the real driver). */
extern atomic_long fake_failed[E_COUNT + 1];
static inline CUresult fake_result(int e, CUresult rc) {
  if (rc != CUDA_SUCCESS) atomic_fetch_add(&fake_failed[e], 1);
  return rc;
}
#define FAKE_RESULT(name, rc) fake_result(E_##name, (rc))
extern fault fake_faults[E_COUNT], fake_fault_all;
extern int fake_hidden[E_COUNT];
extern atomic_int fake_lost_error[FAKE_MAX_DEVICES]; /* per device: a sticky error is per context */
extern atomic_int fake_device_count;                   /* 1 (default) or 2 */
extern long fake_retains[FAKE_MAX_DEVICES];            /* primary context retains per device */
extern atomic_int fake_initialized;
extern atomic_int fake_driver_version; /* what cuDriverGetVersion reports */
extern atomic_int fake_tmap_bit85;     /* fakecuda_set_tmap_bit85's mode */
extern atomic_int fake_tmap_layout;    /* fakecuda_set_tmap_layout's mode */
extern kernel_table *fake_tables;
extern size_t fake_table_count;
extern int fake_default_attrs[CU_FUNC_ATTRIBUTE_MAX];
extern long fake_live[LIVE_COUNT];
extern fake_alloc *fake_allocs;
extern long fake_launches, fake_libraries;
extern long fake_programmatic_edges; /* in the exec cuGraphLaunch replayed last */
extern uint64_t fake_digest_sum;
extern fakecuda_launch fake_last_launch, fake_last_launch_dev[FAKE_MAX_DEVICES];
extern long fake_launches_dev[FAKE_MAX_DEVICES];
extern fakecuda_library fake_last_lib;
extern int fake_primary_context[FAKE_MAX_DEVICES]; /* their addresses are the CUcontexts */
extern _Thread_local CUcontext fake_current;


/* NULL (the default stream), CU_STREAM_LEGACY, CU_STREAM_PER_THREAD or a live stream. */
int fake_valid_stream(const void *s);
/* Packs a launch's parameters into rec as the device would see them (extra or kernelParams). */
CUresult fake_pack(const kernel_table *t, void **params, void **extra, fakecuda_launch *rec);
/* Counts rec as a successful launch (what fakecuda_last_launch reports). */
void fake_record_launch(const fakecuda_launch *rec);
/* On a capturing stream: appends a kernel node copying rec (then 1; *rc is the result), else 0. */
int fake_capture_kernel(CUstream s, fake_function *f, const fakecuda_launch *rec, CUresult *rc);
/* On a capturing stream: appends a copy (src non-NULL) or fill node, 1; else 0. */
int fake_capture_copy(CUstream s, void *dst, const void *src, size_t bytes, uint32_t value,
                      uint32_t width, CUresult *rc);
/* The old cuGraphGetEdges (ABI 10000), served for versions below 12030 and by drivers older
 * than 12.3 (fakecuda_graph.c). */
CUresult fake_cuGraphGetEdges_v1(CUgraph g, CUgraphNode *from, CUgraphNode *to, size_t *count);
/* Frees a graph or exec and its nodes (fakecuda_graph.c). */
void fake_graph_free(fake_graph *g);
/* Runs a copy or fill node. */
void fake_run_copy(const fake_node *n);
/* [p, p + n) lies in one live allocation (fakecuda_module.c). */
int fake_in_device_memory(CUdeviceptr p, size_t n);

/* The live kernel a CUkernel is, NULL if none. */
fake_kernel *fake_kernel_of(const void *handle);
/* The live function a CUfunction is, NULL if none. */
fake_function *fake_function_of(const void *handle);
/* The device whose primary context c is, -1 if c is none. */
int fake_context_device(CUcontext c);
/* The compute capability major of device d (a valid ordinal). */
int fake_device_major(int d);
/* A device ordinal the fake has now (0 ... fake_device_count - 1). */
int fake_device_valid(CUdevice d);
/* The entry index of a name, -1 if none. */
int fake_lookup_entry(const char *name);
/* Counts the call, then returns the injected or sticky error (or NOT_INITIALIZED). device is
 * the device the call concerns: its lost state is the one that counts, and a sticky fault
 * loses it; FAKE_DEV_CURRENT: the current context's; -1: none (any lost device fails the call,
 * a sticky fault loses every device). */
#define FAKE_DEV_CURRENT (-2)
CUresult fake_enter(int e, int device);

#define ENTER_DEV(name, device)                                                                   \
  do {                                                                                            \
    CUresult enter_rc = fake_enter(E_##name, (device));                                           \
    if (enter_rc != CUDA_SUCCESS) return enter_rc;                                                \
  } while (0)
/* Not ENTER_DEV(name, ...): passing name on would expand cuda.h's _v2 renames before ## */
#define ENTER(name)                                                                               \
  do {                                                                                            \
    CUresult enter_rc = fake_enter(E_##name, FAKE_DEV_CURRENT);                                   \
    if (enter_rc != CUDA_SUCCESS) return enter_rc;                                                \
  } while (0)

/* Calls that need a current, retained context (cuKernelGetFunction, allocations, launches,
 * tensor maps), as the real driver's do. */
#define NEED_CONTEXT() NEED_CONTEXT_RC(CUDA_ERROR_INVALID_CONTEXT)
/* The same, with the refusal for want of a context counted as entry name's failure
 * (fakecuda_failed_calls): the tensor-map encodes. */
#define NEED_CONTEXT_COUNTED(name) NEED_CONTEXT_RC(FAKE_RESULT(name, CUDA_ERROR_INVALID_CONTEXT))
#define NEED_CONTEXT_RC(refusal)                                                                  \
  do {                                                                                            \
    int need_dev = fake_context_device(fake_current);                                             \
    if (need_dev < 0) return refusal;                                                             \
    pthread_mutex_lock(&fake_lock);                                                               \
    long retained = fake_retains[need_dev];                                                       \
    pthread_mutex_unlock(&fake_lock);                                                             \
    if (retained <= 0) return CUDA_ERROR_CONTEXT_IS_DESTROYED;                                    \
  } while (0)

#endif
