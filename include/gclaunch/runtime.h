/* gclaunch/runtime.h -- the runtime edge: NVRTC, the driver (opened at run time, never linked),
 * devices, contexts, memory, modules, kernels, launch, streams, events, occupancy, graphs, and
 * several GPUs; it includes gclaunch/tensormap.h, the tensor-map calls that need a context
 * (encode, set and re-point maps in args and tables). lib/cuda implements it; without a driver
 * every call returns a status. The conventions are written in gclaunch.h.
 */
#ifndef GCLAUNCH_RUNTIME_H
#define GCLAUNCH_RUNTIME_H

#include "gclaunch/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * NVRTC on the CPU
 * ------------------------------------------------------------------------------------------- */

/* Compiles CUDA source with NVRTC on the CPU -- no driver, no GPU -- as gcl_module_compile does
 * (options as given, -arch=sm_SM unless an -arch/--gpu-architecture option is given, the
 * toolkit's CCCL headers on the include path, gclaunch's kernel-side headers <gclaunch/tma.cuh> and
 * <gclaunch/gclaunch_tmap_table.cuh> built in): *image gets the cubin (or the PTX, NUL-terminated,
 * for a virtual architecture), to be freed with gcl_file_free. GCL_ERROR_NO_NVRTC without NVRTC;
 * GCL_ERROR_COMPILE with the compiler log in the message. Outputs untouched on failure.
 * Thread-safe. */
GCL_API gcl_status gcl_nvrtc_compile(const char *source, const char *name,
                                     const char *const *options, size_t option_count, int sm,
                                     void **image, size_t *size);

/* ---------------------------------------------------------------------------------------------
 * Driver, devices, contexts (opens libcuda.so.1 at run time; never linked)
 * ------------------------------------------------------------------------------------------- */

/* Loads the driver once (thread-safe, cached). GCL_ERROR_NO_DRIVER (dlopen failed),
 * GCL_ERROR_STUB_DRIVER (CUDA_ERROR_STUB_LIBRARY, 34), GCL_ERROR_NO_DEVICE (100),
 * GCL_ERROR_DRIVER_TOO_OLD, GCL_ERROR_DRIVER. The environment variable GCL_LIBCUDA names another
 * library to open instead of libcuda.so.1. */
GCL_API gcl_status gcl_driver_init(void);
/* Driver version as 1000*major + 10*minor. */
GCL_API gcl_status gcl_driver_version(int *version);
/* The path (or name) the driver was looked for at. Never NULL. */
GCL_API const char *gcl_driver_path(void);
GCL_API gcl_status gcl_device_count(int *count);

typedef struct gcl_device_info {
  char name[256];
  int sm;               /* 90 for sm_90 */
  int multiprocessors;
  size_t total_memory;
  int max_threads_per_block;
  int max_shared_per_block_optin;
} gcl_device_info;
/* Asks the driver for device's name, architecture and limits. GCL_ERROR_INVALID_ARGUMENT for
 * NULL info or a device out of range (the message gives the range); the driver's statuses. */
GCL_API gcl_status gcl_device_query(int device, gcl_device_info *info);

/* NVRTC, loaded lazily (GCL_LIBNVRTC overrides; else libnvrtc.so.13, then .12, also under
 * $CUDA_PATH/lib64 and /usr/local/cuda/lib64). */
GCL_API gcl_status gcl_nvrtc_init(void);
GCL_API gcl_status gcl_nvrtc_version(int *major, int *minor);
/* Fills archs with up to cap supported SM numbers; *count gets the total. */
GCL_API gcl_status gcl_nvrtc_archs(int *archs, size_t cap, size_t *count);
GCL_API const char *gcl_nvrtc_path(void);

typedef struct gcl_context gcl_context;
/* Retains the device's primary context. Thread-safe. */
GCL_API gcl_status gcl_context_create(int device, gcl_context **out);
/* Releases the primary context. A context does not own the modules loaded in it nor the kernels
 * looked up for it: destroy those first (they borrow ctx and use it until destroyed). */
GCL_API void gcl_context_destroy(gcl_context *ctx);
GCL_API int gcl_context_device(const gcl_context *ctx);
GCL_API int gcl_context_sm(const gcl_context *ctx);
/* Makes the context current on the calling thread. */
GCL_API gcl_status gcl_context_bind(gcl_context *ctx);

/* Device memory helpers for tests, tools and benchmarks (thin wrappers, context made current). */
GCL_API gcl_status gcl_mem_alloc(gcl_context *ctx, size_t bytes, uint64_t *address);
GCL_API gcl_status gcl_mem_free(gcl_context *ctx, uint64_t address);
GCL_API gcl_status gcl_mem_upload(gcl_context *ctx, uint64_t dst, const void *src, size_t bytes);
GCL_API gcl_status gcl_mem_download(gcl_context *ctx, void *dst, uint64_t src, size_t bytes);
GCL_API gcl_status gcl_mem_fill_u8(gcl_context *ctx, uint64_t dst, uint8_t value, size_t bytes);
/* Device-to-device copy (cuMemcpyDtoD; synchronous with respect to the host). */
GCL_API gcl_status gcl_mem_copy(gcl_context *ctx, uint64_t dst, uint64_t src, size_t bytes);
GCL_API gcl_status gcl_context_synchronize(gcl_context *ctx);

/* ---------------------------------------------------------------------------------------------
 * Modules and kernels
 * ------------------------------------------------------------------------------------------- */

typedef struct gcl_module gcl_module;
typedef struct gcl_kernel gcl_kernel;

/* Loads a cubin, fatbin or PTX image (format from the content) context-independently; PTX JIT
 * errors are in the message and in gcl_module_log. */
GCL_API gcl_status gcl_module_load_data(gcl_context *ctx, const void *data, size_t size,
                                        gcl_module **out);
GCL_API gcl_status gcl_module_load_file(gcl_context *ctx, const char *path, gcl_module **out);
/* Compiles CUDA source with NVRTC (options as given; -arch=sm_NN of the context's device unless
 * an -arch/--gpu-architecture option is given) and loads the cubin. On GCL_ERROR_COMPILE the
 * message carries the compiler log. */
GCL_API gcl_status gcl_module_compile(gcl_context *ctx, const char *source, const char *name,
                                      const char *const *options, size_t option_count,
                                      gcl_module **out);
/* JIT or compiler log of the last load or compile ("" if none). Reads. */
GCL_API const char *gcl_module_log(const gcl_module *mod);
/* Destroys the module and its kernels. */
GCL_API void gcl_module_destroy(gcl_module *mod);

/* Looks up kernel name in mod (GCL_ERROR_NOT_FOUND naming it when the module has none) and
 * makes its gcl_kernel, owned by mod. Its layout comes from the driver (cuFuncGetParamInfo) on
 * the context's device, for as many parameters as the module's own records list (read once when the module was
 * loaded: a cubin's EIATTR_KPARAM_INFO, a PTX's .entry list, the fatbin entry the driver picks
 * for the device's sm): the driver confirms each index below that count and is never asked past
 * it, so a lookup makes no failing driver call (compute-sanitizer reports each one as an API
 * error). If the driver refuses a listed index the image and the loaded kernel disagree:
 * GCL_ERROR_BAD_IMAGE naming the kernel, the count and the index (a kernel with more parameters
 * than its records list cannot be told apart; a signature declaring them is still refused).
 * Only when the records say nothing of the kernel (an LZ4-compressed fatbin entry, zstd without
 * libzstd.so.1) is the count found by asking until the driver refuses: one failing call. When
 * signature is not NULL each parameter's offset and size are checked against it
 * (GCL_ERROR_SIGNATURE_MISMATCH naming the device, its sm, the parameter and both offsets and
 * sizes). Without a signature the parameters are untyped bytes of the driver's sizes.
 * Same as gcl_module_find_kernel_on(mod, <the context mod was loaded in>, ...). */
GCL_API gcl_status gcl_module_find_kernel(gcl_module *mod, const char *name,
                                          const char *signature, gcl_kernel **out);
/* Several GPUs: the module's library (cuLibraryLoadData) is context-independent, so one module
 * serves every device. This looks up kernel name for the device of ctx (any context, not only
 * the module's): the function handle (cuKernelGetFunction with ctx current), the driver's layout
 * on that device, and the signature laid out for that device's architecture (gcl_context_sm)
 * and checked against it -- devices of different architectures place parameters differently
 * (a tensor map first sits at offset 112 on sm_90, 0 on sm_100), so a signature may be refused
 * on one device only; the message names that device and its sm. Args for the kernel must be
 * created from its own gcl_kernel_layout (layouts of two devices may differ); call
 * gcl_args_restrict_device(args, gcl_context_device(ctx)) to have tensors checked against the
 * device.
 * Ownership: the module owns the kernel (gcl_module_destroy frees it, with the module's kernels
 * on every device); ctx is borrowed and must outlive the module's kernels on it.
 * Thread safety: calls on one module must not run concurrently (they add to its kernel list);
 * kernels of one module on different devices may then be launched from different threads.
 * GCL_ERROR_INVALID_ARGUMENT for NULL mod, ctx, name or out; errors of gcl_module_find_kernel. */
GCL_API gcl_status gcl_module_find_kernel_on(gcl_module *mod, gcl_context *ctx,
                                             const char *name, const char *signature,
                                             gcl_kernel **out);
/* The context the kernel runs in (borrowed; NULL for a NULL kernel). Reads. */
GCL_API gcl_context *gcl_kernel_context(const gcl_kernel *kernel);
/* The kernel's layout (owned by the kernel). Reads. */
GCL_API const gcl_layout *gcl_kernel_layout(const gcl_kernel *kernel);

/* How gcl_launch (and gcl_graph_set_args) hand the parameters to the driver: an array
 * of pointers into the packed buffer (kernelParams, the default) or the packed buffer itself
 * (CU_LAUNCH_PARAM_BUFFER_POINTER in `extra`). Both give the kernel the same bytes; the choice is
 * for benchmarks and for working around a driver that mishandles one of them. */
typedef enum gcl_launch_mode {
  GCL_LAUNCH_KERNEL_PARAMS = 0,
  GCL_LAUNCH_EXTRA_BUFFER = 1
} gcl_launch_mode;
/* Sets the kernel's launch mode. GCL_ERROR_INVALID_ARGUMENT for NULL kernel or another mode.
 * Changes the kernel: not concurrently with a launch of it. */
GCL_API gcl_status gcl_kernel_set_launch_mode(gcl_kernel *kernel, gcl_launch_mode mode);
/* The kernel's launch mode (GCL_LAUNCH_KERNEL_PARAMS for NULL). Reads. */
GCL_API gcl_launch_mode gcl_kernel_launch_mode(const gcl_kernel *kernel);

typedef enum gcl_kernel_attr {
  GCL_KERNEL_MAX_THREADS_PER_BLOCK, GCL_KERNEL_STATIC_SHARED_BYTES, GCL_KERNEL_REGISTERS,
  GCL_KERNEL_MAX_DYNAMIC_SHARED_BYTES, GCL_KERNEL_LOCAL_BYTES,
  /* appended (values 5 ...), settable with gcl_kernel_set_attribute: */
  GCL_KERNEL_PREFERRED_CARVEOUT,               /* percent of L1 as shared memory, -1: default */
  GCL_KERNEL_CLUSTER_SCHEDULING_POLICY,        /* 0 default, 1 spread, 2 load balancing */
  GCL_KERNEL_NONPORTABLE_CLUSTER_SIZE_ALLOWED  /* 0 or 1: clusters of more than 8 blocks */
} gcl_kernel_attr;
/* The kernel's attribute attr on its device (cuFuncGetAttribute). Reads. */
GCL_API gcl_status gcl_kernel_attribute(const gcl_kernel *kernel, gcl_kernel_attr attr, int *value);
/* Sets what persistent kernels set before their first launch (cuFuncSetAttribute):
 * GCL_KERNEL_MAX_DYNAMIC_SHARED_BYTES (0 ... the device's opt-in limit minus the kernel's static
 * shared memory; gcl_launch also raises it by itself when a launch asks for more),
 * GCL_KERNEL_PREFERRED_CARVEOUT (-1 ... 100), GCL_KERNEL_CLUSTER_SCHEDULING_POLICY (0 ... 2),
 * GCL_KERNEL_NONPORTABLE_CLUSTER_SIZE_ALLOWED (0 or 1; gcl_launch sets it by itself for clusters
 * of more than 8). GCL_ERROR_INVALID_ARGUMENT for a read-only attribute or a value out of range
 * (the message gives the range). Changes the kernel: not concurrently with its launches'
 * opt-ins of the same attribute (they are serialized by a lock inside; a launch racing a lower
 * limit may see either). */
GCL_API gcl_status gcl_kernel_set_attribute(gcl_kernel *kernel, gcl_kernel_attr attr, int value);

/* Interop with code that uses the driver API itself. Each returns the underlying handle as
 * void * (cast it to the CUDA type), owned by gclaunch and valid as long as the object; NULL for
 * NULL. Reads. */
GCL_API void *gcl_context_cu_context(const gcl_context *ctx);  /* CUcontext (the primary one) */
GCL_API void *gcl_module_cu_library(const gcl_module *mod);    /* CUlibrary */
GCL_API void *gcl_kernel_cu_function(const gcl_kernel *kernel);/* CUfunction in its context */

/* ---------------------------------------------------------------------------------------------
 * Launch
 * ------------------------------------------------------------------------------------------- */

/* How the structs the caller fills grow (gcl_launch_config, gcl_tensormap_options, and the ones
 * nested in them): zero-initialise them (`= {0}` or designated initialisers) -- zero is the
 * default of every field, today's and tomorrow's. Each ends in reserved members that must be
 * zero (GCL_ERROR_INVALID_CONFIG / GCL_ERROR_INVALID_ARGUMENT otherwise); a later minor version
 * gives a new field a reserved slot, so sizeof and the existing offsets never change and a
 * program built against an older header keeps working with a newer library. (libuv keeps
 * reserved members in its public structs the same way; zstd, whose parameter structs cannot
 * grow, keeps them out of its stable API and adds setters instead -- the fallback here too if
 * the reserved room runs out.) docs/runtime.md "ABI and versioning". */
typedef struct gcl_launch_config {
  unsigned grid[3];          /* blocks; grid[0] >= 1. y, z left 0 after the last given dimension
                                are 1 ({.grid = {n}} is n x 1 x 1); a 0 in x, or before a given
                                dimension, is GCL_ERROR_INVALID_CONFIG naming config.grid[i] */
  unsigned block[3];         /* threads; the same rule as grid */
  unsigned cluster[3];       /* all 0: no cluster attribute */
  size_t shared_bytes;       /* dynamic shared memory; > 48 KiB opted in on first use */
  void *stream;              /* a CUstream: gcl_stream_handle(s), or your own; NULL is the
                                context's default stream */
  bool cooperative;
  bool programmatic_dependent_launch;
  int priority;              /* 0: none */
  uint64_t flags;            /* GCL_LAUNCH_* flags (0.3: took reserved[0]); unknown bits are
                                GCL_ERROR_INVALID_CONFIG */
  uint64_t reserved[5];      /* must be zero: room for new fields (see above) */
} gcl_launch_config;

/* gcl_launch_config.flags: launch with programmatic_dependent_launch even though the kernel's
 * code never executes griddepcontrol.wait (see "Launch-safety checks" below). */
#define GCL_LAUNCH_PDL_UNCHECKED 1u

/* Launches kernel with args (whose layout must be the kernel's). Checks the config before the
 * driver where it can. Allocates nothing. Safe to call from several threads on one kernel with
 * different args. Launches on config->stream, which must be a stream of the kernel's context (or
 * NULL, its default stream): a stream of another context is the driver's error. The launch runs
 * in the kernel's context whatever context is current on the calling thread: on a stream of
 * that context the driver needs none, and the current one is left as it is (no driver call but
 * the launch); on the default stream, or when the driver refuses the launch for want of the
 * context, gcl_launch makes the kernel's context current (it stays current) and launches again.
 * So does the first launch that raises the kernel's dynamic shared memory or allows
 * non-portable clusters. When the launch fails again after that binding, the previous context
 * is made current again.
 * The driver copies the parameters when the launch is submitted: args may be changed, reused
 * for the next launch or destroyed as soon as gcl_launch returns, even before the kernel ran
 * (device memory the args point to must of course stay valid until it did).
 * GCL_ERROR_INVALID_CONFIG for a grid or block of 0 (naming the field) and the other config
 * checks; GCL_ERROR_KERNEL_FAULT after a kernel fault (see gcl_stream_synchronize). */
GCL_API gcl_status gcl_launch(gcl_kernel *kernel, const gcl_launch_config *config,
                              const gcl_args *args);

/* ---------------------------------------------------------------------------------------------
 * Streams, events, asynchronous copies, pinned host memory, occupancy
 *
 * Everything a persistent-kernel host program needs without cuda.h or libcuda. A stream or
 * event belongs to the context it was made in (borrowed: the context must outlive it); calls
 * that take a context and a stream refuse a stream of another context (GCL_ERROR_INVALID_ARGUMENT
 * naming "s"). Where a stream parameter may be NULL it means the context's default stream.
 * A handle passed after its destroy is detected while its memory was not reused ("not a live
 * stream"); do not rely on it. One stream or event must not be used from two threads at once;
 * different ones are independent.
 *
 * Kernel faults. A kernel that faults (CUDA_ERROR_ILLEGAL_ADDRESS, ILLEGAL_INSTRUCTION,
 * MISALIGNED_ADDRESS, INVALID_ADDRESS_SPACE, INVALID_PC, HARDWARE_STACK_ERROR, LAUNCH_FAILED,
 * LAUNCH_TIMEOUT, ASSERT, CONTAINED, EXTERNAL_DEVICE) leaves the whole process's CUDA state lost:
 * the driver fails every later call, even a new primary context. The first call that sees such
 * a CUresult (a launch, synchronize, event, copy ...) returns GCL_ERROR_KERNEL_FAULT with a
 * message naming the CUresult; gclaunch records the fault process-wide and every later call that
 * would reach the driver returns the same status and message at once, without calling it
 * (the destroy functions and gcl_host_free still give their handles back;
 * gcl_mem_free returns the fault, and releasing the context frees device memory). gcl_last_cuda_error() gives the
 * CUresult. Only a new process recovers. After ILLEGAL_INSTRUCTION in a process that uses tensor
 * maps (gclaunch encoded one, or looked up a kernel with a tensormap parameter) the message names
 * the likely cause: a TMA load/store whose innermost coordinate x element size is not a multiple
 * of 16 bytes.
 * ------------------------------------------------------------------------------------------- */

typedef struct gcl_stream gcl_stream;
typedef struct gcl_event gcl_event;

/* Creates a non-blocking stream (it does not synchronize with the legacy default stream) of
 * ctx's device. priority: 0 is the lowest (the default); lower numbers are higher priorities,
 * down to the device's greatest (cuCtxGetStreamPriorityRange). Out of range is refused, not
 * clamped: GCL_ERROR_INVALID_ARGUMENT "priority: expected -5 (highest) ... 0 (lowest) on
 * device 0, got 3" (the device's range in the message).
 * Thread-safe on ctx. */
GCL_API gcl_status gcl_stream_create(gcl_context *ctx, int priority, gcl_stream **out);
/* Destroys s (pending work still runs; an unfinished capture is discarded). NULL is fine. */
GCL_API void gcl_stream_destroy(gcl_stream *s);
/* Waits for the stream's work. GCL_ERROR_INVALID_ARGUMENT while the stream is capturing a
 * graph; GCL_ERROR_KERNEL_FAULT when a kernel on it faulted. */
GCL_API gcl_status gcl_stream_synchronize(gcl_stream *s);
/* The CUstream as void *: put it in gcl_launch_config.stream. NULL for NULL. Reads. */
GCL_API void *gcl_stream_handle(const gcl_stream *s);
/* The stream's context (borrowed), NULL for NULL. Reads. */
GCL_API gcl_context *gcl_stream_context(const gcl_stream *s);
/* The priority the stream was created with (0 for NULL). Reads. */
GCL_API int gcl_stream_priority(const gcl_stream *s);
/* Whether `stream`, a CUstream handle from outside gclaunch (an int from Python, another
 * library's stream), can be given to a launch in ctx: GCL_OK for NULL, CU_STREAM_LEGACY (1),
 * CU_STREAM_PER_THREAD (2) and a live stream of ctx's context. Refused without touching the
 * handle's memory (GCL_ERROR_INVALID_ARGUMENT naming the handle): any other value below 4096,
 * a value with the top bit set (a negative int), one not 8-byte aligned, an address no memory is mapped at (asked of the
 * kernel, not read); then the driver is asked (cuStreamGetCtx): a handle it refuses is
 * GCL_ERROR_DRIVER with its error, a stream of another context GCL_ERROR_INVALID_ARGUMENT.
 * flags: GCL_STREAM_CHECK_MAPPED skips the mapping question (the caller saw this handle pass
 * before). A handle the driver freed may still pass (its memory mapped, the driver's answer is
 * the driver's): keep streams alive while you launch on them. */
#define GCL_STREAM_CHECK_MAPPED 1u
GCL_API gcl_status gcl_stream_check(gcl_context *ctx, void *stream, unsigned flags);
/* A gcl_stream over a CUstream someone else created (handle; NULL, CU_STREAM_LEGACY (1) and
 * CU_STREAM_PER_THREAD (2) are the default streams) of ctx's device, so that events, copies and
 * graph captures can use it (torch, CuPy and cuda.core streams in Python). The handle is checked
 * as gcl_stream_check does (refusals as it words them), then asked its priority
 * (cuStreamGetPriority);
 * gcl_stream_priority gives the driver's priority of it. gcl_stream_destroy frees the wrapper
 * only: the CUstream stays its creator's, who must keep it alive while the wrapper is used.
 * Thread-safe on ctx. */
GCL_API gcl_status gcl_stream_wrap(gcl_context *ctx, void *handle, gcl_stream **out);


/* Creates an event of ctx's device with timing enabled. */
GCL_API gcl_status gcl_event_create(gcl_context *ctx, gcl_event **out);
GCL_API void gcl_event_destroy(gcl_event *e); /* NULL is fine */
/* Records e at the current end of s (NULL: the default stream of e's context). s must be of
 * e's context. */
GCL_API gcl_status gcl_event_record(gcl_event *e, gcl_stream *s);
/* Waits until the work before e's last record completed (at once if never recorded). */
GCL_API gcl_status gcl_event_synchronize(gcl_event *e);
/* *done = whether the work before e's last record completed (true if never recorded); does not
 * wait. A failed query leaves *done alone. */
GCL_API gcl_status gcl_event_query(gcl_event *e, bool *done);
/* Waits for stop, then *us = device time from start to stop in microseconds (resolution about
 * 0.5 us). Both must be recorded events of one context (GCL_ERROR_INVALID_ARGUMENT naming the
 * one that was not). */
GCL_API gcl_status gcl_event_elapsed_us(gcl_event *start, gcl_event *stop, double *us);
/* Makes work submitted to s after this call wait for e's last record (events of another device
 * are fine). Does not block the host. */
GCL_API gcl_status gcl_stream_wait_event(gcl_stream *s, gcl_event *e);

/* Asynchronous copies and fills on s (a stream of ctx; NULL: ctx's default stream), ordered with
 * the stream's launches. They return once queued; the host memory must stay valid and untouched
 * until the stream reached them (synchronize, or an event). Pageable host memory makes the driver
 * stage the copy (it may then return only after the data was read); memory from gcl_host_alloc
 * is copied truly asynchronously. A bad address is the driver's error (GCL_ERROR_DRIVER naming
 * the call). */
GCL_API gcl_status gcl_mem_upload_async(gcl_context *ctx, uint64_t dst, const void *src,
                                        size_t bytes, gcl_stream *s);
GCL_API gcl_status gcl_mem_download_async(gcl_context *ctx, void *dst, uint64_t src, size_t bytes,
                                          gcl_stream *s);
/* Device-to-device copy (cuMemcpyDtoDAsync). */
GCL_API gcl_status gcl_mem_copy_async(gcl_context *ctx, uint64_t dst, uint64_t src, size_t bytes,
                                      gcl_stream *s);
/* bytes bytes of value (cuMemsetD8Async). */
GCL_API gcl_status gcl_mem_fill_u8_async(gcl_context *ctx, uint64_t dst, uint8_t value,
                                         size_t bytes, gcl_stream *s);
/* count 32-bit words of value (cuMemsetD32Async); dst must be 4-byte aligned. */
GCL_API gcl_status gcl_mem_fill_u32_async(gcl_context *ctx, uint64_t dst, uint32_t value,
                                          size_t count, gcl_stream *s);
/* Pinned (page-locked) host memory of bytes (>= 1) bytes, portable to every context
 * (cuMemHostAlloc): the source or destination of truly asynchronous copies. Free it with
 * gcl_host_free before the context is destroyed. *out untouched on failure. */
GCL_API gcl_status gcl_host_alloc(gcl_context *ctx, size_t bytes, void **out);
/* Frees memory from gcl_host_alloc; NULL p is fine. */
GCL_API gcl_status gcl_host_free(gcl_context *ctx, void *p);

/* Occupancy. *blocks_per_sm = how many blocks of block_threads threads with dynamic_smem bytes
 * of dynamic shared memory can be resident on one SM at once
 * (cuOccupancyMaxActiveBlocksPerMultiprocessor); 0 when none fits. block_threads must be
 * 1 ... the kernel's maximum and dynamic_smem within its limit (GCL_ERROR_INVALID_CONFIG naming
 * them); a dynamic_smem over the kernel's current limit raises it as gcl_launch would. */
GCL_API gcl_status gcl_kernel_occupancy(const gcl_kernel *k, unsigned block_threads,
                                        size_t dynamic_smem, int *blocks_per_sm);
/* The largest cooperative (or persistent) grid: blocks per SM x the device's SM count.
 * GCL_ERROR_INVALID_CONFIG when not one block fits on an SM. */
GCL_API gcl_status gcl_kernel_max_cooperative_grid(const gcl_kernel *k, unsigned block_threads,
                                                   size_t dynamic_smem, unsigned *blocks);
/* *clusters = how many clusters of config->cluster (all dimensions given) with config->block
 * threads and config->shared_bytes can be active at once on the device
 * (cuOccupancyMaxActiveClusters; config->grid is ignored). Clusters of more than 8 blocks need
 * GCL_KERNEL_NONPORTABLE_CLUSTER_SIZE_ALLOWED set first. */
GCL_API gcl_status gcl_kernel_active_clusters(const gcl_kernel *k, const gcl_launch_config *config,
                                              int *clusters);
/* Fills config for a persistent launch: grid = {SMs x blocks per SM, 1, 1},
 * block = {block_threads, 1, 1}, shared_bytes = dynamic_smem; the other fields (stream,
 * cooperative, cluster, ...) stay as the caller set them. config untouched on failure. */
GCL_API gcl_status gcl_kernel_persistent_config(const gcl_kernel *k, unsigned block_threads,
                                                size_t dynamic_smem, gcl_launch_config *config);

/* ---------------------------------------------------------------------------------------------
 * CUDA graphs
 *
 * Capture launches on a gcl_stream into a graph, replace the arguments of one kernel node, replay:
 *   gcl_graph_capture_begin(s);
 *   gcl_launch(k, &cfg, args0); gcl_launch(k2, &cfg2, args1); ...   // cfg.stream = handle of s
 *   gcl_graph_capture_end(s, &g);               // instantiated; kernel nodes 0, 1, ... in order
 *   gcl_graph_set_args(g, 1, k2, new_args);     // node 1 now runs with new_args
 *   gcl_graph_launch(g, s);
 * Async copies and fills captured on the stream become graph nodes too (not counted as kernel
 * nodes). During a capture the stream must not be synchronized. A graph borrows its context; it
 * must not be used from two threads at once.
 *
 * Re-pointed tensor maps in a replay (docs/graphs.md): a kernel node holds a copy of its
 * parameters, a table's device memory what was last copied there. After re-pointing maps through
 * gclaunch, hand them to the graph, then launch:
 *   maps in the parameters (top level, struct fields):  gcl_args_repoint_tensormaps(args, ...);
 *                                                       gcl_graph_set_args(g, node, k, args);
 *   maps in a gcl_tensormap_table t (captured with gcl_graph_capture_table(s, t)):
 *                                                       gcl_tensormap_table_repoint(t, ...);
 *                                                       gcl_graph_set_table(g, t);
 *   gcl_graph_launch(g, s);     // sees the maps as they were at those calls
 * ------------------------------------------------------------------------------------------- */

typedef struct gcl_graph gcl_graph;
typedef struct gcl_tensormap_table gcl_tensormap_table; /* below: tables in device memory */

/* Starts capturing s (thread-local mode: only this thread's unsafe calls are refused).
 * GCL_ERROR_INVALID_ARGUMENT if s is already capturing. */
GCL_API gcl_status gcl_graph_capture_begin(gcl_stream *s);
/* Ends the capture and instantiates the graph. The capture has ended when this returns, also on
 * failure. GCL_ERROR_INVALID_ARGUMENT naming "s" when no capture was begun or the capture
 * launched no kernel (no graph is made); the driver's error when the capture was invalidated. */
GCL_API gcl_status gcl_graph_capture_end(gcl_stream *s, gcl_graph **out);
/* Number of kernel nodes (>= 1). Reads. */
GCL_API gcl_status gcl_graph_kernel_count(const gcl_graph *g, size_t *count);
/* Replaces the arguments of kernel node kernel_node (0 = the first kernel launched in the
 * capture) with args, which must be complete and of k's layout; k must be the kernel the node
 * was captured from (GCL_ERROR_INVALID_ARGUMENT "kernel_node 2: it runs another kernel than
 * 'k'"), of the graph's device. Any parameter size up to GCL_PARAM_LIMIT, grid-constant
 * aggregates included. The driver copies the values: args may change or go away afterwards.
 * Grid, block and attributes of the node are kept. Takes effect for later gcl_graph_launch
 * calls. Nothing changes on failure (index out of range, args of another layout, unset args). */
GCL_API gcl_status gcl_graph_set_args(gcl_graph *g, size_t kernel_node, gcl_kernel *k,
                                      const gcl_args *args);
/* During a capture on s: every replay of the graph will first copy all of t's maps to t's device
 * memory (gcl_tensormap_table_address) from a pinned copy the graph owns, before any work
 * captured on s, and the graph's kernels read the table's maps as copied by that replay. The
 * copy holds t's host maps as they are when the capture ends; gcl_graph_set_table takes a new
 * one. t (a table of s's context) must outlive the graph; it is not uploaded by this call (no
 * gcl_tensormap_table_upload is needed for the graph; do not call it on the capturing stream). GCL_ERROR_INVALID_ARGUMENT naming "s"
 * when s is not capturing, "t" when t is NULL or already captured in this capture. */
GCL_API gcl_status gcl_graph_capture_table(gcl_stream *s, gcl_tensormap_table *t);
/* Takes t's host maps as they are now (after gcl_tensormap_table_set / _repoint) into the copy
 * that later replays of g upload: like gcl_graph_set_args for the parameters. Replays launched
 * before keep the maps they were launched with (the graph keeps 3 pinned copies a table; when
 * the host runs more than two replays ahead of the device, this call waits for the oldest).
 * GCL_ERROR_INVALID_ARGUMENT naming "t" for a table not captured into g; nothing changes on
 * failure. */
GCL_API gcl_status gcl_graph_set_table(gcl_graph *g, gcl_tensormap_table *t);
/* Replays the graph on s (a stream of the graph's context; NULL: its default stream). */
GCL_API gcl_status gcl_graph_launch(gcl_graph *g, gcl_stream *s);
/* Destroys the graph (a replay in flight still completes; the table copies are freed after the
 * replays that read them). NULL is fine. */
GCL_API void gcl_graph_destroy(gcl_graph *g);


/* Tensor maps encoded by the driver, tensor maps in args and tensor-map tables: since 0.4 in
 * gclaunch/tensormap.h (included at the end of this header, so 0.3 programs keep compiling). */

/* ---------------------------------------------------------------------------------------------
 * Launch-safety checks (gcl_image_kernel_waits, the CPU model's reading, is in core.h)
 *
 * - Programmatic dependent launch (PDL): a kernel launched with
 *   config.programmatic_dependent_launch may start before the previous kernel on its stream has
 *   finished; it must execute griddepcontrol.wait (cudaGridDependencySynchronize) before it reads
 *   what that kernel wrote. gclaunch reads whether the kernel's code holds that instruction: in
 *   PTX (loaded, or NVRTC's) from the entry's body; in a cubin from its SASS (the instruction's
 *   encoding, known for sm_90, 100, 103, 110, 120, 121). gcl_launch refuses a PDL launch of a
 *   kernel that never waits (GCL_ERROR_INVALID_CONFIG naming the kernel) unless config.flags has
 *   GCL_LAUNCH_PDL_UNCHECKED; where the image does not tell (another architecture's SASS, a wait
 *   only in a device function the kernel may call, a module whose records gclaunch cannot read)
 *   the launch goes ahead: "unknown" is never a refusal. gclaunch inspect reports "waits".
 * - Stale kernels: gcl_module_destroy does not free its kernels' handles: each becomes a
 *   tombstone (its name kept, its CUfunction, module and context forgotten, the rest freed) that
 *   every later call refuses by name -- the driver reuses CUfunction values after an unload, so
 *   a stale handle must never reach it; gcl_kernel_layout, gcl_kernel_context and
 *   gcl_kernel_cu_function return NULL for it. A kernel's layout is shared with the args made
 *   from it: args outliving the module stay valid (the layout goes with the last of them) and
 *   are refused by gcl_launch on any kernel. Tombstones (a few hundred bytes each, C library
 *   memory) are freed when the process exits. docs/launchsafety.md.
 * - Grids that cannot all be resident: a cooperative launch needs every block resident at once;
 *   gcl_launch checks it with the occupancy API before the driver and refuses with the numbers.
 *   gcl_launch_check does that and the cluster check for a prepared launch without launching.
 * ------------------------------------------------------------------------------------------- */

/* Whether a looked-up kernel executes griddepcontrol.wait (gcl_image_kernel_waits of its module's
 * records): 1, 0, or -1 unknown (also for NULL or a stale kernel). Reads. */
GCL_API int gcl_kernel_waits(const gcl_kernel *kernel);
/* Checks everything gcl_launch checks for kernel, config and args (args may be NULL: not
 * checked) without launching, and more: for a cooperative launch, that the whole grid can be
 * resident (grid blocks <= blocks per SM x SMs, cuOccupancyMaxActiveBlocksPerMultiprocessor);
 * for a cluster launch, that one cluster of its shape fits (cuOccupancyMaxActiveClusters >= 1)
 * and, if also cooperative, that every cluster of the grid fits at once.
 * GCL_ERROR_INVALID_CONFIG naming the kernel and the numbers (grid, blocks per SM, SMs, the
 * maximum resident, the cluster shape); the errors of gcl_launch otherwise. May raise the
 * kernel's dynamic shared memory limit, as the launch would. */
GCL_API gcl_status gcl_launch_check(gcl_kernel *kernel, const gcl_launch_config *config,
                                    const gcl_args *args);


/* ---------------------------------------------------------------------------------------------
 * Several GPUs: one NVSHMEM PE per process (docs/multigpu.md)
 *
 * gclaunch rides NVSHMEM, not a transport of its own. Its host library (libnvshmem_host.so.3,
 * 3.3.9 or later) is opened at run time, never linked: GCL_NVSHMEM_PATH (the library or its
 * folder) when set, else the loader's search (LD_LIBRARY_PATH), $NVSHMEM_HOME/lib, the usual
 * install prefixes and the pip wheel (site-packages/nvidia/nvshmem/lib) of $VIRTUAL_ENV and of
 * every python3 on PATH. A process starts one PE on one gclaunch context (one GPU); N GPUs are N
 * processes. Rank 0 makes a unique id (gcl_pe_unique_id_create) and sends its 128 bytes to the
 * others by any channel (a pipe, a file, torch.distributed, MPI); every rank then starts with it.
 * One process on one GPU is a valid single PE (id NULL, rank 0, count 1).
 * A module device-linked with NVSHMEM (gcl_module_uses_nvshmem) must be attached in the PE's
 * context before any of its kernels is launched; gcl_launch refuses an unattached one
 * (GCL_ERROR_NOT_ATTACHED naming module and kernel) without calling the driver. A kernel that
 * calls NVSHMEM barriers or waits (nvshmem_barrier_all, nvshmem_*_wait_until, collectives) must
 * be launched cooperatively (config.cooperative = true) with the same grid on every PE: that is
 * NVSHMEM's collective launch, with its grid-fit check (gcl_kernel_max_cooperative_grid);
 * clusters and PDL stay available. Keep NVLink multicast off (NVSHMEM_DISABLE_NVLS=1).
 * Every call here is thread-safe (one lock); NVSHMEM itself wants one thread at a time.
 * ------------------------------------------------------------------------------------------- */

/* Opens the NVSHMEM host library (once). GCL_ERROR_NO_NVSHMEM naming every path tried, a missing
 * entry point, or a version older than 3.3.9. */
GCL_API gcl_status gcl_nvshmem_init(void);
/* The library opened (or found too old), or "(not found)". Never NULL. */
GCL_API const char *gcl_nvshmem_path(void);
/* Its version (nvshmemx_vendor_get_version_info), also for one too old to use;
 * GCL_ERROR_NO_NVSHMEM when none was opened. */
GCL_API gcl_status gcl_nvshmem_version(int *major, int *minor, int *patch);

/* NVSHMEM's unique id (nvshmemx_uniqueid_t): 128 opaque bytes, copied as they are. */
#define GCL_PE_UNIQUE_ID_BYTES 128
typedef struct gcl_pe_unique_id {
  unsigned char bytes[GCL_PE_UNIQUE_ID_BYTES];
} gcl_pe_unique_id;

/* Rank 0 only, before gcl_pe_start: a fresh id for this run (nvshmemx_get_uniqueid).
 * GCL_ERROR_NO_NVSHMEM; GCL_ERROR_NVSHMEM naming the call and its return. */
GCL_API gcl_status gcl_pe_unique_id_create(gcl_pe_unique_id *out);
/* Starts this process's PE: rank of count, on ctx's device (ctx made current; it must outlive
 * the PE), bootstrapped from rank 0's id (collective: every rank calls it with the same id).
 * id NULL is allowed for count 1 (a single PE). GCL_ERROR_INVALID_ARGUMENT for NULL ctx, rank
 * outside 0 ... count - 1, or NULL id with count > 1; GCL_ERROR_NVSHMEM when a PE is already
 * started in this process (one PE per process) or an NVSHMEM call fails (named, with its
 * return); GCL_ERROR_NO_NVSHMEM. NVSHMEM reads its NVSHMEM_* environment here. */
GCL_API gcl_status gcl_pe_start(gcl_context *ctx, const gcl_pe_unique_id *id, int rank, int count);
/* Stops the PE (nvshmemx_hostlib_finalize; collective): every symmetric buffer is freed with it.
 * GCL_ERROR_NVSHMEM when none is started or while modules are attached (detach or destroy them
 * first). A new PE may be started afterwards. */
GCL_API gcl_status gcl_pe_stop(void);
/* The context the PE was started on; NULL when none. */
GCL_API gcl_context *gcl_pe_context(void);
/* This PE's rank and the number of PEs. GCL_ERROR_NVSHMEM when no PE is started. */
GCL_API gcl_status gcl_pe_id(int *id);
GCL_API gcl_status gcl_pe_count(int *count);
/* A barrier of all PEs ordered on stream (NULL: the PE context's default stream): work after it
 * on the stream starts once every PE reached it, with their earlier symmetric-memory writes
 * visible (nvshmemx_barrier_all_on_stream). Collective. GCL_ERROR_NVSHMEM when no PE is
 * started; GCL_ERROR_INVALID_ARGUMENT for a stream of another context. */
GCL_API gcl_status gcl_pe_barrier(gcl_stream *stream);

/* Alignment of every symmetric buffer. */
#define GCL_SYMMETRIC_ALIGN 256
/* Allocates bytes of symmetric memory on every PE (collective: every PE calls it with the same
 * bytes, in the same order): *address is this PE's copy, a device pointer of the PE's context
 * like gcl_mem_alloc's -- a kernel argument, a DLTensor's data, a tensor map's address.
 * GCL_SYMMETRIC_ALIGN-aligned. GCL_ERROR_OUT_OF_MEMORY when NVSHMEM's heap
 * (NVSHMEM_SYMMETRIC_SIZE) is full; GCL_ERROR_NVSHMEM when no PE is started. */
GCL_API gcl_status gcl_symmetric_alloc(size_t bytes, uint64_t *address);
/* Frees a symmetric buffer (collective). GCL_ERROR_INVALID_ARGUMENT for an address
 * gcl_symmetric_alloc did not return. */
GCL_API gcl_status gcl_symmetric_free(uint64_t address);
/* PE peer's copy of address (any address inside a symmetric buffer) as a pointer this PE can
 * load from and store to (nvshmem_ptr): this PE's own address for peer = self.
 * GCL_ERROR_PEER_UNREACHABLE naming the peer when NVSHMEM gives NULL (no NVLink or P2P path:
 * only NVSHMEM's own put/get reach it); GCL_ERROR_INVALID_ARGUMENT for an address outside every
 * symmetric buffer or peer outside 0 ... count - 1. *out untouched on failure. */
GCL_API gcl_status gcl_symmetric_peer_address(uint64_t address, int peer, uint64_t *out);

/* Whether mod is device-linked with NVSHMEM (its image defines nvshmemi_device_state_d): 1 or 0
 * (also for NULL). Reads. */
GCL_API int gcl_module_uses_nvshmem(const gcl_module *mod);
/* Attaches mod to the PE: its NVSHMEM device-library version (nvshmemi_device_lib_version_d) is
 * checked against the host library's (majors equal, the module's minor at most the host's), then
 * nvshmemx_culibrary_init fills its device state. Its kernels may launch from then on (in the
 * PE's context). Attaching an attached module does nothing. GCL_ERROR_NVSHMEM before
 * gcl_pe_start or when culibrary_init fails (its return named); GCL_ERROR_INVALID_ARGUMENT for a
 * module that does not use NVSHMEM or was loaded in another device's context than the PE's;
 * GCL_ERROR_NVSHMEM_VERSION naming both versions. gcl_module_destroy detaches first. */
GCL_API gcl_status gcl_module_attach(gcl_module *mod);
/* Detaches mod (nvshmemx_culibrary_finalize); its kernels are refused again (gcl_launch,
 * gcl_graph_set_args) until the next attach. A graph captured while it was attached still holds
 * its kernels: detach after the graph's last launch. GCL_ERROR_INVALID_ARGUMENT when it is not
 * attached. */
GCL_API gcl_status gcl_module_detach(gcl_module *mod);

/* Peer tensor maps: n maps, map first + i over PE pes[i]'s copy of tensor (tensor->data inside a
 * symmetric buffer; shape, strides, dtype and byte_offset as given), encoded as
 * gcl_args_set_tensormaps does (options[0] for every map, flags 0 or GCL_TENSORMAP_REFRESH) in
 * the PE's context: a `tensormap[N]` parameter or struct field the kernel indexes by PE at run
 * time. Every peer is resolved before any map is encoded: GCL_ERROR_PEER_UNREACHABLE naming the
 * PE and its index in pes, nothing changed. Re-point like any other map
 * (gcl_args_repoint_tensormaps with gcl_symmetric_peer_address's addresses). */
GCL_API gcl_status gcl_args_set_peer_tensormaps(gcl_args *args, const gcl_field *first,
                                                const DLTensor *tensor, const int *pes, size_t n,
                                                const gcl_tensormap_options *options,
                                                unsigned flags);
/* The same into entries first ... first + n - 1 of a descriptor table (gcl_tensormap_table_set). */
GCL_API gcl_status gcl_tensormap_table_set_peers(gcl_tensormap_table *table, size_t first,
                                                 const DLTensor *tensor, const int *pes, size_t n,
                                                 const gcl_tensormap_options *options,
                                                 unsigned flags);


#ifdef __cplusplus
}
#endif

#include "gclaunch/tensormap.h" /* the tensor-map calls (0.3 declared them here) */

#endif /* GCLAUNCH_RUNTIME_H */
