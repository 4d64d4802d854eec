/* The one random-signature generator of the tests (see sig_gen.h). The generator keeps a small
 * tree per parameter only to print the views (signature, C/C++ declarations, kernel, leaves) in
 * step; sizes and alignments are tracked only to steer it (toward the 4352- and 32764-byte
 * boundaries, under the limit): the oracles are the compilers, not this file. */
#include "sig_gen.h"
#include "test_rng.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

uint64_t dg_next(uint64_t *state) { return test_rng_next(state); }

const char *const fg_scalar_names[13] = {"bool", "i8",  "u8",  "i16", "u16", "i32", "u32",
                                         "i64",  "u64", "f16", "bf16", "f32", "f64"};
const size_t fg_scalar_sizes[13] = {1, 1, 1, 2, 2, 4, 4, 8, 8, 2, 2, 4, 8};
static const char *const c_scalars[13] = {
    "bool", "signed char", "unsigned char", "short", "unsigned short", "int", "unsigned",
    "long long", "unsigned long long", "unsigned short", "unsigned short", "float", "double"};
/* Member names: none is a word of the signature grammar, C or C++. */
static const char *const names[] = {"loads", "stores", "segs", "n", "count", "p", "q", "base",
                                    "flags", "tile", "dims", "scale", "bias", "maps", "x", "y",
                                    "work", "bufs", "len", "k_", "A", "B2", "lo", "hi"};
#define NNAMES (sizeof names / sizeof *names)

enum { N_SCALAR, N_PTR, N_TMAP, N_BYTES, N_STRUCT, N_ARRAY };

typedef struct node {
  int kind, scalar;
  bool is_const, named[5];
  size_t align, n, nm, size, calign; /* align: align(N) as written (0: none); calign: C's */
  struct node *m[5], *elem;
  const char *names[5];
  char ctype[48];
  const char *suffix; /* from the wrapper to the leaf's storage: "", ".v", ".o", ".b" */
} node;

typedef struct gen {
  uint64_t *rng;
  const char *kname;
  int next_id;
  dg_buf *decls;
} gen;

static size_t below(uint64_t *rng, size_t n) { return (size_t)(dg_next(rng) % n); }
static size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

/* An alignment for bytes, tensor maps and raised structs: up to 128 three times in four, else
 * 256 ... 4096 (where the placement rules of the architectures part: docs/facts.md
 * "Placement rule"). */
static size_t draw_align(uint64_t *rng) {
  return below(rng, 4) ? (size_t)1 << below(rng, 8) : (size_t)256 << below(rng, 5);
}

const char dg_prelude[] = "#define GA(n) alignas(n)\n"
                          "typedef struct TM { GA(128) unsigned char o[128]; } TM;\n"
                          "typedef struct TM64 { GA(64) unsigned char o[128]; } TM64;\n";

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

const char *fg_prelude(int cxx) {
  return cxx ? "#define GA(n) alignas(n)\n"
               "typedef struct TM { GA(128) unsigned char o[128]; } TM;\n"
               "typedef struct TM64 { GA(64) unsigned char o[128]; } TM64;\n"
             : "#include <stdbool.h>\n#include <stddef.h>\n#include <stdint.h>\n"
               "#include <stdio.h>\n#include <string.h>\n#define GA(n) _Alignas(n)\n"
               "typedef struct TM { GA(128) unsigned char o[128]; } TM;\n"
               "typedef struct TM64 { GA(64) unsigned char o[128]; } TM64;\n";
}

/* A fresh wrapper/struct type name; its definition is appended to decls by the caller. */
static void fresh(gen *g, node *t) { snprintf(t->ctype, sizeof t->ctype, "S_%s_%d", g->kname, g->next_id++); }

static node *gen_node(gen *g, int depth, bool allow_array);

static void gen_scalar(gen *g, node *t) {
  t->kind = N_SCALAR;
  t->scalar = (int)below(g->rng, 13);
  t->size = t->calign = fg_scalar_sizes[t->scalar];
  t->suffix = "";
  snprintf(t->ctype, sizeof t->ctype, "%s", c_scalars[t->scalar]);
  if (below(g->rng, 8)) return;
  t->align = t->size << (1 + below(g->rng, 4)); /* over-aligned: a wrapper in C */
  if (below(g->rng, 4) == 0) t->align = (size_t)256 << below(g->rng, 5);
  t->size = t->calign = t->align;
  t->suffix = ".v";
  fresh(g, t);
  dg_buf_printf(g->decls, "typedef struct %s { GA(%zu) %s v; } %s;\n", t->ctype, t->align,
                c_scalars[t->scalar], t->ctype);
}

static void gen_pointer(gen *g, node *t) {
  t->kind = N_PTR;
  t->scalar = (int)below(g->rng, 15); /* 13: void*, 14: ptr */
  t->is_const = t->scalar < 14 && below(g->rng, 2);
  if (below(g->rng, 6) == 0) t->align = (size_t)1 << below(g->rng, 8); /* the pointee's */
  t->size = t->calign = 8;
  t->suffix = "";
  snprintf(t->ctype, sizeof t->ctype, "%s%s *", t->is_const ? "const " : "",
           t->scalar < 13 ? c_scalars[t->scalar] : "void");
}

static void gen_tmap(gen *g, node *t) {
  size_t pick = below(g->rng, 4);
  t->kind = N_TMAP;
  t->size = 128;
  t->suffix = ".o";
  t->calign = pick < 2 ? 128 : pick == 2 ? 64 : draw_align(g->rng); /* lowered or raised */
  t->align = pick == 0 ? 0 : t->calign;
  t->size = round_up(128, t->calign); /* align(4096): 4096 bytes each (C's sizeof, the device's) */
  if (pick < 2 || pick == 2) {
    snprintf(t->ctype, sizeof t->ctype, "%s", pick == 2 ? "TM64" : "TM");
    return;
  }
  fresh(g, t);
  dg_buf_printf(g->decls, "typedef struct %s { GA(%zu) unsigned char o[128]; } %s;\n", t->ctype,
                t->calign, t->ctype);
}

static void gen_bytes(gen *g, node *t) {
  t->kind = N_BYTES;
  t->n = 1 + below(g->rng, 40);
  t->calign = draw_align(g->rng);
  t->align = t->calign == 1 && below(g->rng, 2) ? 0 : t->calign;
  t->size = round_up(t->n, t->calign);
  t->suffix = ".b";
  fresh(g, t);
  dg_buf_printf(g->decls, "typedef struct %s { GA(%zu) unsigned char b[%zu]; } %s;\n", t->ctype,
                t->calign, t->n, t->ctype);
}

static void member_decl(gen *g, const node *m, const char *cname, bool first, size_t raise) {
  if (first && raise) dg_buf_printf(g->decls, "GA(%zu) ", raise);
  if (m->kind == N_ARRAY) dg_buf_printf(g->decls, "%s %s[%zu]; ", m->elem->ctype, cname, m->n);
  else dg_buf_printf(g->decls, "%s %s; ", m->ctype, cname);
}

static void gen_struct(gen *g, node *t, int depth) {
  t->kind = N_STRUCT;
  t->nm = 1 + below(g->rng, 5);
  size_t off = 0, al = 1;
  for (size_t i = 0; i < t->nm; i++) {
    t->m[i] = gen_node(g, depth + 1, true);
    bool taken;
    do { /* a name not used yet in this struct */
      t->names[i] = names[below(g->rng, NNAMES)];
      taken = false;
      for (size_t k = 0; k < i; k++) taken |= t->named[k] && t->names[k] == t->names[i];
    } while (taken);
    t->named[i] = below(g->rng, 4) != 0;
    off = round_up(off, t->m[i]->calign) + t->m[i]->size;
    if (t->m[i]->calign > al) al = t->m[i]->calign;
  }
  if (below(g->rng, 6) == 0) { /* raise the alignment (C and C++ refuse to lower it) */
    t->align = al << below(g->rng, 3);
    size_t big = draw_align(g->rng);
    if (big > t->align) t->align = big;
    if (t->align > 4096) t->align = al > 4096 ? al : 4096;
    al = t->align;
  }
  t->calign = al;
  t->size = round_up(off, al);
  t->suffix = "";
  fresh(g, t);
  dg_buf_printf(g->decls, "typedef struct %s { ", t->ctype);
  for (size_t i = 0; i < t->nm; i++) {
    char cname[32];
    if (t->named[i]) snprintf(cname, sizeof cname, "%s", t->names[i]);
    else snprintf(cname, sizeof cname, "_u%zu", i);
    member_decl(g, t->m[i], cname, i == 0, t->align);
  }
  dg_buf_printf(g->decls, "} %s;\n", t->ctype);
}

static void gen_array(gen *g, node *t, int depth) {
  t->kind = N_ARRAY;
  t->elem = gen_node(g, depth + 1, false);
  t->n = 1 + below(g->rng, t->elem->kind == N_STRUCT ? 4 : 8);
  while (t->n > 1 && t->elem->size * t->n > 2048) t->n--;
  t->size = t->elem->size * t->n;
  t->calign = t->elem->calign;
  t->suffix = "";
}

static node *gen_node(gen *g, int depth, bool allow_array) {
  node *t = calloc(1, sizeof *t);
  if (!t) abort();
  size_t r = below(g->rng, 100);
  if (depth >= 4) r %= 40;
  if (r < 25) gen_scalar(g, t);
  else if (r < 40) gen_pointer(g, t);
  else if (r < 50) gen_bytes(g, t);
  else if (r < 62) gen_tmap(g, t);
  else if (r < 85 || !allow_array) gen_struct(g, t, depth);
  else gen_array(g, t, depth);
  return t;
}

static void free_node(node *t) {
  if (!t) return;
  for (size_t i = 0; i < t->nm; i++) free_node(t->m[i]);
  free_node(t->elem);
  free(t);
}

static void sig_of(const node *t, dg_buf *b) {
  switch (t->kind) {
  case N_SCALAR: dg_buf_printf(b, "%s", fg_scalar_names[t->scalar]); break;
  case N_PTR:
    if (t->scalar == 14) dg_buf_printf(b, "ptr");
    else dg_buf_printf(b, "%s%s*", t->is_const ? "const " : "",
                       t->scalar < 13 ? fg_scalar_names[t->scalar] : "void");
    break;
  case N_TMAP: dg_buf_printf(b, "tensormap"); break;
  case N_BYTES: dg_buf_printf(b, "bytes(%zu)", t->n); break;
  case N_STRUCT:
    dg_buf_printf(b, "struct{");
    for (size_t i = 0; i < t->nm; i++) {
      dg_buf_printf(b, "%s", i ? ", " : "");
      sig_of(t->m[i], b);
      if (t->named[i]) dg_buf_printf(b, " %s", t->names[i]);
    }
    dg_buf_printf(b, "}");
    break;
  case N_ARRAY:
    sig_of(t->elem, b);
    dg_buf_printf(b, "[%zu]", t->n);
    return;
  }
  if (t->align) dg_buf_printf(b, " align(%zu)", t->align);
}

static fg_leaf *new_leaf(fg_case *c) {
  if (c->nleaves == c->cap) {
    c->cap = c->cap ? 2 * c->cap : 64;
    c->leaves = realloc(c->leaves, c->cap * sizeof *c->leaves);
    if (!c->leaves) abort();
  }
  fg_leaf *l = &c->leaves[c->nleaves++];
  memset(l, 0, sizeof *l);
  return l;
}

static void random_value(uint64_t *rng, fg_leaf *l) {
  for (size_t i = 0; i < l->bytes; i++) l->value[i] = (unsigned char)dg_next(rng);
  if (l->kind == FG_POINTER) l->value[0] = 0, l->value[1] |= 1; /* 256-aligned, not NULL */
  if (l->kind != FG_SCALAR) return;
  if (l->scalar == 0) l->value[0] &= 1;
  if (l->scalar == 11) l->value[3] &= 0xbf; /* finite: the exponent is not all ones */
  if (l->scalar == 12) l->value[7] &= 0xbf;
}

/* Every leaf of t: sig path sp, C member designator cm (from the parameter variable). */
static void walk(fg_case *c, uint64_t *rng, const node *t, size_t param, const char *sp,
                 const char *cm, const char *var) {
  char sp2[192], cm2[256];
  if (t->kind == N_STRUCT) {
    for (size_t i = 0; i < t->nm; i++) {
      if (t->named[i]) snprintf(sp2, sizeof sp2, "%s.%s", sp, t->names[i]);
      else snprintf(sp2, sizeof sp2, "%s.%zu", sp, i);
      if (t->named[i]) snprintf(cm2, sizeof cm2, "%s%s%s", cm, *cm ? "." : "", t->names[i]);
      else snprintf(cm2, sizeof cm2, "%s%s_u%zu", cm, *cm ? "." : "", i);
      walk(c, rng, t->m[i], param, sp2, cm2, var);
    }
    return;
  }
  if (t->kind == N_ARRAY) {
    for (size_t i = 0; i < t->n; i++) {
      snprintf(sp2, sizeof sp2, "%s[%zu]", sp, i);
      snprintf(cm2, sizeof cm2, "%s[%zu]", cm, i);
      walk(c, rng, t->elem, param, sp2, cm2, var);
    }
    return;
  }
  fg_leaf *l = new_leaf(c);
  l->param = param;
  l->kind = t->kind == N_SCALAR ? FG_SCALAR : t->kind == N_PTR ? FG_POINTER
            : t->kind == N_TMAP ? FG_TMAP : FG_BYTES;
  l->scalar = t->scalar;
  l->bytes = t->kind == N_SCALAR ? fg_scalar_sizes[t->scalar] : t->kind == N_PTR ? 8
             : t->kind == N_TMAP ? 128 : t->n;
  snprintf(l->path, sizeof l->path, "%s", sp);
  snprintf(l->cmember, sizeof l->cmember, "%s", cm);
  snprintf(l->cwrap, sizeof l->cwrap, "%s%s%s", var, *cm ? "." : "", cm);
  snprintf(l->cexpr, sizeof l->cexpr, "%s%s", l->cwrap, t->suffix);
  random_value(rng, l);
}

/* A top-level array needs a C wrapper (an array parameter would decay to a pointer). */
static void param_ctype(gen *g, fg_case *c, const node *t, size_t i) {
  if (t->kind != N_ARRAY) {
    snprintf(c->ptype[i], sizeof c->ptype[i], "%s", t->ctype);
    return;
  }
  snprintf(c->ptype[i], sizeof c->ptype[i], "S_%s_%d", g->kname, g->next_id++);
  dg_buf_printf(g->decls, "typedef struct %s { %s e[%zu]; } %s;\n", c->ptype[i], t->elem->ctype,
                t->n, c->ptype[i]);
}

dg_mode dg_pick_mode(uint64_t *rng) {
  size_t r = below(rng, 100);
  return r < 70 ? DG_SMALL : r < 85 ? DG_BIG : r < 92 ? DG_NEAR_4352 : DG_NEAR_LIMIT;
}

/* End of the C layout from offset 0 (ptxas checks the limit on this, and sm_75-89 choose their
 * base from it). */
static size_t c_end(node *const *p, size_t n) {
  size_t off = 0;
  for (size_t i = 0; i < n; i++) off = round_up(off, p[i]->calign) + p[i]->size;
  return off;
}

/* The parameter that moves the area across a boundary: tensormap[N], or bytes(N) align(A) with N
 * chosen so that the C layout of all n parameters (the blob at index b) ends near target. */
static node *gen_blob(gen *g, node **p, size_t n, size_t b, long target) {
  node *t = calloc(1, sizeof *t);
  if (!t) abort();
  bool maps = below(g->rng, 3) == 0;
  size_t align = draw_align(g->rng), bytes = 64;
  p[b] = t;
  for (int round = 0; round < 4; round++) { /* the padding before it depends on its size: iterate */
    t->calign = maps ? 128 : align;
    t->size = maps ? 128 * (bytes / 128 ? bytes / 128 : 1) : round_up(bytes, align);
    long want = (long)bytes + (target - (long)c_end(p, n));
    bytes = want < 1 ? 1 : (size_t)want;
  }
  if (maps) {
    t->kind = N_ARRAY;
    t->n = bytes / 128 ? bytes / 128 : 1;
    t->elem = calloc(1, sizeof *t->elem);
    if (!t->elem) abort();
    *t->elem = (node){.kind = N_TMAP, .size = 128, .calign = 128, .suffix = ".o"};
    snprintf(t->elem->ctype, sizeof t->elem->ctype, "TM");
    t->size = 128 * t->n, t->calign = 128;
  } else {
    t->kind = N_BYTES, t->n = bytes, t->calign = t->align = align;
    t->size = round_up(bytes, align);
    t->suffix = ".b";
    fresh(g, t);
    dg_buf_printf(g->decls, "typedef struct %s { GA(%zu) unsigned char b[%zu]; } %s;\n",
                  t->ctype, align, bytes, t->ctype);
  }
  return t;
}

/* The parameters of a case: DG_FIELDS 1-4, mostly structs; the others 1-10 of any kind (one in
 * ten a top-level array), and for the big modes a blob first or last. */
static size_t gen_params(gen *g, dg_mode mode, node **p) {
  uint64_t *rng = g->rng;
  size_t n = mode == DG_FIELDS ? 1 + below(rng, 4) : mode == DG_SMALL ? 1 + below(rng, 10)
                                                                      : 1 + below(rng, 5);
  size_t total = 0;
  for (size_t i = 0; i < n; i++) {
    node *t = mode != DG_FIELDS && below(rng, 10) == 0 ? NULL : gen_node(g, below(rng, 3) ? 0 : 1, true);
    if (!t) { /* a top-level array */
      t = calloc(1, sizeof *t);
      if (!t) abort();
      gen_array(g, t, 0);
    }
    while (t->size > 6000 || total + t->size > 14000) { /* keep the area under the limit */
      free_node(t);
      t = gen_node(g, 3, false);
    }
    total += round_up(t->size, 8);
    p[i] = t;
  }
  if (mode == DG_SMALL || mode == DG_FIELDS) return n;
  size_t b = below(rng, 3) == 0 ? n : 0; /* the blob first (most base-sensitive) or last */
  if (b == 0) memmove(&p[1], &p[0], n * sizeof *p);
  n++;
  long target = mode == DG_BIG ? 4400 + (long)below(rng, 20000)
                : mode == DG_NEAR_4352 ? 4352 - 64 + (long)below(rng, 129)
                                       : 32764 - 160 + (long)below(rng, 321);
  gen_blob(g, p, n, b, target);
  return n;
}

void dg_case_make(uint64_t *rng, dg_mode mode, const char *name, fg_case *c) {
  memset(c, 0, sizeof *c);
  snprintf(c->name, sizeof c->name, "%s", name);
  gen g = {rng, c->name, 0, &c->decls};
  node *p[FG_MAX_PARAMS] = {0};
  c->nparams = gen_params(&g, mode, p);
  for (size_t i = 0; i < c->nparams; i++) {
    node *t = p[i];
    param_ctype(&g, c, t, i);
    bool gc = t->kind == N_STRUCT || t->kind == N_ARRAY ? below(rng, 3) != 0 : below(rng, 4) == 0;
    bool named = below(rng, 4) != 0;
    char pname[32], var[32];
    snprintf(pname, sizeof pname, i == 0 ? "g" : "p%zu", i);
    snprintf(var, sizeof var, "v%zu", i);
    dg_buf_printf(&c->sig, "%s%s", i ? ", " : "", gc && t->kind != N_PTR ? "grid_constant " : "");
    sig_of(t, &c->sig);
    if (named) dg_buf_printf(&c->sig, " %s", pname);
    /* Every aggregate is read where the launch put it: without __grid_constant__ the compiler
     * copies a by-value struct member by member to local memory and padding bytes are lost (seen
     * on the H200). The mark changes no offset, so the signature keeps its own draw. */
    dg_buf_printf(&c->params, "%s%s%s v%zu", i ? ", " : "",
                  t->kind == N_PTR ? "" : "const __grid_constant__ ", c->ptype[i], i);
    if (mode == DG_FIELDS) {
      char sp[32];
      if (named) snprintf(sp, sizeof sp, "%s", pname);
      else snprintf(sp, sizeof sp, "%zu", i);
      if (t->kind == N_ARRAY) {
        for (size_t e = 0; e < t->n; e++) {
          char sp2[64], cm[48];
          snprintf(sp2, sizeof sp2, "%s[%zu]", sp, e);
          snprintf(cm, sizeof cm, "e[%zu]", e);
          walk(c, rng, t->elem, i, sp2, cm, var);
        }
      } else {
        walk(c, rng, t, i, sp, "", var);
      }
    }
    free_node(t);
  }
}

void fg_case_make(uint64_t *rng, const char *name, fg_case *c) { dg_case_make(rng, DG_FIELDS, name, c); }

/* The case as a kernel: empty, or (echo) one copy per parameter into the trailing `out`, each
 * parameter's bytes right after the previous one's. */
static void kernel(uint64_t *rng, dg_mode mode, const char *name, dg_buf *sig, dg_buf *decls,
                   dg_buf *code, bool echo) {
  fg_case c;
  dg_case_make(rng, mode, name, &c);
  dg_buf_printf(sig, "%s", c.sig.p);
  dg_buf_printf(decls, "%s", c.decls.p ? c.decls.p : "");
  dg_buf_printf(code, "extern \"C\" __global__ void %s(%s", name, c.params.p);
  if (!echo) {
    dg_buf_printf(code, ") {}\n");
  } else {
    dg_buf_printf(sig, ", u8* out");
    dg_buf_printf(code, ", unsigned char *out) {\n  unsigned char *o = out;\n");
    for (size_t i = 0; i < c.nparams; i++)
      dg_buf_printf(code, "  dg_echo_t<sizeof v%zu>(o, &v%zu);\n  o += sizeof v%zu;\n", i, i, i);
    dg_buf_printf(code, "}\n");
  }
  fg_case_free(&c);
}

void dg_kernel(uint64_t *rng, dg_mode mode, const char *name, dg_buf *sig, dg_buf *decls,
               dg_buf *code) {
  kernel(rng, mode, name, sig, decls, code, false);
}

void dg_echo_kernel(uint64_t *rng, dg_mode mode, const char *name, dg_buf *sig, dg_buf *decls,
                    dg_buf *code) {
  kernel(rng, mode, name, sig, decls, code, true);
}

void fg_case_free(fg_case *c) {
  dg_buf_free(&c->sig);
  dg_buf_free(&c->decls);
  dg_buf_free(&c->params);
  free(c->leaves);
  c->leaves = NULL;
}

static uint64_t value_u64(const fg_leaf *l) {
  uint64_t v = 0;
  memcpy(&v, l->value, l->bytes < 8 ? l->bytes : 8); /* little-endian host, as the device */
  return v;
}

void fg_emit_fill(dg_buf *b, const fg_leaf *l) {
  if (l->kind == FG_TMAP || l->kind == FG_BYTES) {
    dg_buf_printf(b, "  memcpy(%s, (const unsigned char[]){", l->cexpr);
    for (size_t i = 0; i < l->bytes; i++) dg_buf_printf(b, "%s%u", i ? "," : "", l->value[i]);
    dg_buf_printf(b, "}, %zu);\n", l->bytes);
    return;
  }
  if (l->kind == FG_POINTER) {
    dg_buf_printf(b, "  %s = (void *)(uintptr_t)0x%llxull;\n", l->cexpr,
                  (unsigned long long)value_u64(l));
    return;
  }
  if (l->scalar == 11) {
    float f;
    memcpy(&f, l->value, 4);
    dg_buf_printf(b, "  %s = %af;\n", l->cexpr, (double)f);
  } else if (l->scalar == 12) {
    double d;
    memcpy(&d, l->value, 8);
    dg_buf_printf(b, "  %s = %a;\n", l->cexpr, d);
  } else {
    dg_buf_printf(b, "  %s = (%s)0x%llxull;\n", l->cexpr, c_scalars[l->scalar],
                  (unsigned long long)value_u64(l));
  }
}

static gcl_status set_scalar(gcl_args *a, const gcl_field *f, const fg_leaf *l) {
  uint64_t u = 0;
  memcpy(&u, l->value, l->bytes);
  switch (l->scalar) {
  case 0: return gcl_args_set_field_bool(a, f, u != 0);
  case 1: return gcl_args_set_field_i8(a, f, (int8_t)u);
  case 2: return gcl_args_set_field_u8(a, f, (uint8_t)u);
  case 3: return gcl_args_set_field_i16(a, f, (int16_t)u);
  case 4: return gcl_args_set_field_u16(a, f, (uint16_t)u);
  case 5: return gcl_args_set_field_i32(a, f, (int32_t)u);
  case 6: return gcl_args_set_field_u32(a, f, (uint32_t)u);
  case 7: return gcl_args_set_field_i64(a, f, (int64_t)u);
  case 8: return gcl_args_set_field_u64(a, f, u);
  case 9: return gcl_args_set_field_f16(a, f, (uint16_t)u);
  case 10: return gcl_args_set_field_bf16(a, f, (uint16_t)u);
  case 11: {
    float x;
    memcpy(&x, l->value, 4);
    return gcl_args_set_field_f32(a, f, x);
  }
  default: {
    double x;
    memcpy(&x, l->value, 8);
    return gcl_args_set_field_f64(a, f, x);
  }
  }
}

gcl_status fg_set_leaf(gcl_args *a, const gcl_field *f, const fg_leaf *l) {
  if (l->kind == FG_SCALAR) return set_scalar(a, f, l);
  if (l->kind == FG_POINTER) {
    uint64_t p;
    memcpy(&p, l->value, 8);
    return gcl_args_set_field_ptr(a, f, p);
  }
  unsigned char raw[4096] = {0}; /* raw: the field's size, its alignment padding after the value */
  if (f->size > sizeof raw) return GCL_ERROR_INVALID_ARGUMENT;
  memcpy(raw, l->value, l->bytes);
  return gcl_args_set_field(a, f, raw, f->size);
}
