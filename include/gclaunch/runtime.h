/* gclaunch/runtime.h -- the runtime edge: NVRTC, the driver (opened at run time, never linked),
 * devices, contexts, memory, modules, kernels, launch, streams, events, occupancy, graphs, several
 * GPUs -- each area in its own header, included here -- and, at its end, gclaunch/tensormap.h,
 * the tensor-map calls that need a context (encode, set and re-point maps in args and tables).
 * lib/cuda implements it; without a driver every call returns a status. The conventions are
 * written in gclaunch.h.
 */
#ifndef GCLAUNCH_RUNTIME_H
#define GCLAUNCH_RUNTIME_H

#include "gclaunch/core.h"     /* the CPU model */
#include "gclaunch/context.h"  /* NVRTC, driver, devices, contexts */
#include "gclaunch/module.h"   /* modules and kernels */
#include "gclaunch/launch.h"   /* launch and its safety checks */
#include "gclaunch/stream.h"   /* streams, events, memory and copies, occupancy */
#include "gclaunch/graph.h"    /* CUDA graphs */
#include "gclaunch/multigpu.h" /* several GPUs: NVSHMEM PEs, symmetric memory, peer maps */

/* Tensor maps encoded by the driver, tensor maps in args and tensor-map tables: since 0.4 in
 * gclaunch/tensormap.h (included here, so 0.3 programs keep compiling). */
#include "gclaunch/tensormap.h" /* the tensor-map calls (0.3 declared them here) */

#endif /* GCLAUNCH_RUNTIME_H */
