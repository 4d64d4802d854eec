/* libfakecuda.so: a CPU-only stand-in for libcuda.so.1, for tests. Not installed.
 *
 * gclaunch opens it through GCL_LIBCUDA=<path> and resolves its entry points with
 * cuGetProcAddress_v2 exactly as it does the real driver's. Tests link it too (the dynamic
 * loader then hands gclaunch's dlopen the same instance) and steer it with the functions below.
 * One fake device "Fake H200" (sm_90, 132 SMs); with fakecuda_set_devices(2) or
 * FAKECUDA_DEVICES=2 also device 1, "Fake B200" (sm_100, 148 SMs). Each device has its own
 * primary context, kernel functions (cuKernelGetFunction gives the current context's), parameter
 * layouts, launch records and lost state. Device memory is host memory: a CUdeviceptr is a host
 * address, so tests may read it directly. Releasing a device's last primary context retain frees
 * that device's allocations, as destroying the real primary context does.
 *
 * Every function here is thread-safe. */
#ifndef FAKECUDA_H
#define FAKECUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FAKECUDA_MAX_PARAM_BYTES 32764
#define FAKECUDA_MAX_PARAMS 512

/* Clears faults, hidden entry points, kernel tables, function attributes, launch records and
 * call counts. Live resources (retains, allocations, libraries, streams, events) and the lost
 * state stay as they are: use fakecuda_restore() to leave the lost state. */
void fakecuda_reset(void);

/* Makes entry point `entry` ("cuInit", "cuLibraryLoadData", ...; "*" for all but
 * cuGetErrorName/String) return cuda_error once after_n_calls more calls succeeded, and on every
 * call after that until cleared with cuda_error 0. Sticky errors (700, 714-719: a lost context)
 * put the fake in the lost state: from then on every entry point returns that error, except
 * cuGetErrorName/String and the release functions (which release and return success).
 * With two devices the lost state is the device's whose context was current (or which the call
 * named: cuDeviceGet*, cuDevicePrimaryCtx*, cuCtxSetCurrent's target); with none, every device's.
 * The environment variable FAKECUDA_FAIL="cuInit:34[:after],..." does the same at load time. */
void fakecuda_fail(const char *entry, int cuda_error, int after_n_calls);
/* Like fakecuda_fail but fails only one call, then clears itself. */
void fakecuda_fail_once(const char *entry, int cuda_error, int after_n_calls);
/* Leaves the lost state (as if the process had restarted the device). */
void fakecuda_restore(void);
/* The sticky error of the lost state (of the first lost device), 0 when not lost. */
int fakecuda_lost(void);
/* The sticky error of device, 0 when it is not lost. */
int fakecuda_lost_on(int device);
/* What cuDriverGetVersion reports (default 13000); set it before gclaunch loads the driver
 * (gclaunch reads it once). FAKECUDA_DRIVER_VERSION=N does the same at load time. */
void fakecuda_set_driver_version(int version);
/* mode 1: encodes and cuTensorMapReplaceAddress on a device of compute capability 10 or more
 * (device 1, "Fake B200") set descriptor bit 85 (bit 21 of the second 8-byte word), as
 * Blackwell drivers with the defect of the 595.71.05 release notes do for small maps; gclaunch
 * clears it where the notes say (docs/tensormap-rules.md). mode 2: on every device (to see that
 * gclaunch leaves other architectures' bytes alone). 0 (default): never. */
void fakecuda_set_tmap_bit85(int mode);
/* Where the fake keeps a map's address. mode 0 (default): address bits 4 ... 56 in descriptor
 * bits 4 ... 56 of the first 8 bytes, as driver 580 does on the H100 (docs/tensormaps.md), so
 * gclaunch's check proves its patch and re-points skip the driver. mode 1: another layout (the
 * address shifted right by 4), for every map: the check must fail and every re-point call the
 * driver. mode 2: that layout only for interleaved maps: gclaunch patches only interleave 0.
 * mode 3: the address where driver 580 keeps it, with other bits of the description in bits
 * 0 ... 3 and 57 ... 63 of the same 8 bytes, which a patch must leave alone.
 * Set it before gclaunch's first re-point on the device (the check runs once). */
void fakecuda_set_tmap_layout(int mode);
/* Number of devices, 1 (the default) or 2. Returns 0, or -1 for another count. Set it before
 * gclaunch creates contexts. */
int fakecuda_set_devices(int count);
/* The device of the calling thread's current context, -1 when none is current. */
int fakecuda_current_device(void);
/* Makes no context current on the calling thread (cuCtxSetCurrent(NULL)). */
void fakecuda_unbind(void);
/* cuGetProcAddress_v2 reports `entry` as not found while hidden is non-zero. */
void fakecuda_hide(const char *entry, int hidden);

/* Declares kernel `name` for cuLibraryGetKernel with count parameters at offsets/sizes (as
 * cuFuncGetParamInfo will report them). Names never declared are CUDA_ERROR_NOT_FOUND.
 * Returns 0, or -1 if count > FAKECUDA_MAX_PARAMS or a name is too long. Kernels already looked
 * up keep the table they were given. */
int fakecuda_set_params(const char *name, size_t count, const size_t *offsets, const size_t *sizes);
/* Like fakecuda_set_params for one device only (-1: every device): devices of different
 * architectures place parameters differently. A device's own table wins over the all-devices
 * one; cuKernelGetParamInfo reports device 0's. */
int fakecuda_set_params_on(int device, const char *name, size_t count, const size_t *offsets,
                           const size_t *sizes);
/* The environment variable FAKECUDA_PARAMS="name[@D]=off/size,off/size;name2=..." declares
 * tables for every device (or device D only) at load time (for the CLI). */
/* The value cuFuncGetAttribute reports for attribute attr (a CUfunction_attribute) of every
 * kernel looked up afterwards. */
void fakecuda_set_func_attribute(int attr, int value);
/* While on, cuLibraryUnload keeps its kernels' memory and cuLibraryGetKernel hands it out again
 * (the most recently unloaded first), so a kernel looked up after an unload gets the CUkernel
 * and CUfunction values of an unloaded one -- as the real driver does. Off (the default) frees
 * what was kept. Not changed by fakecuda_reset. */
void fakecuda_reuse_handles(int on);

/* A gate on entry point `entry` (NULL: none): each call of it, once counted, waits until
 * fakecuda_gate_open() or 10 seconds have passed, then goes on as usual. For tests that another
 * thread runs while a call is inside the driver (the Python extension releases the GIL there):
 * the call is known to be waiting once fakecuda_calls(entry) counts it. Opening lets every
 * waiting and later call through until the next fakecuda_gate. 0, or -1 for an unknown name. */
int fakecuda_gate(const char *entry);
int fakecuda_gate_open(void); /* returns how many calls left by the 10 s, not by opening */

/* Calls made to entry point `entry` since load or the last reset (failed ones included);
 * "cuGetProcAddress_v2" counts look-ups, "*" all calls a "*" fault counts (every entry point but
 * cuGetErrorName/String). -1 for an unknown name. */
long fakecuda_calls(const char *entry);
/* Calls of entry that returned an error since load or the last reset ("*": of every entry): the
 * refusals of injected faults, a lost device or a call before cuInit on every entry point, and
 * the entry's own refusals on cuLibraryLoadData, cuLibraryGetKernel, cuKernelGetFunction,
 * cuFuncGetParamInfo, cuKernelGetParamInfo and cuFuncGetAttribute (the calls a kernel lookup
 * makes: compute-sanitizer reports each such failure as an API error), and the tensor-map
 * encodes' refusals for want of a current context. -1 for an unknown name. */
long fakecuda_failed_calls(const char *entry);
/* Outstanding resources: "retain" (primary context retains), "memory" (allocations),
 * "library", "stream", "event", "host" (cuMemHostAlloc), "graph" (captured CUgraphs), "exec"
 * (CUgraphExecs). -1 for an unknown kind.
 *
 * The launch edge: streams remember their device (a launch, copy or event record with another
 * device's stream is CUDA_ERROR_INVALID_HANDLE) and their priority (clamped to the fake's range
 * 0 ... -5); events record the host clock; asynchronous copies and fills are done at once;
 * cuEventQuery always reports completion (inject 600 for NOT_READY). Occupancy: blocks per SM =
 * min(32, 2048 / warp-rounded block, 65536 / (NUM_REGS x warp-rounded block), 233472 / (static +
 * dynamic shared + 1024)); active clusters = SMs x blocks per SM / cluster size (more than 8
 * needs NON_PORTABLE_CLUSTER_SIZE_ALLOWED, more than 16 is CUDA_ERROR_INVALID_CLUSTER_SIZE).
 * Graphs: a capture records the stream's launches and copies as a chain of nodes (synchronizing
 * the stream meanwhile is CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and invalidates the capture;
 * while a capture of mode THREAD_LOCAL or GLOBAL begun by this thread -- or one of mode GLOBAL
 * begun by any thread -- is open, this thread's cuMemAlloc, cuEventQuery, cuEventSynchronize,
 * cuStreamSynchronize and cuGraphInstantiateWithFlags fail with
 * CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, as driver 580's do in mode THREAD_LOCAL);
 * cuGraphGetNodes lists them in reverse order, cuGraphGetEdges gives the chain; a replay
 * (cuGraphLaunch) counts each kernel node as a launch (fakecuda_last_launch shows its bytes) and
 * performs the copies. Sticky faults: fakecuda_fail("cuLaunchKernelEx", 715, 0) etc. */
long fakecuda_live(const char *kind);

typedef struct fakecuda_launch {
  char kernel[128];
  int device;                  /* the device it ran on: its stream's, or for a default stream the
                                  current context's */
  unsigned grid[3], block[3], cluster[3];
  unsigned shared_bytes;
  void *stream;
  int cooperative, programmatic, priority;
  int via_extra;               /* 1: CU_LAUNCH_PARAM_BUFFER_POINTER, 0: kernelParams */
  size_t param_bytes;          /* the kernel's parameter area, max(offset + size) */
  unsigned char params[FAKECUDA_MAX_PARAM_BYTES]; /* as the device would see them */
} fakecuda_launch;

/* Edges that carry data (PROGRAMMATIC, from a captured PDL launch after a kernel) in the graph
 * exec that cuGraphLaunch replayed last; 0 before any replay or after a reset. A query of edges
 * without room for their data (the old cuGraphGetEdges, or cuGraphGetEdges_v2 with edgeData
 * NULL) is CUDA_ERROR_LOSSY_QUERY while such an edge exists, as on the real driver. A driver
 * version below 12030 (fakecuda_set_driver_version) has no edge data, and cuGetProcAddress_v2
 * gives the old cuGraphGetEdges for any version, as such a driver does. */
long fakecuda_programmatic_edges(void);
/* While on, a count of edges without arrays (from, to and edgeData NULL) is refused as lossy too
 * when an edge carries data (cuda.h calls such a count lossless; this checks gclaunch's way round
 * a driver that does not). Not changed by fakecuda_reset. */
void fakecuda_set_lossy_edge_count(int on);

/* Successful launches since load or the last reset. */
long fakecuda_launch_count(void);
/* Copies the last successful launch into *out. Returns 0, or -1 if there was none. */
int fakecuda_last_launch(fakecuda_launch *out);
/* The same for launches on one device; -1 for a device out of range. */
long fakecuda_launch_count_on(int device);
int fakecuda_last_launch_on(int device, fakecuda_launch *out);
/* Sum (mod 2^64) over successful launches of fakecuda_digest(params, param_bytes): lets a test
 * with many threads check that every launch carried exactly its own bytes. */
uint64_t fakecuda_launch_digest(void);
/* FNV-1a 64 of n bytes. */
uint64_t fakecuda_digest(const void *data, size_t n);

typedef struct fakecuda_library {
  int format;                  /* 1 cubin (ELF), 2 fatbin, 3 text (PTX), 0 other */
  unsigned char head[16];      /* the image's first bytes */
  unsigned jit_options;        /* numJitOptions passed */
} fakecuda_library;
/* cuLibraryLoadData calls that succeeded since load or the last reset. */
long fakecuda_library_count(void);
/* The last image cuLibraryLoadData accepted. Returns 0, or -1 if none. */
int fakecuda_last_library(fakecuda_library *out);

#ifdef __cplusplus
}
#endif
#endif
