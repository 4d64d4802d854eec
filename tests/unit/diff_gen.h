/* Random kernel signatures for the differential layout test: each comes as gclaunch signature text
 * and as the matching CUDA C++ kernel (arrays and over-aligned types wrapped in structs). */
#ifndef GCL_DIFF_GEN_H
#define GCL_DIFF_GEN_H

#include <stddef.h>
#include <stdint.h>

typedef struct dg_buf {
  char *p;
  size_t n, cap;
} dg_buf;

void dg_buf_printf(dg_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void dg_buf_free(dg_buf *b);

typedef enum dg_mode {
  DG_SMALL,      /* a few scalars, pointers, structs, bytes, tensor maps */
  DG_BIG,        /* plus one blob that takes the area past 4352 bytes */
  DG_NEAR_4352,  /* the C layout ends within 64 bytes of 4352 */
  DG_NEAR_LIMIT  /* the C layout ends within 160 bytes of the 32764-byte limit */
} dg_mode;

/* One random kernel named `name`: its signature text into sig, the C++ structs it needs into
 * decls and the `extern "C" __global__` kernel into code. rng is a splitmix64 state. */
void dg_kernel(uint64_t *rng, dg_mode mode, const char *name, dg_buf *sig, dg_buf *decls,
               dg_buf *code);
/* Like dg_kernel (the same random draws), with a last parameter `u8* out` and a body that copies
 * each parameter's bytes to out, densely and in order: parameter i at the sum of the sizes before
 * it. The program must start with dg_prelude and dg_echo_prelude. */
void dg_echo_kernel(uint64_t *rng, dg_mode mode, const char *name, dg_buf *sig, dg_buf *decls,
                    dg_buf *code);
extern const char dg_echo_prelude[];
/* A mode drawn with the test's mix (mostly small, some big, some at the two boundaries). */
dg_mode dg_pick_mode(uint64_t *rng);
uint64_t dg_next(uint64_t *rng);

/* Definitions every generated program starts with (the tensor map type). */
extern const char dg_prelude[];

#endif
