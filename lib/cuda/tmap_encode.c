/* The driver's encode of a checked description into a map, binding the context and trying once
 * more when another context (or none) was current. A leaf of the tensor-map files: tmap_driver.c
 * (encodes and plans) and tmap_patch.c (the per-device proof of the re-point patch) both call it,
 * and it calls neither. */
#include "cuda_internal.h"
#include "tmap.h"

#include <stdint.h>

/* cuTensorMapEncodeTiled or, for im2col.pixels > 0, cuTensorMapEncodeIm2col. */
static CUresult encode_desc(const gcl_tensormap_desc *d, CUtensorMap *m) {
  void *address = (void *)(uintptr_t)d->address;
  if (!d->im2col.pixels)
    return gcl__cu.cuTensorMapEncodeTiled(
        m, (CUtensorMapDataType)d->type, d->rank, address, (const cuuint64_t *)d->dims,
        (const cuuint64_t *)d->strides, (const cuuint32_t *)d->box,
        (const cuuint32_t *)d->element_strides, (CUtensorMapInterleave)d->interleave,
        (CUtensorMapSwizzle)d->swizzle, (CUtensorMapL2promotion)d->l2_promotion,
        (CUtensorMapFloatOOBfill)d->oob_fill);
  return gcl__cu.cuTensorMapEncodeIm2col(
      m, (CUtensorMapDataType)d->type, d->rank, address, (const cuuint64_t *)d->dims,
      (const cuuint64_t *)d->strides, (const int *)d->im2col.lower, (const int *)d->im2col.upper,
      d->im2col.channels, d->im2col.pixels, (const cuuint32_t *)d->element_strides,
      (CUtensorMapInterleave)d->interleave, (CUtensorMapSwizzle)d->swizzle,
      (CUtensorMapL2promotion)d->l2_promotion, (CUtensorMapFloatOOBfill)d->oob_fill);
}

/* cuTensorMapEncode* of d into m (cuda_internal.h); m may be written also on failure (the
 * plan's scratch, or a caller's temporary). */
gcl_status gcl__tmap_encode_bound(gcl_context *ctx, const gcl_tensormap_desc *d, CUtensorMap *m,
                                  CUresult *rc) {
  *rc = encode_desc(d, m);
  CUcontext cur = NULL;
  if (*rc != CUDA_SUCCESS && (gcl__cu.cuCtxGetCurrent(&cur) != CUDA_SUCCESS || cur != ctx->ctx)) {
    gcl_status s = gcl__context_bind(ctx); /* no context, or another device's, was current */
    if (s != GCL_OK) return s;
    *rc = encode_desc(d, m);
  }
  return GCL_OK;
}
