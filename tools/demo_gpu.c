/* gclaunch demo, the copy on one or several GPUs. One module (one context-independent library)
 * is loaded once; each device gets its own context, kernel (gcl_module_find_kernel_on: its own layout),
 * args, buffers and work list. Tensor j goes to the (j mod n)-th device: each device copies only
 * its tensors, from descriptors encoded in its own context, and is verified on its own. */
#include "demo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GPUS RUNARG_MAX_DEVICES

typedef struct gpu {
  gcl_context *ctx;
  gcl_module *mod;           /* gpus[0]'s, shared by the others (owned by gpus[0]) */
  gcl_kernel *kernel;        /* owned by mod; runs in ctx */
  gcl_args *args;
  uint64_t work_dev;
  gcl_device_info info;
  int device, index, count;  /* tensors j with j % count == index are this device's */
  work_item *work;           /* this device's items of the plan */
  size_t n_work;
  int tensors;               /* this device's tensors */
} gpu;

static int failed(const char *what, gcl_status s) {
  fprintf(stderr, "demo: %s: %s: %s\n", what, gcl_status_name(s), gcl_last_error());
  return -1;
}
#define TRY(call)                                                                                 \
  do {                                                                                            \
    gcl_status try_status = (call);                                                               \
    if (try_status != GCL_OK) return failed(#call, try_status);                                  \
  } while (0)

static bool owns(const gpu *g, int j) { return j % g->count == g->index; }

/* Context, kernel from the shared module (loaded here for the first device), args checked
 * against this device. 1 when the device cannot run the demo (pre-sm_90). */
static int gpu_open(demo *d, gpu *g, gcl_module *shared) {
  char path[1024];
  TRY(gcl_context_create(g->device, &g->ctx));
  TRY(gcl_device_query(g->device, &g->info));
  if (g->info.sm < 90) {
    printf("device %d: %s is sm_%d: TMA needs sm_90 or later\n", g->device, g->info.name, g->info.sm);
    return 1;
  }
  snprintf(path, sizeof path, "%s/megakernel.fatbin", demo_kernel_dir());
  if (!shared) TRY(gcl_module_load_file(g->ctx, path, &g->mod));
  g->mod = shared ? shared : g->mod;
  TRY(gcl_module_find_kernel_on(g->mod, g->ctx, d->kernel, d->signature, &g->kernel));
  TRY(gcl_args_create(gcl_kernel_layout(g->kernel), &g->args));
  TRY(gcl_args_restrict_device(g->args, g->device));
  printf("device %d: %s, sm_%d, %d SMs; module %s%s\n", g->device, g->info.name, g->info.sm,
         g->info.multiprocessors, path, shared ? " (the first device's, shared)" : "");
  return 0;
}

/* Buffers and args of g; the module and the context go in close_all. */
static void gpu_release(demo *d, gpu *g) {
  for (int j = 0; g->ctx && d->src && j < d->tensors; j++) {
    if (!owns(g, j)) continue;
    if (d->src[j].dev) gcl_mem_free(g->ctx, d->src[j].dev);
    if (d->dst[j].dev) gcl_mem_free(g->ctx, d->dst[j].dev);
  }
  if (g->work_dev) gcl_mem_free(g->ctx, g->work_dev);
  gcl_args_destroy(g->args);
  free(g->work);
}

/* The module goes after every device's args and before the contexts its kernels run in. */
static void close_all(demo *d, gpu *g, int n) {
  for (int i = 0; i < n; i++) gpu_release(d, &g[i]);
  gcl_module_destroy(g[0].mod);
  for (int i = 0; i < n; i++) gcl_context_destroy(g[i].ctx);
}

static void random_bytes(unsigned char *p, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t r = demo_rng();
    memcpy(p + i, &r, 8);
  }
  for (; i < n; i++) p[i] = (unsigned char)demo_rng();
}

/* g's items of the plan: those whose source is one of its tensors. */
static int pick_work(const demo *d, gpu *g) {
  if (!(g->work = malloc((d->n_work ? d->n_work : 1) * sizeof *g->work))) return failed("malloc", GCL_ERROR_OUT_OF_MEMORY);
  for (size_t i = 0; i < d->n_work; i++)
    if (owns(g, (int)(d->work[i].src / 2))) g->work[g->n_work++] = d->work[i];
  return 0;
}

/* Random sources (the whole allocation, so bytes around the views are random too), poisoned
 * destinations, and the work list -- of g's tensors, in g's memory. */
static int upload(demo *d, gpu *g) {
  for (int j = 0; j < d->tensors; j++) {
    if (!owns(g, j)) continue;
    view *s = &d->src[j], *t = &d->dst[j];
    if (!(s->host = malloc(s->bytes))) return failed("malloc", GCL_ERROR_OUT_OF_MEMORY);
    random_bytes(s->host, s->bytes);
    TRY(gcl_mem_alloc(g->ctx, s->bytes, &s->dev));
    TRY(gcl_mem_alloc(g->ctx, t->bytes, &t->dev));
    TRY(gcl_mem_upload(g->ctx, s->dev, s->host, s->bytes));
    TRY(gcl_mem_fill_u8(g->ctx, t->dev, POISON, t->bytes));
    s->t.data = (void *)(uintptr_t)s->dev;
    t->t.data = (void *)(uintptr_t)t->dev;
    s->t.device.device_id = t->t.device.device_id = g->device;
    g->tensors++;
  }
  if (pick_work(d, g)) return -1;
  TRY(gcl_mem_alloc(g->ctx, g->n_work * sizeof *g->work, &g->work_dev));
  TRY(gcl_mem_upload(g->ctx, g->work_dev, g->work, g->n_work * sizeof *g->work));
  return 0;
}

/* Encodes every descriptor straight into its element of the globals' `maps`, through fields
 * resolved once. Slots of other devices' tensors and unused ones repeat this device's first
 * source (a map must describe memory of its device). */
static int set_args(demo *d, gpu *g) {
  static demo_fields f; /* 254 fields: too large for the stack of a helper thread */
  if (demo_resolve_fields(gcl_kernel_layout(g->kernel), d->n_maps, &f)) return -1;
  double t0 = demo_now_s();
  for (size_t e = 0; e < d->n_maps; e++) {
    bool used = e < 2 * (size_t)d->tensors && owns(g, (int)(e / 2));
    const view *v = used ? (e % 2 ? &d->dst[e / 2] : &d->src[e / 2]) : &d->src[g->index];
    gcl_tensormap_options o = demo_box_for(d, v, used && e % 2);
    const DLTensor *t = &v->t;
    TRY(gcl_args_set_tensormaps(g->args, g->ctx, &f.maps[e], 1, &t, &o, 1, 0));
  }
  double t1 = demo_now_s();
  TRY(gcl_args_set_field_ptr(g->args, &f.work, g->work_dev));
  TRY(gcl_args_set_field_u32(g->args, &f.n_work, (uint32_t)g->n_work));
  printf("device %d: %zu descriptors encoded into g.maps[0..%zu] in %.1f us (%.2f us each); "
         "%d tensors, %zu work items\n", g->device, d->n_maps, d->n_maps - 1, 1e6 * (t1 - t0),
         1e6 * (t1 - t0) / (double)d->n_maps, g->tensors, g->n_work);
  return 0;
}

/* The ring kernel takes its stage count from the dynamic shared memory it is given:
 * d->stages x 16 KiB per block, d->blocks_per_sm one-warp blocks per SM. */
static int launch(const demo *d, gpu *g) {
  gcl_launch_config cfg;
  memset(&cfg, 0, sizeof cfg);
  size_t grid = (size_t)d->blocks_per_sm * (size_t)g->info.multiprocessors;
  cfg.grid[0] = (unsigned)(g->n_work < grid ? g->n_work : grid);
  cfg.block[0] = 32;
  cfg.shared_bytes = (size_t)d->stages * DEMO_STAGE_BYTES;
  TRY(gcl_launch(g->kernel, &cfg, g->args)); /* binds g's context */
  return 0;
}

/* Destination allocation j must be poison everywhere except the view, whose rows hold the source
 * row and then zeros (the load's out-of-bounds fill) up to the destination's wider row end. */
static int verify_tensor(const demo *d, gpu *g, int j, unsigned char *got, unsigned char *want) {
  const view *s = &d->src[j], *t = &d->dst[j];
  TRY(gcl_mem_download(g->ctx, got, t->dev, t->bytes));
  memset(want, POISON, t->bytes);
  for (int64_t r = 0; r < s->shape[0]; r++) {
    memcpy(want + demo_row_at(t, r), s->host + demo_row_at(s, r), demo_row_bytes(s));
    memset(want + demo_row_at(t, r) + demo_row_bytes(s), 0, demo_row_bytes(t) - demo_row_bytes(s));
  }
  if (!memcmp(got, want, t->bytes)) return 0;
  size_t i = 0;
  while (got[i] == want[i]) i++;
  fprintf(stderr, "demo: device %d tensor %d (%s, byte_offset %llu): byte %zu of the destination "
          "is 0x%02x, expected 0x%02x\n", g->device, j, demo_dtype_names[j % 3],
          (unsigned long long)t->t.byte_offset, i, got[i], want[i]);
  return -1;
}

/* data + byte_offset of a view: the address its map points at. */
static uint64_t view_address(const view *v) {
  return (uint64_t)(uintptr_t)v->t.data + v->t.byte_offset;
}

/* The addresses of g.maps[0 ... n_maps-1] as set_args encoded them, each destination map moved
 * by shift[j] bytes (0: where it was). */
static void map_addresses(const demo *d, const gpu *g, const int64_t *shift, uint64_t *out) {
  for (size_t e = 0; e < d->n_maps; e++) {
    int j = (int)(e / 2);
    bool used = e < 2 * (size_t)d->tensors && owns(g, j);
    const view *v = used ? (e % 2 ? &d->dst[j] : &d->src[j]) : &d->src[g->index];
    out[e] = view_address(v) + (uint64_t)(used && e % 2 ? shift[j] : 0);
  }
}

/* verify_tensor for tensor j alone, with its own scratch. */
static int verify_one(const demo *d, gpu *g, int j) {
  unsigned char *got = malloc(d->dst[j].bytes), *want = malloc(d->dst[j].bytes);
  int bad = got && want ? verify_tensor(d, g, j, got, want) : -1;
  free(got);
  free(want);
  return bad;
}

/* say: print the line that says so when every tensor was copied exactly. */
static int verify(const demo *d, gpu *g, bool say) {
  size_t most = 0;
  for (int j = 0; j < d->tensors; j++) most = d->dst[j].bytes > most ? d->dst[j].bytes : most;
  unsigned char *got = malloc(most), *want = malloc(most);
  int bad = got && want ? 0 : d->tensors;
  for (int j = 0; !bad && j < d->tensors; j++) bad += owns(g, j) && verify_tensor(d, g, j, got, want) != 0;
  free(got);
  free(want);
  if (bad) return -1;
  if (say)
    printf("device %d: verify: %d/%d tensors copied exactly (destinations poisoned with 0x%02X first; "
         "nothing written outside the views; padded destination rows hold the load's zero fill)\n",
         g->device, g->tensors, g->tensors, POISON);
  return 0;
}

/* What a megakernel does every step: relaunch on new buffers of the same shapes. Every
 * destination map of g is re-pointed at a second, poisoned destination in ONE call over the
 * struct's g.maps[0 ... n_maps-1] (gcl_args_repoint_tensormaps: cuTensorMapReplaceAddress for
 * the maps that move, nothing for the sources, no re-encode), the kernel runs again and the copy
 * is verified there; then the maps are pointed back for the timing. */
static int relaunch(demo *d, gpu *g) {
  size_t n = d->n_maps;
  int64_t *shift = calloc((size_t)d->tensors, sizeof *shift);
  uint64_t *addr = malloc(n * sizeof *addr), *dev = calloc((size_t)d->tensors, sizeof *dev);
  gcl_field maps0;
  int rc = shift && addr && dev ? 0 : failed("malloc", GCL_ERROR_OUT_OF_MEMORY);
  if (!rc) rc = gcl_layout_field(gcl_kernel_layout(g->kernel), "g.maps[0]", &maps0) ? -1 : 0;
  for (int j = 0; !rc && j < d->tensors; j++) {
    if (!owns(g, j)) continue;
    rc = gcl_mem_alloc(g->ctx, d->dst[j].bytes, &dev[j]) || 
         gcl_mem_fill_u8(g->ctx, dev[j], POISON, d->dst[j].bytes) ? -1 : 0;
    shift[j] = (int64_t)(dev[j] - d->dst[j].dev);
  }
  double t0 = demo_now_s(), t1 = t0;
  if (!rc) map_addresses(d, g, shift, addr);
  if (!rc && gcl_args_repoint_tensormaps(g->args, g->ctx, &maps0, n, addr) != GCL_OK)
    rc = failed("gcl_args_repoint_tensormaps(g.maps[0], n)", GCL_ERROR_INVALID_ARGUMENT);
  t1 = demo_now_s();
  if (!rc) rc = launch(d, g);
  if (!rc && gcl_context_synchronize(g->ctx) != GCL_OK) rc = failed("relaunch", GCL_ERROR_DRIVER);
  for (int j = 0; !rc && j < d->tensors; j++) { /* verify the second destinations in place */
    if (!owns(g, j)) continue;
    uint64_t first = d->dst[j].dev;
    d->dst[j].dev = dev[j];
    rc = verify_one(d, g, j);
    d->dst[j].dev = first;
  }
  memset(shift, 0, (size_t)d->tensors * sizeof *shift);
  if (!rc) map_addresses(d, g, shift, addr); /* and back, for the timing */
  if (!rc && gcl_args_repoint_tensormaps(g->args, g->ctx, &maps0, n, addr) != GCL_OK)
    rc = failed("gcl_args_repoint_tensormaps back", GCL_ERROR_INVALID_ARGUMENT);
  if (!rc)
    printf("device %d: relaunch: %d destination maps of g.maps re-pointed to new buffers in one "
           "call (%.1f us, no re-encode), copied again, %d/%d tensors verified there\n",
           g->device, g->tensors, 1e6 * (t1 - t0), g->tensors, g->tensors);
  for (int j = 0; dev && j < d->tensors; j++)
    if (dev[j]) gcl_mem_free(g->ctx, dev[j]);
  free(shift), free(addr), free(dev);
  return rc;
}

static int synchronize(gpu *g, int n) {
  for (int i = 0; i < n; i++) TRY(gcl_context_synchronize(g[i].ctx));
  return 0;
}

/* Bytes of g's source views: what its kernel reads (and writes) per launch. */
static size_t share_bytes(const demo *d, const gpu *g) {
  size_t bytes = 0;
  for (int j = 0; j < d->tensors; j++)
    if (owns(g, j)) bytes += demo_row_bytes(&d->src[j]) * (size_t)d->src[j].shape[0];
  return bytes;
}

/* The copy-bandwidth baseline: each device copies its share of the bytes with cuMemcpyDtoD
 * between two scratch buffers, iters times, queued and timed as the kernel is. *per: seconds
 * per round. */
static int time_memcpy(const demo *d, gpu *g, int n, double *per) {
  uint64_t a[MAX_GPUS] = {0}, b[MAX_GPUS] = {0};
  int rc = 0;
  for (int i = 0; rc == 0 && i < n; i++)
    rc = gcl_mem_alloc(g[i].ctx, share_bytes(d, &g[i]), &a[i]) != GCL_OK ||
         gcl_mem_alloc(g[i].ctx, share_bytes(d, &g[i]), &b[i]) != GCL_OK;
  for (int k = -1; rc == 0 && k < d->iters; k++) { /* k -1: warm-up, then the clock starts */
    if (k == 0) *per = demo_now_s();
    for (int i = 0; rc == 0 && i < n; i++)
      rc = gcl_mem_copy(g[i].ctx, b[i], a[i], share_bytes(d, &g[i])) != GCL_OK;
    if (k == -1 && rc == 0) rc = synchronize(g, n) != 0;
  }
  if (rc == 0) rc = synchronize(g, n) != 0;
  if (rc == 0) *per = (demo_now_s() - *per) / d->iters;
  else fprintf(stderr, "demo: cuMemcpyDtoD baseline: %s\n", gcl_last_error());
  for (int i = 0; i < n; i++) {
    if (a[i]) gcl_mem_free(g[i].ctx, a[i]);
    if (b[i]) gcl_mem_free(g[i].ctx, b[i]);
  }
  return rc ? -1 : 0;
}

/* Every device launches iters times, all queued before any is waited for: they run together. */
static int measure(const demo *d, gpu *g, int n) {
  for (int k = 0; k < 2; k++) /* warm-up */
    for (int i = 0; i < n; i++)
      if (launch(d, &g[i])) return -1;
  if (synchronize(g, n)) return -1;
  double t0 = demo_now_s();
  for (int k = 0; k < d->iters; k++)
    for (int i = 0; i < n; i++)
      if (launch(d, &g[i])) return -1;
  if (synchronize(g, n)) return -1;
  double per = (demo_now_s() - t0) / d->iters;
  double moved = 2.0 * (double)d->view_bytes;
  printf("time:     %d launches on each of %d device%s, %.3f ms each: %.1f GB/s in total (%.1f MiB "
         "read + written per round; host clock around synchronize)\n", d->iters, n,
         n == 1 ? "" : "s", 1e3 * per, moved / per / 1e9, moved / 1048576.0);
  double copy = 0;
  if (time_memcpy(d, g, n, &copy)) return -1;
  printf("memcpy:   cuMemcpyDtoD of the same bytes on each device, same clock, same run: %.3f ms: "
         "%.1f GB/s; the megakernel moves %.1f%% of it (%.1f%% counting the 32-byte sectors its "
         "boxes touch)\n", 1e3 * copy, moved / copy / 1e9, 100.0 * copy / per,
         100.0 * copy / per * (double)d->sector_bytes / moved);
  return 0;
}

/* The devices to use: --devices resolved (all: every one present), at most one per tensor. */
static int pick_devices(const demo *d, int *list) {
  int present = 0;
  char err[256];
  TRY(gcl_device_count(&present));
  if (!d->devices_given) return list[0] = 0, 1;
  int n = (int)runarg_resolve_devices(&d->devices, present, list, err, sizeof err);
  if (n == 0) return fprintf(stderr, "demo: %s\n", err), -1;
  if (d->devices.all && n == 1)
    printf("devices:  --devices all: 1 device present, the whole copy runs on device 0\n");
  if (n > d->tensors) {
    printf("devices:  %d devices for %d tensors: using the first %d\n", n, d->tensors, d->tensors);
    n = d->tensors;
  }
  return n;
}

/* --- the ring's tune ------------------------------------------------------------------------ */

/* The rings tried when neither --stages nor --blocks-per-sm is given (stages, blocks per SM):
 * the old default 3 x 2; on an H100 the demo moved 95.7-95.9% of cuMemcpyDtoD with 8, 10 and 12
 * stages x 1 block against 93.1-93.5% for 6 x 2, 4 x 3 and 3 x 4
 * (bench/results/tiles_h100_2026-12-05.log); 4 x 3 was the descriptor study's best ring on an
 * H200 (bench/RESULTS.md). */
static const int rings[][2] = {{3, 2}, {8, 1}, {10, 1}, {12, 1}, {6, 2}, {4, 3}, {3, 4}};
#define RING_COUNT (sizeof rings / sizeof *rings)
#define TUNE_ROUNDS 3   /* rounds over all rings: the best of three times each */
#define TUNE_LAUNCHES 8 /* launches queued per timing */

/* Every destination allocation of g[0 ... n-1] back to poison. */
static int poison(const demo *d, gpu *g, int n) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < d->tensors; j++)
      if (owns(&g[i], j)) TRY(gcl_mem_fill_u8(g[i].ctx, d->dst[j].dev, POISON, d->dst[j].bytes));
  return 0;
}

/* *ok: every device holds d->blocks_per_sm blocks of d->stages stages on one SM. */
static int ring_fits(const demo *d, gpu *g, int n, bool *ok) {
  *ok = true;
  for (int i = 0; i < n; i++) {
    int per = 0;
    gcl_status s = gcl_kernel_occupancy(g[i].kernel, 32, (size_t)d->stages * DEMO_STAGE_BYTES, &per);
    if (s == GCL_ERROR_INVALID_CONFIG) per = 0; /* more shared memory than a block may have */
    else if (s != GCL_OK) return failed("gcl_kernel_occupancy", s);
    if (per < d->blocks_per_sm) *ok = false;
  }
  return 0;
}

/* One launch of d's ring on poisoned destinations, verified on every device. */
static int ring_check(const demo *d, gpu *g, int n) {
  if (poison(d, g, n)) return -1;
  for (int i = 0; i < n; i++)
    if (launch(d, &g[i])) return -1;
  if (synchronize(g, n)) return -1;
  for (int i = 0; i < n; i++)
    if (verify(d, &g[i], false)) {
      fprintf(stderr, "demo: the ring of %d stages x %d blocks per SM copied wrongly\n",
              d->stages, d->blocks_per_sm);
      return -1;
    }
  return 0;
}

/* *per: seconds per launch of d's ring on every device, TUNE_LAUNCHES queued after a warm-up. */
static int ring_time(const demo *d, gpu *g, int n, double *per) {
  for (int i = 0; i < n; i++)
    if (launch(d, &g[i])) return -1;
  if (synchronize(g, n)) return -1;
  double t0 = demo_now_s();
  for (int k = 0; k < TUNE_LAUNCHES; k++)
    for (int i = 0; i < n; i++)
      if (launch(d, &g[i])) return -1;
  if (synchronize(g, n)) return -1;
  *per = (demo_now_s() - t0) / TUNE_LAUNCHES;
  return 0;
}

/* Each ring that fits is launched once and verified, then timed TUNE_ROUNDS times (the rings
 * interleaved, so a slow moment of the machine does not fall on one ring); the fastest is kept
 * in d, and the destinations are poisoned again for the verified copy that follows. */
static int tune(demo *d, gpu *g, int n) {
  double best[RING_COUNT];
  bool fits[RING_COUNT];
  for (size_t c = 0; c < RING_COUNT; c++) {
    d->stages = rings[c][0], d->blocks_per_sm = rings[c][1], best[c] = 0;
    if (ring_fits(d, g, n, &fits[c]) || (fits[c] && ring_check(d, g, n))) return -1;
  }
  for (int r = 0; r < TUNE_ROUNDS; r++)
    for (size_t c = 0; c < RING_COUNT; c++) {
      double per = 0;
      d->stages = rings[c][0], d->blocks_per_sm = rings[c][1];
      if (fits[c] && ring_time(d, g, n, &per)) return -1;
      if (fits[c] && (best[c] == 0 || per < best[c])) best[c] = per;
    }
  size_t pick = RING_COUNT;
  printf("tune:    ");
  for (size_t c = 0; c < RING_COUNT; c++) {
    if (!fits[c]) { printf(" %dx%d does not fit;", rings[c][0], rings[c][1]); continue; }
    printf(" %dx%d %.0f GB/s;", rings[c][0], rings[c][1], 2.0 * (double)d->view_bytes / best[c] / 1e9);
    if (pick == RING_COUNT || best[c] < best[pick]) pick = c;
  }
  if (pick == RING_COUNT)
    return fprintf(stderr, "\ndemo: tune: no ring fits an SM (give --stages, --blocks-per-sm)\n"), -1;
  d->stages = rings[pick][0], d->blocks_per_sm = rings[pick][1];
  printf(" each verified\nring:     %d stages of %u KiB per block, %d blocks per SM (the fastest "
         "of the tune, best of %d x %d launches)\n", d->stages, DEMO_STAGE_BYTES / 1024,
         d->blocks_per_sm, TUNE_ROUNDS, TUNE_LAUNCHES);
  return poison(d, g, n);
}

static int copy_all(demo *d, gpu *g, int n) {
  int rc = 0;
  for (int i = 0; rc == 0 && i < n; i++) rc = gpu_open(d, &g[i], i ? g[0].mod : NULL);
  for (int i = 0; rc == 0 && i < n; i++) rc = upload(d, &g[i]);
  for (int i = 0; rc == 0 && i < n; i++) rc = set_args(d, &g[i]);
  if (rc == 0 && d->tune) rc = tune(d, g, n);
  for (int i = 0; rc == 0 && i < n; i++) rc = launch(d, &g[i]);
  if (rc == 0) rc = synchronize(g, n);
  for (int i = 0; rc == 0 && i < n; i++) rc = verify(d, &g[i], true);
  for (int i = 0; rc == 0 && i < n; i++) rc = relaunch(d, &g[i]);
  if (rc == 0) rc = measure(d, g, n);
  return rc;
}

int demo_run_on_gpus(demo *d) {
  int list[MAX_GPUS];
  int n = pick_devices(d, list);
  if (n < 0) return -1;
  gpu *g = calloc((size_t)n, sizeof *g);
  if (!g) return failed("calloc", GCL_ERROR_OUT_OF_MEMORY);
  for (int i = 0; i < n; i++) g[i].device = list[i], g[i].index = i, g[i].count = n;
  if (n > 1) printf("devices:  %d, tensor j on the (j mod %d)-th: one module, a kernel per device\n", n, n);
  int rc = copy_all(d, g, n);
  close_all(d, g, n);
  free(g);
  return rc;
}
