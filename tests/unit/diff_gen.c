/* Random signatures and their CUDA C++ kernels for the differential layout test (see diff_gen.h).
 * Sizes and alignments are tracked here only to steer the generator toward the 4352-byte and
 * 32764-byte boundaries; the test's oracle is the compiler, not this file. */
#include "diff_gen.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char dg_prelude[] =
    "struct alignas(128) TM { unsigned long long o[16]; };\n"
    "struct alignas(64) TM64 { unsigned long long o[16]; };\n";

/* A loop the compiler keeps (no unrolling of 32 KB copies): one byte at a time, so that every
 * byte of the parameter, padding included, reaches out as the launch delivered it. */
const char dg_echo_prelude[] =
    "__device__ __forceinline__ void dg_echo(unsigned char *d, const void *s, unsigned long long n) {\n"
    "  const unsigned char *b = (const unsigned char *)s;\n"
    "#pragma unroll 1\n"
    "  for (unsigned long long i = 0; i < n; i++) d[i] = b[i];\n"
    "}\n"
    /* Small parameters are copied with constant offsets. ptxas (13.0, sm_90) reads a
     * grid-constant parameter at a run-time index as c[0x0][R + imm] with imm sign-extended, so
     * a parameter starting past 32 KiB of the constant bank (offset >= 32240 on sm_90) read in a
     * loop gives zeros (seen on the H200); constant offsets become c[0x0][imm], which is right.
     * Every parameter that starts that high is small (the area ends at 32764). */
    "template <unsigned long long N>\n"
    "__device__ __forceinline__ void dg_echo_t(unsigned char *d, const void *s) {\n"
    "  if constexpr (N <= 544) {\n"
    "    const unsigned char *b = (const unsigned char *)s;\n"
    "#pragma unroll\n"
    "    for (unsigned long long i = 0; i < N; i++) d[i] = b[i];\n"
    "  } else {\n"
    "    dg_echo(d, s, N);\n"
    "  }\n"
    "}\n";

void dg_buf_printf(dg_buf *b, const char *fmt, ...) {
  va_list ap;
  for (;;) {
    va_start(ap, fmt);
    int n = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
    va_end(ap);
    if (n < 0) abort(); /* test helper: a formatting bug, not input */
    if (b->p && b->n + (size_t)n < b->cap) {
      b->n += (size_t)n;
      return;
    }
    size_t cap = (b->cap + (size_t)n + 1) * 2;
    b->p = realloc(b->p, cap);
    if (!b->p) abort();
    b->cap = cap;
  }
}

void dg_buf_free(dg_buf *b) {
  free(b->p);
  b->p = NULL;
  b->n = b->cap = 0;
}

uint64_t dg_next(uint64_t *rng) { /* splitmix64 */
  uint64_t z = (*rng += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static size_t below(uint64_t *rng, size_t n) { return (size_t)(dg_next(rng) % n); }
static size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

typedef struct gtype {
  dg_buf sig;
  char c[48]; /* C++ type (a builtin, a pointer, or a struct defined in decls) */
  size_t size, align;
  bool array, by_value;
} gtype;

typedef struct gen {
  uint64_t *rng;
  const char *kname;
  int next_id;
  dg_buf *decls;
} gen;

static const struct { const char *sig, *c; size_t size; } scalars[] = {
    {"bool", "bool", 1},      {"i8", "signed char", 1},  {"u8", "unsigned char", 1},
    {"i16", "short", 2},      {"u16", "unsigned short", 2}, {"i32", "int", 4},
    {"u32", "unsigned", 4},   {"i64", "long long", 8},   {"u64", "unsigned long long", 8},
    {"f16", "unsigned short", 2}, {"bf16", "unsigned short", 2}, {"f32", "float", 4},
    {"f64", "double", 8}};
#define NSCALARS (sizeof scalars / sizeof *scalars)

/* A fresh struct name for this kernel; the definition goes into decls. */
static void new_struct(gen *g, gtype *t, size_t align) {
  snprintf(t->c, sizeof t->c, "T_%s_%d", g->kname, g->next_id++);
  if (align) dg_buf_printf(g->decls, "struct alignas(%zu) %s { ", align, t->c);
  else dg_buf_printf(g->decls, "struct %s { ", t->c);
}

static void gen_scalar(gen *g, gtype *t) {
  size_t i = below(g->rng, NSCALARS);
  t->size = t->align = scalars[i].size;
  t->by_value = true;
  if (below(g->rng, 8) == 0) { /* over-aligned scalar: C++ needs a wrapper struct */
    size_t a = t->size << (1 + below(g->rng, 4));
    dg_buf_printf(&t->sig, "%s align(%zu)", scalars[i].sig, a);
    new_struct(g, t, a);
    dg_buf_printf(g->decls, "%s v; };\n", scalars[i].c);
    t->size = t->align = a;
    return;
  }
  dg_buf_printf(&t->sig, "%s", scalars[i].sig);
  snprintf(t->c, sizeof t->c, "%s", scalars[i].c);
}

static void gen_pointer(gen *g, gtype *t) {
  size_t i = below(g->rng, NSCALARS + 2);
  bool is_const = below(g->rng, 2);
  const char *c = i < NSCALARS ? scalars[i].c : "void";
  if (i == NSCALARS) dg_buf_printf(&t->sig, "ptr");
  else dg_buf_printf(&t->sig, "%s%s*", is_const ? "const " : "", i < NSCALARS ? scalars[i].sig : "void");
  if (below(g->rng, 6) == 0) dg_buf_printf(&t->sig, " align(%zu)", (size_t)1 << below(g->rng, 8));
  snprintf(t->c, sizeof t->c, "%s%s *", is_const && i != NSCALARS ? "const " : "", c);
  t->size = t->align = 8;
}

static void gen_bytes(gen *g, gtype *t, size_t n, size_t a) {
  if (a == 1 && below(g->rng, 2)) dg_buf_printf(&t->sig, "bytes(%zu)", n);
  else dg_buf_printf(&t->sig, "bytes(%zu) align(%zu)", n, a);
  new_struct(g, t, a);
  dg_buf_printf(g->decls, "unsigned char b[%zu]; };\n", n);
  t->size = round_up(n, a);
  t->align = a;
  t->by_value = true;
}

static void gen_tensormap(gen *g, gtype *t) {
  size_t pick = below(g->rng, 4);
  t->size = 128;
  t->by_value = true;
  if (pick < 2) {
    dg_buf_printf(&t->sig, "tensormap");
    snprintf(t->c, sizeof t->c, "TM");
    t->align = 128;
  } else if (pick == 2) {
    dg_buf_printf(&t->sig, "tensormap align(64)");
    snprintf(t->c, sizeof t->c, "TM64");
    t->align = 64;
  } else { /* lowered further: only bytes spell it in C++ */
    t->align = (size_t)1 << below(g->rng, 8);
    dg_buf_printf(&t->sig, "tensormap align(%zu)", t->align);
    new_struct(g, t, t->align);
    dg_buf_printf(g->decls, "unsigned char o[128]; };\n");
  }
}

static void gen_type(gen *g, gtype *t, int depth, bool allow_array);

/* T[N]: C++ wraps the elements in a struct (an array parameter would decay to a pointer). */
static void gen_array(gen *g, gtype *t, int depth, size_t max_bytes) {
  gtype e;
  memset(&e, 0, sizeof e);
  gen_type(g, &e, depth + 1, false);
  size_t n = 1 + below(g->rng, 6);
  if (e.size * n > max_bytes) n = 1;
  dg_buf_printf(&t->sig, "%s[%zu]", e.sig.p, n);
  new_struct(g, t, 0);
  dg_buf_printf(g->decls, "%s e[%zu]; };\n", e.c, n);
  t->size = e.size * n;
  t->align = e.align;
  t->array = t->by_value = true;
  dg_buf_free(&e.sig);
}

static void gen_struct(gen *g, gtype *t, int depth) {
  size_t n = 1 + below(g->rng, 5), off = 0, align = 1;
  gtype m[5];
  memset(m, 0, sizeof m);
  dg_buf_printf(&t->sig, "struct{");
  for (size_t i = 0; i < n; i++) {
    gen_type(g, &m[i], depth + 1, true);
    dg_buf_printf(&t->sig, "%s%s", i ? ", " : "", m[i].sig.p);
    off = round_up(off, m[i].align) + m[i].size;
    if (m[i].align > align) align = m[i].align;
  }
  dg_buf_printf(&t->sig, "}");
  size_t forced = 0;
  if (below(g->rng, 6) == 0) { /* raise the alignment */
    forced = align << below(g->rng, 3);
    if (forced > 128) forced = 128;
    dg_buf_printf(&t->sig, " align(%zu)", forced);
    align = forced;
  }
  new_struct(g, t, forced);
  for (size_t i = 0; i < n; i++) {
    dg_buf_printf(g->decls, "%s m%zu; ", m[i].c, i);
    dg_buf_free(&m[i].sig);
  }
  dg_buf_printf(g->decls, "};\n");
  t->size = round_up(off, align);
  t->align = align;
  t->by_value = true;
}

static void gen_type(gen *g, gtype *t, int depth, bool allow_array) {
  size_t r = below(g->rng, 100);
  if (depth >= 3) r = r % 50; /* deep down: scalars and pointers only */
  if (r < 30) gen_scalar(g, t);
  else if (r < 50) gen_pointer(g, t);
  else if (r < 65) gen_struct(g, t, depth);
  else if (r < 77) gen_bytes(g, t, 1 + below(g->rng, 40), (size_t)1 << below(g->rng, 8));
  else if (r < 87) gen_tensormap(g, t);
  else if (allow_array) gen_array(g, t, depth, 1024);
  else gen_scalar(g, t);
}

/* The parameter that moves the area across a boundary: bytes(N) align(A) or tensormap[N]. */
typedef struct blob {
  bool maps;
  size_t align, bytes;
} blob;

static size_t blob_size(const blob *bl) {
  size_t n = bl->bytes ? bl->bytes : 1;
  return bl->maps ? 128 * (n / 128 ? n / 128 : 1) : round_up(n, bl->align);
}

static void gen_blob(gen *g, gtype *t, const blob *bl) {
  if (bl->maps) {
    size_t n = blob_size(bl) / 128;
    dg_buf_printf(&t->sig, "tensormap[%zu]", n);
    new_struct(g, t, 0);
    dg_buf_printf(g->decls, "TM e[%zu]; };\n", n);
    t->size = 128 * n;
    t->align = 128;
    t->array = t->by_value = true;
    return;
  }
  gen_bytes(g, t, bl->bytes ? bl->bytes : 1, bl->align);
}

/* End of the C layout from offset 0 (ptxas checks the limit on this). */
static size_t c_end(const gtype *p, size_t n) {
  size_t off = 0;
  for (size_t i = 0; i < n; i++) off = round_up(off, p[i].align) + p[i].size;
  return off;
}

dg_mode dg_pick_mode(uint64_t *rng) {
  size_t r = below(rng, 100);
  return r < 70 ? DG_SMALL : r < 85 ? DG_BIG : r < 92 ? DG_NEAR_4352 : DG_NEAR_LIMIT;
}

#define MAX_PARAMS 16

/* Sizes the blob at index b so that the C layout ends near target. */
static void fit_blob(gtype *p, size_t n, size_t b, blob *bl, long target) {
  for (int round = 0; round < 4; round++) {
    p[b].size = blob_size(bl);
    p[b].align = bl->maps ? 128 : bl->align;
    long want = (long)bl->bytes + (target - (long)c_end(p, n));
    bl->bytes = want < 1 ? 1 : (size_t)want;
  }
}

/* The kernel's head and its body: empty, or (echo) one copy per parameter into the trailing
 * `out`, each parameter's bytes right after the previous one's. */
static void emit(gen *g, gtype *p, size_t n, dg_buf *sig, dg_buf *code, bool echo) {
  dg_buf_printf(code, "extern \"C\" __global__ void %s(", g->kname);
  for (size_t i = 0; i < n; i++) {
    bool gc = p[i].by_value && below(g->rng, 3) == 0, named = below(g->rng, 2);
    dg_buf_printf(sig, "%s%s%s", i ? ", " : "", gc ? "grid_constant " : "", p[i].sig.p);
    if (named) dg_buf_printf(sig, " p%zu", i);
    /* An echo reads each aggregate where the launch put it: without __grid_constant__ the
     * compiler copies a by-value struct member by member to local memory and the padding bytes
     * are lost (seen on the H200). The mark changes no offset, so the signature keeps its draw. */
    bool gc_code = gc || (echo && p[i].by_value);
    dg_buf_printf(code, "%s%s%s p%zu", i ? ", " : "", gc_code ? "const __grid_constant__ " : "",
                  p[i].c, i);
    dg_buf_free(&p[i].sig);
  }
  if (!echo) {
    dg_buf_printf(code, ") {}\n");
    return;
  }
  dg_buf_printf(sig, "%su8* out", n ? ", " : "");
  dg_buf_printf(code, "%sunsigned char *out) {\n  unsigned char *o = out;\n", n ? ", " : "");
  for (size_t i = 0; i < n; i++)
    dg_buf_printf(code, "  dg_echo_t<sizeof p%zu>(o, &p%zu);\n  o += sizeof p%zu;\n", i, i, i);
  dg_buf_printf(code, "}\n");
}

static void kernel(uint64_t *rng, dg_mode mode, const char *name, dg_buf *sig, dg_buf *decls,
                   dg_buf *code, bool echo) {
  gen g = {rng, name, 0, decls};
  gtype p[MAX_PARAMS];
  memset(p, 0, sizeof p);
  size_t n = mode == DG_SMALL ? 1 + below(rng, 10) : 1 + below(rng, 5);
  for (size_t i = 0; i < n; i++) {
    if (below(rng, 10) == 0) gen_array(&g, &p[i], 0, 2048);
    else gen_type(&g, &p[i], 0, true);
  }
  if (mode != DG_SMALL) {
    size_t b = below(rng, 3) == 0 ? n : 0; /* the blob first (most base-sensitive) or last */
    if (b == 0) memmove(&p[1], &p[0], n * sizeof *p);
    memset(&p[b], 0, sizeof p[b]);
    blob bl = {below(rng, 3) == 0, (size_t)1 << below(rng, 8), 64};
    n++;
    long target = mode == DG_BIG ? 4400 + (long)below(rng, 20000)
                  : mode == DG_NEAR_4352 ? 4352 - 64 + (long)below(rng, 129)
                                         : 32764 - 160 + (long)below(rng, 321);
    fit_blob(p, n, b, &bl, target);
    gen_blob(&g, &p[b], &bl);
  }
  emit(&g, p, n, sig, code, echo);
}

void dg_kernel(uint64_t *rng, dg_mode mode, const char *name, dg_buf *sig, dg_buf *decls,
               dg_buf *code) {
  kernel(rng, mode, name, sig, decls, code, false);
}

/* The same random draws as dg_kernel: a seed gives the same parameters either way. */
void dg_echo_kernel(uint64_t *rng, dg_mode mode, const char *name, dg_buf *sig, dg_buf *decls,
                    dg_buf *code) {
  kernel(rng, mode, name, sig, decls, code, true);
}
