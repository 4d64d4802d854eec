/* Random tensor-map descriptions (tmap_gen.h). Public header only. */
#include "tmap_gen.h"

#include <stdio.h>
#include <string.h>

#include "test_rng.h"

#define STRIDE_LIMIT (1ull << 40)
#define DIM_MAX (1ull << 32)
#define BOX_LIMIT_BYTES (228u * 1024u) /* element bytes x prod floor(box / element stride) */

void tmap_gen_seed(tmap_gen *g, uint64_t seed) { g->state = seed ? seed : 0x9e3779b97f4a7c15ull; }

static uint64_t next(tmap_gen *g) { return test_rng_next(&g->state); }

uint32_t tmap_gen_below(tmap_gen *g, uint32_t n) { return (uint32_t)((next(g) >> 32) % n); }
#define RND(n) tmap_gen_below(g, (uint32_t)(n))

void tmap_case_copy(tmap_case *dst, const tmap_case *src) {
  *dst = *src;
  dst->t.shape = src->t.shape ? dst->shape : NULL;
  dst->t.strides = src->t.strides ? dst->strides : NULL;
}

/* Every dtype with a tensor-map element type: ints, uints, floats, bfloat16, bool, float8. */
static const DLDataType dtypes[] = {
    {0, 8, 1},  {1, 8, 1},  {0, 16, 1}, {1, 16, 1}, {0, 32, 1}, {1, 32, 1}, {0, 64, 1},
    {1, 64, 1}, {2, 16, 1}, {2, 32, 1}, {2, 64, 1}, {4, 16, 1}, {6, 8, 1},  {8, 8, 1}};

static bool is_float(DLDataType dt) { return dt.code == 2 || dt.code == 4; }

static uint64_t round_up(uint64_t v, uint64_t m) { return (v + m - 1) / m * m; }

/* v as the driver's signed 32 bits see it */
static int64_t wrap32(uint64_t v) {
  uint32_t w = (uint32_t)v;
  return w < 0x80000000u ? (int64_t)w : (int64_t)w - 0x100000000ll;
}

static unsigned span_of(int swizzle) { return swizzle > 0 && swizzle <= 3 ? 16u << swizzle : 0u; }

/* Strides (TMA dimensions 1 ... rank-1, in bytes, multiples of align, < 2^40) for dims: padded
 * row-major, or the outer dimensions in a random order; a dimension that would reach 2^40
 * overlaps (a small stride) instead. */
static void pick_strides(tmap_gen *g, const uint64_t *dims, uint32_t rank, unsigned eb,
                         unsigned align, uint64_t *bytes) {
  uint32_t order[5] = {1, 2, 3, 4, 0};
  if (rank > 2 && RND(4) == 0)
    for (uint32_t i = rank - 2; i > 0; i--) {
      uint32_t j = RND(i + 1), tmp = order[i];
      order[i] = order[j], order[j] = tmp;
    }
  uint64_t extent = dims[0] * eb;
  for (uint32_t k = 0; k + 1 < rank; k++) {
    uint32_t i = order[k];
    uint64_t s = round_up(extent, align) + align * RND(3);
    if (s >= STRIDE_LIMIT || extent >= STRIDE_LIMIT) s = align * (1 + RND(1u << 20));
    bytes[i - 1] = s;
    extent = s * dims[i];
    if (extent / dims[i] != s) extent = STRIDE_LIMIT;
  }
}

static uint64_t pick_dim(tmap_gen *g, bool inner) {
  switch (RND(16)) {
  case 0: return 1;
  case 1: return DIM_MAX - RND(3);
  case 2: return 1 + (next(g) % DIM_MAX);
  case 3: return 1 + RND(100000);
  default: return 1 + RND(inner ? 300 : 12);
  }
}

static void pick_box(tmap_gen *g, tmap_case *c, unsigned eb, unsigned span) {
  gcl_tensormap_options *o = &c->o;
  uint32_t rank = (uint32_t)c->t.ndim, unit = 16 / eb;
  uint32_t max0 = span ? span / eb : 256;
  if (max0 > 256) max0 = 256;
  o->box[0] = unit * (1 + RND(max0 / unit));
  for (uint32_t i = 1; i < rank; i++) o->box[i] = 1 + RND(RND(4) ? 16 : 256);
  for (;;) { /* within the driver's box limit (measured on the H200) */
    uint64_t bytes = eb;
    uint32_t big = 1;
    for (uint32_t i = 0; i < rank; i++) {
      uint32_t e = o->element_strides[i] ? o->element_strides[i] : 1, b = o->box[i];
      bytes *= b / e;
      if (i && o->box[i] > o->box[big]) big = i;
    }
    if (bytes <= BOX_LIMIT_BYTES || rank == 1) break;
    o->box[big] = o->box[big] / 2 ? o->box[big] / 2 : 1;
  }
}

static void pick_im2col(tmap_gen *g, tmap_case *c, const uint64_t *dims, unsigned eb,
                        unsigned span) {
  gcl_tensormap_im2col *m = &c->o.im2col;
  uint32_t rank = (uint32_t)c->t.ndim, unit = 16 / eb;
  uint32_t maxc = span ? span / eb : 256;
  if (maxc > 256) maxc = 256;
  m->channels = unit * (1 + RND(maxc / unit));
  m->pixels = 1 + RND(RND(4) ? 256 : 1024);
  while ((uint64_t)m->pixels * m->channels * eb > BOX_LIMIT_BYTES) m->pixels /= 2; /* measured limit */
  int32_t lim = rank == 3 ? 32768 : rank == 4 ? 128 : 16;
  for (uint32_t i = 0; i + 2 < rank; i++) {
    /* lower < size + upper, the sum in signed 32 bits; with interleave the driver measures
     * corner i against TMA dimension i (measured: docs/tensormap-rules.md) */
    uint64_t d = dims[c->o.interleave ? i : i + 1];
    int32_t u = (int32_t)RND(2 * (uint32_t)lim) - lim;
    int64_t top = wrap32(d + (uint64_t)(int64_t)u) - 1;
    for (int tries = 0; top < -lim && tries < 64; tries++) /* huge sizes wrap below every lower */
      u = (int32_t)RND(2 * (uint32_t)lim) - lim, top = wrap32(d + (uint64_t)(int64_t)u) - 1;
    if (top < -lim) { /* no upper fits: the dimension shrinks to one the corners can span */
      c->shape[c->t.ndim - 1 - (int)(c->o.interleave ? i : i + 1)] = 1;
      c->t.strides = c->strides; /* compact strides would follow the new size */
      u = 0, top = 0;
    }
    if (top > lim - 1) top = lim - 1;
    m->upper[i] = u;
    m->lower[i] = (int32_t)(-lim + (int64_t)RND((uint32_t)(top + lim + 1)));
  }
}

void tmap_gen_valid(tmap_gen *g, tmap_case *c, uint64_t mem, bool im2col) {
  memset(c, 0, sizeof *c);
  c->aim = "valid";
  uint32_t rank = im2col ? 3 + RND(3) : 1 + RND(5);
  DLDataType dt = dtypes[RND(sizeof dtypes / sizeof *dtypes)];
  unsigned eb = dt.bits / 8;
  gcl_tensormap_options *o = &c->o;
  if (rank >= 3 && RND(5) == 0) o->interleave = 1 + (int)RND(2);
  o->swizzle = (int)RND(4); /* any with 32-byte interleave too: the driver takes it */
  o->l2_promotion = (int)RND(4);
  o->oob_fill = is_float(dt) ? (int)RND(2) : 0;
  for (uint32_t i = 0; i < rank; i++) o->element_strides[i] = RND(3) ? 0 : RND(9);
  unsigned align = o->interleave == 2 ? 32 : 16, span = o->interleave ? 0 : span_of(o->swizzle);
  if (o->interleave) span = span_of(o->swizzle) ? span_of(o->swizzle) : 0;
  uint64_t dims[5], bytes[4] = {0};
  for (uint32_t i = 0; i < rank; i++) dims[i] = pick_dim(g, i == 0);
  if (RND(2)) dims[0] = round_up(dims[0], align / eb) > DIM_MAX ? DIM_MAX : round_up(dims[0], align / eb);
  pick_strides(g, dims, rank, eb, align, bytes);
  c->t = (DLTensor){.data = (void *)(uintptr_t)mem, .device = {kDLCUDA, 0}, .ndim = (int)rank,
                    .dtype = dt, .shape = c->shape, .strides = c->strides,
                    .byte_offset = align * RND(4096 / align)};
  for (uint32_t i = 0; i < rank; i++) {
    int dl = (int)(rank - 1 - i);
    c->shape[dl] = (int64_t)dims[i];
    c->strides[dl] = i == 0 ? 1 : (int64_t)(bytes[i - 1] / eb);
    /* A size-1 dimension's stride is ignored where gclaunch can replace it (tmap_gen_raw). */
    bool replaceable = i == 1 || (i > 1 && bytes[i - 2] < STRIDE_LIMIT / dims[i - 1]);
    if (i > 0 && dims[i] == 1 && replaceable && RND(8) == 0) c->strides[dl] = (int64_t)RND(5) - 1;
  }
  if (RND(8) == 0) { /* compact: NULL strides, when those are valid (as gclaunch reads them) */
    uint64_t s = dims[0] * eb, prev = 0;
    bool ok = true;
    for (uint32_t i = 1; i < rank && ok; i++) {
      uint64_t sub = 0;
      bool use = false;
      if (dims[i] == 1) {
        if (i == 1) sub = round_up(dims[0] * eb, align), use = true;
        else use = prev < STRIDE_LIMIT / dims[i - 1] && (sub = prev * dims[i - 1]) < STRIDE_LIMIT;
      }
      if (use) prev = sub;
      else ok = s % align == 0 && s < STRIDE_LIMIT, prev = s;
      s = s > STRIDE_LIMIT / dims[i] ? STRIDE_LIMIT : s * dims[i];
    }
    if (ok) c->t.strides = NULL;
  }
  if (im2col) pick_im2col(g, c, dims, eb, span);
  else pick_box(g, c, eb, span);
}

/* issue 50: the driver refuses some maps with a 32-byte interleave and a swizzle that
 * gclaunch accepts (tiled f16 ranks 3 and 5, i32 rank 3, i64 rank 4, im2col i64 rank 4; inner
 * box over and under 128 bytes), and tmap_gen_valid rarely draws them: 32-byte interleave in one
 * rank-3+ case of ten, and its inner box never past the swizzle span. This one always draws them:
 * a valid description of rank 3-5 with 32-byte interleave, a swizzle of 32, 64 or 128 bytes, and
 * the inner box (box[0], or im2col's channels) of any size up to 256 elements, so its bytes fall
 * on either side of 128 and of the span. What gclaunch says of it is the question, so no rule of
 * its own decides the box. */
void tmap_gen_interleave32(tmap_gen *g, tmap_case *c, uint64_t mem, bool im2col) {
  do tmap_gen_valid(g, c, mem, im2col);
  while (c->o.interleave != GCL_TENSORMAP_INTERLEAVE_32B || c->t.ndim < 3);
  c->aim = "valid";
  gcl_tensormap_options *o = &c->o;
  unsigned eb = c->t.dtype.bits / 8, unit = 16 / eb ? 16 / eb : 1;
  o->swizzle = 1 + (int)RND(3);
  if (!im2col) {
    pick_box(g, c, eb, 0); /* span 0: box[0] up to 256 elements */
    return;
  }
  gcl_tensormap_im2col *m = &o->im2col;
  m->channels = unit * (1 + RND(256 / unit));
  while ((uint64_t)m->pixels * m->channels * eb > BOX_LIMIT_BYTES && m->pixels > 1) m->pixels /= 2;
}

static const char *const aims[] = {
    "rank", "dim", "stride", "inner stride", "address", "box", "box[0] bytes", "swizzle span",
    "box bytes", "element stride", "interleave", "swizzle", "l2 promotion", "oob fill", "dtype",
    "device", "pixels", "channels", "channel bytes", "corner", "im2col area", "overlap", "address bits", "uniform"};
enum { A_RANK, A_DIM, A_STRIDE, A_INNER, A_ADDRESS, A_BOX, A_BOX0, A_SPAN, A_BOXBYTES, A_ESTRIDE,
       A_INTERLEAVE, A_SWIZZLE, A_L2, A_OOB, A_DTYPE, A_DEVICE, A_PIXELS, A_CHANNELS, A_CHBYTES,
       A_CORNER, A_AREA, A_OVERLAP, A_ADDRBITS, A_UNIFORM, A_COUNT };

const char *const *tmap_gen_aims(size_t *count) {
  *count = A_COUNT;
  return aims;
}

static int64_t pick_of(tmap_gen *g, const int64_t *v, size_t n) { return v[RND(n)]; }
#define PICK(...) pick_of(g, (const int64_t[]){__VA_ARGS__}, sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))

/* Every argument drawn on its own, none derived from another (no valid case to start from): the
 * joint corners an aim-by-aim generator does not reach. Mostly in range, each sometimes past. */
static int64_t uniform_dim(tmap_gen *g) {
  switch (RND(12)) {
  case 0: return 1;
  case 1: return PICK(2147483647, 2147483648ll, 4294967295ll, 4294967296ll, 4294967297ll, 0, 65535,
                      65536, 65537);
  case 2: return 1 + (int64_t)RND(1u << 20);
  case 3: return 1 + (int64_t)(next(g) % DIM_MAX);
  default: return 1 + (int64_t)RND(RND(2) ? 16 : 512);
  }
}

static void tmap_gen_uniform(tmap_gen *g, tmap_case *c, uint64_t mem) {
  memset(c, 0, sizeof *c);
  c->aim = "uniform";
  gcl_tensormap_options *o = &c->o;
  bool im2col = RND(3) == 0;
  int rank = im2col ? 3 + (int)RND(3) : 1 + (int)RND(5);
  DLDataType dt = dtypes[RND(sizeof dtypes / sizeof *dtypes)];
  int64_t eb = dt.bits / 8, unit = 16 / eb;
  for (int dl = 0; dl < rank; dl++) c->shape[dl] = uniform_dim(g);
  /* strides: NULL (compact), padded in a random order of the outer dimensions, or drawn alone */
  int mode = RND(3) ? 1 + (int)RND(3) : 0;
  c->strides[rank - 1] = RND(16) ? 1 : (int64_t)RND(3);
  if (mode == 1) {
    int order[5] = {0, 1, 2, 3, 4}; /* DLPack dimensions 0 ... rank-2, innermost first */
    for (int i = rank - 2; i > 0; i--) {
      int j = (int)RND((uint32_t)i + 1), tmp = order[i];
      order[i] = order[j], order[j] = tmp;
    }
    uint64_t extent = (uint64_t)c->shape[rank - 1];
    for (int k = 0; k + 1 < rank; k++) {
      int dl = rank - 2 - order[k];
      uint64_t s = round_up(extent, (uint64_t)unit) + (uint64_t)unit * RND(3) + (RND(32) ? 0 : 1);
      c->strides[dl] = (int64_t)(s & (((uint64_t)1 << 62) - 1));
      extent = __builtin_mul_overflow(s, (uint64_t)c->shape[dl], &extent) ? (uint64_t)1 << 62 : extent;
    }
  } else if (mode >= 2) {
    for (int dl = 0; dl + 1 < rank; dl++)
      c->strides[dl] = RND(32) == 0 ? (int64_t)RND(3) - 1
                       : RND(2)    ? unit * (int64_t)(1 + RND(1u << 16))
                                   : unit * (int64_t)(1 + (next(g) % ((STRIDE_LIMIT >> 4) + 2)));
  }
  c->t = (DLTensor){.data = (void *)(uintptr_t)(RND(8) ? mem : (next(g) & ~(uint64_t)15) | 16),
                    .device = {kDLCUDA, 0}, .ndim = rank, .dtype = dt, .shape = c->shape,
                    .strides = mode ? c->strides : NULL,
                    .byte_offset = RND(4) ? 16 * (uint64_t)RND(256) : RND(4096)};
  if (mode == 0 && RND(3)) /* a compact tensor whose rows are whole 16-byte chunks */
    c->shape[rank - 1] = (int64_t)round_up((uint64_t)c->shape[rank - 1], (uint64_t)unit * 2);
  o->interleave = RND(4) || (rank < 3 && RND(4)) ? 0 : (int)RND(3);
  o->swizzle = (int)RND(4);
  o->l2_promotion = (int)RND(4);
  o->oob_fill = is_float(dt) || RND(16) == 0 ? (int)RND(2) : 0;
  for (int i = 0; i < rank; i++) {
    o->box[i] = RND(2) ? 1 + RND(256) : 1u << RND(9);
    if (i == 0 && RND(4)) o->box[0] = (uint32_t)unit << RND(5); /* whole 16-byte chunks */
    o->element_strides[i] = RND(2) ? 0 : 1 + RND(8);
  }
  if (im2col) {
    gcl_tensormap_im2col *m = &o->im2col;
    m->pixels = RND(2) ? 1 + RND(1024) : 1u << RND(11);
    m->channels = RND(4) ? (uint32_t)unit << RND(5) : RND(2) ? 1 + RND(256) : 1u << RND(9);
    int32_t lim = rank == 3 ? 32768 : rank == 4 ? 128 : 16;
    for (int i = 0; i + 2 < rank; i++) {
      uint32_t reach = RND(2) ? 4 : 2 * (uint32_t)lim;
      m->lower[i] = (int32_t)RND(reach) - (int32_t)(reach / 2);
      m->upper[i] = (int32_t)RND(reach) - (int32_t)(reach / 2);
    }
  }
}

/* The edges of the tensor: rank, shape, strides, address, dtype, device. */
static void edge_tensor(tmap_gen *g, tmap_case *c, int aim, int dl, int64_t unit) {
  int rank = c->t.ndim;
  unsigned eb = c->t.dtype.bits / 8;
  switch (aim) {
  case A_RANK: {
    int r = (int)PICK(0, 1, 2, 3, 5, 6);
    for (int k = rank; k < r; k++) c->shape[k] = 1 + RND(4), c->strides[k] = 1;
    if (r > rank) /* new innermost dims: shift so the old ones stay outer */
      for (int k = 0; k < r; k++) c->strides[k] = 1;
    c->t.strides = r > rank ? NULL : c->t.strides;
    c->t.ndim = r;
    break;
  }
  case A_DIM: c->shape[dl] = PICK(0, -1, 1, 2, (int64_t)DIM_MAX - 1, (int64_t)DIM_MAX, (int64_t)DIM_MAX + 1); break;
  case A_STRIDE:
    if (rank < 2) break;
    if (dl == rank - 1) dl = rank - 2;
    c->shape[dl] = c->shape[dl] > 1 ? c->shape[dl] : 2;
    c->strides[dl] = PICK(c->strides[dl] + 1, c->strides[dl] - 1, c->strides[dl] + unit,
                          c->strides[dl] + unit / 2, 0, -unit, (int64_t)(STRIDE_LIMIT / eb) - unit,
                          (int64_t)(STRIDE_LIMIT / eb), (int64_t)(STRIDE_LIMIT / eb) + unit, unit,
                          2 * unit);
    break;
  case A_INNER:
    c->shape[rank - 1] = PICK(1, 2, c->shape[rank - 1]);
    c->strides[rank - 1] = PICK(0, 1, 2, -1);
    break;
  case A_ADDRESS: c->t.byte_offset += (uint64_t)PICK(1, 4, 8, 16, 24, 32, 48); break;
  case A_DTYPE: {
    static const DLDataType bad[] = {{2, 32, 2}, {0, 12, 1}, {5, 64, 1}, {2, 8, 1}, {1, 1, 1},
                                     {6, 16, 1}, {3, 32, 1}, {2, 128, 1}};
    c->t.dtype = bad[RND(sizeof bad / sizeof *bad)];
    break;
  }
  case A_DEVICE: c->t.device.device_type = (DLDeviceType)PICK(1, 2, 3, 4, 13); break;
  case A_OVERLAP: /* strides smaller than the extent below them (documented example: >=) */
    if (rank < 2 || !c->t.strides) break;
    c->shape[rank - 1] = unit * (2 + RND(8));
    c->shape[rank - 2] = 2 + RND(8);
    c->strides[rank - 2] = unit * (int64_t)PICK(0, 1, 2);
    break;
  case A_ADDRBITS: /* aligned addresses anywhere in 64 bits; a third at the driver's bound, 2^57 */
    if (RND(3) == 0) { /* data + byte_offset = 2^57 - 32, - 16, + 0 or + 16 */
      uint64_t at = (UINT64_C(1) << 57) - 32 + 16 * (uint64_t)RND(4);
      c->t.data = (void *)(uintptr_t)(at - c->t.byte_offset);
      break;
    }
    c->t.data = (void *)(uintptr_t)((uint64_t)PICK(0, 1ll << 12, 1ll << 32, 1ll << 40, 1ll << 47,
                                                   1ll << 48, 1ll << 49, 1ll << 56, 1ll << 57,
                                                   1ll << 62, INT64_MIN, -4096, -256) -
                                    (RND(2) ? 0u : 4096u));
    break;
  default: break;
  }
}

/* The edges of the options: box, element strides, interleave, swizzle, L2, OOB fill. */
static void edge_options(tmap_gen *g, tmap_case *c, int aim, uint32_t i, int64_t unit) {
  gcl_tensormap_options *o = &c->o;
  int rank = c->t.ndim;
  unsigned eb = c->t.dtype.bits / 8;
  switch (aim) {
  case A_BOX: o->box[i] = (uint32_t)PICK(0, 1, 255, 256, 257); break;
  case A_BOX0: o->box[0] = (uint32_t)(unit * (1 + RND(8)) + PICK(-1, 0, 1)); break;
  case A_SPAN:
    o->swizzle = 1 + (int)RND(3);
    o->box[0] = (16u << o->swizzle) / eb + (uint32_t)PICK(0, unit, 2 * unit);
    break;
  case A_BOXBYTES: {
    static const uint32_t kib[] = {128, 224, 228, 256, 384, 511, 512, 1024};
    uint64_t want = (uint64_t)kib[RND(8)] * 1024 + (uint64_t)PICK(-16, 0, 16);
    for (int k = 0; k < rank; k++) o->element_strides[k] = 0;
    o->swizzle = 0;
    o->box[0] = (uint32_t)(256 / unit * unit);
    uint64_t have = (uint64_t)o->box[0] * eb;
    for (int k = 1; k < rank; k++) {
      uint64_t b = want / have;
      o->box[k] = (uint32_t)(b > 256 ? 256 : b ? b : 1);
      have *= o->box[k];
    }
    break;
  }
  case A_ESTRIDE:
    o->element_strides[i] = (uint32_t)PICK(0, 1, 7, 8, 9, 16);
    if (RND(2)) o->box[i] = o->element_strides[i] > 1 ? o->element_strides[i] - 1 : 1;
    break;
  case A_INTERLEAVE:
    o->interleave = (int)PICK(-1, 1, 2, 3);
    o->swizzle = (int)RND(4);
    break;
  case A_SWIZZLE: o->swizzle = (int)PICK(-1, 0, 1, 2, 3, 4); break;
  case A_L2: o->l2_promotion = (int)PICK(-1, 0, 3, 4); break;
  case A_OOB: o->oob_fill = (int)PICK(-1, 1, 2); break;
  default: break;
  }
}

/* The edges of im2col: pixels, channels, corners, the area they span. */
static void edge_im2col(tmap_gen *g, tmap_case *c, int aim, int64_t unit) {
  gcl_tensormap_options *o = &c->o;
  int rank = c->t.ndim;
  unsigned eb = c->t.dtype.bits / 8;
  switch (aim) {
  case A_PIXELS: o->im2col.pixels = (uint32_t)PICK(1, 2, 1023, 1024, 1025, 4096); break;
  case A_CHANNELS: o->im2col.channels = (uint32_t)PICK(0, 1, 255, 256, 257); o->swizzle = 0; break;
  case A_CHBYTES:
    o->im2col.channels = (uint32_t)(unit * (1 + RND(4)) + PICK(-1, 0, 1));
    if (RND(2)) {
      o->swizzle = 1 + (int)RND(3);
      o->im2col.channels = (16u << o->swizzle) / eb + (uint32_t)PICK(0, unit);
    }
    break;
  case A_CORNER: {
    int32_t lim = rank == 3 ? 32768 : rank == 4 ? 128 : 16;
    int32_t v = (int32_t)PICK(-lim - 1, -lim, lim - 1, lim);
    uint32_t k = RND((uint32_t)rank - 2);
    if (RND(2)) o->im2col.lower[k] = v; else o->im2col.upper[k] = v;
    break;
  }
  case A_AREA: {
    /* size + upper - lower = want (the sum in signed 32 bits), with the corners in range; the
     * size is that of the dimension the driver pairs with corner k (one lower with interleave) */
    uint32_t k = RND((uint32_t)rank - 2);
    int64_t size = wrap32((uint64_t)c->shape[rank - (o->interleave ? 1 : 2) - (int)k]);
    int64_t want = PICK(-1, 0, 1, 2);
    int32_t lim = rank == 3 ? 32768 : rank == 4 ? 128 : 16;
    int64_t lower = -(int64_t)RND((uint32_t)lim), upper = want - size + lower;
    if (upper < -lim) lower += -lim - upper, upper = -lim;
    if (upper > lim - 1) lower -= upper - (lim - 1), upper = lim - 1;
    if (lower < -lim || lower > lim - 1) break; /* out of reach of the corners: stays valid */
    o->im2col.lower[k] = (int32_t)lower, o->im2col.upper[k] = (int32_t)upper;
    break;
  }
  default: break;
  }
}

void tmap_gen_edge(tmap_gen *g, tmap_case *c, uint64_t mem) {
  if (RND(5) == 0) return tmap_gen_uniform(g, c, mem);
  int aim = (int)RND(A_UNIFORM);
  bool im2col = aim >= A_PIXELS && aim <= A_AREA ? true : RND(4) == 0;
  tmap_gen_valid(g, c, mem, im2col);
  c->aim = aims[aim];
  int rank = c->t.ndim;
  unsigned eb = c->t.dtype.bits / 8;
  uint32_t i = RND((uint32_t)rank); /* a TMA dimension */
  int dl = rank - 1 - (int)i;
  if (!c->t.strides && aim >= A_STRIDE && aim <= A_INNER) { /* make them explicit first */
    int64_t s = 1;
    for (int k = rank - 1; k >= 0; k--) /* dense; saturated where huge shapes overflow int64 */
      if (c->strides[k] = s, __builtin_mul_overflow(s, c->shape[k], &s)) s = INT64_MAX;
    c->t.strides = c->strides;
  }
  int64_t unit = 16 / eb; /* 16 bytes in elements */
  edge_tensor(g, c, aim, dl, unit); /* one of the three knows the aim */
  edge_options(g, c, aim, i, unit);
  edge_im2col(g, c, aim, unit);
}

/* gclaunch's dtype -> CUtensorMapDataType convention (the public header's table). */
static int raw_type(DLDataType dt) {
  if (dt.lanes != 1) return -1;
  unsigned b = dt.bits;
  switch (dt.code) {
  case 0: return b == 8 ? 0 : b == 16 ? 1 : b == 32 ? 3 : b == 64 ? 5 : -1;
  case 1: return b == 8 ? 0 : b == 16 ? 1 : b == 32 ? 2 : b == 64 ? 4 : -1;
  case 2: return b == 16 ? 6 : b == 32 ? 7 : b == 64 ? 8 : -1;
  case 4: return b == 16 ? 9 : -1;
  case 6: return b == 8 ? 0 : -1;
  default: return dt.code >= 7 && dt.code <= 14 && b == 8 ? 0 : -1;
  }
}

const char *tmap_gen_raw(const tmap_case *c, tmap_raw *r) {
  const DLTensor *t = &c->t;
  const gcl_tensormap_options *o = &c->o;
  memset(r, 0, sizeof *r);
  if (t->device.device_type != kDLCUDA && (int)t->device.device_type != 13) return "device";
  if (!t->shape || t->ndim < 1 || t->ndim > 6) return "rank";
  r->type = raw_type(t->dtype);
  if (r->type < 0) return "dtype";
  /* The innermost dimension's stride is no driver argument (the element size is): a view that is
   * not contiguous there means another tensor to the driver. gclaunch's rule alone. */
  if (t->strides && t->shape[t->ndim - 1] > 1 && t->strides[t->ndim - 1] != 1) return "inner stride";
  /* NULL data has driver arguments: the address is byte_offset (the driver encodes 0). */
  if ((uint64_t)(uintptr_t)t->data + t->byte_offset < (uint64_t)(uintptr_t)t->data)
    return "data + byte_offset overflows";
  unsigned eb = t->dtype.bits / 8, align = o->interleave == 2 ? 32 : 16;
  r->rank = (uint32_t)t->ndim;
  r->address = (uint64_t)(uintptr_t)t->data + t->byte_offset;
  uint64_t compact = 1;
  for (uint32_t i = 0; i < r->rank; i++) {
    int dl = (int)(r->rank - 1 - i);
    r->dims[i] = (uint64_t)t->shape[dl];
    int64_t s = t->strides ? t->strides[dl] : (int64_t)compact;
    if (__builtin_mul_overflow(compact, (uint64_t)t->shape[dl], &compact)) compact = INT64_MAX;
    if (i == 0) continue;
    uint64_t sub = 0;
    bool use = false;
    if (t->shape[dl] == 1) { /* gclaunch's convention for a dimension TMA never steps over */
      if (i == 1) sub = round_up(r->dims[0] * eb, align), use = true;
      else use = !__builtin_mul_overflow(r->strides[i - 2], r->dims[i - 1], &sub);
      use = use && sub < STRIDE_LIMIT;
    }
    /* an overflowing stride saturates (as gclaunch reads it) instead of wrapping to a small one */
    uint64_t bytes;
    if (s < 0 || __builtin_mul_overflow((uint64_t)s, eb, &bytes)) bytes = UINT64_MAX;
    r->strides[i - 1] = use ? sub : bytes;
  }
  for (uint32_t i = 0; i < r->rank; i++) {
    r->box[i] = i < 5 ? o->box[i] : 1;
    r->element_strides[i] = i < 5 && o->element_strides[i] ? o->element_strides[i] : 1;
  }
  r->interleave = o->interleave, r->swizzle = o->swizzle;
  r->l2_promotion = o->l2_promotion, r->oob_fill = o->oob_fill;
  r->im2col = o->im2col.pixels != 0;
  r->pixels = o->im2col.pixels, r->channels = o->im2col.channels;
  memcpy(r->lower, o->im2col.lower, sizeof r->lower);
  memcpy(r->upper, o->im2col.upper, sizeof r->upper);
  return NULL;
}

void tmap_case_format(const tmap_case *c, char *buf, size_t cap) {
  const DLTensor *t = &c->t;
  const gcl_tensormap_options *o = &c->o;
  size_t n = 0;
#define OUT(...) (n += (size_t)snprintf(buf + (n < cap ? n : cap), n < cap ? cap - n : 0, __VA_ARGS__))
  OUT("[%s] dtype {%u,%u,%u} device %d ndim %d shape {", c->aim, t->dtype.code, t->dtype.bits,
      t->dtype.lanes, (int)t->device.device_type, t->ndim);
  for (int k = 0; k < t->ndim && k < 6 && t->shape; k++) OUT("%s%lld", k ? "," : "", (long long)t->shape[k]);
  OUT("} strides ");
  if (!t->strides) OUT("NULL");
  else {
    OUT("{");
    for (int k = 0; k < t->ndim && k < 6; k++) OUT("%s%lld", k ? "," : "", (long long)t->strides[k]);
    OUT("}");
  }
  OUT(" data 0x%llx byte_offset %llu | box {%u,%u,%u,%u,%u} estrides {%u,%u,%u,%u,%u} il %d sw %d "
      "l2 %d oob %d", (unsigned long long)(uintptr_t)t->data, (unsigned long long)t->byte_offset,
      o->box[0], o->box[1], o->box[2], o->box[3], o->box[4], o->element_strides[0],
      o->element_strides[1], o->element_strides[2], o->element_strides[3], o->element_strides[4],
      o->interleave, o->swizzle, o->l2_promotion, o->oob_fill);
  if (o->im2col.pixels)
    OUT(" im2col pixels %u channels %u lower {%d,%d,%d} upper {%d,%d,%d}", o->im2col.pixels,
        o->im2col.channels, o->im2col.lower[0], o->im2col.lower[1], o->im2col.lower[2],
        o->im2col.upper[0], o->im2col.upper[1], o->im2col.upper[2]);
#undef OUT
}
