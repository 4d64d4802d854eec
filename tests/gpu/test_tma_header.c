/* The kernel-side header on the GPU: kernels/tma_tile.cu (docs/tensormaps.md's complete program,
 * written from <gclaunch/tma.cuh> alone) loads every 16 x 32 tile of a 64 x 96 f32 tensor through
 * a map of a grid-constant struct, adds 1 and stores it through the second map; every element of
 * the destination against the host. Twice: the kernel nvcc built (kernels/meson.build), and the
 * same source compiled at run time by gcl_module_compile, with no include path (the header comes
 * with the library). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/suite.h"
#include "gclaunch/gclaunch.h"

#define CHECK(call) cr_assert_eq((call), GCL_OK, "%s: %s", #call, gcl_last_error())
enum { ROWS = 64, COLS = 96, TILE_W = 32, TILE_H = 16 };

static char *read_text(const char *path) {
  void *data;
  size_t n;
  CHECK(gcl_file_read(path, &data, &n));
  return data;
}

/* Runs tma_tile_add1 of mod over a fresh src (i * 0.5) into dst; compares dst with src + 1. */
static void run_tile_kernel(gcl_context *ctx, gcl_module *mod) {
  gcl_kernel *k;
  CHECK(gcl_module_find_kernel(mod, "tma_tile_add1",
                               "grid_constant struct{tensormap[2] maps, u32 tiles_x} p", &k));
  size_t bytes = (size_t)ROWS * COLS * sizeof(float);
  float *host = malloc(bytes), *back = malloc(bytes);
  for (size_t i = 0; i < (size_t)ROWS * COLS; i++) host[i] = 0.5f * (float)i;
  uint64_t src, dst;
  CHECK(gcl_mem_alloc(ctx, bytes, &src));
  CHECK(gcl_mem_alloc(ctx, bytes, &dst));
  CHECK(gcl_mem_upload(ctx, src, host, bytes));
  CHECK(gcl_mem_fill_u8(ctx, dst, 0xA5, bytes));
  int64_t shape[2] = {ROWS, COLS};
  DLTensor ts = {.data = (void *)(uintptr_t)src, .device = {kDLCUDA, 0}, .ndim = 2,
                 .dtype = {kDLFloat, 32, 1}, .shape = shape};
  DLTensor td = ts;
  td.data = (void *)(uintptr_t)dst;
  const DLTensor *tensors[2] = {&ts, &td};
  gcl_tensormap_options o[2] = {0};
  for (int i = 0; i < 2; i++) o[i].box[0] = TILE_W, o[i].box[1] = TILE_H; /* TMA order */
  o[1].store = 1;
  gcl_args *args;
  gcl_field maps, tiles_x;
  CHECK(gcl_args_create(gcl_kernel_layout(k), &args));
  CHECK(gcl_layout_field(gcl_kernel_layout(k), "p.maps[0]", &maps));
  CHECK(gcl_layout_field(gcl_kernel_layout(k), "p.tiles_x", &tiles_x));
  CHECK(gcl_args_set_tensormaps(args, ctx, &maps, 2, tensors, o, 2, 0));
  CHECK(gcl_args_set_field_u32(args, &tiles_x, COLS / TILE_W));
  gcl_launch_config cfg = {.grid = {(ROWS / TILE_H) * (COLS / TILE_W)}, .block = {128}};
  CHECK(gcl_launch(k, &cfg, args));
  CHECK(gcl_context_synchronize(ctx));
  CHECK(gcl_mem_download(ctx, back, dst, bytes));
  size_t bad = 0;
  for (size_t i = 0; i < (size_t)ROWS * COLS; i++)
    if (back[i] != host[i] + 1.0f && bad++ < 5)
      cr_log_error("element %zu (row %zu, column %zu): %g, expected %g", i, i / COLS, i % COLS,
                   back[i], host[i] + 1.0f);
  cr_expect_eq(bad, 0, "%zu of %d elements differ", bad, ROWS * COLS);
  gcl_args_destroy(args);
  gcl_mem_free(ctx, src);
  gcl_mem_free(ctx, dst);
  free(host);
  free(back);
}

static gcl_context *context_sm90(void) {
  gcl_context *ctx;
  CHECK(gcl_context_create(0, &ctx));
  gcl_device_info info;
  CHECK(gcl_device_query(0, &info));
  if (info.sm < 90) {
    gcl_context_destroy(ctx);
    cr_skip_test("TMA needs sm_90 or later; device 0 is sm_%d", info.sm);
  }
  return ctx;
}

Test(tma_header, the_nvcc_kernel_loads_and_stores_every_tile) {
  gcl_context *ctx = context_sm90();
  gcl_module *mod;
  CHECK(gcl_module_load_file(ctx, GCL_KERNEL("tma_tile.fatbin"), &mod));
  run_tile_kernel(ctx, mod);
  gcl_module_destroy(mod);
  gcl_context_destroy(ctx);
}

Test(tma_header, the_same_source_through_nvrtc_with_no_include_path) {
  gcl_context *ctx = context_sm90();
  char *src = read_text(GCL_SOURCE("kernels/tma_tile.cu"));
  gcl_module *mod;
  gcl_status s = gcl_module_compile(ctx, src, "tma_tile.cu", NULL, 0, &mod);
  gcl_file_free(src);
  if (s == GCL_ERROR_NO_NVRTC) {
    gcl_context_destroy(ctx);
    GCL_SKIP_NO_NVRTC("NVRTC not available: %s", gcl_last_error());
  }
  cr_assert_eq(s, GCL_OK, "%s", gcl_last_error());
  run_tile_kernel(ctx, mod);
  gcl_module_destroy(mod);
  gcl_context_destroy(ctx);
}
