/* Example: a TMA kernel from the docs alone (docs/tensormaps.md). kernels/tma_tile.cu loads each
 * 16 x 32 tile of a 64 x 96 f32 tensor through map 0 of a grid-constant struct, adds 1, and
 * stores it through map 1; this program encodes both maps from DLPack descriptions, launches, and
 * checks every element on the host.
 *   example_tma_tile build/kernels/tma_tile.sm_90.cubin     (built by nvcc)
 *   example_tma_tile kernels/tma_tile.cu                     (compiled here by NVRTC)
 * Needs an sm_90 or later GPU; without one it prints the driver's message and exits 2. */
#include <gclaunch/gclaunch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ROWS = 64, COLS = 96, TILE_W = 32, TILE_H = 16 };

static int check(gcl_status s, const char *what) {
  if (s != GCL_OK) fprintf(stderr, "%s: %s: %s\n", what, gcl_status_name(s), gcl_last_error());
  return s != GCL_OK;
}

/* A cubin/fatbin/PTX file is loaded; a .cu file is compiled with NVRTC (which needs no include
 * path for <gclaunch/tma.cuh>: the library hands the header to NVRTC itself). */
static gcl_status load(gcl_context *ctx, const char *path, gcl_module **mod) {
  size_t n = strlen(path);
  if (n < 3 || strcmp(path + n - 3, ".cu") != 0) return gcl_module_load_file(ctx, path, mod);
  void *src;
  size_t size;
  gcl_status s = gcl_file_read(path, &src, &size);
  if (s == GCL_OK) s = gcl_module_compile(ctx, src, path, NULL, 0, mod);
  gcl_file_free(src);
  return s;
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "build/kernels/tma_tile.sm_90.cubin";
  if (check(gcl_driver_init(), "driver")) return 2;
  static float host[ROWS * COLS], back[ROWS * COLS];
  for (int i = 0; i < ROWS * COLS; i++) host[i] = 0.5f * (float)i;
  gcl_context *ctx = NULL;
  gcl_module *mod = NULL;
  gcl_kernel *k = NULL;
  gcl_args *args = NULL;
  uint64_t src = 0, dst = 0;
  int bad = check(gcl_context_create(0, &ctx), "context") || check(load(ctx, path, &mod), path) ||
            /* The struct as the kernel declares it; checked against the kernel's real layout. */
            check(gcl_module_find_kernel(mod, "tma_tile_add1",
                                         "grid_constant struct{tensormap[2] maps, u32 tiles_x} p", &k),
                  "tma_tile_add1") ||
            check(gcl_args_create(gcl_kernel_layout(k), &args), "args") ||
            check(gcl_mem_alloc(ctx, sizeof host, &src), "alloc src") ||
            check(gcl_mem_alloc(ctx, sizeof host, &dst), "alloc dst") ||
            check(gcl_mem_upload(ctx, src, host, sizeof host), "upload src");
  /* Two row-major f32 tensors of ROWS x COLS (strides NULL: compact). */
  int64_t shape[2] = {ROWS, COLS};
  DLTensor ts = {.data = (void *)(uintptr_t)src, .device = {kDLCUDA, 0}, .ndim = 2,
                 .dtype = {kDLFloat, 32, 1}, .shape = shape};
  DLTensor td = ts;
  td.data = (void *)(uintptr_t)dst;
  const DLTensor *tensors[2] = {&ts, &td};
  gcl_tensormap_options o[2] = {0};
  for (int i = 0; i < 2; i++) o[i].box[0] = TILE_W, o[i].box[1] = TILE_H; /* innermost first */
  o[1].store = 1;                                       /* map 1 is a TMA store destination */
  gcl_field maps, tiles_x;
  bad = bad || check(gcl_layout_field(gcl_kernel_layout(k), "p.maps[0]", &maps), "p.maps[0]") ||
        check(gcl_layout_field(gcl_kernel_layout(k), "p.tiles_x", &tiles_x), "p.tiles_x") ||
        check(gcl_args_set_tensormaps(args, ctx, &maps, 2, tensors, o, 2, 0), "maps") ||
        check(gcl_args_set_field_u32(args, &tiles_x, COLS / TILE_W), "tiles_x");
  gcl_launch_config cfg = {.grid = {(ROWS / TILE_H) * (COLS / TILE_W)}, .block = {128}};
  bad = bad || check(gcl_launch(k, &cfg, args), "launch") ||
        check(gcl_context_synchronize(ctx), "kernel") ||
        check(gcl_mem_download(ctx, back, dst, sizeof back), "download dst");
  int wrong = 0;
  for (int i = 0; !bad && i < ROWS * COLS; i++) wrong += back[i] != host[i] + 1.0f;
  if (!bad) printf("tma_tile: %s (%d of %d elements wrong)\n", wrong ? "FAILED" : "OK", wrong, ROWS * COLS);
  gcl_args_destroy(args);
  if (src) gcl_mem_free(ctx, src);
  if (dst) gcl_mem_free(ctx, dst);
  gcl_module_destroy(mod);
  gcl_context_destroy(ctx);
  return bad || wrong;
}
