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
 */
#include <gclaunch/gclaunch.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REPS 21

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

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
    double t0 = now_ns();
    for (size_t k = 0; k < iters; k++) op(c);
    if (r >= 0) t[r] = (now_ns() - t0) / (double)iters;
  }
  qsort(t, REPS, sizeof *t, cmp_double);
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
  gcl_args_destroy(c8.args);
  gcl_args_destroy(cm.args);
  gcl_layout_destroy(c8.layout);
  gcl_layout_destroy(cm.layout);
  return 0;
}
