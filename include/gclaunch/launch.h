/* gclaunch/launch.h -- launching a kernel with its args (gcl_launch_config, gcl_launch) and the
 * launch-safety checks made before the driver sees a launch. Included by gclaunch/runtime.h; the
 * conventions are written in gclaunch.h. */
#ifndef GCLAUNCH_LAUNCH_H
#define GCLAUNCH_LAUNCH_H

#include "gclaunch/module.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif
#endif /* GCLAUNCH_LAUNCH_H */
