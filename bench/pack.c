/* bench_pack: CPU cost of packing kernel arguments with gclaunch (no GPU needed).
 *
 * Each row is the median over REPS repetitions of ns per operation, each repetition timing a
 * loop of many operations with CLOCK_MONOTONIC. Rows:
 *   set 8 scalars/pointers   one op = 8 typed setters (f32*, const f32*, f32*, u64, i32, i32,
 *                            f32, f64) on a prepared buffer
 *   set 1 of 240 tensormaps  one op = gcl_args_set_element of one 128-byte map
 *   fill 30 KB buffer        one op = 240 set_element + 1 set + gcl_args_buffer (30,836 bytes)
 *   create+fill+destroy      the same plus gcl_args_create / gcl_args_destroy
 *   parse+layout 240 maps    one op = gcl_signature_parse + gcl_layout_create + destroy both
 * Fields (issue 14), a 4 KB globals struct `grid_constant struct{tensormap[30] maps, u64[4] ptrs,
 * u32 n, f32 scale, i32[8] dims} g` against the same sizes as top-level parameters
 * (`grid_constant tensormap[30] maps, u32 n`), in the same run:
 *   field: map, g incomplete the same while g.ptrs, g.scale, g.dims were never set
 *   field: set 1 of 30 maps  one op = gcl_args_set_field of g.maps[i % 30] (resolved beforehand;
 *                            g complete, as after the first launch)
 *   field: set u32 g.n       one op = gcl_args_set_field_u32 of g.n (resolved beforehand)
 *   param: set 1 of 30 maps  one op = gcl_args_set_element of one 128-byte map
 *   param: set u32 n         one op = gcl_args_set_u32
 *   resolve g.maps[17]       one op = gcl_layout_field (the once-per-field cost)
 * Long signatures (issue 34: the parser was quadratic in the number of names), after the table:
 *   parse 200,000 params     gcl_signature_parse + destroy of "u32 p0, u32 p1, ..." (named) and
 *                            of "u32, u32, ..." (unnamed), median of 5 after one warm-up, in ms
 */
#include <gclaunch/gclaunch.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bench_util.h"


#define REPS 21

static void check(gcl_status s, const char *what) {
  if (s == GCL_OK) return;
  fprintf(stderr, "bench_pack: %s: %s: %s\n", what, gcl_status_name(s), gcl_last_error());
  exit(1);
}

typedef struct ctx {
  gcl_args *args;
  gcl_layout *layout;
  unsigned char map[128];
  size_t i;
} ctx;

typedef void (*op_fn)(ctx *c);

static void op_set8(ctx *c) {
  gcl_args *a = c->args;
  uint64_t base = 0x7f0000000000ull + (c->i++ & 0xff) * 64;
  check(gcl_args_set_ptr(a, 0, base), "set a");
  check(gcl_args_set_ptr(a, 1, base + 4096), "set b");
  check(gcl_args_set_ptr(a, 2, base + 8192), "set c");
  check(gcl_args_set_u64(a, 3, c->i), "set n");
  check(gcl_args_set_i32(a, 4, (int32_t)c->i), "set x");
  check(gcl_args_set_i32(a, 5, 7), "set y");
  check(gcl_args_set_f32(a, 6, 1.5f), "set alpha");
  check(gcl_args_set_f64(a, 7, 2.5), "set beta");
}

static void op_set_map(ctx *c) {
  c->map[0] = (unsigned char)c->i;
  check(gcl_args_set_element(c->args, 0, c->i++ % 240, c->map, sizeof c->map), "set_element");
}

static void fill_all(ctx *c, gcl_args *a) {
  for (size_t e = 0; e < 240; e++) {
    c->map[0] = (unsigned char)e;
    check(gcl_args_set_element(a, 0, e, c->map, sizeof c->map), "set_element");
  }
  check(gcl_args_set_u32(a, 1, 240), "set n");
  const void *data;
  size_t size;
  check(gcl_args_buffer(a, &data, &size), "buffer");
}

static void op_fill(ctx *c) { fill_all(c, c->args); }

static void op_create_fill(ctx *c) {
  gcl_args *a = NULL;
  check(gcl_args_create(c->layout, &a), "create");
  fill_all(c, a);
  gcl_args_destroy(a);
}

static void op_parse_layout(ctx *c) {
  gcl_signature *sig = NULL;
  gcl_layout *l = NULL;
  check(gcl_signature_parse("grid_constant tensormap[240] maps, u32 n", &sig), "parse");
  check(gcl_layout_create(sig, 90, &l), "layout");
  gcl_layout_destroy(l);
  gcl_signature_destroy(sig);
  (void)c;
}

/* Median ns per op over REPS repetitions of iters ops (after one warm-up repetition). */
static double measure(op_fn op, ctx *c, size_t iters, double *lo, double *hi) {
  double t[REPS];
  for (int r = -1; r < REPS; r++) {
    double t0 = bench_now_ns();
    for (size_t k = 0; k < iters; k++) op(c);
    if (r >= 0) t[r] = (bench_now_ns() - t0) / (double)iters;
  }
  qsort(t, REPS, sizeof *t, bench_cmp_double);
  *lo = t[0], *hi = t[REPS - 1];
  return t[REPS / 2];
}

static gcl_layout *layout_for(const char *text) {
  gcl_signature *sig = NULL;
  gcl_layout *l = NULL;
  check(gcl_signature_parse(text, &sig), "parse");
  check(gcl_layout_create(sig, 90, &l), "layout");
  gcl_signature_destroy(sig);
  return l;
}

static void row(const char *name, op_fn op, ctx *c, size_t iters) {
  double lo, hi, med = measure(op, c, iters, &lo, &hi);
  printf("| %-26s | %12.1f | %10.1f | %10.1f |\n", name, med, lo, hi);
}

/* --- fields: one map and one u32 inside a 4 KB globals struct vs top-level parameters --------- */

static struct {
  gcl_field maps[30], n;
} fstate;

static void op_field_map(ctx *c) {
  c->map[0] = (unsigned char)c->i;
  check(gcl_args_set_field(c->args, &fstate.maps[c->i++ % 30], c->map, sizeof c->map), "set_field");
}

static void op_field_u32(ctx *c) { check(gcl_args_set_field_u32(c->args, &fstate.n, (uint32_t)c->i++), "set_field_u32"); }

static void op_param_map(ctx *c) {
  c->map[0] = (unsigned char)c->i;
  check(gcl_args_set_element(c->args, 0, c->i++ % 30, c->map, sizeof c->map), "set_element");
}

static void op_param_u32(ctx *c) { check(gcl_args_set_u32(c->args, 1, (uint32_t)c->i++), "set_u32"); }

static void op_resolve(ctx *c) {
  gcl_field f;
  check(gcl_layout_field(c->layout, "g.maps[17]", &f), "layout_field");
}

static void field_rows(void) {
  ctx cg = {0}, ct = {0};
  cg.layout = layout_for("grid_constant struct{tensormap[30] maps, u64[4] ptrs, u32 n, f32 scale, "
                         "i32[8] dims} g");
  ct.layout = layout_for("grid_constant tensormap[30] maps, u32 n");
  check(gcl_args_create(cg.layout, &cg.args), "create");
  check(gcl_args_create(ct.layout, &ct.args), "create");
  for (int e = 0; e < 30; e++) {
    char path[32];
    snprintf(path, sizeof path, "g.maps[%d]", e);
    check(gcl_layout_field(cg.layout, path, &fstate.maps[e]), "layout_field");
  }
  check(gcl_layout_field(cg.layout, "g.n", &fstate.n), "layout_field");
  /* While g is incomplete, each set also marks its bytes (one step per 8 bytes); once every leaf
   * was set, the set-tracking costs nothing (lib/core/args.c, mark). Both states are rows. */
  row("field: map, g incomplete", op_field_map, &cg, 1000000);
  gcl_field whole;
  static unsigned char zero[4096];
  check(gcl_layout_param_field(cg.layout, 0, &whole), "param_field");
  check(gcl_args_set_field(cg.args, &whole, zero, whole.size), "set whole g");
  row("field: set 1 of 30 maps", op_field_map, &cg, 1000000);
  row("field: set u32 g.n", op_field_u32, &cg, 1000000);
  row("param: set 1 of 30 maps", op_param_map, &ct, 1000000);
  row("param: set u32 n", op_param_u32, &ct, 1000000);
  row("resolve g.maps[17]", op_resolve, &cg, 200000);
  size_t goff = 0, gsize = 0;
  check(gcl_layout_param(cg.layout, 0, &goff, &gsize, NULL), "layout_param");
  printf("\nglobals struct g: %zu bytes at offset %zu; top-level maps+n buffer %zu bytes\n", gsize,
         goff, gcl_layout_size(ct.layout));
  gcl_args_destroy(cg.args);
  gcl_args_destroy(ct.args);
  gcl_layout_destroy(cg.layout);
  gcl_layout_destroy(ct.layout);
}

/* gcl_signature_parse of n u32 parameters, named p0 ... or unnamed: median ms of 5. */
static void long_signature_row(size_t n, bool named) {
  char *text = malloc(n * 16 + 1), *at = text;
  if (!text) { fprintf(stderr, "bench_pack: out of memory\n"); exit(1); }
  for (size_t i = 0; i < n; i++)
    at += named ? sprintf(at, "%su32 p%zu", i ? ", " : "", i) : sprintf(at, "%su32", i ? ", " : "");
  double t[5];
  for (int r = -1; r < 5; r++) {
    gcl_signature *sig = NULL;
    double t0 = bench_now_ns();
    check(gcl_signature_parse(text, &sig), "parse");
    if (r >= 0) t[r] = (bench_now_ns() - t0) / 1e6;
    if (gcl_signature_count(sig) != n) { fprintf(stderr, "bench_pack: wrong count\n"); exit(1); }
    gcl_signature_destroy(sig);
  }
  qsort(t, 5, sizeof *t, bench_cmp_double);
  printf("parse %zu %s u32 parameters (%zu bytes of text): median %.1f ms (min %.1f, max %.1f)\n",
         n, named ? "named" : "unnamed", strlen(text), t[2], t[0], t[4]);
  free(text);
}

int main(void) {
  ctx c8 = {0}, cm = {0};
  c8.layout = layout_for("f32* a, const f32* b, f32* c, u64 n, i32 x, i32 y, f32 alpha, f64 beta");
  cm.layout = layout_for("grid_constant tensormap[240] maps, u32 n");
  check(gcl_args_create(c8.layout, &c8.args), "create");
  check(gcl_args_create(cm.layout, &cm.args), "create");
  printf("bench_pack: sm_90 layouts, %d repetitions, median / min / max ns per operation\n", REPS);
  printf("8-argument buffer %zu bytes, 240-map buffer %zu bytes\n\n", gcl_layout_size(c8.layout),
         gcl_layout_size(cm.layout));
  printf("| %-26s | %12s | %10s | %10s |\n", "operation", "median ns", "min", "max");
  printf("|----------------------------|--------------|------------|------------|\n");
  row("set 8 scalars/pointers", op_set8, &c8, 200000);
  row("set 1 of 240 tensormaps", op_set_map, &cm, 1000000);
  row("fill 30 KB buffer", op_fill, &cm, 5000);
  row("create+fill+destroy 30 KB", op_create_fill, &cm, 5000);
  row("parse+layout 240 maps", op_parse_layout, &cm, 20000);
  field_rows();
  printf("\n");
  long_signature_row(200000, true);
  long_signature_row(200000, false);
  gcl_args_destroy(c8.args);
  gcl_args_destroy(cm.args);
  gcl_layout_destroy(c8.layout);
  gcl_layout_destroy(cm.layout);
  return 0;
}
