/* bench_descriptors --sweep and --probe (issue 16): ring configurations for the small tiles, with
 * the descriptors in one grid-constant tensormap[K+1] (P) at K = 240, work interleaved over the
 * tensors (Shape order 0, as issue 16 measured it). */
#include <string.h>

#include "desc.h"

typedef struct grid_spec {
  const uint32_t *stages, *per_sm;
  size_t n_stages, n_per_sm;
  uint32_t max_lag, boxes;
} grid_spec;

static const uint32_t sweep_stages[] = {2, 3, 4, 6, 8, 12, 16};
static const uint32_t sweep_per_sm[] = {1, 2, 3, 4, 6, 8, 12, 16};
static const grid_spec full_grid = {sweep_stages, sweep_per_sm, 7, 8, 2, 1};

/* Whether ring (st stages of `boxes` tiles, per blocks per SM, lag) fits: stages x boxes x tile
 * per block within 227 KiB, x blocks within SMEM_PER_SM. */
static int fits(uint32_t st, uint32_t per, uint32_t lag, uint32_t boxes, uint32_t tile_bytes) {
  uint32_t block = st * boxes * tile_bytes;
  return lag < st && st <= STAGES_MAX && block <= 227 * 1024 && block * per <= SMEM_PER_SM;
}

/* One ring: verified, timed, reported; its time. */
static double try_ring(bench *b, runner *r, FILE *csv, ring rg, double copy_sec, int *bad) {
  config cc = r->c;
  cc.ring = rg;
  uint32_t grid;
  shape s = desc_shape(b, &cc, &grid);
  runner_set_shape(r, &s, grid);
  *bad |= runner_verify(r);
  double sec = runner_time(r);
  desc_report(b, csv, r, r->c.l2 ? "P_l2" : "P", sec, copy_sec);
  return sec;
}

/* Every ring of grid g that fits for tile c at its K; *best gets the fastest. */
static int sweep_tile(bench *b, const config *c, FILE *csv, ring *best, const grid_spec *g) {
  config cc = *c;
  cc.ring = (ring){0, 0, 0, 0};
  runner r;
  if (runner_open(&r, b, &cc, PL_P, b->src, b->dst)) return 0;
  double copy_sec = desc_time_memcpy(b, r.bytes), best_sec = 1e30;
  int bad = 0;
  for (size_t i = 0; i < g->n_stages; i++)
    for (size_t j = 0; j < g->n_per_sm; j++)
      for (uint32_t lag = 0; lag <= g->max_lag; lag++) {
        ring rg = {g->stages[i], g->per_sm[j], lag, g->boxes};
        if (!fits(rg.stages, rg.per_sm, lag, rg.boxes, r.s.tile_bytes)) continue;
        double sec = try_ring(b, &r, csv, rg, copy_sec, &bad);
        if (sec < best_sec) best_sec = sec, *best = rg;
      }
  printf("best ring for %s %ux%u (%u-byte rows, %u-byte tiles) K=%u, %u boxes per stage: %u "
         "stages, %u blocks per SM, lag %u: %.1f%% of cuMemcpyDtoD\n\n", c->dtype, c->box_w,
         c->box_h, c->box_w * (c->bits / 8), r.s.tile_bytes, c->k, g->boxes, best->stages,
         best->per_sm, best->lag, 100.0 * copy_sec / best_sec);
  runner_close(&r);
  return bad;
}

/* --probe: what bounds the small tiles. At K = 240 in the constant bank, each tile below gets a
 * reduced ring sweep; the tiles separate the tile's bytes from its row length (bytes per row of
 * the box: one contiguous global segment per row) and the boxes per stage separate the cost per
 * box from the cost per pipeline step. */
int desc_probe(bench *b, FILE *csv) {
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
    config c = {t[i].dtype, t[i].code, t[i].bits, t[i].w, t[i].h, 240, {0, 0, 0, 0}, t[i].l2,
                ORDER_INTERLEAVED, 0, 0};
    grid_spec g = {st, per, 4, 4, 1, t[i].boxes};
    ring best = {0, 0, 0, 0};
    bad |= sweep_tile(b, &c, csv, &best, &g);
  }
  return bad;
}

/* Sweeps the small tiles at K = 240 and gives each its best ring in tiles[]. */
int desc_sweep(bench *b, config *tiles, size_t ntiles, FILE *csv) {
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
      c.order = ORDER_INTERLEAVED;
      ring best = {0, 0, 0, 0};
      bad |= sweep_tile(b, &c, csv, &best, &full_grid);
      tiles[t].ring = best;
    }
  return bad;
}
