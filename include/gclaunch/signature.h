/* gclaunch/signature.h -- scalars and signatures: the text that names a kernel's parameters, parsed
 * into the type tree every other view reads (CPU only). Included by gclaunch/core.h; the
 * conventions are written in gclaunch.h. */
#ifndef GCLAUNCH_SIGNATURE_H
#define GCLAUNCH_SIGNATURE_H

#include "gclaunch/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Signatures (CPU only)
 *
 *   signature = [ param { "," param } ]
 *   param     = [ "grid_constant" ] type [ name ]
 *   type      = base [ "align" "(" N ")" ] [ "[" N "]" ]
 *   base      = scalar | pointer | "tensormap" | "bytes" "(" N ")" | "struct" "{" member {"," member} "}"
 *   member    = type [ name ]          (names optional, unique per struct; nest to any depth;
 *                                        arrays of structs: struct{ptr p, u32 n}[8] segs)
 *   scalar    = bool i8 u8 i16 u16 i32 u32 i64 u64 f16 bf16 f32 f64
 *   pointer   = [ "const" ] ( scalar | "void" ) "*"  |  "ptr"
 * ------------------------------------------------------------------------------------------- */

typedef struct gcl_signature gcl_signature;

typedef enum gcl_scalar {
  GCL_SCALAR_VOID = 0, /* only as a pointer's element type */
  GCL_SCALAR_BOOL, GCL_SCALAR_I8, GCL_SCALAR_U8, GCL_SCALAR_I16, GCL_SCALAR_U16,
  GCL_SCALAR_I32, GCL_SCALAR_U32, GCL_SCALAR_I64, GCL_SCALAR_U64,
  GCL_SCALAR_F16, GCL_SCALAR_BF16, GCL_SCALAR_F32, GCL_SCALAR_F64
} gcl_scalar;

/* The scalar's name as the grammar spells it ("f32", "bf16"; "void" for VOID); "?" outside the
 * enum. Never NULL. Thread-safe. */
GCL_API const char *gcl_scalar_name(gcl_scalar s);
/* The scalar's C-ABI size in bytes (1, 2, 4 or 8; equal to its alignment); 0 for VOID and for
 * values outside the enum. Thread-safe. */
GCL_API size_t gcl_scalar_size(gcl_scalar s);
/* float -> IEEE binary16 / bfloat16 bits, rounded to nearest even (NaN stays a NaN, values past
 * the largest finite one become infinities), and back (exact). Thread-safe. */
GCL_API uint16_t gcl_f16_from_f32(float value);
GCL_API uint16_t gcl_bf16_from_f32(float value);
GCL_API float gcl_f16_to_f32(uint16_t bits);
GCL_API float gcl_bf16_to_f32(uint16_t bits);

typedef enum gcl_param_kind {
  GCL_PARAM_SCALAR,    /* a scalar by value */
  GCL_PARAM_POINTER,   /* a device pointer (8 bytes) */
  GCL_PARAM_TENSORMAP, /* one CUtensorMap by value */
  GCL_PARAM_BYTES,     /* bytes(N) */
  GCL_PARAM_STRUCT,    /* struct{...} by value */
  GCL_PARAM_ARRAY      /* T[N] by value; see elem_kind */
} gcl_param_kind;

/* "scalar", "pointer", "tensormap", "bytes", "struct", "array"; "unknown" outside the enum.
 * Never NULL. Thread-safe. */
GCL_API const char *gcl_param_kind_name(gcl_param_kind kind);

typedef struct gcl_param_info {
  const char *name;        /* NULL when the parameter has no name */
  gcl_param_kind kind;
  gcl_param_kind elem_kind;/* for GCL_PARAM_ARRAY: the element's kind; otherwise == kind */
  gcl_scalar scalar;       /* scalar's type, or a pointer's element type (VOID for void* and ptr) */
  bool is_const;           /* pointer to const */
  bool grid_constant;      /* marked grid_constant */
  size_t size;             /* bytes by value (8 for pointers) */
  size_t align;            /* alignment by value */
  size_t count;            /* array element count; 0 when not an array */
  size_t elem_size;        /* array element size (== size when not an array) */
  size_t pointee_align;    /* pointers: the alignment the kernel assumes for the data */
} gcl_param_info;

/* Parses text. GCL_ERROR_PARSE with "col N: expected ..." on malformed text; GCL_ERROR_INVALID_ARGUMENT
 * for NULL text or out. The signature is independent of the text. Thread-safe. */
GCL_API gcl_status gcl_signature_parse(const char *text, gcl_signature **out);
GCL_API void gcl_signature_destroy(gcl_signature *sig);
/* Number of parameters; 0 for NULL. Reads. */
GCL_API size_t gcl_signature_count(const gcl_signature *sig);
/* Describes parameter index. GCL_ERROR_INVALID_ARGUMENT for NULL or an index out of range. Reads. */
GCL_API gcl_status gcl_signature_param(const gcl_signature *sig, size_t index, gcl_param_info *info);
/* Canonical text of the signature (parses back to an equal signature), with snprintf's
 * contract: writes what fits of it into buf, cap bytes at most including the terminating NUL
 * (always written when cap > 0; buf may be NULL when cap is 0), and the full length (without
 * NUL) into *needed if needed is not NULL. The text was cut when *needed >= cap: that is not a
 * failure (asking with cap 0 for the size returns GCL_OK and leaves gcl_last_error alone).
 * GCL_ERROR_INVALID_ARGUMENT only for NULL sig, or NULL buf with cap > 0. Reads. */
GCL_API gcl_status gcl_signature_format(const gcl_signature *sig, char *buf, size_t cap,
                                        size_t *needed);

#ifdef __cplusplus
}
#endif
#endif /* GCLAUNCH_SIGNATURE_H */
