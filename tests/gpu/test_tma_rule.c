/* The rule learnt from a user's TMA gather (kernels/tma_gather.cu): a TMA load whose innermost coordinate x
 * element size is a multiple of 16 bytes works everywhere -- boxes inside, across the far and the
 * near edge (negative coordinates), entirely outside, and for tensors smaller than the box -- and
 * one that is not ends the kernel with CUDA_ERROR_ILLEGAL_INSTRUCTION, which gclaunch reports as
 * GCL_ERROR_KERNEL_FAULT naming the rule. kernels/tma_gather.cu picks each block's map by run-time
 * index from one grid-constant tensormap[16]; maps of random shapes, pitches and byte_offsets are
 * picked at run time (seed printed); every element is checked against a host reference. The
 * unaligned load runs in a forked child that makes every CUDA call itself (the fault is sticky
 * for the whole process). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gclaunch/gclaunch.h"
#include "kernel_image.h"
#include "../common/test_rng.h"
#include "../common/tmap_field.h"

/* In the forked child a failure exits with code 10 (Criterion's asserts belong to the parent). */
static bool in_child;
#define CHECK(call)                                                                               \
  do {                                                                                            \
    gcl_status check_s = (call);                                                                  \
    if (check_s != GCL_OK && in_child) {                                                          \
      fprintf(stderr, "%s: %s\n", #call, gcl_last_error());                                       \
      _exit(10);                                                                                  \
    }                                                                                             \
    cr_assert_eq(check_s, GCL_OK, "%s: %s", #call, gcl_last_error());                             \
  } while (0)
#define MAPS 16
#define BOX 16
#define WORK 640
#define SIG "grid_constant tensormap[16] maps, const i32* work, f32* out"

typedef struct tensor {
  int64_t shape[2], strides[2];
  DLTensor t;
  uint64_t base;
  size_t bytes;
  float *host; /* the allocation's contents */
} tensor;

typedef struct gather {
  gcl_context *ctx;
  gcl_module *mod;
  gcl_kernel *k;
  gcl_args *args;
  tensor ts[MAPS];
  uint64_t work, out;
} gather;

static int64_t pick(int64_t lo, int64_t hi) { return lo + (int64_t)(rng() % (uint64_t)(hi - lo + 1)); }

/* A rows x cols f32 view, pitch rounded up to 16 bytes plus 0-2 x 16, byte_offset 0-3 x 16. */
static void make_tensor(gcl_context *ctx, tensor *t, int64_t rows, int64_t cols) {
  int64_t pitch = (cols * 4 + 15) / 16 * 4 + 4 * pick(0, 2);
  uint64_t offset = 16u * (uint64_t)pick(0, 3);
  t->bytes = offset + (size_t)(rows * pitch * 4);
  t->shape[0] = rows, t->shape[1] = cols, t->strides[0] = pitch, t->strides[1] = 1;
  CHECK(gcl_mem_alloc(ctx, t->bytes, &t->base));
  t->host = malloc(t->bytes);
  for (size_t i = 0; i < t->bytes / 4; i++) t->host[i] = (float)(rng() % 100000) / 7.0f;
  CHECK(gcl_mem_upload(ctx, t->base, t->host, t->bytes));
  t->t = (DLTensor){.data = (void *)(uintptr_t)t->base, .device = {kDLCUDA, 0}, .ndim = 2,
                    .dtype = {kDLFloat, 32, 1}, .shape = t->shape, .strides = t->strides,
                    .byte_offset = offset};
}

static float element(const tensor *t, int64_t r, int64_t c) {
  if (r < 0 || c < 0 || r >= t->shape[0] || c >= t->shape[1]) return 0.0f; /* OOB fill: zeros */
  return t->host[t->t.byte_offset / 4 + (size_t)(r * t->strides[0] + c)];
}

static void gather_open(gather *g) {
  memset(g, 0, sizeof *g);
  CHECK(gcl_context_create(0, &g->ctx));
  size_t size = 0;
  void *image = kernel_image("tma_gather", gcl_context_sm(g->ctx), &size); /* reads a file only */
  CHECK(gcl_module_load_data(g->ctx, image, size, &g->mod));
  free(image);
  CHECK(gcl_module_find_kernel(g->mod, "tma_gather", SIG, &g->k));
  CHECK(gcl_args_create(gcl_kernel_layout(g->k), &g->args));
  CHECK(gcl_mem_alloc(g->ctx, WORK * 3 * 4, &g->work));
  CHECK(gcl_mem_alloc(g->ctx, WORK * 256 * 4, &g->out));
}

/* Map i over tensor i (box 16 x 16), then the work list and out into the args. */
static void gather_args(gather *g) {
  gcl_tensormap_options o;
  memset(&o, 0, sizeof o);
  o.box[0] = BOX, o.box[1] = BOX;
  for (int i = 0; i < MAPS; i++) CHECK(gcl_args_set_tensormaps(g->args, g->ctx, TMAP_FIELD(g->args, 0, (size_t)i), 1, (const DLTensor *const[]){&g->ts[i].t}, &o, 1, 0));
  CHECK(gcl_args_set_ptr(g->args, 1, g->work));
  CHECK(gcl_args_set_ptr(g->args, 2, g->out));
}

static void gather_close(gather *g) {
  for (int i = 0; i < MAPS; i++) {
    if (g->ts[i].base) gcl_mem_free(g->ctx, g->ts[i].base);
    free(g->ts[i].host);
  }
  gcl_mem_free(g->ctx, g->work);
  gcl_mem_free(g->ctx, g->out);
  gcl_args_destroy(g->args);
  gcl_module_destroy(g->mod);
  gcl_context_destroy(g->ctx);
}

/* An aligned innermost coordinate (a multiple of 4 floats = 16 bytes) in [lo, hi]. */
static int32_t col4(int64_t lo, int64_t hi) {
  int64_t a = lo < 0 ? lo / 4 : (lo + 3) / 4, b = hi >= 0 ? hi / 4 : (hi - 3) / 4; /* ceil, floor */
  if (b < a) b = a;
  return (int32_t)(4 * pick(a, b));
}

/* Item b's (map, column, row) by category: inside, far edge, near edge, outside, anywhere. */
static void pick_item(const gather *g, int b, int32_t *w) {
  int m = (int)(rng() % MAPS);
  int64_t rows = g->ts[m].shape[0], cols = g->ts[m].shape[1];
  int32_t c, r;
  switch (b % 5) {
  case 0: c = col4(0, cols > BOX ? cols - BOX : 0); r = (int32_t)pick(0, rows > BOX ? rows - BOX : 0); break;
  case 1: c = col4(cols - BOX + 4 > 0 ? cols - BOX + 4 : 0, cols - 1); r = (int32_t)pick(rows - BOX / 2, rows - 1); break;
  case 2: c = col4(-BOX + 4, -4); r = (int32_t)pick(-BOX + 1, -1); break;
  case 3: c = (rng() & 1) ? col4(cols + 4, cols + 64) : col4(-96, -BOX); r = (int32_t)pick(-40, rows + 40); break;
  default: c = col4(-32, cols + 32); r = (int32_t)pick(-32, rows + 32); break;
  }
  w[0] = m, w[1] = c, w[2] = r;
}

Test(tma_rule, aligned_boxes_everywhere_are_exact) {
  seed_rng_for("test_tma_rule");
  gather g;
  gather_open(&g);
  for (int i = 0; i < MAPS; i++) { /* every fourth tensor smaller than the box */
    bool small = i % 4 == 3;
    make_tensor(g.ctx, &g.ts[i], small ? pick(1, BOX - 1) : pick(1, 90), small ? pick(1, BOX - 1) : pick(1, 90));
  }
  gather_args(&g);
  static int32_t work[WORK * 3];
  for (int b = 0; b < WORK; b++) pick_item(&g, b, work + 3 * b);
  CHECK(gcl_mem_upload(g.ctx, g.work, work, sizeof work));
  CHECK(gcl_mem_fill_u8(g.ctx, g.out, 0xff, WORK * 256 * 4)); /* NaN: unwritten shows */
  gcl_launch_config cfg = {.grid = {WORK}, .block = {64}};
  CHECK(gcl_launch(g.k, &cfg, g.args));
  CHECK(gcl_context_synchronize(g.ctx));
  static float out[WORK * 256];
  CHECK(gcl_mem_download(g.ctx, out, g.out, sizeof out));
  size_t bad = 0;
  for (int b = 0; b < WORK; b++)
    for (int e = 0; e < 256; e++) {
      const int32_t *w = work + 3 * b;
      float want = element(&g.ts[w[0]], w[2] + e / BOX, w[1] + e % BOX);
      if (!(out[256 * b + e] == want) && bad++ < 5)
        fprintf(stderr, "item %d (map %d %lldx%lld, col %d, row %d) element %d: %g, want %g\n", b,
                w[0], (long long)g.ts[w[0]].shape[0], (long long)g.ts[w[0]].shape[1], w[1], w[2],
                e, out[256 * b + e], want);
    }
  cr_assert_eq(bad, 0, "%zu of %d elements differ", bad, WORK * 256);
  gather_close(&g);
}

/* The child's whole life: 0 when an unaligned innermost coordinate surfaced as
 * GCL_ERROR_KERNEL_FAULT with the TMA hint and stayed sticky; else a code and a message. */
static int unaligned_child(void) {
  in_child = true;
  gather g;
  gather_open(&g);
  for (int i = 0; i < MAPS; i++) make_tensor(g.ctx, &g.ts[i], 32, 32);
  gather_args(&g);
  int32_t w[3] = {0, 1 /* 4 bytes: not a multiple of 16 */, 0};
  if (gcl_mem_upload(g.ctx, g.work, w, sizeof w) != GCL_OK) return 2;
  gcl_launch_config cfg = {.grid = {1}, .block = {64}};
  gcl_status s = gcl_launch(g.k, &cfg, g.args);
  if (s == GCL_OK) s = gcl_context_synchronize(g.ctx);
  const char *msg = gcl_last_error();
  fprintf(stderr, "unaligned TMA load: %s: %s\n", gcl_status_name(s), msg);
  if (s != GCL_ERROR_KERNEL_FAULT) return 3;
  if (!strstr(msg, "CUDA_ERROR_ILLEGAL_INSTRUCTION") || gcl_last_cuda_error() != 715) return 4;
  if (!strstr(msg, "innermost coordinate x element size is not a multiple of 16 bytes")) return 5;
  uint64_t p = 0;
  if (gcl_mem_alloc(g.ctx, 64, &p) != GCL_ERROR_KERNEL_FAULT) return 6; /* sticky */
  gather_close(&g);
  return 0;
}

Test(tma_rule, an_unaligned_innermost_coordinate_is_a_named_kernel_fault) {
  seed_rng_for("test_tma_rule");
  fflush(NULL);
  pid_t pid = fork(); /* this process never touched CUDA (gpu_main probes in a child) */
  cr_assert_geq(pid, 0);
  if (pid == 0) _exit(unaligned_child());
  int st = 0;
  cr_assert_eq(waitpid(pid, &st, 0), pid);
  cr_assert(WIFEXITED(st), "the child died (signal %d)", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
  cr_assert_eq(WEXITSTATUS(st), 0, "child check %d failed (its stderr says why)", WEXITSTATUS(st));
}
