/* The one random-signature generator of the tests (issues 25 and 28). One draw is a small tree per
 * parameter -- scalars (some over-aligned), pointers, tensor maps (128, 64, lowered or raised
 * alignment), bytes(N) align(A), structs with named and unnamed members and raised alignment,
 * arrays -- with alignments up to 4096, and every view the tests need is printed from that tree:
 *  - the gclaunch signature text;
 *  - type declarations valid both as C11 and as CUDA C++ (GA(n) is the alignment specifier:
 *    _Alignas in C, alignas in C++; arrays and over-aligned types wrapped in structs);
 *  - the kernel's parameter list and, for the differential tests, a whole `extern "C"` kernel
 *    (empty, or an echo that copies every parameter's bytes to a trailing `u8* out`);
 *  - for the fields tests, every leaf with its path, its C lvalue and a random value.
 * Used by unit_differential and unit_fields_diff (CPU: NVRTC and cc are the oracles) and by the
 * GPU echo tests (gpu_echo_random, gpu_fields_echo). rng is a splitmix64 state (dg_next). */
#ifndef GCL_SIG_GEN_H
#define GCL_SIG_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "gclaunch/gclaunch.h"

typedef struct dg_buf {
  char *p;
  size_t n, cap;
} dg_buf;

void dg_buf_printf(dg_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void dg_buf_free(dg_buf *b);
uint64_t dg_next(uint64_t *rng);

typedef enum dg_mode {
  DG_SMALL,      /* 1-10 parameters of any kind */
  DG_BIG,        /* plus one blob that takes the area past 4352 bytes */
  DG_NEAR_4352,  /* the C layout ends within 64 bytes of 4352 */
  DG_NEAR_LIMIT, /* the C layout ends within 160 bytes of the 32764-byte limit */
  DG_FIELDS      /* 1-4 parameters, mostly nested structs and arrays of them, with leaves */
} dg_mode;

/* A mode drawn with the differential test's mix (mostly small, some big, some at the two
 * boundaries; never DG_FIELDS). */
dg_mode dg_pick_mode(uint64_t *rng);

/* Definitions every generated C++ program starts with (GA, the tensor map types); dg_prelude is
 * fg_prelude(1). */
extern const char dg_prelude[];
/* dg_echo_t<N>(dst, src): the byte copy the echo kernels call (after dg_prelude). */
extern const char dg_echo_prelude[];

/* One random kernel named `name`: its signature text into sig, its types into decls and the
 * `extern "C" __global__` kernel into code (an empty body). */
void dg_kernel(uint64_t *rng, dg_mode mode, const char *name, dg_buf *sig, dg_buf *decls,
               dg_buf *code);
/* Like dg_kernel (the same random draws), with a last parameter `u8* out` and a body that copies
 * each parameter's bytes to out, densely and in order: parameter i at the sum of the sizes before
 * it. The program must start with dg_prelude and dg_echo_prelude. */
void dg_echo_kernel(uint64_t *rng, dg_mode mode, const char *name, dg_buf *sig, dg_buf *decls,
                    dg_buf *code);

/* --- the fields view (mode DG_FIELDS) --------------------------------------------------------- */

typedef enum fg_kind { FG_SCALAR, FG_POINTER, FG_TMAP, FG_BYTES } fg_kind;

typedef struct fg_leaf {
  char path[192];    /* the gclaunch path, as gcl_layout_visit_leaves spells it */
  char cexpr[256];   /* C lvalue of the leaf's storage, e.g. v0.loads[3].o */
  char cwrap[256];   /* C lvalue whose size is the leaf's laid-out size (its wrapper, if any) */
  char cmember[256]; /* the member designator from the parameter variable ("" for a leaf param) */
  size_t param;
  fg_kind kind;
  int scalar;        /* index into fg_scalar_names (FG_SCALAR), or the pointee (FG_POINTER) */
  size_t bytes;      /* leaf bytes: scalar size, 8, 128, N of bytes(N) (at most 128) */
  unsigned char value[128];
} fg_leaf;

#define FG_MAX_PARAMS 16

typedef struct fg_case {
  char name[24];
  dg_buf sig, decls, params; /* params: "const __grid_constant__ S_k0_0 v0, ..." */
  size_t nparams;
  char ptype[FG_MAX_PARAMS][48]; /* C type of each parameter */
  fg_leaf *leaves;               /* DG_FIELDS only; the other modes list no leaves */
  size_t nleaves, cap;
} fg_case;

extern const char *const fg_scalar_names[13];
/* Scalar sizes, by index (bool i8 u8 i16 u16 i32 u32 i64 u64 f16 bf16 f32 f64). */
extern const size_t fg_scalar_sizes[13];

/* Draws one case of mode mode named name. */
void dg_case_make(uint64_t *rng, dg_mode mode, const char *name, fg_case *c);
/* dg_case_make(rng, DG_FIELDS, name, c). */
void fg_case_make(uint64_t *rng, const char *name, fg_case *c);
void fg_case_free(fg_case *c);
/* "<type> = value;" (typed for scalars, memcpy for maps and bytes) for leaf l, into b. */
void fg_emit_fill(dg_buf *b, const fg_leaf *l);
/* Sets leaf l through field f: the typed setter of its scalar, set_field_ptr for a pointer, raw
 * bytes (the field's size, alignment padding included) for maps and bytes. */
gcl_status fg_set_leaf(gcl_args *a, const gcl_field *f, const fg_leaf *l);
/* The prelude of every generated source: GA(n) and the tensor map types; cxx picks C++. */
const char *fg_prelude(int cxx);

#endif
