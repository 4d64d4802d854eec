/* Tensor maps on the driver edge: cuTensorMapEncodeTiled or cuTensorMapEncodeIm2col from a
 * checked description (lib/core/tmap.c), written straight into one element of a tensormap[N]
 * parameter. */
#include "cuda_internal.h"
#include "tmap.h"

#include <stdio.h>
#include <string.h>

/* lib/core keeps its own copies of the driver's enum values; they must not drift. */
#define GCL_SAME(a, b) _Static_assert((int)(a) == (int)(b), #a " != " #b)
GCL_SAME(GCL_TENSORMAP_U8, CU_TENSOR_MAP_DATA_TYPE_UINT8);
GCL_SAME(GCL_TENSORMAP_U16, CU_TENSOR_MAP_DATA_TYPE_UINT16);
GCL_SAME(GCL_TENSORMAP_U32, CU_TENSOR_MAP_DATA_TYPE_UINT32);
GCL_SAME(GCL_TENSORMAP_I32, CU_TENSOR_MAP_DATA_TYPE_INT32);
GCL_SAME(GCL_TENSORMAP_U64, CU_TENSOR_MAP_DATA_TYPE_UINT64);
GCL_SAME(GCL_TENSORMAP_I64, CU_TENSOR_MAP_DATA_TYPE_INT64);
GCL_SAME(GCL_TENSORMAP_F16, CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
GCL_SAME(GCL_TENSORMAP_F32, CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
GCL_SAME(GCL_TENSORMAP_F64, CU_TENSOR_MAP_DATA_TYPE_FLOAT64);
GCL_SAME(GCL_TENSORMAP_BF16, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
GCL_SAME(GCL_TENSORMAP_INTERLEAVE_NONE, CU_TENSOR_MAP_INTERLEAVE_NONE);
GCL_SAME(GCL_TENSORMAP_INTERLEAVE_16B, CU_TENSOR_MAP_INTERLEAVE_16B);
GCL_SAME(GCL_TENSORMAP_INTERLEAVE_32B, CU_TENSOR_MAP_INTERLEAVE_32B);
GCL_SAME(GCL_TENSORMAP_SWIZZLE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE);
GCL_SAME(GCL_TENSORMAP_SWIZZLE_32B, CU_TENSOR_MAP_SWIZZLE_32B);
GCL_SAME(GCL_TENSORMAP_SWIZZLE_64B, CU_TENSOR_MAP_SWIZZLE_64B);
GCL_SAME(GCL_TENSORMAP_SWIZZLE_128B, CU_TENSOR_MAP_SWIZZLE_128B);
GCL_SAME(GCL_TENSORMAP_L2_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE);
GCL_SAME(GCL_TENSORMAP_L2_64B, CU_TENSOR_MAP_L2_PROMOTION_L2_64B);
GCL_SAME(GCL_TENSORMAP_L2_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
GCL_SAME(GCL_TENSORMAP_L2_256B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
GCL_SAME(GCL_TENSORMAP_OOB_ZERO, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
GCL_SAME(GCL_TENSORMAP_OOB_NAN, CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA);
GCL_SAME(GCL_TENSORMAP_BYTES, sizeof(CUtensorMap));
GCL_SAME(GCL_TENSORMAP_MAX_RANK, 5);
_Static_assert(sizeof(cuuint64_t) == sizeof(uint64_t) && sizeof(cuuint32_t) == sizeof(uint32_t),
               "driver integer types");
_Static_assert(sizeof(int) == sizeof(int32_t), "im2col corners are passed as int arrays");
_Static_assert(_Alignof(CUtensorMap) >= 64, "CUtensorMap must be 64-byte aligned (build as C11)");
#undef GCL_SAME

/* Checks that a kDLCUDA tensor lives on the context's device and that the device has TMA. */
static gcl_status check_device(const gcl_context *ctx, const DLTensor *t, const char *who) {
  if (ctx->sm < 90)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT,
                     "%s: device %d is sm_%d: tensor maps need sm_90 or later", who, ctx->device,
                     ctx->sm);
  if (t->device.device_type == kDLCUDA && t->device.device_id != ctx->device)
    return gcl__fail(GCL_ERROR_TENSOR, "%s: tensor is on CUDA device %d, the context on device %d",
                     who, (int)t->device.device_id, ctx->device);
  return GCL_OK;
}

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

/* Translates, checks and encodes into *map (written only on success). */
static gcl_status encode(gcl_context *ctx, const DLTensor *t, const gcl_tensormap_options *o,
                         const char *who, CUtensorMap *map) {
  gcl_tensormap_desc d;
  gcl_status s = gcl__tmap_translate(t, o, who, &d);
  if (s != GCL_OK) return s;
  if ((s = gcl__cu_load()) != GCL_OK || (s = check_device(ctx, t, who)) != GCL_OK ||
      (s = gcl__context_bind(ctx)) != GCL_OK)
    return s;
  CUtensorMap m;
  CUresult rc = encode_desc(&d, &m);
  if (rc != CUDA_SUCCESS && d.im2col.pixels)
    return gcl__cu_fail(rc, "%s: cuTensorMapEncodeIm2col(%s, rank %u, dims[0] %llu, %u pixels of "
                        "%u channels, lower W %d, upper W %d)", who, gcl__tmap_type_name(d.type),
                        d.rank, (unsigned long long)d.dims[0], d.im2col.pixels,
                        d.im2col.channels, (int)d.im2col.lower[0], (int)d.im2col.upper[0]);
  if (rc != CUDA_SUCCESS)
    return gcl__cu_fail(rc, "%s: cuTensorMapEncodeTiled(%s, rank %u, dims[0] %llu, box[0] %u, "
                        "box %u bytes)", who, gcl__tmap_type_name(d.type), d.rank,
                        (unsigned long long)d.dims[0], d.box[0], d.box_bytes);
  gcl__fault_note_tensormaps(); /* a later ILLEGAL_INSTRUCTION names the TMA rule */
  *map = m;
  return GCL_OK;
}

gcl_status gcl_tensormap_encode(gcl_context *ctx, const DLTensor *t,
                                const gcl_tensormap_options *options, void *map) {
  if (!ctx) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "ctx: expected a context, got NULL");
  if (!map || (uintptr_t)map % 64u)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "map: expected a 64-byte aligned pointer, got %p",
                     map);
  CUtensorMap m;
  gcl_status s = encode(ctx, t, options, "tensor", &m);
  if (s == GCL_OK) memcpy(map, &m, sizeof m);
  return s;
}

/* Which setter parameter `index` takes: element of a tensormap[N] (1), whole 128-byte
 * tensormap or raw bytes (0). Names the parameter in who. */
static gcl_status tensormap_slot(const gcl_layout *layout, size_t index, size_t element,
                                 char *who, size_t cap, bool *is_element) {
  gcl_param_info p;
  gcl_status s = gcl_layout_param_info(layout, index, &p);
  if (s != GCL_OK) return s;
  char label[96];
  gcl__param_label(label, sizeof label, index, p.name);
  *is_element = p.kind == GCL_PARAM_ARRAY;
  if (*is_element && p.elem_kind == GCL_PARAM_TENSORMAP) {
    snprintf(who, cap, "%s element %zu", label, element);
    if (element >= p.count)
      return gcl__fail(GCL_ERROR_INVALID_ARGUMENT,
                       "%s: element %zu is out of range (tensormap[%zu])", label, element, p.count);
    return GCL_OK;
  }
  snprintf(who, cap, "%s", label);
  bool whole = p.kind == GCL_PARAM_TENSORMAP ||
               (p.kind == GCL_PARAM_BYTES && p.size == GCL_TENSORMAP_BYTES);
  if (!whole || *is_element)
    return gcl__fail(GCL_ERROR_TYPE_MISMATCH,
                     "%s: expected a tensormap or tensormap[N] parameter, got one of %zu bytes",
                     label, p.size);
  if (element != 0)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT,
                     "%s: element %zu of a single tensormap: expected element 0", label, element);
  return GCL_OK;
}

gcl_status gcl_args_set_tensormap(gcl_args *args, gcl_context *ctx, size_t index, size_t element,
                                  const DLTensor *t, const gcl_tensormap_options *options) {
  if (!args) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "args: expected arguments, got NULL");
  if (!ctx) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "ctx: expected a context, got NULL");
  char who[160];
  bool is_element = false;
  gcl_status s =
      tensormap_slot(gcl_args_layout(args), index, element, who, sizeof who, &is_element);
  if (s != GCL_OK) return s;
  CUtensorMap m;
  if ((s = encode(ctx, t, options, who, &m)) != GCL_OK) return s;
  return is_element ? gcl_args_set_element(args, index, element, &m, sizeof m)
                    : gcl_args_set(args, index, &m, sizeof m);
}
