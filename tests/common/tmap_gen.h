/* Random tensor-map descriptions for the tests and tools that need them (issue 36): one
 * generator, written against the public header only.
 *
 *   tmap_gen_valid  a description every rule gclaunch knows accepts (documented, reported by
 *                   peers, measured: docs/tensormap-rules.md), tiled or im2col, any rank, type,
 *                   interleave, swizzle, L2 promotion, fill, element strides, size-1 and huge
 *                   dimensions, row-major or permuted padded strides, aligned views.
 *   tmap_gen_edge   a valid one with one parameter (its `aim`) pushed to a value on either side of
 *                   one of its limits: rank, dims, strides, address, box, inner box bytes, swizzle
 *                   span, box bytes, element strides, interleave, swizzle, L2, fill, dtype, device,
 *                   pixels, channels, corners, the im2col bounding box, address bits (aligned
 *                   data pointers from 2^12 to the top of 64 bits); or, one time in five,
 *                   "uniform": every argument drawn on its own, none derived from a valid case
 *                   (about a quarter pass), for the joint corners aim-by-aim cases miss.
 *   tmap_gen_raw    the arguments cuTensorMapEncodeTiled / Im2col gets for a description, made
 *                   without any check (TMA order, strides in bytes, a size-1 dimension's stride
 *                   replaced as gclaunch replaces it), for a differential against the driver.
 *
 * Deterministic for a seed: the seed a caller prints reproduces every case. */
#ifndef GCL_TMAP_GEN_H
#define GCL_TMAP_GEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gclaunch/gclaunch.h"

typedef struct tmap_gen { uint64_t state; } tmap_gen;

/* Seeds g (any value; 0 is replaced). */
void tmap_gen_seed(tmap_gen *g, uint64_t seed);
/* 0 ... n-1 (n >= 1). */
uint32_t tmap_gen_below(tmap_gen *g, uint32_t n);

typedef struct tmap_case {
  int64_t shape[6], strides[6]; /* 6: a rank-6 case for the rank limit */
  DLTensor t;                   /* t.shape / t.strides point into this case (or strides NULL) */
  gcl_tensormap_options o;
  const char *aim;              /* "valid", or the limit the case was pushed to: "box", ... */
} tmap_case;

/* Copies src into dst, re-pointing dst->t's shape and strides at dst's arrays. */
void tmap_case_copy(tmap_case *dst, const tmap_case *src);
/* A valid description whose view starts at mem (16-byte aligned, or 32 with 32-byte interleave)
 * plus a random aligned byte_offset below 4 KiB; im2col selects the mode. */
void tmap_gen_valid(tmap_gen *g, tmap_case *c, uint64_t mem, bool im2col);
/* A valid description of rank 3-5 with 32-byte interleave, a swizzle (32, 64 or 128 bytes) and
 * an inner box (box[0], or im2col's channels) of 1 ... 256 elements, over and under 128 bytes
 * and the swizzle span: where the driver refused maps gclaunch accepted (issue 50). */
void tmap_gen_interleave32(tmap_gen *g, tmap_case *c, uint64_t mem, bool im2col);
/* A valid description (tiled or im2col at random) with one aim pushed to a limit. */
void tmap_gen_edge(tmap_gen *g, tmap_case *c, uint64_t mem);
/* The aims tmap_gen_edge picks from, for tallies: tmap_gen_aims()[0 ... *count - 1]. */
const char *const *tmap_gen_aims(size_t *count);

/* The driver's arguments for c, in TMA order, without checks. */
typedef struct tmap_raw {
  int type;                     /* CUtensorMapDataType */
  uint32_t rank;
  uint64_t address;
  uint64_t dims[6], strides[5];
  uint32_t box[6], element_strides[6];
  int interleave, swizzle, l2_promotion, oob_fill;
  bool im2col;
  int32_t lower[3], upper[3];
  uint32_t channels, pixels;
} tmap_raw;
/* Fills *r and returns NULL, or returns why the description has no driver arguments at all (no
 * element type for the dtype, rank outside 1 ... 6, NULL shape, data + byte_offset
 * past 2^64, a device that is not CUDA, an innermost stride other than 1, which the driver never
 * gets): the rules that only gclaunch can apply. */
const char *tmap_gen_raw(const tmap_case *c, tmap_raw *r);

/* One line that reproduces c (as C initialisers): dtype, shape, strides, byte_offset, options. */
void tmap_case_format(const tmap_case *c, char *buf, size_t cap);

#endif
