/* gclaunch.h -- launch CUDA kernels from C with device-exact parameter buffers.
 *
 * The umbrella header: include it, or only the layer or area a program needs. Three layers,
 * each made of area headers that include the ones they build on:
 * - gclaunch/core.h     the CPU model. Needs no driver and no GPU (implemented by lib/core, which
 *                       never includes cuda.h). Its areas: status.h (export macro, version, status,
 *                       allocator), signature.h (scalars, signatures), layout.h (architectures,
 *                       layouts), args.h (argument buffers), field.h (fields: paths into
 *                       aggregates, setters and readers), image.h (module images and file
 *                       reading); core.h itself holds the tensor-map options and their CPU check.
 * - gclaunch/runtime.h  the runtime edge. Opens libcuda.so.1 at run time; never linked
 *                       (lib/cuda). Includes core.h. Its areas: context.h (NVRTC, driver,
 *                       devices, contexts), module.h (modules, kernels), launch.h (launch and its
 *                       safety checks), stream.h (streams own and wrapped, events, memory and
 *                       copies, occupancy), graph.h (graphs), multigpu.h (NVSHMEM PEs, symmetric
 *                       memory, peer tensor maps). runtime.h includes, at its end,
 *                       tensormap.h, for programs written against 0.3.
 * - gclaunch/tensormap.h the tensor-map calls that need a context (since 0.4): where maps go
 *                       (slots of args or of a device-resident table), what they are made from
 *                       (sources: DLPack tensors with their flags), set and re-point; the 0.3
 *                       calls as wrappers. Includes runtime.h.
 * - gclaunch/ffi.h      the libffi bridge -- the calls that take a libffi ffi_type. Includes
 *                       core.h.
 * gclaunch/dlpack.h supplies the DLPack 1.x declarations (core.h includes it).
 *
 * Naming: gcl_<object>_<verb or noun>, one prefix, the object first. A verb acts (create,
 * destroy, parse, set, launch, query the driver); a noun reads; `find` marks a lookup by name:
 * - gcl_X_Y(x)                  accessor: returns Y itself, never fails (NULL x gives 0, NULL or
 *                               the default the comment names) and never writes gcl_last_error.
 * - gcl_X_Y(x, [index,] &out..) a read that can fail (an index out of range, a driver asked):
 *                               returns a gcl_status, fills the outputs only on success.
 * - gcl_X_find_Y(x, name, &out) lookup of Y by name; returns a gcl_status (GCL_ERROR_NOT_FOUND
 *                               naming what was looked for).
 * - gcl_E_name(value)           the text of enum gcl_E's value; never NULL.
 * - gcl_signature_format, gcl_layout_field_path (x, buf, cap, &needed): text with snprintf's
 *                               contract -- write what fits, NUL-terminated, tell the full length;
 *                               a cut text or a size query (cap 0) is no failure.
 * No name uses `get`, and each thing has one way to do it: a parameter is a field
 * (gcl_layout_param_field, gcl_layout_field by name), device time is measured with events, a
 * graph's kernel node gets new arguments with gcl_graph_set_args, and every call takes a
 * gcl_stream (the raw CUstream appears only in gcl_launch_config.stream: gcl_stream_handle).
 *
 * 0.3.0 removed or renamed (docs/api.md has the whole list, with the reasons):
 *   gcl_kernel_get, gcl_kernel_get_on   -> gcl_module_find_kernel, gcl_module_find_kernel_on
 *   gcl_image_get_kernel, struct gcl_image_kernel -> gcl_image_kernel, gcl_image_kernel_info
 *   gcl_image_get_format, enum gcl_image_format, gcl_image_format_name
 *                                       -> gcl_image_format, gcl_format, gcl_format_name
 *   gcl_image_param_kind (text)         -> gcl_image_param_type (gcl_param_kind + gcl_scalar),
 *                                          gcl_param_kind_name
 *   gcl_device_get_info                 -> gcl_device_query
 *   gcl_args_set_device                 -> gcl_args_restrict_device
 *   gcl_args_param_field(args, i, &f)   -> gcl_layout_param_field(gcl_args_layout(args), i, &f)
 *   gcl_layout_param_info(l, i, &info)  -> gcl_layout_param_field(l, i, &f), then f.info
 *   gcl_layout_find, gcl_signature_find -> gcl_layout_field(l, name, &f), then f.param
 *   gcl_timer_create/_start/_stop/_elapsed_us/_destroy
 *                                       -> gcl_event_create/_record/_record/_elapsed_us/_destroy
 *   gcl_graph_kernel_node_set_args (raw CUgraphExec, CUgraphNode) -> gcl_graph_set_args
 *
 * Conventions, for every function below unless its comment says otherwise:
 * - Fallible functions return a gcl_status. On failure, gcl_last_error() holds a message that
 *   names the parameter and the expected and actual values, and nothing was changed: output
 *   pointers keep their old value, objects keep their old state.
 * - Objects are opaque. Each has one create/destroy pair; destroy accepts NULL.
 * - Ownership: a signature is independent; a layout copies what it needs from its signature;
 *   args borrow their layout (the layout must outlive them); a module borrows the context it was
 *   loaded in and a kernel the context it was looked up for (gcl_module_find_kernel_on): the
 *   context does not own them, so destroy modules before the contexts they use
 *   (gcl_context_destroy does not destroy them); a module owns its kernels (gcl_module_destroy
 *   destroys them). Strings returned
 *   by the library belong to the object they came from and live as long as it does. Host memory
 *   comes from the allocator of gcl_replace_allocator.
 * - Thread safety: functions that only read an object (marked "reads") may run concurrently on
 *   the same object; functions that change an object must not run concurrently with any other
 *   call on that object. Different objects are independent. gcl_last_error is per thread.
 *
 * No function aborts, exits or asserts on bad input or on a driver failure.
 */
#ifndef GCLAUNCH_H
#define GCLAUNCH_H

#include "gclaunch/core.h"    /* the CPU model */
#include "gclaunch/runtime.h" /* the runtime edge */
#include "gclaunch/tensormap.h" /* tensor maps: slots, sources, set and re-point */
#include "gclaunch/ffi.h"     /* the libffi bridge */
#include "gclaunch/nccl.h"    /* NCCL's device communicator checked against the kernel's NCCL */

#endif /* GCLAUNCH_H */
