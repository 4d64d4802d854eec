/* runbuf.c: host side of `gclaunch run` buffers: fill patterns, element codecs, checksums. */
#include "runargs.h"

#include <string.h>

size_t gcl_runarg_type_size(gcl_scalar t) {
  switch (t) {
  case GCL_SCALAR_BOOL: case GCL_SCALAR_I8: case GCL_SCALAR_U8: return 1;
  case GCL_SCALAR_I16: case GCL_SCALAR_U16: case GCL_SCALAR_F16: case GCL_SCALAR_BF16: return 2;
  case GCL_SCALAR_I32: case GCL_SCALAR_U32: case GCL_SCALAR_F32: return 4;
  case GCL_SCALAR_I64: case GCL_SCALAR_U64: case GCL_SCALAR_F64: return 8;
  default: return 0;
  }
}

/* IEEE binary16 from a float, round to nearest even (subnormals and overflow to inf included).
 * Bit arithmetic only: the tool does not need libm. */
static uint16_t f16_from(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000, mag = x & 0x7fffffff;
  if (mag > 0x7f800000) return (uint16_t)(sign | 0x7e00);          /* NaN */
  if (mag >= 0x477ff000) return (uint16_t)(sign | 0x7c00);         /* rounds past 65504: inf */
  if (mag < 0x38800000) {                                         /* subnormal half or zero */
    if (mag < 0x33000000) return (uint16_t)sign;                  /* below 2^-25: zero */
    uint32_t m = (mag & 0x7fffff) | 0x800000, shift = 126 - (mag >> 23);
    uint32_t q = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    q += rem > half || (rem == half && (q & 1));
    return (uint16_t)(sign | q);
  }
  uint32_t r = mag + 0xfff + ((mag >> 13) & 1);                   /* round to nearest even */
  return (uint16_t)(sign | ((r - 0x38000000) >> 13));
}

static float f16_to(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff, x;
  if (e == 0) {
    float mag = (float)m * 0x1p-24f;                              /* exact: m < 2^10 */
    return sign ? -mag : mag;
  }
  x = e == 31 ? sign | 0x7f800000 | (m << 13) : sign | ((e + 112) << 23) | (m << 13);
  float f;
  memcpy(&f, &x, 4);
  return f;
}

static uint16_t bf16_from(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000) return (uint16_t)((x >> 16) | 0x40);
  return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

static float bf16_to(uint16_t b) {
  uint32_t x = (uint32_t)b << 16;
  float f;
  memcpy(&f, &x, 4);
  return f;
}

/* Integers wrap modulo 2^bits, as a C conversion through int64/uint64 would. */
static uint64_t to_bits(double v) {
  return v < 0 ? (uint64_t)(int64_t)v : (v >= 18446744073709551616.0 ? 0 : (uint64_t)v);
}

void gcl_runarg_store(gcl_scalar t, void *dst, double value) {
  uint64_t bits = to_bits(value);
  uint16_t h;
  float f = (float)value;
  switch (t) {
  case GCL_SCALAR_BOOL: *(unsigned char *)dst = value != 0; return;
  case GCL_SCALAR_F16: h = f16_from(f); memcpy(dst, &h, 2); return;
  case GCL_SCALAR_BF16: h = bf16_from(f); memcpy(dst, &h, 2); return;
  case GCL_SCALAR_F32: memcpy(dst, &f, 4); return;
  case GCL_SCALAR_F64: memcpy(dst, &value, 8); return;
  default: memcpy(dst, &bits, gcl_runarg_type_size(t)); return; /* little-endian: low bytes */
  }
}

double gcl_runarg_element(gcl_scalar t, const void *view, uint64_t i) {
  const unsigned char *p = (const unsigned char *)view + i * gcl_runarg_type_size(t);
  union { int8_t i8; uint8_t u8; int16_t i16; uint16_t u16; int32_t i32; uint32_t u32;
          int64_t i64; uint64_t u64; float f32; double f64; } v;
  memcpy(&v, p, gcl_runarg_type_size(t));
  switch (t) {
  case GCL_SCALAR_BOOL: return v.u8 != 0;
  case GCL_SCALAR_I8: return v.i8;
  case GCL_SCALAR_U8: return v.u8;
  case GCL_SCALAR_I16: return v.i16;
  case GCL_SCALAR_U16: return v.u16;
  case GCL_SCALAR_I32: return v.i32;
  case GCL_SCALAR_U32: return v.u32;
  case GCL_SCALAR_I64: return (double)v.i64;
  case GCL_SCALAR_U64: return (double)v.u64;
  case GCL_SCALAR_F16: return f16_to(v.u16);
  case GCL_SCALAR_BF16: return bf16_to(v.u16);
  case GCL_SCALAR_F32: return v.f32;
  case GCL_SCALAR_F64: return v.f64;
  default: return 0;
  }
}

/* splitmix64: a fixed, portable generator, so a seed gives the same data everywhere. */
static uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}

/* rand: floats uniform in [-1, 1); integers uniform over 0 ... 255 (small enough that sums and
 * products in test kernels stay exact). */
static double rand_value(gcl_scalar t, uint64_t *state) {
  uint64_t r = splitmix64(state);
  if (t == GCL_SCALAR_F16 || t == GCL_SCALAR_BF16 || t == GCL_SCALAR_F32 || t == GCL_SCALAR_F64)
    return (double)(r >> 11) * 0x1.0p-52 - 1.0;
  if (t == GCL_SCALAR_BOOL) return (double)(r & 1);
  return (double)(r & 0xff);
}

void gcl_runarg_fill_view(const gcl_runarg *a, void *view, uint64_t seed) {
  size_t es = gcl_runarg_type_size(a->type);
  uint64_t state = seed ^ (uint64_t)a->position * UINT64_C(0x2545f4914f6cdd1d);
  if (a->fill == GCL_RUNARG_ZEROS || a->fill == GCL_RUNARG_FILE) {
    memset(view, 0, a->count * es);
    return;
  }
  for (uint64_t i = 0; i < a->count; i++) {
    double v = a->fill == GCL_RUNARG_IOTA ? (double)i : rand_value(a->type, &state);
    gcl_runarg_store(a->type, (unsigned char *)view + i * es, v);
  }
}

uint64_t gcl_runarg_fnv1a(const void *data, size_t size) {
  const unsigned char *p = data;
  uint64_t h = UINT64_C(0xcbf29ce484222325);
  for (size_t i = 0; i < size; i++) h = (h ^ p[i]) * UINT64_C(0x100000001b3);
  return h;
}

double gcl_runarg_sum(gcl_scalar t, const void *view, uint64_t count) {
  double s = 0;
  for (uint64_t i = 0; i < count; i++) s += gcl_runarg_element(t, view, i);
  return s;
}
