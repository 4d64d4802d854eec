/* gclaunch/core.h -- the CPU model: status, version, allocator, scalars, signatures, architectures,
 * layouts, argument buffers, fields, module images and their readers -- each area in its own
 * header, included here -- and the tensor-map checks and options, below. Nothing here needs a
 * driver or a GPU (lib/core implements it). Include <gclaunch/gclaunch.h> (the umbrella) or this
 * header alone; the conventions are written in gclaunch.h.
 */
#ifndef GCLAUNCH_CORE_H
#define GCLAUNCH_CORE_H

#include "gclaunch/status.h"    /* the export macro, version, status, allocator */
#include "gclaunch/signature.h" /* scalars and signatures */
#include "gclaunch/layout.h"    /* architectures and layouts */
#include "gclaunch/args.h"      /* argument buffers */
#include "gclaunch/field.h"     /* fields: paths into aggregates, setters and readers */
#include "gclaunch/image.h"     /* module images read on the CPU */

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Tensor maps (TMA descriptors) encoded from DLPack tensors
 *
 * A tensor map is 128 opaque bytes that cuTensorMapEncodeTiled writes. gclaunch encodes it from a
 * DLPack tensor straight into one element of a by-value `tensormap[N]` parameter (or into a plain
 * `tensormap` parameter), so a megakernel's descriptors are set one by one, none copied twice.
 * Dimension order: TMA counts dimensions innermost first, DLPack outermost first; TMA dimension i
 * is DLPack dimension ndim-1-i. Options are given in TMA order (box[0] goes with the last, i.e.
 * contiguous, DLPack dimension).
 * ------------------------------------------------------------------------------------------- */

#define GCL_TENSORMAP_BYTES 128
#define GCL_TENSORMAP_MAX_RANK 5

/* Element types; the values are CUtensorMapDataType's (checked against cuda.h at build time).
 * DLPack dtypes map by width: int8/uint8/bool/float8 -> U8, int16/uint16 -> U16 (TMA moves bytes;
 * only the NaN fill cares about floats), int32 -> I32, uint32 -> U32, int64 -> I64,
 * uint64 -> U64, float16 -> F16, bfloat16 -> BF16, float32 -> F32, float64 -> F64. */
typedef enum gcl_tensormap_type {
  GCL_TENSORMAP_U8 = 0, GCL_TENSORMAP_U16 = 1, GCL_TENSORMAP_U32 = 2, GCL_TENSORMAP_I32 = 3,
  GCL_TENSORMAP_U64 = 4, GCL_TENSORMAP_I64 = 5, GCL_TENSORMAP_F16 = 6, GCL_TENSORMAP_F32 = 7,
  GCL_TENSORMAP_F64 = 8, GCL_TENSORMAP_BF16 = 9
} gcl_tensormap_type;

/* CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill. */
enum { GCL_TENSORMAP_INTERLEAVE_NONE = 0, GCL_TENSORMAP_INTERLEAVE_16B = 1,
       GCL_TENSORMAP_INTERLEAVE_32B = 2 };
enum { GCL_TENSORMAP_SWIZZLE_NONE = 0, GCL_TENSORMAP_SWIZZLE_32B = 1, GCL_TENSORMAP_SWIZZLE_64B = 2,
       GCL_TENSORMAP_SWIZZLE_128B = 3 };
enum { GCL_TENSORMAP_L2_NONE = 0, GCL_TENSORMAP_L2_64B = 1, GCL_TENSORMAP_L2_128B = 2,
       GCL_TENSORMAP_L2_256B = 3 };
enum { GCL_TENSORMAP_OOB_ZERO = 0, GCL_TENSORMAP_OOB_NAN = 1 /* NAN_REQUEST_ZERO_FMA, floats */ };

/* im2col mode (cuTensorMapEncodeIm2col), for convolutions over a channels-last tensor: DLPack
 * shape [N, W, C] (rank 3), [N, H, W, C] (rank 4) or [N, D, H, W, C] (rank 5), i.e. TMA order
 * C, W, H, D, N. One load (cp.async.bulk.tensor...im2col) fetches `pixels` pixels of `channels`
 * channels each, walking W, then H, D and N inside the bounding box whose corners are `lower` and
 * `upper` (offsets from the tensor's first and last pixel of each spatial dimension, innermost
 * first: W, H, D; for a convolution lower = -padding and upper = padding - (filter - 1) *
 * dilation), shifted by the load's im2col offsets (the filter tap); pixels outside the tensor
 * read as the out-of-bounds fill. */
typedef struct gcl_tensormap_im2col {
  uint32_t pixels;    /* pixelsPerColumn: 1 ... 1024; 0 = tiled mode (the default) */
  uint32_t channels;  /* channelsPerPixel: 1 ... 256 */
  int32_t lower[3];   /* pixelBoxLowerCorner per spatial dimension (W, H, D); entries past the
                         tensor's rank - 2 spatial dimensions are ignored. Range: +-2^15 for rank
                         3, [-128, 127] for rank 4, [-16, 15] for rank 5. The box must hold a
                         pixel: lower[i] < size + upper[i], the sum in 32 bits signed, as the
                         driver computes it (measured); with interleave the driver takes the
                         size of the dimension one further in (TMA dimension i, not i + 1) */
  int32_t upper[3];   /* pixelBoxUpperCorner, same ranges */
} gcl_tensormap_im2col;

typedef struct gcl_tensormap_options {
  uint32_t box[GCL_TENSORMAP_MAX_RANK];  /* box size per TMA dimension, 1 ... 256; required.
                                            Entries at or beyond the tensor's rank are ignored. */
  uint32_t element_strides[GCL_TENSORMAP_MAX_RANK]; /* 1 ... 8; 0 is taken as 1 */
  int interleave;                        /* GCL_TENSORMAP_INTERLEAVE_* */
  int swizzle;                           /* GCL_TENSORMAP_SWIZZLE_* */
  int l2_promotion;                      /* GCL_TENSORMAP_L2_* */
  int oob_fill;                          /* GCL_TENSORMAP_OOB_* */
  int store;    /* nonzero: the map will be a TMA store destination (cp.async.bulk.tensor
                   global.shared). TMA stores write whole 16-byte chunks, so a box reaching the end
                   of a row whose innermost extent (dims[0] * element size) is not a multiple of 16
                   bytes also overwrites the bytes after the row up to the next 16-byte boundary
                   (padding or another tensor's data) with the box's contents there. The driver
                   encodes such maps silently; with store set they are refused. Loads are fine. */
  gcl_tensormap_im2col im2col; /* im2col.pixels > 0: an im2col map (box[] is then ignored;
                                  element_strides apply) */
  uint32_t reserved[8];        /* must be zero: room for new fields (see gcl_launch_config) */
} gcl_tensormap_options;

/* The arguments cuTensorMapEncodeTiled is called with, in TMA order. */
typedef struct gcl_tensormap_desc {
  gcl_tensormap_type type;
  uint32_t rank;
  uint32_t element_bytes;
  uint64_t address;                                 /* data + byte_offset */
  uint64_t dims[GCL_TENSORMAP_MAX_RANK];
  uint64_t strides[GCL_TENSORMAP_MAX_RANK - 1];     /* bytes, of TMA dimensions 1 ... rank-1 */
  uint32_t box[GCL_TENSORMAP_MAX_RANK];
  uint32_t element_strides[GCL_TENSORMAP_MAX_RANK];
  uint32_t box_bytes;       /* bytes one box transfers (the mbarrier transaction count); im2col:
                               pixels * channels * element_bytes */
  int interleave, swizzle, l2_promotion, oob_fill;
  gcl_tensormap_im2col im2col; /* pixels 0: tiled (cuTensorMapEncodeTiled, box[] used); else
                                  cuTensorMapEncodeIm2col with these, unused corners zeroed */
} gcl_tensormap_desc;

/* Checks tensor t and options against every rule of cuTensorMapEncodeTiled (or Im2col) that
 * gclaunch knows, documented or not, in one pass without the driver (docs/tensormap-rules.md
 * lists them with their sources): device type CUDA or CUDA managed; rank 1-5; innermost
 * dimension contiguous; address after byte_offset (NULL data is address 0) 16-byte aligned, 32
 * with 32-byte interleave, and below 2^57 (the driver's bound, measured); strides 0 or
 * multiples of 16 (32) below 2^40; dims 1 ... 2^32; box 1-256 with inner box bytes a multiple
 * of 16 and within the swizzle span, and element size x the product of floor(box / element
 * stride) at most 228 KiB (the driver's limit, measured on the H200);
 * element strides 1-8; interleave, swizzle, L2 and fill values and their combinations; with
 * options->store, an innermost extent in bytes that is a multiple of 16. With
 * options->im2col.pixels > 0 the cuTensorMapEncodeIm2col ones instead of the box's: rank 3-5,
 * pixels 1-1024, channels 1-256 with channels * element size a multiple of 16 and within the
 * swizzle span, pixels x channels x element size at most 228 KiB, corners within their rank's
 * range leaving the bounding box at least one pixel per spatial dimension. A size-1 dimension's stride is
 * irrelevant and replaced by a valid one. On success fills *desc when desc is not NULL.
 * GCL_ERROR_TENSOR naming "tensor", the DLPack dimension or option, the value and the limit;
 * GCL_ERROR_INVALID_ARGUMENT for NULL t or options or a bad enum value. Thread-safe. */
GCL_API gcl_status gcl_tensormap_check(const DLTensor *t, const gcl_tensormap_options *options,
                                       gcl_tensormap_desc *desc);

#ifdef __cplusplus
}
#endif
#endif /* GCLAUNCH_CORE_H */
