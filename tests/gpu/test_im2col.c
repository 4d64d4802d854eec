/* im2col tensor maps on the GPU: kernels/im2col.cu issues one cp.async.bulk.tensor.4d ... .im2col
 * load per block through a grid-constant tensor map that gclaunch encoded from a DLPack view (an
 * NHWC float32 tensor starting 16 floats into its allocation), and copies what arrived to the
 * host. Each job's 8 pixels x 32 channels are compared with the host's reading of the same
 * tensor on fresh random data: pixel i of a load at (c, w, h, n) with im2col offsets (ow, oh) is
 * the pixel (w + i + ow, h + oh) of image n, channels c ... c+31, and zero outside the tensor.
 * The jobs stay inside one row of the bounding box (no wrap to the next row), where that reading
 * does not depend on how the box's corners end a row. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gclaunch/gclaunch.h"
#include "../common/test_rng.h"
#include "../common/tmap_field.h"

#define CHECK(call) cr_assert_eq((call), GCL_OK, "%s: %s", #call, gcl_last_error())

enum { N = 2, H = 9, W = 14, C = 64, PIXELS = 8, CHANNELS = 32, VIEW_AT = 16, SMEM = 16384 };
#define NJOBS 24

typedef struct job { int32_t c, w, h, n; uint16_t off_w, off_h; uint32_t bytes; } job;
_Static_assert(sizeof(job) == 24, "kernels/im2col.cu's Im2colJob");

static float at(const float *img, int n, int h, int w, int ch) {
  if (w < 0 || w >= W || h < 0 || h >= H || ch >= C) return 0.0f;
  return img[(((size_t)n * H + h) * W + w) * C + ch];
}

/* Where in the image a value sits (for the failure message), or "nowhere". */
static void locate(const float *img, float v, char *out, size_t cap) {
  snprintf(out, cap, "nowhere in the image");
  for (size_t i = 0; i < (size_t)N * H * W * C; i++)
    if (img[i] == v && v != 0.0f) {
      size_t ch = i % C, w = i / C % W, h = i / C / W % H, n = i / C / W / H;
      snprintf(out, cap, "image n %zu h %zu w %zu c %zu", n, h, w, ch);
      return;
    }
}

static void make_jobs(job *jobs, uint32_t bytes) {
  /* Fixed: a plain read, the padding column, offsets, rows below the image, channels past C. */
  const job fixed[] = {{0, 0, 0, 0, 0, 0, 0}, {0, -1, 0, 0, 0, 0, 0}, {32, 2, 3, 1, 1, 2, 0},
                       {0, 4, 7, 1, 2, 2, 0}, {48, 0, 0, 0, 0, 0, 0}, {16, -1, -1, 1, 1, 1, 0}};
  size_t nf = sizeof fixed / sizeof *fixed;
  for (size_t j = 0; j < NJOBS; j++) {
    if (j < nf) jobs[j] = fixed[j];
    else
      jobs[j] = (job){(int32_t)(rng() % 4) * 16, (int32_t)(rng() % 6) - 1, (int32_t)(rng() % 9) - 1,
                      (int32_t)(rng() % N), (uint16_t)(rng() % 3), (uint16_t)(rng() % 3), 0};
    jobs[j].bytes = bytes;
  }
}

Test(im2col, loads_equal_the_host_reading) {
  seed_rng_for("test_im2col");
  gcl_context *ctx;
  CHECK(gcl_context_create(0, &ctx));
  if (gcl_context_sm(ctx) < 90) cr_skip_test("TMA needs sm_90, device is sm_%d", gcl_context_sm(ctx));
  size_t count = (size_t)N * H * W * C, bytes = (VIEW_AT + count) * sizeof(float);
  float *img = malloc(count * sizeof *img);
  unsigned char *got = malloc((size_t)NJOBS * SMEM);
  cr_assert(img && got);
  for (size_t i = 0; i < count; i++) img[i] = (float)(rng() >> 40) / (float)(1 << 24) + 0.5f;
  uint64_t base, out, jobs_dev;
  CHECK(gcl_mem_alloc(ctx, bytes, &base));
  CHECK(gcl_mem_fill_u8(ctx, base, 0x5A, bytes));
  CHECK(gcl_mem_upload(ctx, base + VIEW_AT * sizeof(float), img, count * sizeof *img));
  CHECK(gcl_mem_alloc(ctx, (size_t)NJOBS * SMEM, &out));
  CHECK(gcl_mem_fill_u8(ctx, out, 0xA5, (size_t)NJOBS * SMEM));

  int64_t shape[4] = {N, H, W, C};
  DLTensor t = {.data = (void *)(uintptr_t)base, .device = {kDLCUDA, gcl_context_device(ctx)},
                .ndim = 4, .dtype = {kDLFloat, 32, 1}, .shape = shape, .strides = NULL,
                .byte_offset = VIEW_AT * sizeof(float)};
  gcl_tensormap_options o = {0};
  o.im2col.pixels = PIXELS, o.im2col.channels = CHANNELS;
  o.im2col.lower[0] = o.im2col.lower[1] = -1; /* padding 1 */
  o.im2col.upper[0] = o.im2col.upper[1] = -1; /* a 3x3 filter */
  gcl_tensormap_desc d;
  CHECK(gcl_tensormap_check(&t, &o, &d));
  cr_assert_eq(d.box_bytes, PIXELS * CHANNELS * 4u);
  job jobs[NJOBS];
  make_jobs(jobs, d.box_bytes);
  CHECK(gcl_mem_alloc(ctx, sizeof jobs, &jobs_dev));
  CHECK(gcl_mem_upload(ctx, jobs_dev, jobs, sizeof jobs));

  gcl_module *mod;
  gcl_kernel *k;
  gcl_args *args;
  CHECK(gcl_module_load_file(ctx, GCL_KERNEL("im2col.fatbin"), &mod));
  CHECK(gcl_module_find_kernel(mod, "im2col_load_4d", "grid_constant tensormap map, const void* jobs, u8* out", &k));
  CHECK(gcl_args_create(gcl_kernel_layout(k), &args));
  CHECK(gcl_args_set_tensormaps(args, ctx, TMAP_FIELD(args, 0, 0), 1, (const DLTensor *const[]){&t}, &o, 1, 0));
  CHECK(gcl_args_set_ptr(args, 1, jobs_dev));
  CHECK(gcl_args_set_ptr(args, 2, out));
  gcl_launch_config cfg = {.grid = {NJOBS, 1, 1}, .block = {128, 1, 1}};
  CHECK(gcl_launch(k, &cfg, args));
  CHECK(gcl_context_synchronize(ctx));
  CHECK(gcl_mem_download(ctx, got, out, (size_t)NJOBS * SMEM));

  size_t wrong = 0;
  char first[512] = "";
  for (size_t j = 0; j < NJOBS; j++) {
    const job *jb = &jobs[j];
    const unsigned char *blk = got + j * SMEM;
    for (int i = 0; i < PIXELS; i++)
      for (int ch = 0; ch < CHANNELS; ch++) {
        float want = at(img, jb->n, jb->h + jb->off_h, jb->w + i + jb->off_w, jb->c + ch), v;
        memcpy(&v, blk + ((size_t)i * CHANNELS + ch) * 4, 4);
        if (memcmp(&v, &want, 4) == 0) continue;
        if (!wrong++) {
          char where[96];
          locate(img, v, where, sizeof where);
          snprintf(first, sizeof first, "job %zu (c %d w %d h %d n %d, offsets w %u h %u) pixel %d "
                   "channel %d: got %.9g (%s), want %.9g", j, jb->c, jb->w, jb->h, jb->n,
                   jb->off_w, jb->off_h, i, ch, v, where, want);
        }
      }
    for (size_t b = d.box_bytes; b < 64 + d.box_bytes; b++)
      cr_assert_eq(blk[b], 0xA5, "job %zu: byte %zu past the box was written", j, b);
  }
  cr_assert_eq(wrong, 0, "%zu of %d values differ from the host; first: %s", wrong,
               NJOBS * PIXELS * CHANNELS, first);
  gcl_args_destroy(args);
  gcl_module_destroy(mod);
  gcl_mem_free(ctx, jobs_dev);
  gcl_mem_free(ctx, out);
  gcl_mem_free(ctx, base);
  gcl_context_destroy(ctx);
  free(img);
  free(got);
}
