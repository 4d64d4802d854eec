/* The driver's encode of a checked description into a map, binding the context and trying once
 * more when another context (or none) was current. A leaf of the tensor-map files: tmap_driver.c
 * (encodes and plans) and tmap_patch.c (the per-device proof of the re-point patch) both call it,
 * and it calls neither. */
#include "cuda_internal.h"
#include "tmap.h"

#include <stdint.h>

/* The refused encode's second chance (cuda_internal.h). */
gcl_status gcl__tmap_encode_retry(gcl_context *ctx, const gcl_tensormap_desc *d, CUtensorMap *m,
                                  CUresult *rc) {
  CUcontext cur = NULL;
  if (gcl__cu.cuCtxGetCurrent(&cur) != CUDA_SUCCESS || cur != ctx->ctx) {
    gcl_status s = gcl__context_bind(ctx); /* no context, or another device's, was current */
    if (s != GCL_OK) return s;
    *rc = gcl__tmap_encode_desc(d, m);
  }
  return GCL_OK;
}

/* cuTensorMapEncode* of d into m (cuda_internal.h); m may be written also on failure (the
 * plan's scratch, or a caller's temporary). */
gcl_status gcl__tmap_encode_bound(gcl_context *ctx, const gcl_tensormap_desc *d, CUtensorMap *m,
                                  CUresult *rc) {
  *rc = gcl__tmap_encode_desc(d, m);
  return *rc == CUDA_SUCCESS ? GCL_OK : gcl__tmap_encode_retry(ctx, d, m, rc);
}
