/* Scalars: the grammar's names, C-ABI sizes, and the f16 / bf16 conversions every view shares
 * (typed setters, the CLI's values and checksums, the Python package). */
#include "internal.h"

#include <string.h>

static const char *const scalar_names[] = {
    "void", "bool", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64",
    "f16", "bf16", "f32", "f64"};
static const size_t scalar_sizes[] = {0, 1, 1, 1, 2, 2, 4, 4, 8, 8, 2, 2, 4, 8};

const char *gcl_scalar_name(gcl_scalar s) {
  return (unsigned)s <= GCL_SCALAR_F64 ? scalar_names[s] : "?";
}

const char *gcl_param_kind_name(gcl_param_kind kind) {
  static const char *const names[] = {"scalar", "pointer", "tensormap", "bytes", "struct", "array"};
  return (unsigned)kind < sizeof names / sizeof *names ? names[kind] : "unknown";
}

size_t gcl_scalar_size(gcl_scalar s) {
  return (unsigned)s <= GCL_SCALAR_F64 ? scalar_sizes[s] : 0;
}

uint16_t gcl_bf16_from_f32(float value) {
  uint32_t u;
  memcpy(&u, &value, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u); /* quiet NaN */
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

/* Bit arithmetic only (no libm): subnormal halves and overflow to infinity included. */
uint16_t gcl_f16_from_f32(float value) {
  uint32_t u;
  memcpy(&u, &value, sizeof u);
  uint32_t sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);  /* NaN */
  if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds past 65504: inf */
  if (a < 0x38800000u) {                                    /* a subnormal half, or zero */
    if (a < 0x33000000u) return (uint16_t)sign;             /* below 2^-25 */
    uint32_t e = a >> 23, m = (a & 0x7fffffu) | 0x800000u, shift = 126 - e;
    uint32_t r = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1);
    r += rem > half || (rem == half && (r & 1u));
    return (uint16_t)(sign | r);
  }
  a += 0xfffu + ((a >> 13) & 1u); /* round to nearest even at bit 13 */
  return (uint16_t)(sign | ((a - 0x38000000u) >> 13));
}

float gcl_f16_to_f32(uint16_t bits) {
  uint32_t sign = (uint32_t)(bits & 0x8000u) << 16, e = (bits >> 10) & 0x1fu, m = bits & 0x3ffu;
  if (e == 0) {
    float mag = (float)m * 0x1p-24f; /* exact: m < 2^10 */
    return sign ? -mag : mag;
  }
  uint32_t x = e == 31 ? sign | 0x7f800000u | (m << 13) : sign | ((e + 112) << 23) | (m << 13);
  float f;
  memcpy(&f, &x, sizeof f);
  return f;
}

float gcl_bf16_to_f32(uint16_t bits) {
  uint32_t x = (uint32_t)bits << 16;
  float f;
  memcpy(&f, &x, sizeof f);
  return f;
}
