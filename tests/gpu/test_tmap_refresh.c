/* Re-pointing tensor maps on the real driver (issue 16): after gcl_args_repoint_tensormaps
 * (cuTensorMapReplaceAddress) or a GCL_TENSORMAP_REFRESH set the 128 bytes must equal a fresh
 * cuTensorMapEncodeTiled / cuTensorMapEncodeIm2col of the same description at the new address,
 * byte for byte, for random shapes, strides, boxes, options and im2col maps (seed printed); and a
 * megakernel relaunched after re-pointing its destination map must write the new buffer. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gclaunch/gclaunch.h"
#include "../common/test_rng.h"
#include "../common/tmap_field.h"
#include "../common/tmap_gen.h"

#define CHECK(call) cr_assert_eq((call), GCL_OK, "%s: %s", #call, gcl_last_error())
#define MAPS 8


/* The shared generator (tests/common/tmap_gen.h): descriptions every rule gclaunch knows
 * accepts, seeded from this suite's printed seed. */
typedef tmap_case desc;
static tmap_gen gen;

static void random_desc(desc *d, uint64_t mem, bool im2col) { tmap_gen_valid(&gen, d, mem, im2col); }

static void move(desc *d, uint64_t mem) {
  d->t.data = (void *)(uintptr_t)mem;
  d->t.byte_offset = (d->o.interleave == GCL_TENSORMAP_INTERLEAVE_32B ? 32u : 16u) * rnd(64);
}

typedef struct rig {
  gcl_context *ctx;
  gcl_signature *sig;
  gcl_layout *layout;
  gcl_args *args;
  uint64_t mem;
  size_t maps_at;
} rig;

static void open_rig(rig *r) {
  seed_rng_for("test_tmap_refresh");
  tmap_gen_seed(&gen, rng());
  memset(r, 0, sizeof *r);
  CHECK(gcl_context_create(0, &r->ctx));
  CHECK(gcl_mem_alloc(r->ctx, 64u << 20, &r->mem));
  CHECK(gcl_signature_parse("grid_constant tensormap[8] maps, u32 n", &r->sig));
  CHECK(gcl_layout_create(r->sig, gcl_context_sm(r->ctx), &r->layout));
  CHECK(gcl_args_create(r->layout, &r->args));
  CHECK(gcl_layout_param(r->layout, 0, &r->maps_at, NULL, NULL));
  CHECK(gcl_args_set_u32(r->args, 1, 0));
}

static void close_rig(rig *r) {
  gcl_args_destroy(r->args);
  gcl_layout_destroy(r->layout);
  gcl_signature_destroy(r->sig);
  gcl_mem_free(r->ctx, r->mem);
  gcl_context_destroy(r->ctx);
}

/* Element e's bytes, from the complete buffer (every element is set before this is called). */
static const unsigned char *element(const rig *r, size_t e) {
  const void *data;
  size_t size;
  CHECK(gcl_args_buffer(r->args, &data, &size));
  return (const unsigned char *)data + r->maps_at + 128 * e;
}

static bool same_as_fresh(const rig *r, size_t e, const desc *d) {
  _Alignas(128) unsigned char want[128];
  CHECK(gcl_tensormap_encode(r->ctx, &d->t, &d->o, want));
  return memcmp(element(r, e), want, 128) == 0;
}

Test(tmap_refresh_gpu, replace_and_refresh_equal_fresh_encodes) {
  rig r;
  open_rig(&r);
  int cases = 0;
  for (int i = 0; i < 400; i++) {
    desc d[MAPS];
    const DLTensor *t[MAPS];
    gcl_tensormap_options o[MAPS];
    /* No probing and no skip (issue 36): a description gclaunch accepts, the driver encodes. */
    for (int e = 0; e < MAPS; e++) {
      random_desc(&d[e], r.mem + ((uint64_t)rnd(60) << 20), rnd(4) == 0);
      t[e] = &d[e].t, o[e] = d[e].o;
    }
    gcl_status s = gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 0), MAPS, t, o, MAPS, 0);
    if (s != GCL_OK) {
      char line[1024] = "";
      for (int e = 0; e < MAPS; e++) {
        _Alignas(128) unsigned char probe[128];
        if (gcl_tensormap_encode(r.ctx, &d[e].t, &d[e].o, probe) != GCL_OK) {
          tmap_case_format(&d[e], line, sizeof line);
          break;
        }
      }
      cr_assert_fail("case %d: %s (first map refused: %s)", i, gcl_last_error(), line);
    }
    cases++;
    /* One element re-pointed by address, the others refreshed from moved tensors. */
    size_t e0 = rnd(MAPS);
    move(&d[e0], r.mem + ((uint64_t)rnd(60) << 20));
    CHECK(gcl_args_repoint_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, e0), 1, (const uint64_t[]){(uint64_t)(uintptr_t)d[e0].t.data + d[e0].t.byte_offset}));
    cr_assert(same_as_fresh(&r, e0, &d[e0]), "case %d element %zu: replace-address bytes differ "
              "from a fresh encode (rank %d, im2col %u)", i, e0, d[e0].t.ndim, d[e0].o.im2col.pixels);
    for (int e = 0; e < MAPS; e++)
      if ((size_t)e != e0) move(&d[e], r.mem + ((uint64_t)rnd(60) << 20));
    CHECK(gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 0), MAPS, t, o, MAPS, GCL_TENSORMAP_REFRESH));
    for (int e = 0; e < MAPS; e++)
      cr_assert(same_as_fresh(&r, (size_t)e, &d[e]), "case %d element %d: refreshed bytes differ "
                "from a fresh encode (rank %d, im2col %u)", i, e, d[e].t.ndim,
                d[e].o.im2col.pixels);
  }
  fprintf(stderr, "test_tmap_refresh: %d cases x %d maps compared, none skipped\n", cases, MAPS);
  close_rig(&r);
}

/* kernels/megakernel.cu's work item. */
typedef struct work_item { uint32_t src, dst, rank, bytes; int32_t sc[3], dc[3]; } work_item;

/* megakernel_copy_16 copies a 64 x 64 f32 tensor through maps 0 (source) and 1 (destination);
 * then map 1 is re-pointed to a second buffer and the kernel launched again: the second buffer
 * must hold the copy, the first must be untouched by the second launch. */
Test(tmap_refresh_gpu, relaunch_after_replace_writes_the_new_buffer) {
  gcl_context *ctx;
  gcl_module *mod;
  gcl_kernel *k;
  gcl_args *args;
  seed_rng_for("test_tmap_refresh");
  CHECK(gcl_context_create(0, &ctx));
  CHECK(gcl_module_load_file(ctx, GCL_KERNEL("megakernel.fatbin"), &mod));
  CHECK(gcl_module_find_kernel(mod, "megakernel_copy_16",
                       "grid_constant tensormap[16] maps, const void* work, u32 n_work", &k));
  CHECK(gcl_args_create(gcl_kernel_layout(k), &args));
  const size_t bytes = 64 * 64 * 4;
  uint64_t src, dst[2], work;
  CHECK(gcl_mem_alloc(ctx, bytes, &src));
  for (int b = 0; b < 2; b++) CHECK(gcl_mem_alloc(ctx, bytes, &dst[b]));
  float *host = malloc(bytes), *got = malloc(bytes);
  for (size_t i = 0; i < 64 * 64; i++) host[i] = (float)(rng() % 1000) - 500.0f;
  CHECK(gcl_mem_upload(ctx, src, host, bytes));
  int64_t shape[2] = {64, 64};
  DLTensor ts = {.data = (void *)(uintptr_t)src, .device = {kDLCUDA, 0}, .ndim = 2,
                 .dtype = {kDLFloat, 32, 1}, .shape = shape};
  DLTensor td = ts;
  td.data = (void *)(uintptr_t)dst[0];
  gcl_tensormap_options o = {0};
  o.box[0] = 16, o.box[1] = 16;
  for (size_t e = 0; e < 16; e++) CHECK(gcl_args_set_tensormaps(args, ctx, TMAP_FIELD(args, 0, e), 1, (const DLTensor *const[]){e == 1 ? &td : &ts}, &o, 1, 0));
  work_item items[16];
  for (int i = 0; i < 16; i++)
    items[i] = (work_item){0, 1, 2, 16 * 16 * 4, {16 * (i % 4), 16 * (i / 4), 0},
                           {16 * (i % 4), 16 * (i / 4), 0}};
  CHECK(gcl_mem_alloc(ctx, sizeof items, &work));
  CHECK(gcl_mem_upload(ctx, work, items, sizeof items));
  CHECK(gcl_args_set_ptr(args, 1, work));
  CHECK(gcl_args_set_u32(args, 2, 16));
  gcl_launch_config cfg = {.grid = {16, 1, 1}, .block = {32, 1, 1}};
  for (int b = 0; b < 2; b++) CHECK(gcl_mem_fill_u8(ctx, dst[b], 0xA5, bytes));
  CHECK(gcl_launch(k, &cfg, args));
  CHECK(gcl_context_synchronize(ctx));
  CHECK(gcl_mem_fill_u8(ctx, dst[0], 0x5A, bytes)); /* the second launch must not write here */
  CHECK(gcl_args_repoint_tensormaps(args, ctx, TMAP_FIELD(args, 0, 1), 1, (const uint64_t[]){dst[1]}));
  CHECK(gcl_launch(k, &cfg, args));
  CHECK(gcl_context_synchronize(ctx));
  CHECK(gcl_mem_download(ctx, got, dst[1], bytes));
  cr_assert(memcmp(got, host, bytes) == 0, "the re-pointed destination does not hold the copy");
  unsigned char *raw = (unsigned char *)got;
  CHECK(gcl_mem_download(ctx, got, dst[0], bytes));
  for (size_t i = 0; i < bytes; i++)
    cr_assert_eq(raw[i], 0x5A, "the old destination was written at byte %zu", i);
  free(host), free(got);
  gcl_args_destroy(args);
  gcl_mem_free(ctx, work), gcl_mem_free(ctx, src), gcl_mem_free(ctx, dst[0]), gcl_mem_free(ctx, dst[1]);
  gcl_module_destroy(mod);
  gcl_context_destroy(ctx);
}

/* The demo's ring kernel (megakernel_ring_16) with every stage count it accepts and grids that
 * give each block fewer, as many and more items than stages: the copy must be exact and nothing
 * written outside the destination view. */
Test(tmap_refresh_gpu, ring_kernel_copies_exactly_for_every_stage_count) {
  gcl_context *ctx;
  gcl_module *mod;
  gcl_kernel *k;
  gcl_args *args;
  seed_rng_for("test_tmap_refresh");
  CHECK(gcl_context_create(0, &ctx));
  CHECK(gcl_module_load_file(ctx, GCL_KERNEL("megakernel.fatbin"), &mod));
  CHECK(gcl_module_find_kernel(mod, "megakernel_ring_16",
                       "grid_constant tensormap[16] maps, const void* work, u32 n_work", &k));
  CHECK(gcl_args_create(gcl_kernel_layout(k), &args));
  enum { ROWS = 96, COLS = 128 };
  const size_t bytes = ROWS * COLS * 4;
  uint64_t src, dst, work;
  CHECK(gcl_mem_alloc(ctx, bytes, &src));
  CHECK(gcl_mem_alloc(ctx, bytes + 4096, &dst));
  uint32_t *host = malloc(bytes);
  unsigned char *got = malloc(bytes + 4096);
  for (size_t i = 0; i < ROWS * COLS; i++) host[i] = (uint32_t)rng();
  CHECK(gcl_mem_upload(ctx, src, host, bytes));
  int64_t shape[2] = {ROWS, COLS};
  DLTensor ts = {.data = (void *)(uintptr_t)src, .device = {kDLCUDA, 0}, .ndim = 2,
                 .dtype = {kDLUInt, 32, 1}, .shape = shape};
  DLTensor td = ts;
  td.data = (void *)(uintptr_t)dst, td.byte_offset = 2048; /* a view inside the allocation */
  gcl_tensormap_options o = {0};
  o.box[0] = 32, o.box[1] = 32;
  gcl_tensormap_options os = o;
  os.store = 1;
  for (size_t e = 0; e < 16; e++)
    CHECK(gcl_args_set_tensormaps(args, ctx, TMAP_FIELD(args, 0, e), 1, (const DLTensor *const[]){e == 1 ? &td : &ts}, e == 1 ? &os : &o, 1, 0));
  work_item items[12];
  for (int i = 0; i < 12; i++)
    items[i] = (work_item){0, 1, 2, 32 * 32 * 4, {32 * (i % 4), 32 * (i / 4), 0},
                           {32 * (i % 4), 32 * (i / 4), 0}};
  CHECK(gcl_mem_alloc(ctx, sizeof items, &work));
  CHECK(gcl_mem_upload(ctx, work, items, sizeof items));
  CHECK(gcl_args_set_ptr(args, 1, work));
  CHECK(gcl_args_set_u32(args, 2, 12));
  for (unsigned stages = 2; stages <= 8; stages++)
    for (unsigned grid = 1; grid <= 12; grid += 5) { /* 12, 2 and 1 items per block */
      gcl_launch_config cfg = {.grid = {grid, 1, 1}, .block = {32, 1, 1},
                               .shared_bytes = stages * 16384u};
      CHECK(gcl_mem_fill_u8(ctx, dst, 0xA5, bytes + 4096));
      CHECK(gcl_launch(k, &cfg, args));
      CHECK(gcl_context_synchronize(ctx));
      CHECK(gcl_mem_download(ctx, got, dst, bytes + 4096));
      for (size_t i = 0; i < 2048; i++)
        cr_assert_eq(got[i], 0xA5, "S=%u grid %u: byte %zu before the view written", stages, grid, i);
      cr_assert(memcmp(got + 2048, host, bytes) == 0, "S=%u grid %u: the copy differs", stages, grid);
      for (size_t i = 2048 + bytes; i < bytes + 4096; i++)
        cr_assert_eq(got[i], 0xA5, "S=%u grid %u: byte %zu after the view written", stages, grid, i);
    }
  free(host), free(got);
  gcl_args_destroy(args);
  gcl_mem_free(ctx, work), gcl_mem_free(ctx, src), gcl_mem_free(ctx, dst);
  gcl_module_destroy(mod);
  gcl_context_destroy(ctx);
}
