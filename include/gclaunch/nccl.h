/* gclaunch: NCCL's device communicator (ncclDevComm) checked against the kernel's NCCL.
 *
 * NCCL 2.28+ kernels take the communicator BY VALUE (`ncclDevComm comm`, declared `bytes(N)
 * align(8)` with N = sizeof(ncclDevComm) of the kernel's headers). Its layout changes between
 * NCCL releases, and a kernel built with one NCCL launched with a communicator that another NCCL
 * made reads the wrong fields silently (the size may even agree). gcl_args_set_nccl_devcomm sets
 * the parameter only when the communicator's layout is the one the kernel was compiled for:
 *
 *  - the size must equal N (as gcl_args_set_field);
 *  - NCCL 2.30 and later write a versioned communicator (magic 0xcafebeef at offset 0, then the
 *    NCCL_VERSION_CODE of the headers the host was compiled with, whose layout the library
 *    writes): that version's layout generation must be the kernel's;
 *  - an unversioned communicator made by a library older than 2.30 is in that library's own
 *    layout: its generation must be the kernel's; a kernel of 2.30+ headers refuses it (it
 *    expects the magic). One made by a 2.30+ library for older headers is in those headers'
 *    layout, which the bytes do not tell: only the size is checked then.
 *
 * Layout generations, from NCCL's own history (the device structs of each release tag, and the
 * compatibility table of 2.30.7, src/dev_runtime.cc): 2.28.3 ... 2.28.6 | 2.28.7 ... 2.28.x |
 * 2.29.0 ... 2.29.4 | 2.29.5 ... 2.29.x | 2.30.0 and later (one versioned layout so far). Two
 * versions outside that table share a layout only if they are equal. docs/multigpu.md. */
#ifndef GCLAUNCH_NCCL_H
#define GCLAUNCH_NCCL_H

#include "gclaunch/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GCL_NCCL_API_MAGIC 0xcafebeefu /* ncclDevComm.magic of a versioned communicator */

/* One communicator as the host has it. */
typedef struct gcl_nccl_devcomm {
  const void *bytes;   /* what ncclDevCommCreate filled (the host's ncclDevComm) */
  size_t size;         /* sizeof(ncclDevComm) of the host's headers */
  int runtime_version; /* ncclGetVersion() of the library that made it */
  int kernel_version;  /* NCCL_VERSION_CODE of the headers the kernel was compiled with */
} gcl_nccl_devcomm;

/* Sets the bytes(N) field (a parameter, or a struct member) to the communicator after the
 * checks above. GCL_ERROR_INVALID_ARGUMENT for NULL args, field, comm or comm->bytes, and for a
 * version that is no NCCL_VERSION_CODE of a release with the device API (2.28.3 = 22803 or
 * later); GCL_ERROR_TYPE_MISMATCH naming the field, both versions and both layouts when they
 * differ, and for a field that is not bytes(N) or a size other than N. Nothing changes on
 * failure. */
GCL_API gcl_status gcl_args_set_nccl_devcomm(gcl_args *args, const gcl_field *field,
                                             const gcl_nccl_devcomm *comm);

/* The first NCCL_VERSION_CODE of version's layout generation (22803, 22807, 22900, 22905,
 * 23000), or version itself outside the table; 0 for a version before the device API. */
GCL_API int gcl_nccl_layout_generation(int version);

/* Index-addressed: parameter `index`. */
static inline gcl_status gcl_args_set_nccl_devcomm_param(gcl_args *args, size_t index,
                                                         const gcl_nccl_devcomm *comm) {
  gcl_field f;
  if (args) {
    gcl_status s = gcl_layout_param_field(gcl_args_layout(args), index, &f);
    if (s != GCL_OK) return s;
  }
  return gcl_args_set_nccl_devcomm(args, args ? &f : NULL, comm);
}

#ifdef __cplusplus
}
#endif

#endif
