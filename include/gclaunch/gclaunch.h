/* gclaunch.h -- launch CUDA kernels from C with device-exact parameter buffers.
 *
 * The umbrella header: include it, or only the layer a program needs. Three layers, each header
 * including the one it builds on:
 * - gclaunch/core.h     the CPU model -- version, status, allocator, scalars, signatures,
 *                       layouts, fields, argument buffers, module images and file reading,
 *                       tensor-map options and their CPU check. Needs no driver and no GPU
 *                       (implemented by lib/core, which never includes cuda.h).
 * - gclaunch/runtime.h  the runtime edge -- NVRTC, driver, devices, contexts, memory, modules,
 *                       kernels, launch, streams, events, occupancy, graphs, and the tensor-map
 *                       calls that need a context (encode; set and re-point maps in args).
 *                       Opens libcuda.so.1 at run time; never linked (lib/cuda). Includes core.h.
 * - gclaunch/ffi.h      the libffi bridge -- the calls that take a libffi ffi_type. Includes
 *                       core.h.
 * gclaunch/dlpack.h supplies the DLPack 1.x declarations (core.h includes it).
 *
 * Naming: gcl_<object>_<verb or noun>, one prefix, the object first. A name made of the object
 * and a noun reads; `find` marks a lookup by name:
 * - gcl_X_Y(x)                  accessor: returns Y itself, never fails (NULL x gives 0, NULL or
 *                               the default the comment names) and never writes gcl_last_error.
 * - gcl_X_Y(x, index, &out...)  the index-th Y of x; returns a gcl_status
 *                               (GCL_ERROR_INVALID_ARGUMENT for an index out of range).
 * - gcl_X_find_Y(x, name, &out) lookup of Y by name; returns a gcl_status (GCL_ERROR_NOT_FOUND
 *                               naming what was looked for).
 * - gcl_X_format / _path (x, buf, cap, &needed) text with snprintf's contract: writes what fits,
 *                               NUL-terminated, and the full length into *needed.
 * No name uses `get`; each thing has one way to do it.
 *
 * Conventions, for every function below unless its comment says otherwise:
 * - Fallible functions return a gcl_status. On failure, gcl_last_error() holds a message that
 *   names the parameter and the expected and actual values, and nothing was changed: output
 *   pointers keep their old value, objects keep their old state.
 * - Objects are opaque. Each has one create/destroy pair; destroy accepts NULL.
 * - Ownership: a signature is independent; a layout copies what it needs from its signature;
 *   args borrow their layout (the layout must outlive them); a module borrows the context it was
 *   loaded in and a kernel the context it was looked up for (gcl_kernel_get_on): the context does
 *   not own them, so destroy modules before the contexts they use (gcl_context_destroy does not
 *   destroy them); a module owns its kernels (gcl_module_destroy destroys them). Strings returned
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
#include "gclaunch/ffi.h"     /* the libffi bridge */

#endif /* GCLAUNCH_H */
