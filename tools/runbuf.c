/* runbuf.c: host side of `gclaunch run` buffers: fill patterns, element codecs, checksums. */
#include "runargs.h"

#include <string.h>

size_t runarg_type_size(gcl_scalar t) { return gcl_scalar_size(t); }

/* Integers wrap modulo 2^bits, as a C conversion through int64/uint64 would. */
static uint64_t to_bits(double v) {
  return v < 0 ? (uint64_t)(int64_t)v : (v >= 18446744073709551616.0 ? 0 : (uint64_t)v);
}

void runarg_store(gcl_scalar t, void *dst, double value) {
  uint64_t bits = to_bits(value);
  uint16_t h;
  float f = (float)value;
  switch (t) {
  case GCL_SCALAR_BOOL: *(unsigned char *)dst = value != 0; return;
  case GCL_SCALAR_F16: h = gcl_f16_from_f32(f); memcpy(dst, &h, 2); return;
  case GCL_SCALAR_BF16: h = gcl_bf16_from_f32(f); memcpy(dst, &h, 2); return;
  case GCL_SCALAR_F32: memcpy(dst, &f, 4); return;
  case GCL_SCALAR_F64: memcpy(dst, &value, 8); return;
  default: memcpy(dst, &bits, runarg_type_size(t)); return; /* little-endian: low bytes */
  }
}

double runarg_element(gcl_scalar t, const void *view, uint64_t i) {
  const unsigned char *p = (const unsigned char *)view + i * runarg_type_size(t);
  union { int8_t i8; uint8_t u8; int16_t i16; uint16_t u16; int32_t i32; uint32_t u32;
          int64_t i64; uint64_t u64; float f32; double f64; } v;
  memcpy(&v, p, runarg_type_size(t));
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
  case GCL_SCALAR_F16: return gcl_f16_to_f32(v.u16);
  case GCL_SCALAR_BF16: return gcl_bf16_to_f32(v.u16);
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

void runarg_fill_view(const runarg *a, void *view, uint64_t seed) {
  size_t es = runarg_type_size(a->type);
  uint64_t state = seed ^ (uint64_t)a->position * UINT64_C(0x2545f4914f6cdd1d);
  if (a->fill == RUNARG_ZEROS || a->fill == RUNARG_FILE) {
    memset(view, 0, a->count * es);
    return;
  }
  for (uint64_t i = 0; i < a->count; i++) {
    double v = a->fill == RUNARG_IOTA ? (double)i : rand_value(a->type, &state);
    runarg_store(a->type, (unsigned char *)view + i * es, v);
  }
}

uint64_t runarg_fnv1a(const void *data, size_t size) {
  const unsigned char *p = data;
  uint64_t h = UINT64_C(0xcbf29ce484222325);
  for (size_t i = 0; i < size; i++) h = (h ^ p[i]) * UINT64_C(0x100000001b3);
  return h;
}

double runarg_sum(gcl_scalar t, const void *view, uint64_t count) {
  double s = 0;
  for (uint64_t i = 0; i < count; i++) s += runarg_element(t, view, i);
  return s;
}
