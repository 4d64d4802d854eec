/* Random kernels whose parameters are nested structs with named and unnamed members, for the
 * fields differential test (CPU: cc and NVRTC) and the GPU fields echo test. One draw gives the
 * signature text, type declarations valid both as C11 and as CUDA C++ (GA(n) is the alignment
 * specifier: _Alignas in C, alignas in C++), and the list of every leaf with its path, its C
 * lvalue and a random value. */
#ifndef GCL_FIELDS_GEN_H
#define GCL_FIELDS_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "diff_gen.h"
#include "gclaunch/gclaunch.h"

typedef enum fg_kind { FG_SCALAR, FG_POINTER, FG_TMAP, FG_BYTES } fg_kind;

typedef struct fg_leaf {
  char path[192];    /* the gclaunch path, as gcl_layout_visit_leaves spells it */
  char cexpr[256];   /* C lvalue of the leaf's storage, e.g. v0.loads[3].o */
  char cwrap[256];   /* C lvalue whose size is the leaf's laid-out size (its wrapper, if any) */
  char cmember[256]; /* the member designator from the parameter variable ("" for a leaf param) */
  size_t param;
  fg_kind kind;
  int scalar;        /* index into fg_scalar_names (FG_SCALAR), or the pointee (FG_POINTER) */
  size_t bytes;      /* leaf bytes: scalar size, 8, 128, N of bytes(N) */
  unsigned char value[128];
} fg_leaf;

typedef struct fg_case {
  char name[24];
  dg_buf sig, decls, params; /* params: "P_k0_0 v0, ..." with kernel's parameter declarations */
  size_t nparams;
  char ptype[16][48];        /* C type of each parameter */
  fg_leaf *leaves;
  size_t nleaves, cap;
} fg_case;

extern const char *const fg_scalar_names[13];
/* Scalar sizes, by index (bool i8 u8 i16 u16 i32 u32 i64 u64 f16 bf16 f32 f64). */
extern const size_t fg_scalar_sizes[13];

/* Draws one case named name (max depth ~4). rng is a splitmix64 state (dg_next). */
void fg_case_make(uint64_t *rng, const char *name, fg_case *c);
void fg_case_free(fg_case *c);
/* "<type> = value;" (typed for scalars, memcpy for maps and bytes) for leaf l, into b. */
void fg_emit_fill(dg_buf *b, const fg_leaf *l);
/* Sets leaf l through field f: the typed setter of its scalar, set_field_ptr for a pointer, raw
 * bytes (the field's size) for maps and bytes. */
gcl_status fg_set_leaf(gcl_args *a, const gcl_field *f, const fg_leaf *l);
/* The prelude of every generated source: GA(n) and the tensor map types; cxx picks C++. */
const char *fg_prelude(int cxx);

#endif
