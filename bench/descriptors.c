/* bench_descriptors: where should a megakernel's TMA descriptors live? (issues 16 and 27)
 *
 * The persistent TMA copy of kernels/descbench.cu reads K source tensors into one destination
 * through K+1 descriptors placed
 *   P          - in one grid-constant `tensormap[K+1]` parameter, indexed at run time,
 *   S          - in K+1 separate grid-constant parameters, picked by a switch,
 *   G          - in a table in global memory, fenced in each block before first use,
 *   G+prefetch - the same, plus prefetch.tensormap before each use,
 *   D          - made on the device: one template per shape, the address patched per tile (when
 *                the slot's tensor changes) with tensormap.replace in shared memory, published to
 *                a global slot and fenced (CUTLASS's grouped GEMMs),
 *   H          - in the global table, which the host re-encodes and uploads before every launch,
 *   C          - in a __constant__ array of the module, uploaded to its symbol (up to K = 240
 *                here; the array holds 480 maps),
 *   T          - in gclaunch's own gcl_tensormap_table (G's kernel): set, re-pointed and uploaded
 *                through the library (in the relaunch study's graphs: gcl_graph_capture_table
 *                and gcl_graph_set_table, docs/graphs.md), any K,
 * for K = 1, 8, 64, 240, 1024, 4096 (P and S only up to 240: the parameter space ends at 32,764
 * bytes), bf16 tiles of 8, 16 and 32 KiB (64x64, 128x64, 128x128), the work in tensor-by-tensor
 * and in shuffled order, each configuration moving >= 2 GiB (read + written) so the 60 MB L2
 * does not help. Each measurement is the median over --reps repetitions of a host clock around
 * `launches` back-to-back launches and a synchronize, after a warm-up launch; cuMemcpyDtoD of the
 * same bytes is measured the same way in the same run and each result is given as a fraction of
 * it. Every configuration's copy is verified before it is timed: the destination is poisoned,
 * one launch, then sampled rows are compared on the host and every byte on the device.
 *
 * Then the relaunch study (desc_relaunch.c): new buffers every step, host and device time.
 * --sweep and --probe are issue 16's ring sweep and small-tile probe (desc_sweep.c).
 *
 *   bench_descriptors [--csv FILE] [--relaunch-csv FILE] [--sweep-csv FILE] [--reps N]
 *                     [--k LIST] [--placements LIST] [--size MIB] [--cols N] [--quick]
 *                     [--no-table] [--no-relaunch] [--sweep] [--probe] [--registers]
 * --k 1,8 measures only those K, --placements P,D only those placements; --size and --cols
 * shrink every tensor set (for a smoke test); --quick: the 16 KiB tile only. Without a GPU it
 * says so and exits 0. --registers prints the registers each placement's kernel uses, read from
 * the cubin's records (no GPU needed), and exits.
 */
#include <string.h>
#include <time.h>

#include "desc.h"
#include "exedir.h"
#include "test_rng.h"

static uint32_t ks[8] = {1, 8, 64, 240, 1024, 4096};
static size_t nks = 6;
static const uint32_t orders[] = {ORDER_TENSOR, ORDER_SHUFFLED};
static const char *const order_names[] = {"interleaved", "tensor", "shuffled"};

void desc_report(bench *b, FILE *csv, const runner *r, const char *where, double sec,
                 double copy_sec) {
  const config *c = &r->c;
  const shape *s = &r->s;
  double moved = 2.0 * r->bytes, gbps = moved / sec / 1e9, copy = moved / copy_sec / 1e9;
  uint32_t per_sm = r->lc.grid[0] / (uint32_t)b->sms;
  printf("%2u KiB %-4s %3ux%-3u K=%-4u %-8s %-10s S=%-2u B/SM=%-2u L=%u %8.3f ms %7.1f GB/s  "
         "memcpy %7.1f GB/s  %5.1f%%\n", s->tile_bytes >> 10, c->dtype, c->box_w, c->box_h, c->k,
         order_names[c->order], where, s->stages, per_sm, s->lag, sec * 1e3, gbps, copy,
         100.0 * gbps / copy);
  if (csv)
    fprintf(csv, "%u,%s,%u,%u,%u,%s,%s,%zu,%.6f,%.2f,%.2f,%.4f,%u,%u,%u,%u\n", s->tile_bytes,
            c->dtype, c->box_w, c->box_h, c->k, order_names[c->order], where, (size_t)moved,
            sec * 1e3, gbps, copy, gbps / copy, s->stages, per_sm, s->lag, s->boxes);
  if (csv) fflush(csv); /* a run cut short by a timeout keeps what it measured */
}

/* Every placement at one configuration, each verified, then timed. */
static int run_point(bench *b, FILE *csv, const config *c) {
  double copy_sec = desc_time_memcpy(b, desc_bytes(c));
  int bad = 0;
  for (int pl = 0; pl < PL_COUNT; pl++) {
    runner r;
    if (!(b->placements >> pl & 1) || runner_open(&r, b, c, (placement)pl, b->src, b->dst))
      continue;
    bad |= runner_verify(&r);
    desc_report(b, csv, &r, placement_names[pl], runner_time(&r), copy_sec);
    runner_close(&r);
  }
  return bad;
}

static int run_table(bench *b, FILE *csv, const config *tiles, size_t ntiles) {
  int bad = 0;
  for (size_t t = 0; t < ntiles; t++)
    for (size_t o = 0; o < sizeof orders / sizeof *orders; o++)
      for (size_t i = 0; i < nks; i++) {
        config c = tiles[t];
        c.k = ks[i];
        c.order = orders[o];
        bad |= run_point(b, csv, &c);
      }
  return bad;
}

static size_t max_src_bytes(const config *tiles, size_t ntiles) {
  size_t most = (size_t)1 << 30;
  for (size_t t = 0; t < ntiles; t++)
    for (size_t i = 0; i < sizeof ks / sizeof *ks; i++) {
      config c = tiles[t];
      c.k = ks[i] ? ks[i] : 1;
      if (desc_bytes(&c) > most) most = desc_bytes(&c);
    }
  return most;
}

static void fill_random(bench *b) {
  size_t chunk = (size_t)64 << 20;
  uint32_t *h = malloc(chunk);
  uint64_t x = 0x9e3779b9u ^ (uint64_t)time(NULL);
  for (size_t i = 0; i < chunk / 4; i++) h[i] = (uint32_t)(test_rng_next(&x) >> 32);
  for (size_t off = 0; off < b->src_bytes; off += chunk)
    CHECK(gcl_mem_upload(b->ctx, b->src + off, h,
                         off + chunk <= b->src_bytes ? chunk : b->src_bytes - off));
  free(h);
}

typedef struct options {
  FILE *csv, *relaunch_csv, *sweep_csv;
  int quick, table, relaunch, sweep, probe, registers;
  size_t size;   /* --size in bytes, 0: each configuration's own */
  uint32_t cols; /* --cols, 0: each configuration's own */
} options;

static void parse_ks(const char *list) {
  nks = 0;
  for (const char *p = list; *p && nks < sizeof ks / sizeof *ks;) {
    uint32_t k = (uint32_t)strtoul(p, (char **)&p, 10);
    if (k >= 1 && k <= K_MAX) ks[nks++] = k;
    while (*p == ',') p++;
  }
  for (size_t i = nks; i < sizeof ks / sizeof *ks; i++) ks[i] = 0;
}

/* "P,S,D" -> the bits of those placements; 0 for an unknown name. */
static unsigned parse_placements(const char *list) {
  unsigned mask = 0;
  char buf[128];
  snprintf(buf, sizeof buf, "%s", list);
  for (char *save = NULL, *n = strtok_r(buf, ",", &save); n; n = strtok_r(NULL, ",", &save)) {
    int found = 0;
    for (int pl = 0; pl < PL_COUNT; pl++)
      if (!strcmp(n, placement_names[pl])) mask |= 1u << pl, found = 1;
    if (!found) return 0;
  }
  return mask;
}

static int parse(int argc, char **argv, options *o, bench *b) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--csv") && v) o->csv = fopen(argv[++i], "w");
    else if (!strcmp(a, "--relaunch-csv") && v) o->relaunch_csv = fopen(argv[++i], "w");
    else if (!strcmp(a, "--sweep-csv") && v) o->sweep_csv = fopen(argv[++i], "w");
    else if (!strcmp(a, "--reps") && v) b->reps = atoi(argv[++i]);
    else if (!strcmp(a, "--k") && v) parse_ks(argv[++i]);
    else if (!strcmp(a, "--placements") && v) b->placements = parse_placements(argv[++i]);
    else if (!strcmp(a, "--size") && v) o->size = (size_t)atoi(argv[++i]) << 20;
    else if (!strcmp(a, "--cols") && v) o->cols = (uint32_t)atoi(argv[++i]);
    else if (!strcmp(a, "--quick")) o->quick = 1;
    else if (!strcmp(a, "--no-table")) o->table = 0;
    else if (!strcmp(a, "--no-relaunch")) o->relaunch = 0;
    else if (!strcmp(a, "--sweep")) o->sweep = 1;
    else if (!strcmp(a, "--probe")) o->probe = 1;
    else if (!strcmp(a, "--registers")) o->registers = 1;
    else return 1;
  }
  if (b->reps < 1 || b->reps > 64) b->reps = 15;
  return nks == 0 || b->placements == 0;
}

/* kernels/descbench.cu for sm_90a (built into this directory); failing that, the sm_90 build of
 * the kernels' directory, without D (tensormap.replace is sm_90a only). */
static void load_module(bench *b) {
  const char *dir = getenv("GCL_BENCH_KERNEL_DIR");
  if (!dir) dir = bench_exe_rel(".");
  char path[1024];
  snprintf(path, sizeof path, "%s/descbench.sm_90a.cubin", dir);
  if (gcl_module_load_file(b->ctx, path, &b->mod) == GCL_OK) return;
  printf("bench_descriptors: %s: %s; loading the sm_90 build, without D\n", path, gcl_last_error());
  snprintf(path, sizeof path, "%s/descbench.sm_90.cubin", bench_exe_rel("../kernels"));
  CHECK(gcl_module_load_file(b->ctx, path, &b->mod));
  b->placements &= ~(1u << PL_D);
}

/* Context, stream, module, kernels and buffers; 1 when there is no sm_90 GPU. */
static int setup(bench *b, size_t src_bytes) {
  gcl_status st = gcl_driver_init();
  if (st != GCL_OK) {
    printf("bench_descriptors: no GPU here, nothing measured (%s)\n", gcl_last_error());
    return 1;
  }
  CHECK(gcl_context_create(0, &b->ctx));
  gcl_device_info info;
  CHECK(gcl_device_query(0, &info));
  if (info.sm < 90) {
    printf("bench_descriptors: %s is sm_%d; TMA needs sm_90\n", info.name, info.sm);
    return 1;
  }
  b->sms = info.multiprocessors;
  load_module(b);
  CHECK(gcl_module_find_kernel(b->mod, "desc_compare", "const void* a, const void* b, u64 n, u64* bad",
                       &b->compare));
  CHECK(gcl_stream_create(b->ctx, 0, &b->stream));
  b->src_bytes = src_bytes;
  CHECK(gcl_mem_alloc(b->ctx, src_bytes, &b->src));
  CHECK(gcl_mem_alloc(b->ctx, src_bytes, &b->dst));
  CHECK(gcl_mem_alloc(b->ctx, 128 * (K_MAX + 1), &b->maps));
  CHECK(gcl_mem_alloc(b->ctx, 8 * (K_MAX + 1), &b->addrs));
  size_t slots = (size_t)b->sms * BLOCKS_MAX_PER_SM * SLOTS_PER_BLOCK * 128;
  CHECK(gcl_mem_alloc(b->ctx, slots, &b->slots));
  CHECK(gcl_mem_alloc(b->ctx, 8, &b->bad));
  fill_random(b);
  printf("bench_descriptors: %s, %d SMs, %zu MiB source buffer, median of %d x %d launches\n",
         info.name, b->sms, src_bytes >> 20, b->reps, b->launches);
  return 0;
}

static void teardown(bench *b) {
  gcl_stream_destroy(b->stream);
  gcl_module_destroy(b->mod);
  uint64_t bufs[] = {b->src, b->dst, b->maps, b->addrs, b->slots, b->bad};
  for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) gcl_mem_free(b->ctx, bufs[i]);
  gcl_context_destroy(b->ctx);
}

static const char table_header[] = "tile_bytes,dtype,box_w,box_h,k,order,placement,bytes_moved,"
                                   "ms,GBps,memcpy_GBps,fraction,stages,blocks_per_sm,lag,boxes\n";

/* Registers per placement and K from the sm_90a cubin's records (EIATTR_REGCOUNT, through
 * gcl_image_*): a CPU-only table. */
static int print_registers(void) {
  const char *dir = getenv("GCL_BENCH_KERNEL_DIR");
  char path[1024];
  snprintf(path, sizeof path, "%s/descbench.sm_90a.cubin", dir ? dir : bench_exe_rel("."));
  FILE *f = fopen(path, "rb");
  if (!f) return printf("bench_descriptors: cannot read %s\n", path), 1;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  void *data = malloc((size_t)n);
  size_t got = data ? fread(data, 1, (size_t)n, f) : 0;
  fclose(f);
  gcl_image *img;
  if (got != (size_t)n) return printf("bench_descriptors: cannot read %s\n", path), 1;
  CHECK(gcl_image_parse(data, (size_t)n, 0, &img));
  free(data);
  printf("registers per thread of each placement's kernel (%s, from the cubin's records)\n", path);
  printf("%-12s", "K");
  for (int pl = 0; pl < PL_COUNT; pl++) printf(" %10s", placement_names[pl]);
  printf("\n");
  static const uint32_t rk[] = {1, 8, 64, 240, 1024, 4096};
  int missing = 0; /* kernels a placement should have at that K but the cubin lacks */
  for (size_t i = 0; i < sizeof rk / sizeof *rk; i++) {
    printf("%-12u", rk[i]);
    for (int pl = 0; pl < PL_COUNT; pl++) {
      char name[64];
      size_t index;
      gcl_image_kernel_info info;
      const char *kn = desc_kernel_name((placement)pl, rk[i], name, sizeof name);
      if (kn && gcl_image_find_kernel(img, kn, &index) == GCL_OK &&
          gcl_image_kernel(img, index, &info) == GCL_OK)
        printf(" %10d", info.registers);
      else
        printf(" %10s", "--"), missing += kn != NULL;
    }
    printf("\n");
  }
  printf("(H and T run G's kernel; P and S exist up to K = 240, C up to K = %d)\n", CONST_MAPS_MAX - 1);
  gcl_image_destroy(img);
  if (missing) printf("bench_descriptors: %d kernels missing from the cubin\n", missing);
  return missing != 0;
}

int main(int argc, char **argv) {
  bench b = {.reps = 15, .launches = 3, .placements = (1u << PL_COUNT) - 1};
  options o = {.table = 1, .relaunch = 1};
  setvbuf(stdout, NULL, _IOLBF, 0); /* line by line into a pipe too (tee, timeouts) */
  if (parse(argc, argv, &o, &b)) {
    fprintf(stderr, "usage: bench_descriptors [--csv FILE] [--relaunch-csv FILE] [--sweep-csv "
                    "FILE] [--reps N] [--k LIST] [--placements LIST] [--size MIB] [--cols N] "
                    "[--quick] [--no-table] [--no-relaunch] [--sweep] [--probe] [--registers]\n");
    return 2;
  }
  config tiles[] = {{"bf16", kDLBfloat, 16, 64, 64, 0, {0, 0, 0, 0}, 0, 0, o.cols, o.size},
                    {"bf16", kDLBfloat, 16, 128, 64, 0, {0, 0, 0, 0}, 0, 0, o.cols, o.size},
                    {"bf16", kDLBfloat, 16, 128, 128, 0, {0, 0, 0, 0}, 0, 0, o.cols, o.size}};
  const config *run = o.quick ? tiles + 1 : tiles;
  size_t ntiles = o.quick ? 1 : sizeof tiles / sizeof *tiles;
  if (o.registers) return print_registers();
  if (setup(&b, max_src_bytes(tiles, sizeof tiles / sizeof *tiles))) return 0;
  if (o.csv) fputs(table_header, o.csv);
  if (o.sweep_csv && (o.sweep || o.probe)) fputs(table_header, o.sweep_csv);
  int bad = o.probe ? desc_probe(&b, o.sweep_csv) : 0;
  bad |= o.sweep ? desc_sweep(&b, tiles, sizeof tiles / sizeof *tiles, o.sweep_csv) : 0;
  if (o.table) bad |= run_table(&b, o.csv, run, ntiles);
  if (o.relaunch) bad |= desc_relaunch(&b, o.relaunch_csv, ks, nks, o.size, o.cols);
  FILE *files[] = {o.csv, o.relaunch_csv, o.sweep_csv};
  for (size_t i = 0; i < 3; i++)
    if (files[i]) fclose(files[i]);
  teardown(&b);
  if (bad) printf("bench_descriptors: some copies were WRONG (see above)\n");
  return bad;
}
