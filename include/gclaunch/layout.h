/* gclaunch/layout.h -- the architectures gclaunch knows, and layouts: where each parameter sits in
 * the kernel's parameter buffer on one architecture (CPU only). Included by gclaunch/core.h; the
 * conventions are written in gclaunch.h. */
#ifndef GCLAUNCH_LAYOUT_H
#define GCLAUNCH_LAYOUT_H

#include "gclaunch/signature.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Layout (CPU only): where each parameter sits in the kernel's parameter buffer on one SM arch.
 * ------------------------------------------------------------------------------------------- */

/* What gclaunch knows of a GPU architecture: one row of its table of architectures (the
 * architectures nvcc/NVRTC 13.0 build; the layout engine, the cubin reader and the gclaunch tool
 * all read it). The caller allocates it; it grows in `reserved`, which the library zeroes. */
typedef struct gcl_arch_info {
  int sm;                     /* compute capability x 10: 90 for sm_90 */
  unsigned param_base;        /* constant bank 0 offset where ptxas starts the parameter area */
  bool sass_wait_known;       /* griddepcontrol.wait is read from this architecture's SASS
                               * (a cubin kernel's waits are known: docs/launchsafety.md) */
  size_t shared_optin_bytes;  /* most shared memory per block, opted in; 0: not known here */
  uint64_t reserved[4];
} gcl_arch_info;
/* The row of architecture sm into *info. GCL_ERROR_NOT_FOUND for an architecture gclaunch does
 * not know (the message lists the known ones), GCL_ERROR_INVALID_ARGUMENT for NULL info. CPU
 * only, thread-safe. */
GCL_API gcl_status gcl_arch_query(int sm, gcl_arch_info *info);
/* The known architectures in increasing order: the first min(count, cap) into sms (NULL with
 * cap 0 to ask the count); returns the count. Thread-safe. */
GCL_API size_t gcl_arch_list(int *sms, size_t cap);

typedef struct gcl_layout gcl_layout;

#define GCL_PARAM_LIMIT 32764 /* bytes of parameters per kernel (CUDA >= 12.1, driver >= R530) */

/* Device-side parameter offsets for architecture sm: exactly the architectures nvcc/NVRTC 13.0
 * build (75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121; unit_differential checks every
 * one against NVRTC's cubins with alignments up to 4096, and that the list equals NVRTC's). The
 * placement rule depends on the architecture's parameter base (docs/facts.md, lib/core/layout.c):
 * from 0x160 (sm_75-89) and 0x210 (sm_90) the absolute constant-bank address is aligned, from
 * 0x380 (sm_100 and later) and 0x1a80 (sm_75-89 past 4352 bytes) the offset; they differ only
 * for alignments above 128. GCL_ERROR_LAYOUT_TOO_LARGE
 * when the parameters exceed GCL_PARAM_LIMIT laid out from offset 0 (what ptxas checks) or as
 * placed on the device for sm (what the driver checks when it loads the image: on sm_90 a layout
 * may fit the first and not the second); the message says by how many bytes;
 * GCL_ERROR_INVALID_ARGUMENT for an unknown sm. The layout copies what it needs from sig.
 * Thread-safe. */
GCL_API gcl_status gcl_layout_create(const gcl_signature *sig, int sm, gcl_layout **out);
/* A layout of untyped byte parameters at given offsets (as the driver reports them). Parameters
 * must not overlap and must end within GCL_PARAM_LIMIT. Thread-safe. */
GCL_API gcl_status gcl_layout_create_raw(size_t count, const size_t *offsets, const size_t *sizes,
                                         int sm, gcl_layout **out);
GCL_API void gcl_layout_destroy(gcl_layout *layout);
GCL_API size_t gcl_layout_count(const gcl_layout *layout);
GCL_API int gcl_layout_sm(const gcl_layout *layout);
/* Offset, size and alignment of parameter index; any output pointer may be NULL. Reads.
 * Everything else about a parameter (name, kind, element type, ...) is in its field:
 * gcl_layout_param_field(layout, index, &f) and f.info; a parameter by name is
 * gcl_layout_field(layout, name, &f), its index f.param. */
GCL_API gcl_status gcl_layout_param(const gcl_layout *layout, size_t index, size_t *offset,
                                    size_t *size, size_t *align);
/* Exact buffer bytes: max(offset + size); 0 for NULL or no parameters. Reads. */
GCL_API size_t gcl_layout_size(const gcl_layout *layout);

#ifdef __cplusplus
}
#endif
#endif /* GCLAUNCH_LAYOUT_H */
