/* gclaunch demo: a persistent megakernel (kernels/megakernel.cu) copies K tensors -- views at
 * non-zero byte offsets among them -- choosing each tile's TMA descriptors by run-time index from
 * the maps of ONE grid-constant globals struct (`struct{tensormap[N] maps, const void* work, u32
 * n_work} g`, every member set through a field). Every destination is poisoned first and checked
 * byte for byte against the host afterwards; then the copy is timed. Without a GPU it says so and
 * shows what it can: the kernel's parameter layout read from the cubin, the layout engine's, and
 * the packed parameter buffer for the demo's arguments.
 *
 * TMA stores write whole 16-byte chunks, so a destination row that does not end on a 16-byte
 * boundary would have the bytes after it overwritten. Sources keep odd row lengths (loads clip
 * exactly); destination rows are rounded up to 16 bytes, encoded with options.store = 1, and get
 * the source row followed by the load's out-of-bounds fill (zeros). */
#include "cli.h"
#include "cliopts.h"
#include "demo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STAGE_BYTES DEMO_STAGE_BYTES
#define BOX_BYTES DEMO_BOX_BYTES
#define BOX_ROWS DEMO_BOX_ROWS
#define MAX_TENSORS 127 /* 254 descriptors: megakernel_globals_ring_254 */

/* Tensor j: about `bytes` bytes, odd row lengths; odd j are views starting (3 rows + align bytes)
 * into their allocation, and every third destination too; pitches are the row rounded up to a
 * multiple of align bytes (16: the least TMA takes), padded by 0-2 x align bytes. A
 * destination's rows are the source's rounded up to a multiple of 16 bytes. */
static void shape_view(view *v, int j, size_t bytes, bool is_dst, int align) {
  memset(v, 0, sizeof *v);
  size_t es = demo_dtypes[j % 3].bits / 8u;
  /* Whole 64-row boxes for most tensors (a ragged last band of boxes costs TMA time for bytes
   * nobody counts), 57 rows in the last band for every fourth: the row edge stays exercised. */
  int64_t rows = 64 * (8 + (j * 5) % 8) - (j % 4 == 1 ? 7 : 0);
  int64_t cols = (int64_t)(bytes / es / (size_t)rows) - 13 * (j % 5) - 1;
  if (cols < 1) cols = 1;
  if (is_dst) cols = (cols + (int64_t)(16 / es) - 1) / (int64_t)(16 / es) * (int64_t)(16 / es);
  int pad = (j + is_dst) % 3;
  size_t a = (size_t)align;
  int64_t pitch = (int64_t)(((size_t)cols * es + a - 1) / a * a + a * (unsigned)pad) / (int64_t)es;
  bool offset = is_dst ? j % 3 == 0 : j % 2 == 1;
  v->shape[0] = rows;
  v->shape[1] = cols;
  v->strides[0] = pitch;
  v->strides[1] = 1;
  v->t.device.device_type = kDLCUDA;
  v->t.ndim = 2;
  v->t.dtype = demo_dtypes[j % 3];
  v->t.shape = v->shape;
  v->t.strides = v->strides;
  v->t.byte_offset = offset ? (uint64_t)(3 * pitch) * es + a : 0;
  v->bytes = v->t.byte_offset + (size_t)(pitch * (rows + 4)) * es;
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
  gcl_tensormap_options o = demo_box_for(d, &d->src[j], 0);
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

/* Bytes of the 32-byte sectors (the unit L2 and DRAM move) that v's boxes touch, one box row
 * (BOX_BYTES or the row's remainder) at a time; the allocation is 256-byte aligned. A row that
 * starts 16 bytes into a sector touches one sector more per box than its bytes fill. */
static uint64_t sectors_touched(const view *v) {
  uint64_t total = 0, row = demo_row_bytes(v);
  for (int64_t r = 0; r < v->shape[0]; r++) {
    uint64_t at = demo_row_at(v, r);
    for (uint64_t x = 0; x < row; x += BOX_BYTES) {
      uint64_t n = row - x < BOX_BYTES ? row - x : BOX_BYTES, first = (at + x) / 32;
      total += 32 * ((at + x + n + 31) / 32 - first);
    }
  }
  return total;
}

/* Reorders the work list (tensor by tensor, each in box order) so that item i of every tensor
 * comes before item i + 1 of any: the blocks working at one time read and write many tensors'
 * memory instead of one band of one tensor. */
static int interleave_work(demo *d) {
  size_t *at = calloc((size_t)d->tensors + 1, sizeof *at);
  work_item *w = malloc((d->n_work ? d->n_work : 1) * sizeof *w);
  if (!at || !w) {
    free(at);
    free(w);
    return -1;
  }
  for (size_t i = 0; i < d->n_work; i++) at[d->work[i].src / 2 + 1]++; /* items per tensor */
  for (int j = 0; j < d->tensors; j++) at[j + 1] += at[j];             /* first item of each */
  size_t n = 0;
  for (size_t i = 0; n < d->n_work; i++)
    for (int j = 0; j < d->tensors; j++)
      if (at[j] + i < at[j + 1]) w[n++] = d->work[at[j] + i];
  free(at);
  free(d->work);
  d->work = w;
  d->cap_work = d->n_work;
  return 0;
}

/* Shapes, work list and kernel choice (the smallest N that holds 2K descriptors). */
static int plan(demo *d) {
  d->src = calloc((size_t)d->tensors, sizeof *d->src);
  d->dst = calloc((size_t)d->tensors, sizeof *d->dst);
  if (!d->src || !d->dst) return -1;
  size_t per = d->mib * 1024 * 1024 / (size_t)d->tensors;
  for (int j = 0; j < d->tensors; j++) {
    shape_view(&d->src[j], j, per, false, d->row_align);
    shape_view(&d->dst[j], j, per, true, d->row_align);
    /* Stand-in device addresses (2 GiB apart, 256-byte aligned like cuMemAlloc's) until the GPU
     * path allocates real ones: the CPU checks and the buffer dump work with these. */
    d->src[j].t.data = (void *)(uintptr_t)(0x7f0000000000ull + ((uint64_t)j << 31));
    d->dst[j].t.data = (void *)(uintptr_t)(0x7f0000000000ull + ((uint64_t)j << 31) + (1u << 30));
    d->view_bytes += demo_row_bytes(&d->src[j]) * (size_t)d->src[j].shape[0];
    d->sector_bytes += sectors_touched(&d->src[j]) + sectors_touched(&d->dst[j]);
    if (plan_tensor(d, j)) return -1;
  }
  if (d->interleave && interleave_work(d)) return -1;
  size_t need = 2 * (size_t)d->tensors;
  d->n_maps = need <= 16 ? 16 : need <= 64 ? 64 : 254;
  snprintf(d->kernel, sizeof d->kernel, "megakernel_globals_ring_%zu", d->n_maps);
  snprintf(d->signature, sizeof d->signature,
           "grid_constant struct{tensormap[%zu] maps, const void* work, u32 n_work} g", d->n_maps);
  return 0;
}

static void print_plan(const demo *d) {
  int offset_views = 0;
  for (int j = 0; j < d->tensors; j++)
    offset_views += (d->src[j].t.byte_offset != 0) + (d->dst[j].t.byte_offset != 0);
  printf("plan:     %d tensors (f32, bf16, u8; %d of the %d views start at a non-zero "
         "byte_offset), %.1f MiB of source views, %zu boxes of %u B x %u rows\n",
         d->tensors, offset_views, 2 * d->tensors, (double)d->view_bytes / 1048576.0, d->n_work,
         BOX_BYTES, BOX_ROWS);
  printf("sectors:  rows start at multiples of %d bytes: the boxes touch %.1f MiB of 32-byte "
         "sectors per round, %.1f%% of them view bytes\n", d->row_align,
         (double)d->sector_bytes / 1048576.0,
         100.0 * 2.0 * (double)d->view_bytes / (double)d->sector_bytes);
  printf("kernel:   %s(%s)\n", d->kernel, d->signature);
  static const char *const l2[] = {"none", "64 B", "128 B", "256 B"};
  if (d->tune)
    printf("ring:     tuned on the device (candidates below), one-warp blocks; work %s; L2 "
           "promotion %s\n", d->interleave ? "interleaved over the tensors" : "tensor by tensor",
           l2[d->l2]);
  else
    printf("ring:     %d stages of %u KiB per block (dynamic shared memory), %d one-warp blocks per "
         "SM; work %s; L2 promotion %s\n", d->stages, STAGE_BYTES / 1024, d->blocks_per_sm,
         d->interleave ? "interleaved over the tensors" : "tensor by tensor", l2[d->l2]);
  for (int j = 0; j < d->tensors && j < 4; j++)
    printf("  tensor %d: %s [%lld x %lld], source pitch %lld, byte_offset %llu -> maps[%d], "
           "destination [%lld x %lld] byte_offset %llu -> maps[%d] (store)\n", j,
           demo_dtype_names[j % 3], (long long)d->src[j].shape[0], (long long)d->src[j].shape[1],
           (long long)d->src[j].strides[0], (unsigned long long)d->src[j].t.byte_offset, 2 * j,
           (long long)d->dst[j].shape[0], (long long)d->dst[j].shape[1],
           (unsigned long long)d->dst[j].t.byte_offset, 2 * j + 1);
  if (d->tensors > 4) printf("  ... %d more\n", d->tensors - 4);
}

/* ---- what can be shown without a GPU ------------------------------------------------------- */

/* The kernel's parameters as the compiler placed them (the cubin's EIATTR records). */
static void show_cubin_layout(const demo *d, const gcl_layout *engine) {
  char path[1024];
  snprintf(path, sizeof path, "%s/megakernel.sm_90.cubin", demo_kernel_dir());
  size_t size = 0, k = 0;
  void *data = NULL;
  gcl_image *img = NULL;
  gcl_image_kernel_info info;
  if (gcl_image_file_read(path, &data, &size) != GCL_OK) {
    printf("cubin:    %s not readable (build the kernels, or set GCL_KERNEL_DIR)\n", path);
    return;
  }
  if (gcl_image_parse(data, size, 0, &img) != GCL_OK ||
      gcl_image_find_kernel(img, d->kernel, &k) != GCL_OK ||
      gcl_image_kernel(img, k, &info) != GCL_OK) {
    printf("cubin:    %s: %s\n", path, gcl_last_error());
  } else {
    printf("cubin:    %s, sm_%d, %s: %zu parameter%s, %zu bytes\n", path, gcl_image_sm(img),
           d->kernel, info.param_count, info.param_count == 1 ? "" : "s", info.param_bytes);
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
  gcl_file_free(data);
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
  demo_fields f;
  if (demo_resolve_fields(gcl_args_layout(args), d->n_maps, &f)) return -1;
  for (size_t e = 0; e < d->n_maps; e++) {
    bool used = e < 2 * (size_t)d->tensors;
    const view *v = used ? (e % 2 ? &d->dst[e / 2] : &d->src[e / 2]) : &d->src[0];
    gcl_tensormap_options o = demo_box_for(d, v, used && e % 2); /* unused slots repeat maps[0] */
    gcl_tensormap_desc desc;
    if (gcl_tensormap_check(&v->t, &o, &desc) != GCL_OK) {
      fprintf(stderr, "demo: maps[%zu]: %s\n", e, gcl_last_error());
      return -1;
    }
    placeholder_map(&desc, map);
    if (gcl_args_set_field(args, &f.maps[e], map, sizeof map) != GCL_OK) return -1;
  }
  return gcl_args_set_field_ptr(args, &f.work, 0x7f00c0000000ull) != GCL_OK ||
                 gcl_args_set_field_u32(args, &f.n_work, (uint32_t)d->n_work) != GCL_OK
             ? -1
             : 0;
}

static void hexdump_line(const unsigned char *buf, size_t off, size_t size) {
  printf("    %04zx:", off);
  for (size_t i = off; i < off + 16 && i < size; i++) printf(" %02x", buf[i]);
  printf("\n");
}

/* The globals' leaves by path: maps[1] (maps[0] is dumped above), and every member that is not
 * a map with its value's bytes. */
static int show_leaf(const gcl_field *leaf, const char *path, void *buf) {
  const unsigned char *b = buf;
  size_t len = strlen(path);
  if (leaf->info.kind == GCL_PARAM_TENSORMAP) {
    if (len > 3 && !strcmp(path + len - 3, "[1]"))
      printf("    %-12s at 0x%04zx (%zu bytes) ...\n", path, leaf->offset, leaf->size);
    return 0;
  }
  printf("    %-12s at 0x%04zx (%zu bytes):", path, leaf->offset, leaf->size);
  for (size_t i = 0; i < leaf->size; i++) printf(" %02x", b[leaf->offset + i]);
  printf("\n");
  return 0;
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
    gcl_field f;
    if (gcl_layout_param(layout, p, &off, &sz, &al) || gcl_layout_param_field(layout, p, &f))
      continue;
    const gcl_param_info info = f.info;
    printf("  param %zu '%s': offset 0x%04zx size %5zu align %3zu\n", p,
           info.name ? info.name : "", off, sz, al);
    size_t lines = sz >= 256 ? 2 : (sz + 15) / 16;
    for (size_t l = 0; l < lines; l++) hexdump_line(b, off + 16 * l, off + sz);
  }
  gcl_layout_visit_leaves(layout, show_leaf, (void *)b);
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

/* The copy on one or several GPUs is in demo_gpu.c. */

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

static bool parse_l2(const char *s, int *l2) {
  static const char *const names[] = {"none", "64", "128", "256"};
  for (int i = 0; i < 4; i++)
    if (!strcmp(s, names[i])) return *l2 = i, true;
  return false;
}

#define STR_(x) #x
#define STR(x) STR_(x)
typedef enum demo_option {
  DEMO_TENSORS, DEMO_MIB, DEMO_ITERS, DEMO_DEVICES, DEMO_STAGES, DEMO_BLOCKS_PER_SM, DEMO_ORDER,
  DEMO_L2, DEMO_ROW_ALIGN
} demo_option;
#define DEMO_OPTION_COUNT (DEMO_ROW_ALIGN + 1)
static const cli_option demo_options[DEMO_OPTION_COUNT] = {
    [DEMO_TENSORS] = {"--tensors", "1.." STR(MAX_TENSORS),
                      "tensors to copy, two maps each (default 32)"},
    [DEMO_MIB] = {"--mib", "MiB", "the source tensors' size in all (default 512)"},
    [DEMO_ITERS] = {"--iters", "N", "timed copies (default 20)"},
    [DEMO_DEVICES] = {"--devices", "all|D,D...",
                      "tensors round-robin over those devices (one module,\na kernel each)"},
    [DEMO_STAGES] = {"--stages", "2.." STR(DEMO_RING_MAX),
                     "the ring's 16 KiB stages per block; stages x blocks\n"
                     "x 16 KiB must fit an SM's shared memory. Default: the\n"
                     "fastest of a short tune on the device (see below)"},
    [DEMO_BLOCKS_PER_SM] = {"--blocks-per-sm", "1..32",
                            "blocks per SM (default: tuned; either option given\n"
                            "turns the tune off, the other then defaults to 3\n"
                            "stages or 2 blocks)"},
    [DEMO_ORDER] = {"--order", "tensor|interleave",
                    "the work list tensor by tensor (default), or box i\n"
                    "of every tensor before box i + 1"},
    [DEMO_L2] = {"--l2", "none|64|128|256", "the descriptors' L2 promotion, bytes (default none)"},
    [DEMO_ROW_ALIGN] = {"--row-align", "16..256",
                        "a power of two: the bytes every view's pitch and\n"
                        "byte_offset are a multiple of (default 256)"},
};

void demo_usage(FILE *f) {
  fprintf(f, "usage: gclaunch demo [options]\n\n"
             "A persistent megakernel copies tensors (views at non-zero byte_offsets among\n"
             "them) through TMA, picking each tile's descriptors by run-time index from the maps\n"
             "of one grid-constant globals struct, verifies every byte on the host and prints the\n"
             "bandwidth. Without a GPU it says so and shows the kernel's parameter layout read\n"
             "from its cubin and the packed argument buffer.\n");
  cli_options_print(f, "demo", demo_options, DEMO_OPTION_COUNT);
  fprintf(f, "\nThe ring: unless --stages or --blocks-per-sm is given, every device first runs\n"
             "each candidate ring (stages x blocks per SM: 3x2 8x1 10x1 12x1 6x2 4x3 3x4, those\n"
             "that fit its shared memory), verifies that launch's copy, times a few launches of\n"
             "each and keeps the fastest: the best ring differs between devices of the same SM\n"
             "count and shared memory (H100, H200).\n");
  fprintf(f, "\nThe kernels (megakernel.fatbin, megakernel.sm_90.cubin) are read from\n"
             "$GCL_KERNEL_DIR, else the kernels folder next to tools/ (a build tree or the test\n"
             "kit), else the installed share/gclaunch/kernels.\n");
}

/* Option id with its value v into d; false when v is out of range. */
static bool parse_option(demo *d, demo_option id, const char *v) {
  long n = 0;
  char err[256];
  switch (id) {
  case DEMO_TENSORS: return !parse_int(v, 1, MAX_TENSORS, &n) && (d->tensors = (int)n, true);
  case DEMO_MIB: return !parse_int(v, 1, 16384, &n) && (d->mib = (size_t)n, true);
  case DEMO_ITERS: return !parse_int(v, 1, 100000, &n) && (d->iters = (int)n, true);
  case DEMO_STAGES:
    return !parse_int(v, 2, DEMO_RING_MAX, &n) && (d->stages = (int)n, d->tune = false, true);
  case DEMO_BLOCKS_PER_SM:
    return !parse_int(v, 1, 32, &n) && (d->blocks_per_sm = (int)n, d->tune = false, true);
  case DEMO_L2: return parse_l2(v, &d->l2);
  case DEMO_ROW_ALIGN:
    return !parse_int(v, 16, 256, &n) && !(n & (n - 1)) && (d->row_align = (int)n, true);
  case DEMO_ORDER:
    if (strcmp(v, "tensor") && strcmp(v, "interleave")) return false;
    return d->interleave = !strcmp(v, "interleave"), true;
  case DEMO_DEVICES:
    if (runarg_parse_devices(v, &d->devices, err, sizeof err)) return d->devices_given = true;
    fprintf(stderr, "gclaunch demo: %s\n", err);
    return false;
  }
  return false;
}

/* 0 to go on, 1 after --help, -1 after a usage error (said why, then the usage). */
static int parse_args(int argc, char **argv, demo *d) {
  for (int i = 1; i < argc; i++) {
    const char *v;
    int id = cli_option_next("demo", demo_options, DEMO_OPTION_COUNT, argc, argv, &i, &v);
    if (id == CLI_HELP) return demo_usage(stdout), 1;
    if (id == CLI_OPERAND)
      fprintf(stderr, "gclaunch demo: unexpected '%s': the demo takes options only\n", argv[i]);
    else if (id >= 0 && parse_option(d, (demo_option)id, v)) continue;
    else if (id >= 0 && id != DEMO_DEVICES)
      fprintf(stderr, "gclaunch demo: %s '%s': expected %s\n", demo_options[id].name, v,
              demo_options[id].value);
    demo_usage(stderr);
    return -1;
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

int cmd_demo(int argc, char **argv) {
  demo d;
  memset(&d, 0, sizeof d);
  d.tensors = 32;
  d.mib = 512;
  d.iters = 20;
  /* Views pitched like cudaMallocPitch's (rows on 256-byte boundaries, byte_offsets too): 93.4%
   * of cuMemcpyDtoD on the H200 on 2026-12-03 against 86.4% for the 16-byte rows of --row-align
   * 16, whose boxes touch 5.5% more 32-byte sectors than they carry (bench/RESULTS.md). The ring
   * is tuned on the device (demo_gpu.c): on an H100 1-block rings of 8-13 stages moved 95.7-95.9%
   * against 93.1-93.5% for 2-4 blocks (bench/results/tiles_h100_2026-12-05.log), while the
   * descriptor study's best ring on an H200, a device of the same SM count and shared memory, was
   * 4 x 3. 3 x 2 is what the other option keeps when only one of --stages and --blocks-per-sm is
   * given. */
  d.stages = 3;
  d.blocks_per_sm = 2;
  d.tune = true;
  d.row_align = 256;
  int parsed = parse_args(argc, argv, &d);
  if (parsed) return parsed > 0 ? 0 : 2;
  printf("gclaunch demo: one persistent kernel copies %d tensors through TMA, choosing each "
         "tile's descriptors\nby run-time index from the maps of ONE grid-constant globals struct "
         "(encoded from DLPack, byte_offset folded in).\n\n", d.tensors);
  int rc = plan(&d);
  if (rc == 0) {
    print_plan(&d);
    rc = have_gpu() ? demo_run_on_gpus(&d) : 1;
    if (rc == 1) rc = show_without_gpu(&d);
  }
  free_demo(&d);
  return rc == 0 ? 0 : 1;
}

