/* gclaunch/module.h -- modules (loaded from an image or compiled with NVRTC) and the kernels in
 * them, checked against their declared signatures. Included by gclaunch/runtime.h; the
 * conventions are written in gclaunch.h. */
#ifndef GCLAUNCH_MODULE_H
#define GCLAUNCH_MODULE_H

#include "gclaunch/context.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif
#endif /* GCLAUNCH_MODULE_H */
