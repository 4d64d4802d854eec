/* The driver edge: entry points of libcuda and NVRTC, resolved at run time. Internal. */
#ifndef GCL_DRIVER_H
#define GCL_DRIVER_H

#include <stdatomic.h>
#include <stdbool.h>

#include "internal.h"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <nvrtc.h>

/* name, ABI version (the PFN_<name>_v<version> typedef), required (0: may be NULL, checked where
 * used). A wrong version fails to compile because the typedef does not exist. */
#define GCL_CU_ENTRY_POINTS(X)                                                                    \
  X(cuInit, 2000, 1)                                                                              \
  X(cuDriverGetVersion, 2020, 1)                                                                  \
  X(cuGetErrorName, 6000, 1)                                                                      \
  X(cuGetErrorString, 6000, 1)                                                                    \
  X(cuDeviceGetCount, 2000, 1)                                                                    \
  X(cuDeviceGet, 2000, 1)                                                                         \
  X(cuDeviceGetName, 2000, 1)                                                                     \
  X(cuDeviceGetAttribute, 2000, 1)                                                                \
  X(cuDeviceTotalMem, 3020, 1)                                                                    \
  X(cuDevicePrimaryCtxRetain, 7000, 1)                                                            \
  X(cuDevicePrimaryCtxRelease, 11000, 1)                                                          \
  X(cuCtxSetCurrent, 4000, 1)                                                                     \
  X(cuCtxGetCurrent, 4000, 1)                                                                     \
  X(cuCtxSynchronize, 2000, 1)                                                                    \
  X(cuMemAlloc, 3020, 1)                                                                          \
  X(cuMemGetInfo, 3020, 1) /* pe_heap.c: NVSHMEM's heap may grow only into free memory */        \
  X(cuMemFree, 3020, 1)                                                                           \
  X(cuMemcpyHtoD, 3020, 1)                                                                        \
  X(cuMemcpyDtoH, 3020, 1)                                                                        \
  X(cuMemcpyDtoD, 3020, 1)                                                                        \
  X(cuMemsetD8, 3020, 1)                                                                          \
  X(cuLibraryLoadData, 12000, 1)                                                                  \
  X(cuLibraryUnload, 12000, 1)                                                                    \
  X(cuLibraryGetKernel, 12000, 1)                                                                 \
  X(cuKernelGetFunction, 12000, 1)                                                                \
  X(cuFuncGetParamInfo, 12040, 0)                                                                 \
  X(cuFuncGetAttribute, 2020, 1)                                                                  \
  X(cuFuncSetAttribute, 9000, 1)                                                                  \
  X(cuLaunchKernel, 4000, 1)                                                                      \
  X(cuLaunchKernelEx, 11060, 1)                                                                   \
  X(cuTensorMapEncodeTiled, 12000, 1)                                                             \
  X(cuTensorMapEncodeIm2col, 12000, 1)                                                            \
  X(cuTensorMapReplaceAddress, 12000, 1)                                                          \
  X(cuStreamCreate, 2000, 1)                                                                      \
  X(cuStreamDestroy, 4000, 1)                                                                     \
  X(cuStreamSynchronize, 2000, 1)                                                                 \
  X(cuEventCreate, 2000, 1)                                                                       \
  X(cuEventDestroy, 4000, 1)                                                                      \
  X(cuEventRecord, 2000, 1)                                                                       \
  X(cuEventSynchronize, 2000, 1)                                                                  \
  X(cuEventElapsedTime, 2000, 1)                                                                  \
  X(cuStreamBeginCapture, 10010, 1)                                                               \
  X(cuStreamEndCapture, 10000, 1)                                                                 \
  X(cuGraphInstantiateWithFlags, 11040, 1)                                                        \
  X(cuGraphLaunch, 10000, 1)                                                                      \
  X(cuGraphDestroy, 10000, 1)                                                                     \
  X(cuGraphExecDestroy, 10000, 1)                                                                 \
  X(cuGraphGetNodes, 10000, 1)                                                                    \
  X(cuGraphKernelNodeGetParams, 12000, 1)                                                         \
  X(cuGraphExecKernelNodeSetParams, 12000, 1)                                                    \
  X(cuGraphNodeGetType, 10000, 0)                                                                 \
  /* the launch edge (issue 15): streams, events, async copies, occupancy, graphs */             \
  X(cuStreamCreateWithPriority, 5050, 1)                                                          \
  X(cuCtxGetStreamPriorityRange, 5050, 1)                                                         \
  X(cuStreamGetPriority, 5050, 1)                                                                 \
  X(cuStreamWaitEvent, 3020, 1)                                                                   \
  X(cuStreamGetCtx, 9020, 0) /* gcl_stream_check: whose stream a handle is */                      \
  X(cuEventQuery, 2000, 1)                                                                        \
  X(cuMemcpyHtoDAsync, 3020, 1)                                                                   \
  X(cuMemcpyDtoHAsync, 3020, 1)                                                                   \
  X(cuMemcpyDtoDAsync, 3020, 1)                                                                   \
  X(cuMemsetD8Async, 3020, 1)                                                                     \
  X(cuMemsetD32Async, 3020, 1)                                                                    \
  X(cuMemHostAlloc, 2020, 1)                                                                      \
  X(cuMemFreeHost, 2000, 1)                                                                       \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor, 6050, 1)                                         \
  X(cuOccupancyMaxActiveClusters, 11070, 1)                                                       \
  X(cuGraphGetEdges, 12030, 0) /* cuGraphGetEdges_v2: with each edge's CUgraphEdgeData */      \
  /* graphs with tensor-map tables (lib/cuda/graph.c): the copy node before the captured work */  \
  X(cuGraphAddMemcpyNode, 10000, 1)                                                               \
  X(cuGraphExecMemcpyNodeSetParams, 10020, 1)                                                     \
  X(cuGraphGetRootNodes, 10000, 1)                                                                \
  X(cuGraphAddDependencies, 10000, 1)

/* Older ABIs of an entry point also listed above: field, name, ABI version (all optional). A
 * driver older than CUDA 12.3 has no cuGraphGetEdges_v2 and gives its cuGraphGetEdges (no edge
 * data, none to lose) for any version asked; a newer one refuses the old call with
 * CUDA_ERROR_LOSSY_QUERY when an edge carries data (a programmatic-dependent-launch pair). */
#define GCL_CU_OLD_ENTRY_POINTS(X) X(cuGraphGetEdges_v1, cuGraphGetEdges, 10000)

typedef struct gcl__cu_api {
#define GCL_X_FIELD(name, version, required) PFN_##name##_v##version name;
  GCL_CU_ENTRY_POINTS(GCL_X_FIELD)
#undef GCL_X_FIELD
#define GCL_X_OLD_FIELD(field, name, version) PFN_##name##_v##version field;
  GCL_CU_OLD_ENTRY_POINTS(GCL_X_OLD_FIELD)
#undef GCL_X_OLD_FIELD
} gcl__cu_api;

/* Filled once by gcl__cu_load; read-only afterwards (defined in driver_api.c). */
extern gcl__cu_api gcl__cu;

/* Loads the driver once; on failure re-records the cached failure message and returns it. */
gcl_status gcl__cu_load(void);
/* Turns a failed CUresult into GCL_ERROR_DRIVER with "what: CUDA_ERROR_NAME (text)" (fault.c,
 * as is gcl__cu_error_name). */
gcl_status gcl__cu_fail(CUresult r, const char *what_fmt, ...) GCL__PRINTF(2, 3);
/* "CUDA_ERROR_INVALID_VALUE" or "CUresult N". */
const char *gcl__cu_error_name(CUresult r);

/* Sticky faults (fault.c). After a CUresult that leaves the process's CUDA state lost (a kernel
 * fault: ILLEGAL_ADDRESS, ILLEGAL_INSTRUCTION, LAUNCH_FAILED, ...), gcl__cu_fail records it
 * process-wide and returns GCL_ERROR_KERNEL_FAULT; from then on gcl__fault_check repeats that
 * status and message without calling the driver. */
bool gcl__cu_sticky(CUresult r);
gcl_status gcl__fault_record(CUresult r, const char *what);
/* GCL_OK while no fault was recorded (one relaxed atomic load), else the recorded fault. */
gcl_status gcl__fault_check(void);
/* 0 until a fault was recorded (fault.c): read inline by the hot paths before any driver call. */
extern atomic_int gcl__fault_state;
static inline bool gcl__faulted(void) {
  return atomic_load_explicit(&gcl__fault_state, memory_order_relaxed) != 0;
}
/* Marks that this process uses tensor maps (a map was encoded, or a kernel with a tensormap
 * parameter was looked up): a later sticky ILLEGAL_INSTRUCTION then names the TMA rule. */
void gcl__fault_note_tensormaps(void);

/* The one way gclaunch opens a library it does not link -- libcuda, NVRTC, NVSHMEM's host library
 * (libopen.c). Each candidate is a file path or a bare soname the dynamic loader searches for. */
typedef struct gcl__lib_search {
  char path[1024];              /* the library opened: the candidate as given, or for a bare soname
                                 * the file the loader chose (dladdr of its symbol) */
  char tried[GCL__MESSAGE_MAX]; /* "'a', 'b'": every candidate that did not open, in order */
  char reason[512];             /* dlerror() of the last one that did not */
  size_t tried_len;
} gcl__lib_search;
/* dlopen(candidate, flags): the handle, or NULL with candidate appended to s->tried. symbol: one
 * the library defines, to name the file a bare soname resolved to. NULL or "" candidates are
 * skipped. */
void *gcl__lib_open(gcl__lib_search *s, const char *candidate, int flags, const char *symbol);

#define GCL_NVRTC_ENTRY_POINTS(X)                                                                 \
  X(nvrtcGetErrorString)                                                                          \
  X(nvrtcVersion)                                                                                 \
  X(nvrtcGetNumSupportedArchs)                                                                    \
  X(nvrtcGetSupportedArchs)                                                                       \
  X(nvrtcCreateProgram)                                                                           \
  X(nvrtcDestroyProgram)                                                                          \
  X(nvrtcCompileProgram)                                                                          \
  X(nvrtcGetProgramLogSize)                                                                       \
  X(nvrtcGetProgramLog)                                                                           \
  X(nvrtcGetPTXSize)                                                                              \
  X(nvrtcGetPTX)                                                                                  \
  X(nvrtcGetCUBINSize)                                                                            \
  X(nvrtcGetCUBIN)

typedef struct gcl__nvrtc_api {
#define GCL_X_FIELD(name) __typeof__(&name) name;
  GCL_NVRTC_ENTRY_POINTS(GCL_X_FIELD)
#undef GCL_X_FIELD
} gcl__nvrtc_api;

extern gcl__nvrtc_api gcl__nvrtc;
gcl_status gcl__nvrtc_load(void);

#endif
