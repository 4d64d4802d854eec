/* bench_descriptors: where should TMA descriptors live?
 *
 * The TMA copy of kernels/descbench.cu with its K source descriptors (+1 destination) placed
 *   param    - in one grid-constant `tensormap[K+1]` parameter (the constant bank),
 *   global   - in global memory, fenced in each block before first use,
 *   global+p - in global memory, fenced and prefetched (prefetch.tensormap),
 * for K in {1, 8, 64, 240}, tiles 64x64 ... 256x128 in fp32 and bf16, moving >= 2 GiB (read +
 * written) per measurement so the 60 MB L2 does not help. Each measurement is the median over
 * repetitions of a host clock around `launches` back-to-back launches and a synchronize, after a
 * warm-up launch; cuMemcpyDtoD of the same bytes is measured the same way in the same run and
 * every result is given as a fraction of it. Each configuration's copy is verified on sampled
 * rows against the source before it is timed.
 *
 * The ring is configurable at run time (kernels/descbench.cu reads it from Shape): stages, blocks
 * per SM and the lag between a stage's store and its refill. The default is the design's own
 * choice (up to 4 stages, as many blocks as fit 200 KiB per SM, lag 1). --sweep first measures
 * every (stages, blocks per SM, lag) that fits for the small tiles (bf16 64x64, bf16 128x64,
 * fp32 64x64) at K = 240 with the descriptors in the constant bank, prints the table and the best
 * configuration, and then runs the main table with each swept tile's best configuration (the
 * CSV says which ring every row used).
 *
 * --probe measures what bounds the small tiles (see probe()); alone it skips the main table.
 *
 *   bench_descriptors [--csv FILE] [--sweep-csv FILE] [--reps N] [--quick] [--sweep] [--probe]
 */
#include <gclaunch/gclaunch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bench_util.h"

static double now_s(void) { return bench_now_ns() / 1e9; }

#ifndef GCL_KERNEL_DIR
#define GCL_KERNEL_DIR "build/kernels"
#endif

#define GiB (1024.0 * 1024.0 * 1024.0)
#define CHECK(call)                                                                               \
  do {                                                                                            \
    gcl_status s_ = (call);                                                                       \
    if (s_ != GCL_OK) {                                                                           \
      fprintf(stderr, "bench_descriptors: %s: %s: %s\n", #call, gcl_status_name(s_),             \
              gcl_last_error());                                                                  \
      exit(1);                                                                                    \
    }                                                                                             \
  } while (0)

typedef struct shape {
  uint32_t k, rows, tiles_x, tiles_per_tensor, box_w, box_h, tile_bytes, stages, lag, boxes;
} shape; /* kernels/descbench.cu Shape */
#define SHAPE_SIG "struct{u32,u32,u32,u32,u32,u32,u32,u32,u32,u32} s"
#define STAGES_MAX 16 /* kernels/descbench.cu GCL_DESC_STAGES_MAX */
#define SMEM_PER_SM (200 * 1024) /* what the rings may take of an SM's 228 KiB */

/* A ring: 0 fields mean the default choice; boxes = tiles per stage (one barrier, one bulk
 * group), 0 = 1. */
typedef struct ring { uint32_t stages, per_sm, lag, boxes; } ring;

typedef struct config {
  const char *dtype;
  uint8_t code, bits;
  uint32_t box_w, box_h;
  uint32_t k;
  ring ring;
  int l2; /* gcl_tensormap_options.l2_promotion (0: none) */
} config;

typedef struct bench {
  gcl_context *ctx;
  gcl_module *mod;
  int sms, reps, launches;
  uint64_t src, dst, maps; /* device buffers */
  size_t src_bytes;
  FILE *csv;
} bench;

static const uint32_t ks[] = {1, 8, 64, 240};
static const uint32_t cols = 4096; /* elements per row of every tensor */
static const size_t min_src_bytes = (size_t)1 << 30; /* 1 GiB read + 1 GiB written */

/* Rows per source tensor: a multiple of box_h with k * rows * cols * esize >= 1 GiB. */
static uint32_t rows_for(const config *c) {
  size_t esize = c->bits / 8, per_tensor = min_src_bytes / c->k / (cols * esize) + 1;
  return (uint32_t)((per_tensor + c->box_h - 1) / c->box_h * c->box_h);
}

static DLTensor tensor2d(uint64_t base, const config *c, int64_t *shp, uint32_t rows) {
  shp[0] = rows;
  shp[1] = cols;
  DLTensor t = {0};
  t.data = (void *)(uintptr_t)base;
  t.device.device_type = kDLCUDA;
  t.ndim = 2;
  t.dtype.code = c->code;
  t.dtype.bits = c->bits;
  t.dtype.lanes = 1;
  t.shape = shp;
  return t;
}

static shape shape_for(const bench *b, const config *c, uint32_t *grid) {
  shape s = {0};
  s.k = c->k;
  s.rows = rows_for(c);
  s.box_w = c->box_w;
  s.box_h = c->box_h;
  s.tiles_x = cols / c->box_w;
  s.tiles_per_tensor = s.tiles_x * (s.rows / c->box_h);
  s.tile_bytes = c->box_w * c->box_h * (c->bits / 8);
  s.boxes = c->ring.boxes ? c->ring.boxes : 1;
  const uint32_t smem = SMEM_PER_SM;
  uint32_t dflt = smem / s.tile_bytes >= 4 ? 4 : smem / s.tile_bytes ? smem / s.tile_bytes : 1;
  s.stages = c->ring.stages ? c->ring.stages : dflt;
  s.lag = c->ring.stages ? c->ring.lag : s.stages > 1;
  uint32_t per_sm = c->ring.per_sm ? c->ring.per_sm : smem / (s.stages * s.boxes * s.tile_bytes);
  *grid = (uint32_t)b->sms * (per_sm ? per_sm : 1);
  return s;
}

/* Map i of the kernel's tensormap[N] parameter 0, through its field. */
static gcl_status set_map(gcl_args *args, gcl_context *ctx, uint32_t i, const DLTensor *t,
                          const gcl_tensormap_options *o) {
  const gcl_layout *l = gcl_args_layout(args);
  gcl_field maps, m;
  gcl_status st = gcl_layout_param_field(l, 0, &maps);
  if (st == GCL_OK) st = gcl_layout_element_field(l, &maps, i, &m);
  return st != GCL_OK ? st : gcl_args_set_tensormaps(args, ctx, &m, 1, &t, o, 1, 0);
}

/* Encodes the k source maps and the destination map; into args element i (param) or map i. */
static void encode_maps(bench *b, const config *c, const shape *s, gcl_args *args, void *host) {
  gcl_tensormap_options o = {0};
  o.box[0] = c->box_w;
  o.box[1] = c->box_h;
  o.l2_promotion = c->l2;
  int64_t shp[2];
  size_t tensor_bytes = (size_t)s->rows * cols * (c->bits / 8);
  for (uint32_t i = 0; i <= c->k; i++) {
    DLTensor t = i < c->k ? tensor2d(b->src + i * tensor_bytes, c, shp, s->rows)
                          : tensor2d(b->dst, c, shp, s->rows * c->k);
    if (args)
      CHECK(set_map(args, b->ctx, i, &t, &o));
    else
      CHECK(gcl_tensormap_encode(b->ctx, &t, &o, (char *)host + 128 * (size_t)i));
  }
}

/* Compares sampled rows of the destination with the source. */
static int verify(bench *b, const config *c, const shape *s) {
  size_t row_bytes = (size_t)cols * (c->bits / 8), tensor_bytes = s->rows * row_bytes;
  unsigned char *x = malloc(row_bytes), *y = malloc(row_bytes);
  int bad = 0;
  for (int probe = 0; probe < 16 && !bad; probe++) {
    uint32_t k = (uint32_t)rand() % c->k, r = (uint32_t)rand() % s->rows;
    size_t off = k * tensor_bytes + r * row_bytes;
    CHECK(gcl_mem_download(b->ctx, x, b->src + off, row_bytes));
    CHECK(gcl_mem_download(b->ctx, y, b->dst + off, row_bytes));
    if (memcmp(x, y, row_bytes)) {
      fprintf(stderr, "bench_descriptors: MISMATCH %s %ux%u K=%u tensor %u row %u\n", c->dtype,
              c->box_w, c->box_h, c->k, k, r);
      bad = 1;
    }
  }
  free(x);
  free(y);
  return bad;
}

static double time_launches(bench *b, gcl_kernel *kern, const gcl_launch_config *lc,
                            const gcl_args *args) {
  double t[64];
  CHECK(gcl_launch(kern, lc, args));
  CHECK(gcl_context_synchronize(b->ctx));
  for (int r = 0; r < b->reps; r++) {
    double t0 = now_s();
    for (int l = 0; l < b->launches; l++) CHECK(gcl_launch(kern, lc, args));
    CHECK(gcl_context_synchronize(b->ctx));
    t[r] = (now_s() - t0) / b->launches;
  }
  return bench_median(t, b->reps);
}

static double time_memcpy(bench *b, size_t bytes) {
  double t[64];
  CHECK(gcl_mem_copy(b->ctx, b->dst, b->src, bytes));
  CHECK(gcl_context_synchronize(b->ctx));
  for (int r = 0; r < b->reps; r++) {
    double t0 = now_s();
    for (int l = 0; l < b->launches; l++) CHECK(gcl_mem_copy(b->ctx, b->dst, b->src, bytes));
    CHECK(gcl_context_synchronize(b->ctx));
    t[r] = (now_s() - t0) / b->launches;
  }
  return bench_median(t, b->reps);
}

static void report(bench *b, FILE *csv, const config *c, const shape *s, uint32_t grid,
                   const char *where, size_t bytes, double sec, double copy_sec) {
  double moved = 2.0 * bytes, gbps = moved / sec / 1e9, copy = moved / copy_sec / 1e9;
  uint32_t per_sm = grid / (uint32_t)b->sms;
  printf("%-5s %3ux%-3u K=%-3u %-9s S=%-2u B/SM=%-2u L=%u boxes=%u %7.3f ms %8.1f GB/s  memcpy "
         "%8.1f GB/s  %5.1f%%\n", c->dtype, c->box_w, c->box_h, c->k, where, s->stages, per_sm,
         s->lag, s->boxes, sec * 1e3, gbps, copy, 100.0 * gbps / copy);
  if (csv)
    fprintf(csv, "%s,%u,%u,%u,%s,%zu,%.6f,%.2f,%.2f,%.4f,%u,%u,%u,%u\n", c->dtype, c->box_w,
            c->box_h, c->k, where, (size_t)moved, sec * 1e3, gbps, copy, gbps / copy, s->stages,
            per_sm, s->lag, s->boxes);
}

static int run_config(bench *b, const config *c) {
  uint32_t grid;
  shape s = shape_for(b, c, &grid);
  size_t bytes = (size_t)c->k * s.rows * cols * (c->bits / 8);
  char name[64], sig[128];
  snprintf(name, sizeof name, "desc_param_%u", c->k + 1);
  snprintf(sig, sizeof sig, "grid_constant tensormap[%u] maps, " SHAPE_SIG, c->k + 1);
  gcl_launch_config lc = {.grid = {grid, 1, 1}, .block = {32, 1, 1},
                          .shared_bytes = (size_t)s.stages * s.boxes * s.tile_bytes};
  double copy_sec = time_memcpy(b, bytes);
  int bad = 0;
  /* param: descriptors in the constant bank */
  gcl_kernel *kp;
  CHECK(gcl_kernel_get(b->mod, name, sig, &kp));
  gcl_args *ap;
  CHECK(gcl_args_create(gcl_kernel_layout(kp), &ap));
  encode_maps(b, c, &s, ap, NULL);
  CHECK(gcl_args_set(ap, 1, &s, sizeof s));
  CHECK(gcl_mem_fill_u8(b->ctx, b->dst, 0xA5, bytes));
  CHECK(gcl_launch(kp, &lc, ap));
  CHECK(gcl_context_synchronize(b->ctx));
  bad |= verify(b, c, &s);
  report(b, b->csv, c, &s, grid, "param", bytes, time_launches(b, kp, &lc, ap), copy_sec);
  gcl_args_destroy(ap);
  /* global and global+prefetch: descriptors uploaded to device memory */
  unsigned char *host = aligned_alloc(128, 128 * (size_t)(c->k + 1));
  encode_maps(b, c, &s, NULL, host);
  CHECK(gcl_mem_upload(b->ctx, b->maps, host, 128 * (size_t)(c->k + 1)));
  free(host);
  const char *names[2] = {"desc_global", "desc_global_prefetch"}, *where[2] = {"global", "global+p"};
  for (int v = 0; v < 2; v++) {
    gcl_kernel *kg;
    CHECK(gcl_kernel_get(b->mod, names[v], "const void* maps, " SHAPE_SIG, &kg));
    gcl_args *ag;
    CHECK(gcl_args_create(gcl_kernel_layout(kg), &ag));
    CHECK(gcl_args_set_ptr(ag, 0, b->maps));
    CHECK(gcl_args_set(ag, 1, &s, sizeof s));
    CHECK(gcl_mem_fill_u8(b->ctx, b->dst, 0x5A, bytes));
    CHECK(gcl_launch(kg, &lc, ag));
    CHECK(gcl_context_synchronize(b->ctx));
    bad |= verify(b, c, &s);
    report(b, b->csv, c, &s, grid, where[v], bytes, time_launches(b, kg, &lc, ag), copy_sec);
    gcl_args_destroy(ag);
  }
  return bad;
}

/* --- the ring sweep (--sweep) ----------------------------------------------------------------- */

typedef struct grid_spec {
  const uint32_t *stages, *per_sm;
  size_t n_stages, n_per_sm;
  uint32_t max_lag, boxes;
} grid_spec;

static const uint32_t sweep_stages[] = {2, 3, 4, 6, 8, 12, 16};
static const uint32_t sweep_per_sm[] = {1, 2, 3, 4, 6, 8, 12, 16};
static const grid_spec full_grid = {sweep_stages, sweep_per_sm, 7, 8, 2, 1};

/* Every ring of grid g that fits (stages x boxes x tile per block within 227 KiB, x blocks
 * within SMEM_PER_SM) for tile c at its K with the descriptors in the constant bank; *best gets
 * the fastest. */
static int sweep_tile(bench *b, const config *c, FILE *csv, ring *best, const grid_spec *g) {
  config cc = *c;
  cc.ring = (ring){0, 0, 0, 0};
  uint32_t grid;
  shape s = shape_for(b, &cc, &grid);
  size_t bytes = (size_t)c->k * s.rows * cols * (c->bits / 8);
  char name[64], sig[128];
  snprintf(name, sizeof name, "desc_param_%u", c->k + 1);
  snprintf(sig, sizeof sig, "grid_constant tensormap[%u] maps, " SHAPE_SIG, c->k + 1);
  double copy_sec = time_memcpy(b, bytes), best_sec = 1e30;
  gcl_kernel *kp;
  gcl_args *ap;
  CHECK(gcl_kernel_get(b->mod, name, sig, &kp));
  CHECK(gcl_args_create(gcl_kernel_layout(kp), &ap));
  encode_maps(b, c, &s, ap, NULL);
  int bad = 0;
  for (size_t i = 0; i < g->n_stages; i++)
    for (size_t j = 0; j < g->n_per_sm; j++)
      for (uint32_t lag = 0; lag <= g->max_lag; lag++) {
        uint32_t st = g->stages[i], per = g->per_sm[j], block = st * g->boxes * s.tile_bytes;
        if (lag >= st || st > STAGES_MAX || block > 227 * 1024 || block * per > SMEM_PER_SM) continue;
        cc.ring = (ring){st, per, lag, g->boxes};
        shape r = shape_for(b, &cc, &grid);
        gcl_launch_config lc = {.grid = {grid, 1, 1}, .block = {32, 1, 1}, .shared_bytes = block};
        CHECK(gcl_args_set(ap, 1, &r, sizeof r));
        CHECK(gcl_mem_fill_u8(b->ctx, b->dst, 0xA5, bytes));
        CHECK(gcl_launch(kp, &lc, ap));
        CHECK(gcl_context_synchronize(b->ctx));
        bad |= verify(b, c, &r);
        double sec = time_launches(b, kp, &lc, ap);
        report(b, csv, c, &r, grid, c->l2 ? "param_l2" : "param", bytes, sec, copy_sec);
        if (sec < best_sec) best_sec = sec, *best = cc.ring;
      }
  gcl_args_destroy(ap);
  printf("best ring for %s %ux%u (%u-byte rows, %u-byte tiles) K=%u, %u boxes per stage: %u "
         "stages, %u blocks per SM, lag %u: %.1f%% of cuMemcpyDtoD\n\n", c->dtype, c->box_w,
         c->box_h, c->box_w * (c->bits / 8), s.tile_bytes, c->k, g->boxes, best->stages,
         best->per_sm, best->lag, 100.0 * copy_sec / best_sec);
  return bad;
}

/* --probe: what bounds the small tiles. At K = 240 in the constant bank, each tile below gets a
 * reduced ring sweep; the tiles separate the tile's bytes from its row length (bytes per row of
 * the box: one contiguous global segment per row) and the boxes per stage separate the cost per
 * box from the cost per pipeline step. */
static int probe(bench *b, FILE *csv) {
  static const uint32_t st[] = {2, 4, 8, 12}, per[] = {1, 2, 3, 4};
  static const struct { const char *dtype; uint8_t code, bits; uint32_t w, h, boxes; int l2; } t[] = {
      {"bf16", kDLBfloat, 16, 64, 64, 1, 0},  {"bf16", kDLBfloat, 16, 64, 64, 2, 0},
      {"bf16", kDLBfloat, 16, 64, 64, 4, 0},  {"bf16", kDLBfloat, 16, 128, 32, 1, 0},
      {"bf16", kDLBfloat, 16, 64, 128, 1, 0}, {"fp32", kDLFloat, 32, 32, 64, 1, 0},
      {"fp32", kDLFloat, 32, 64, 32, 1, 0},   {"bf16", kDLBfloat, 16, 128, 64, 1, 0},
      /* L2 promotion: a 128-byte box row fetched as 256 bytes of L2 line */
      {"bf16", kDLBfloat, 16, 64, 64, 1, GCL_TENSORMAP_L2_256B},
      {"bf16", kDLBfloat, 16, 64, 64, 1, GCL_TENSORMAP_L2_128B},
      {"bf16", kDLBfloat, 16, 128, 64, 1, GCL_TENSORMAP_L2_256B}};
  int bad = 0;
  printf("probe at K = 240, descriptors in the constant bank: tile bytes, row bytes, boxes per "
         "stage\n");
  for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
    config c = {t[i].dtype, t[i].code, t[i].bits, t[i].w, t[i].h, 240, {0, 0, 0, 0}, t[i].l2};
    grid_spec g = {st, per, 4, 4, 1, t[i].boxes};
    ring best = {0, 0, 0, 0};
    bad |= sweep_tile(b, &c, csv, &best, &g);
  }
  return bad;
}

/* Sweeps the small tiles at K = 240 and gives each its best ring in tiles[]. */
static int sweep(bench *b, config *tiles, size_t ntiles, FILE *csv) {
  static const struct { const char *dtype; uint32_t w, h; } small[] = {
      {"bf16", 64, 64}, {"bf16", 128, 64}, {"fp32", 64, 64}};
  int bad = 0;
  printf("ring sweep at K = 240, descriptors in the constant bank (S stages, B blocks per SM, "
         "L lag):\n");
  for (size_t t = 0; t < ntiles; t++)
    for (size_t i = 0; i < sizeof small / sizeof *small; i++) {
      if (strcmp(tiles[t].dtype, small[i].dtype) || tiles[t].box_w != small[i].w ||
          tiles[t].box_h != small[i].h)
        continue;
      config c = tiles[t];
      c.k = 240;
      ring best = {0, 0, 0, 0};
      bad |= sweep_tile(b, &c, csv, &best, &full_grid);
      tiles[t].ring = best;
    }
  return bad;
}

static size_t max_src_bytes(const config *tiles, size_t ntiles) {
  size_t most = 0;
  for (size_t t = 0; t < ntiles; t++)
    for (size_t i = 0; i < sizeof ks / sizeof *ks; i++) {
      config c = tiles[t];
      c.k = ks[i];
      size_t bytes = (size_t)c.k * rows_for(&c) * cols * (c.bits / 8);
      if (bytes > most) most = bytes;
    }
  return most;
}

static void fill_random(bench *b) {
  size_t chunk = (size_t)64 << 20;
  uint32_t *h = malloc(chunk);
  uint32_t x = 0x9e3779b9u ^ (uint32_t)time(NULL);
  for (size_t i = 0; i < chunk / 4; i++) x ^= x << 13, x ^= x >> 17, x ^= x << 5, h[i] = x;
  for (size_t off = 0; off < b->src_bytes; off += chunk)
    CHECK(gcl_mem_upload(b->ctx, b->src + off, h, off + chunk <= b->src_bytes ? chunk : b->src_bytes - off));
  free(h);
}

int main(int argc, char **argv) {
  bench b = {0};
  b.reps = 9;
  b.launches = 2;
  int quick = 0, do_sweep = 0, do_probe = 0;
  FILE *sweep_csv = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--csv") && i + 1 < argc) b.csv = fopen(argv[++i], "w");
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) b.reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--quick")) quick = 1;
    else if (!strcmp(argv[i], "--sweep")) do_sweep = 1;
    else if (!strcmp(argv[i], "--probe")) do_probe = 1;
    else if (!strcmp(argv[i], "--sweep-csv") && i + 1 < argc) sweep_csv = fopen(argv[++i], "w");
    else {
      fprintf(stderr, "usage: bench_descriptors [--csv FILE] [--sweep-csv FILE] [--reps N] "
                      "[--quick] [--sweep] [--probe]\n");
      return 2;
    }
  }
  if (b.reps < 1 || b.reps > 64) b.reps = 9;
  gcl_status st = gcl_driver_init();
  if (st != GCL_OK) {
    printf("bench_descriptors: no GPU here, nothing measured (%s)\n", gcl_last_error());
    return 0;
  }
  CHECK(gcl_context_create(0, &b.ctx));
  gcl_device_info info;
  CHECK(gcl_device_get_info(0, &info));
  if (info.sm < 90) {
    printf("bench_descriptors: %s is sm_%d; TMA needs sm_90\n", info.name, info.sm);
    return 0;
  }
  b.sms = info.multiprocessors;
  const char *dir = getenv("GCL_KERNEL_DIR") ? getenv("GCL_KERNEL_DIR") : GCL_KERNEL_DIR;
  char path[1024];
  snprintf(path, sizeof path, "%s/descbench.sm_90.cubin", dir);
  CHECK(gcl_module_load_file(b.ctx, path, &b.mod));
  config tiles[] = {
      {"fp32", kDLFloat, 32, 64, 64, 0, {0, 0, 0, 0}, 0},  {"fp32", kDLFloat, 32, 128, 64, 0, {0, 0, 0, 0}, 0},
      {"fp32", kDLFloat, 32, 128, 128, 0, {0, 0, 0, 0}, 0}, {"fp32", kDLFloat, 32, 256, 128, 0, {0, 0, 0, 0}, 0},
      {"bf16", kDLBfloat, 16, 64, 64, 0, {0, 0, 0, 0}, 0}, {"bf16", kDLBfloat, 16, 128, 64, 0, {0, 0, 0, 0}, 0},
      {"bf16", kDLBfloat, 16, 128, 128, 0, {0, 0, 0, 0}, 0}, {"bf16", kDLBfloat, 16, 256, 128, 0, {0, 0, 0, 0}, 0}};
  size_t ntiles = quick ? 2 : sizeof tiles / sizeof *tiles;
  /* every tile's rows, whatever runs: the probe's tiles have the same heights and dtypes */
  b.src_bytes = max_src_bytes(tiles, sizeof tiles / sizeof *tiles);
  CHECK(gcl_mem_alloc(b.ctx, b.src_bytes, &b.src));
  CHECK(gcl_mem_alloc(b.ctx, b.src_bytes, &b.dst));
  CHECK(gcl_mem_alloc(b.ctx, 128 * 256, &b.maps));
  fill_random(&b);
  printf("bench_descriptors: %s, %d SMs, %zu MiB source buffer, median of %d x %d launches\n",
         info.name, b.sms, b.src_bytes >> 20, b.reps, b.launches);
  static const char header[] = "dtype,box_w,box_h,k,placement,bytes_moved,ms,GBps,memcpy_GBps,"
                               "fraction,stages,blocks_per_sm,lag,boxes\n"; /* report()'s rows */
  if (b.csv) fputs(header, b.csv);
  if ((do_sweep || do_probe) && sweep_csv) fputs(header, sweep_csv);
  int bad = do_probe ? probe(&b, sweep_csv) : 0;
  bad |= do_sweep ? sweep(&b, tiles, ntiles, sweep_csv) : 0;
  if (sweep_csv) fclose(sweep_csv);
  if (do_probe && !do_sweep) ntiles = 0; /* the probe alone: no main table */
  for (size_t t = 0; t < ntiles; t++)
    for (size_t i = 0; i < sizeof ks / sizeof *ks; i++) {
      config c = tiles[t];
      c.k = ks[i];
      bad |= run_config(&b, &c);
    }
  if (b.csv) fclose(b.csv);
  gcl_module_destroy(b.mod);
  gcl_mem_free(b.ctx, b.src);
  gcl_mem_free(b.ctx, b.dst);
  gcl_mem_free(b.ctx, b.maps);
  gcl_context_destroy(b.ctx);
  if (bad) printf("bench_descriptors: some copies were WRONG (see above)\n");
  return bad;
}
