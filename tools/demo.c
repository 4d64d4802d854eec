/* gclaunch demo: a persistent megakernel (kernels/megakernel.cu) copies K tensors -- views at
 * non-zero byte offsets among them -- choosing each tile's TMA descriptors by run-time index from
 * ONE grid-constant `tensormap[N]` parameter. Every destination is poisoned first and checked
 * byte for byte against the host afterwards; then the copy is timed. Without a GPU it says so and
 * shows what it can: the kernel's parameter layout read from the cubin, the layout engine's, and
 * the packed parameter buffer for the demo's arguments.
 *
 * TMA stores write whole 16-byte chunks, so a destination row that does not end on a 16-byte
 * boundary would have the bytes after it overwritten. Sources keep odd row lengths (loads clip
 * exactly); destination rows are rounded up to 16 bytes, encoded with options.store = 1, and get
 * the source row followed by the load's out-of-bounds fill (zeros). */
#include "cli.h"

#include <gclaunch/gclaunch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef GCL_KERNEL_DIR
#define GCL_KERNEL_DIR "kernels"
#endif
#define POISON 0xA5
#define STAGE_BYTES 16384u /* kernels/megakernel.cu GCL_STAGE_BYTES: the largest box */
#define BOX_ROWS 128u /* 128 B x 128 rows = 16 KiB, the kernel's stage: fewer, larger TMA ops */
#define MAX_TENSORS 127 /* 254 descriptors: megakernel_copy_255 */

/* The kernel's work item (kernels/megakernel.cu WorkItem). */
typedef struct work_item { uint32_t src, dst, rank, bytes; int32_t sc[3], dc[3]; } work_item;

/* A 2-D view (rows x cols, row pitch in elements) at byte_offset inside one allocation. */
typedef struct view {
  DLTensor t;
  int64_t shape[2], strides[2];
  uint64_t dev;
  size_t bytes;
  unsigned char *host;
} view;

typedef struct demo {
  int tensors, iters;
  size_t mib;
  view *src, *dst;
  work_item *work;
  size_t n_work, cap_work;
  size_t n_maps; /* the kernel's N */
  char kernel[32], signature[96];
  uint64_t view_bytes; /* bytes of all source views */
} demo;

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const char *kernel_dir(void) {
  const char *env = getenv("GCL_KERNEL_DIR");
  return env && *env ? env : GCL_KERNEL_DIR;
}

static const DLDataType dtypes[3] = {{kDLFloat, 32, 1}, {kDLBfloat, 16, 1}, {kDLUInt, 8, 1}};
static const char *const dtype_names[3] = {"f32", "bf16", "u8"};

/* Tensor j: about `bytes` bytes, odd sizes; odd j are views starting (3 rows, 16 bytes) into
 * their allocation, and every third destination too; pitches are padded by 0-2 x 16 bytes.
 * A destination's rows are the source's rounded up to a multiple of 16 bytes. */
static void shape_view(view *v, int j, size_t bytes, bool is_dst) {
  memset(v, 0, sizeof *v);
  size_t es = dtypes[j % 3].bits / 8u;
  int64_t rows = 512 + (j * 97) % 512;
  int64_t cols = (int64_t)(bytes / es / (size_t)rows) - 13 * (j % 5) - 1;
  if (cols < 1) cols = 1;
  if (is_dst) cols = (cols + (int64_t)(16 / es) - 1) / (int64_t)(16 / es) * (int64_t)(16 / es);
  int pad = (j + is_dst) % 3;
  int64_t pitch = (int64_t)(((size_t)cols * es + 15) / 16 * 16 + 16u * (unsigned)pad) / (int64_t)es;
  bool offset = is_dst ? j % 3 == 0 : j % 2 == 1;
  v->shape[0] = rows;
  v->shape[1] = cols;
  v->strides[0] = pitch;
  v->strides[1] = 1;
  v->t.device.device_type = kDLCUDA;
  v->t.ndim = 2;
  v->t.dtype = dtypes[j % 3];
  v->t.shape = v->shape;
  v->t.strides = v->strides;
  v->t.byte_offset = offset ? (uint64_t)(3 * pitch) * es + 16 : 0;
  v->bytes = v->t.byte_offset + (size_t)(pitch * (rows + 4)) * es;
}

static size_t row_bytes(const view *v) { return (size_t)v->shape[1] * (v->t.dtype.bits / 8u); }
static size_t row_at(const view *v, int64_t r) {
  return v->t.byte_offset + (size_t)(r * v->strides[0]) * (v->t.dtype.bits / 8u);
}

/* 128-byte box rows; store: the map is a TMA store destination (checked for 16-byte rows). */
static gcl_tensormap_options box_for(const view *v, int store) {
  gcl_tensormap_options o;
  memset(&o, 0, sizeof o);
  o.box[0] = 128u / (v->t.dtype.bits / 8u);
  o.box[1] = BOX_ROWS;
  o.store = store;
  return o;
}

static int push_work(demo *d, work_item w) {
  if (d->n_work == d->cap_work) {
    size_t cap = d->cap_work ? 2 * d->cap_work : 4096;
    work_item *p = realloc(d->work, cap * sizeof *p);
    if (!p) return -1;
    d->work = p;
    d->cap_work = cap;
  }
  d->work[d->n_work++] = w;
  return 0;
}

/* One work item per box of tensor j: descriptors 2j (source) and 2j+1 (destination). */
static int plan_tensor(demo *d, int j) {
  gcl_tensormap_options o = box_for(&d->src[j], 0);
  gcl_tensormap_desc desc;
  if (gcl_tensormap_check(&d->src[j].t, &o, &desc) != GCL_OK) {
    fprintf(stderr, "demo: tensor %d: %s\n", j, gcl_last_error());
    return -1;
  }
  if (desc.box_bytes > STAGE_BYTES) {
    fprintf(stderr, "demo: tensor %d: a box holds %u bytes, the kernel's stage %u\n", j,
            desc.box_bytes, STAGE_BYTES);
    return -1;
  }
  for (uint64_t y = 0; y < desc.dims[1]; y += o.box[1])
    for (uint64_t x = 0; x < desc.dims[0]; x += o.box[0]) {
      work_item w = {(uint32_t)(2 * j), (uint32_t)(2 * j + 1), 2, desc.box_bytes,
                     {(int32_t)x, (int32_t)y, 0}, {(int32_t)x, (int32_t)y, 0}};
      if (push_work(d, w)) return -1;
    }
  return 0;
}

/* Shapes, work list and kernel choice (the smallest N that holds 2K descriptors). */
static int plan(demo *d) {
  d->src = calloc((size_t)d->tensors, sizeof *d->src);
  d->dst = calloc((size_t)d->tensors, sizeof *d->dst);
  if (!d->src || !d->dst) return -1;
  size_t per = d->mib * 1024 * 1024 / (size_t)d->tensors;
  for (int j = 0; j < d->tensors; j++) {
    shape_view(&d->src[j], j, per, false);
    shape_view(&d->dst[j], j, per, true);
    /* Stand-in device addresses (2 GiB apart, 256-byte aligned like cuMemAlloc's) until the GPU
     * path allocates real ones: the CPU checks and the buffer dump work with these. */
    d->src[j].t.data = (void *)(uintptr_t)(0x7f0000000000ull + ((uint64_t)j << 31));
    d->dst[j].t.data = (void *)(uintptr_t)(0x7f0000000000ull + ((uint64_t)j << 31) + (1u << 30));
    d->view_bytes += row_bytes(&d->src[j]) * (size_t)d->src[j].shape[0];
    if (plan_tensor(d, j)) return -1;
  }
  size_t need = 2 * (size_t)d->tensors;
  d->n_maps = need <= 16 ? 16 : need <= 64 ? 64 : 255;
  snprintf(d->kernel, sizeof d->kernel, "megakernel_copy_%zu", d->n_maps);
  snprintf(d->signature, sizeof d->signature,
           "grid_constant tensormap[%zu] maps, const void* work, u32 n_work", d->n_maps);
  return 0;
}

static void print_plan(const demo *d) {
  int offset_views = 0;
  for (int j = 0; j < d->tensors; j++)
    offset_views += (d->src[j].t.byte_offset != 0) + (d->dst[j].t.byte_offset != 0);
  printf("plan:     %d tensors (f32, bf16, u8; %d of the %d views start at a non-zero "
         "byte_offset), %.1f MiB of source views, %zu boxes of 128 B x %u rows\n",
         d->tensors, offset_views, 2 * d->tensors, (double)d->view_bytes / 1048576.0, d->n_work,
         BOX_ROWS);
  printf("kernel:   %s(%s)\n", d->kernel, d->signature);
  for (int j = 0; j < d->tensors && j < 4; j++)
    printf("  tensor %d: %s [%lld x %lld], source pitch %lld, byte_offset %llu -> maps[%d], "
           "destination [%lld x %lld] byte_offset %llu -> maps[%d] (store)\n", j,
           dtype_names[j % 3], (long long)d->src[j].shape[0], (long long)d->src[j].shape[1],
           (long long)d->src[j].strides[0], (unsigned long long)d->src[j].t.byte_offset, 2 * j,
           (long long)d->dst[j].shape[0], (long long)d->dst[j].shape[1],
           (unsigned long long)d->dst[j].t.byte_offset, 2 * j + 1);
  if (d->tensors > 4) printf("  ... %d more\n", d->tensors - 4);
}

/* ---- what can be shown without a GPU ------------------------------------------------------- */

static void *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  void *buf = NULL;
  long n = -1;
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
      (buf = malloc((size_t)n + 1)) && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return buf;
}

/* The kernel's parameters as the compiler placed them (the cubin's EIATTR records). */
static void show_cubin_layout(const demo *d, const gcl_layout *engine) {
  char path[1024];
  snprintf(path, sizeof path, "%s/megakernel.sm_90.cubin", kernel_dir());
  size_t size = 0, k = 0;
  void *data = read_file(path, &size);
  gcl_image *img = NULL;
  gcl_image_kernel info;
  if (!data) {
    printf("cubin:    %s not readable (build the kernels, or set GCL_KERNEL_DIR)\n", path);
    return;
  }
  if (gcl_image_parse(data, size, 0, &img) != GCL_OK ||
      gcl_image_find_kernel(img, d->kernel, &k) != GCL_OK ||
      gcl_image_get_kernel(img, k, &info) != GCL_OK) {
    printf("cubin:    %s: %s\n", path, gcl_last_error());
  } else {
    printf("cubin:    %s, sm_%d, %s: %zu parameters, %zu bytes\n", path, gcl_image_sm(img),
           d->kernel, info.param_count, info.param_bytes);
    for (size_t p = 0; p < info.param_count; p++) {
      size_t off = 0, sz = 0, eoff = 0, esz = 0;
      if (gcl_image_param(img, k, p, &off, &sz, NULL) != GCL_OK) continue;
      bool same = gcl_layout_param(engine, p, &eoff, &esz, NULL) == GCL_OK && eoff == off &&
                  esz == sz;
      printf("  param %zu: offset 0x%04zx size %5zu   layout engine: 0x%04zx %5zu %s\n", p, off,
             sz, eoff, esz, same ? "(same)" : "(DIFFERS)");
    }
  }
  gcl_image_destroy(img);
  free(data);
}

/* A stand-in for a descriptor the driver would encode: the checked address, dims and strides
 * (what cuTensorMapEncodeTiled would be given), so the buffer dump shows where each one lands. */
static void placeholder_map(const gcl_tensormap_desc *desc, unsigned char map[128]) {
  uint64_t q[16] = {desc->address, desc->dims[0], desc->dims[1], desc->strides[0],
                    ((uint64_t)desc->box[1] << 32) | desc->box[0], (uint64_t)desc->type};
  memcpy(map, q, sizeof q);
}

static int fill_placeholders(demo *d, gcl_args *args) {
  unsigned char map[128];
  for (size_t e = 0; e < d->n_maps; e++) {
    bool used = e < 2 * (size_t)d->tensors;
    const view *v = used ? (e % 2 ? &d->dst[e / 2] : &d->src[e / 2]) : &d->src[0];
    gcl_tensormap_options o = box_for(v, used && e % 2); /* unused slots repeat maps[0] */
    gcl_tensormap_desc desc;
    if (gcl_tensormap_check(&v->t, &o, &desc) != GCL_OK) {
      fprintf(stderr, "demo: maps[%zu]: %s\n", e, gcl_last_error());
      return -1;
    }
    placeholder_map(&desc, map);
    if (gcl_args_set_element(args, 0, e, map, sizeof map) != GCL_OK) return -1;
  }
  return gcl_args_set_ptr(args, 1, 0x7f00c0000000ull) != GCL_OK ||
                 gcl_args_set_u32(args, 2, (uint32_t)d->n_work) != GCL_OK
             ? -1
             : 0;
}

static void hexdump_line(const unsigned char *buf, size_t off, size_t size) {
  printf("    %04zx:", off);
  for (size_t i = off; i < off + 16 && i < size; i++) printf(" %02x", buf[i]);
  printf("\n");
}

/* Offsets from the layout engine and a summary hexdump of the packed buffer. */
static void show_buffer(const gcl_layout *layout, const gcl_args *args) {
  const void *data = NULL;
  size_t size = 0;
  if (gcl_args_buffer(args, &data, &size) != GCL_OK) {
    printf("buffer:   %s\n", gcl_last_error());
    return;
  }
  const unsigned char *b = data;
  printf("buffer:   %zu bytes packed for sm_%d (descriptors are placeholders holding the checked "
         "address, dims, stride, box, type:\n          the driver encodes the real 128 bytes)\n",
         size, gcl_layout_sm(layout));
  for (size_t p = 0; p < gcl_layout_count(layout); p++) {
    size_t off = 0, sz = 0, al = 0;
    gcl_param_info info;
    if (gcl_layout_param(layout, p, &off, &sz, &al) || gcl_layout_param_info(layout, p, &info))
      continue;
    printf("  param %zu '%s': offset 0x%04zx size %5zu align %3zu\n", p,
           info.name ? info.name : "", off, sz, al);
    size_t lines = sz >= 256 ? 2 : (sz + 15) / 16;
    for (size_t l = 0; l < lines; l++) hexdump_line(b, off + 16 * l, off + sz);
    if (sz >= 256)
      printf("    ... maps[1] at 0x%04zx, maps[%zu] at 0x%04zx\n", off + 128, sz / 128 - 1,
             off + sz - 128);
  }
}

/* The compiler's placement (cubin) next to the layout engine's for the same signature. */
static int show_layouts(demo *d, gcl_layout **out) {
  gcl_signature *sig = NULL;
  if (gcl_signature_parse(d->signature, &sig) != GCL_OK ||
      gcl_layout_create(sig, 90, out) != GCL_OK) {
    fprintf(stderr, "demo: %s\n", gcl_last_error());
    gcl_signature_destroy(sig);
    return -1;
  }
  gcl_signature_destroy(sig);
  show_cubin_layout(d, *out);
  return 0;
}

static int show_without_gpu(demo *d) {
  gcl_layout *layout = NULL;
  gcl_args *args = NULL;
  int rc = -1;
  if (show_layouts(d, &layout)) return 1;
  if (gcl_args_create(layout, &args) == GCL_OK && fill_placeholders(d, args) == 0) {
    show_buffer(layout, args);
    rc = 0;
  } else {
    fprintf(stderr, "demo: %s\n", gcl_last_error());
  }
  gcl_args_destroy(args);
  gcl_layout_destroy(layout);
  printf("\nno copy was run: this machine has no usable GPU (see above). On an sm_90 GPU the "
         "demo copies and verifies every tensor and prints the bandwidth.\n");
  return rc ? 1 : 0;
}

/* ---- the copy on a GPU ---------------------------------------------------------------------- */

typedef struct gpu {
  gcl_context *ctx;
  gcl_module *mod;
  gcl_kernel *kernel;
  gcl_args *args;
  uint64_t work_dev;
  gcl_device_info info;
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

static int gpu_open(demo *d, gpu *g) {
  char path[1024];
  TRY(gcl_context_create(0, &g->ctx));
  TRY(gcl_device_get_info(0, &g->info));
  if (g->info.sm < 90) {
    printf("device:   %s is sm_%d: TMA needs sm_90 or later\n", g->info.name, g->info.sm);
    return 1;
  }
  snprintf(path, sizeof path, "%s/megakernel.fatbin", kernel_dir());
  TRY(gcl_module_load_file(g->ctx, path, &g->mod));
  TRY(gcl_kernel_get(g->mod, d->kernel, d->signature, &g->kernel));
  TRY(gcl_args_create(gcl_kernel_layout(g->kernel), &g->args));
  printf("device:   %s, sm_%d, %d SMs; module %s\n", g->info.name, g->info.sm,
         g->info.multiprocessors, path);
  return 0;
}

static void gpu_close(demo *d, gpu *g) {
  for (int j = 0; d->src && j < d->tensors; j++) {
    if (d->src[j].dev) gcl_mem_free(g->ctx, d->src[j].dev);
    if (d->dst[j].dev) gcl_mem_free(g->ctx, d->dst[j].dev);
  }
  if (g->work_dev) gcl_mem_free(g->ctx, g->work_dev);
  gcl_args_destroy(g->args);
  gcl_module_destroy(g->mod);
  gcl_context_destroy(g->ctx);
}

static void random_bytes(unsigned char *p, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t r = rng();
    memcpy(p + i, &r, 8);
  }
  for (; i < n; i++) p[i] = (unsigned char)rng();
}

/* Random sources (the whole allocation, so bytes around the views are random too), poisoned
 * destinations, and the work list. */
static int upload(demo *d, gpu *g) {
  for (int j = 0; j < d->tensors; j++) {
    view *s = &d->src[j], *t = &d->dst[j];
    if (!(s->host = malloc(s->bytes))) return failed("malloc", GCL_ERROR_OUT_OF_MEMORY);
    random_bytes(s->host, s->bytes);
    TRY(gcl_mem_alloc(g->ctx, s->bytes, &s->dev));
    TRY(gcl_mem_alloc(g->ctx, t->bytes, &t->dev));
    TRY(gcl_mem_upload(g->ctx, s->dev, s->host, s->bytes));
    TRY(gcl_mem_fill_u8(g->ctx, t->dev, POISON, t->bytes));
    s->t.data = (void *)(uintptr_t)s->dev;
    t->t.data = (void *)(uintptr_t)t->dev;
    s->t.device.device_id = t->t.device.device_id = gcl_context_device(g->ctx);
  }
  TRY(gcl_mem_alloc(g->ctx, d->n_work * sizeof *d->work, &g->work_dev));
  TRY(gcl_mem_upload(g->ctx, g->work_dev, d->work, d->n_work * sizeof *d->work));
  return 0;
}

/* Encodes every descriptor straight into its element of `maps` (unused slots repeat maps[0]). */
static int set_args(demo *d, gpu *g) {
  double t0 = now_s();
  for (size_t e = 0; e < d->n_maps; e++) {
    bool used = e < 2 * (size_t)d->tensors;
    const view *v = used ? (e % 2 ? &d->dst[e / 2] : &d->src[e / 2]) : &d->src[0];
    gcl_tensormap_options o = box_for(v, used && e % 2);
    TRY(gcl_args_set_tensormap(g->args, g->ctx, 0, e, &v->t, &o));
  }
  double t1 = now_s();
  TRY(gcl_args_set_ptr(g->args, 1, g->work_dev));
  TRY(gcl_args_set_u32(g->args, 2, (uint32_t)d->n_work));
  printf("encode:   %zu descriptors encoded into maps[0..%zu] in %.1f us (%.2f us each)\n",
         d->n_maps, d->n_maps - 1, 1e6 * (t1 - t0), 1e6 * (t1 - t0) / (double)d->n_maps);
  return 0;
}

static int launch(const demo *d, gpu *g) {
  gcl_launch_config cfg;
  memset(&cfg, 0, sizeof cfg);
  size_t grid = 4 * (size_t)g->info.multiprocessors;
  cfg.grid[0] = (unsigned)(d->n_work < grid ? d->n_work : grid);
  cfg.block[0] = 32;
  TRY(gcl_launch(g->kernel, &cfg, g->args));
  return 0;
}

/* Destination allocation j must be poison everywhere except the view, whose rows hold the source
 * row and then zeros (the load's out-of-bounds fill) up to the destination's wider row end. */
static int verify_tensor(const demo *d, gpu *g, int j, unsigned char *got, unsigned char *want) {
  const view *s = &d->src[j], *t = &d->dst[j];
  TRY(gcl_mem_download(g->ctx, got, t->dev, t->bytes));
  memset(want, POISON, t->bytes);
  for (int64_t r = 0; r < s->shape[0]; r++) {
    memcpy(want + row_at(t, r), s->host + row_at(s, r), row_bytes(s));
    memset(want + row_at(t, r) + row_bytes(s), 0, row_bytes(t) - row_bytes(s));
  }
  if (!memcmp(got, want, t->bytes)) return 0;
  size_t i = 0;
  while (got[i] == want[i]) i++;
  fprintf(stderr, "demo: tensor %d (%s, byte_offset %llu): byte %zu of the destination is 0x%02x, "
          "expected 0x%02x\n", j, dtype_names[j % 3], (unsigned long long)t->t.byte_offset, i,
          got[i], want[i]);
  return -1;
}

static int verify(const demo *d, gpu *g) {
  size_t most = 0;
  for (int j = 0; j < d->tensors; j++) most = d->dst[j].bytes > most ? d->dst[j].bytes : most;
  unsigned char *got = malloc(most), *want = malloc(most);
  int bad = got && want ? 0 : d->tensors;
  for (int j = 0; !bad && j < d->tensors; j++) bad += verify_tensor(d, g, j, got, want) != 0;
  free(got);
  free(want);
  if (bad) return -1;
  printf("verify:   %d/%d tensors copied exactly (destinations poisoned with 0x%02X first; "
         "nothing written outside the views;\n          destination rows padded to 16 bytes "
         "hold the load's zero fill past the source row)\n", d->tensors, d->tensors, POISON);
  return 0;
}

static int measure(const demo *d, gpu *g) {
  for (int i = 0; i < 2; i++)
    if (launch(d, g)) return -1; /* warm-up */
  TRY(gcl_context_synchronize(g->ctx));
  double t0 = now_s();
  for (int i = 0; i < d->iters; i++)
    if (launch(d, g)) return -1;
  TRY(gcl_context_synchronize(g->ctx));
  double per = (now_s() - t0) / d->iters;
  double moved = 2.0 * (double)d->view_bytes;
  printf("time:     %d launches, %.3f ms each: %.1f GB/s (%.1f MiB read + written per launch; host "
         "clock around synchronize)\n", d->iters, 1e3 * per, moved / per / 1e9, moved / 1048576.0);
  return 0;
}

static int synchronize(gpu *g) {
  TRY(gcl_context_synchronize(g->ctx));
  return 0;
}

/* 0: copied and verified; 1: no usable GPU for this (said why); -1: failed. */
static int run_on_gpu(demo *d) {
  gpu g;
  memset(&g, 0, sizeof g);
  int rc = gpu_open(d, &g);
  if (rc == 0) rc = upload(d, &g);
  if (rc == 0) rc = set_args(d, &g);
  if (rc == 0) rc = launch(d, &g);
  if (rc == 0) rc = synchronize(&g);
  if (rc == 0) rc = verify(d, &g);
  if (rc == 0) rc = measure(d, &g);
  gpu_close(d, &g);
  return rc;
}

/* ---- command -------------------------------------------------------------------------------- */

static void free_demo(demo *d) {
  for (int j = 0; d->src && j < d->tensors; j++) free(d->src[j].host);
  free(d->src);
  free(d->dst);
  free(d->work);
}

static int parse_int(const char *text, long lo, long hi, long *out) {
  char *end = NULL;
  long v = text ? strtol(text, &end, 10) : 0;
  if (!text || *end || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

static int parse_args(int argc, char **argv, demo *d) {
  for (int i = 1; i < argc; i += 2) { /* options come in pairs: --name value */
    long v = 0;
    const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--tensors") && !parse_int(next, 1, MAX_TENSORS, &v)) d->tensors = (int)v;
    else if (!strcmp(a, "--mib") && !parse_int(next, 1, 16384, &v)) d->mib = (size_t)v;
    else if (!strcmp(a, "--iters") && !parse_int(next, 1, 100000, &v)) d->iters = (int)v;
    else {
      fprintf(stderr, "usage: gclaunch demo [--tensors 1..%d] [--mib MiB] [--iters N]\n"
              "  (GCL_KERNEL_DIR names the folder holding megakernel.fatbin and "
              "megakernel.sm_90.cubin)\n", MAX_TENSORS);
      return -1;
    }
  }
  return 0;
}

/* True when a driver and at least one device are there; otherwise says plainly why not. */
static bool have_gpu(void) {
  gcl_status s = gcl_driver_init();
  int count = 0;
  if (s == GCL_OK) s = gcl_device_count(&count);
  if (s == GCL_OK && count > 0) return true;
  printf("gpu:      no GPU -- %s: %s\n", s == GCL_OK ? "GCL_ERROR_NO_DEVICE" : gcl_status_name(s),
         s == GCL_OK ? "the driver reports no CUDA device" : gcl_last_error());
  printf("          showing what works without one: the kernel's parameter layout and the packed "
         "argument buffer.\n\n");
  return false;
}

int gcl_cmd_demo(int argc, char **argv) {
  demo d;
  memset(&d, 0, sizeof d);
  d.tensors = 32;
  d.mib = 256;
  d.iters = 20;
  if (parse_args(argc, argv, &d)) return 2;
  printf("gclaunch demo: one persistent kernel copies %d tensors through TMA, choosing each "
         "tile's descriptors\nby run-time index from ONE grid-constant tensormap[N] parameter "
         "(encoded from DLPack, byte_offset folded in).\n\n", d.tensors);
  int rc = plan(&d);
  if (rc == 0) {
    print_plan(&d);
    rc = have_gpu() ? run_on_gpu(&d) : 1;
    if (rc == 1) rc = show_without_gpu(&d);
  }
  free_demo(&d);
  return rc == 0 ? 0 : 1;
}
