/* First GPU test: load kernels/smoke.cu's cubin through the driver edge, launch it on random
 * input and compare with a host reference. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cuda_internal.h"
#include "kernel_image.h"
#include "../common/test_rng.h"


#define CHECK(call) cr_assert_eq((call), GCL_OK, "%s: %s", #call, gcl_last_error())
#define CU(call) cr_assert_eq((call), CUDA_SUCCESS, "%s failed", #call)

Test(smoke, saxpy_matches_host) {
  gcl_context *ctx = NULL;
  CHECK(gcl_context_create(0, &ctx));
  CHECK(gcl_context_bind(ctx));
  size_t size = 0;
  void *image = kernel_image("smoke", gcl_context_sm(ctx), &size);

  CUlibrary lib;
  CUkernel kern;
  CUfunction fn;
  CU(gcl__cu.cuLibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 0));
  CU(gcl__cu.cuLibraryGetKernel(&kern, lib, "saxpy"));
  CU(gcl__cu.cuKernelGetFunction(&fn, kern));

  enum { N = 1 << 20 };
  float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *out = malloc(N * sizeof *out);
  seed_rng_for("test_smoke");
  for (int i = 0; i < N; i++) {
    x[i] = (float)rnd(1u << 24) / (float)(1u << 24) - 0.5f;
    y[i] = (float)rnd(1u << 24) / (float)(1u << 24) - 0.5f;
  }
  uint64_t dx, dy;
  CHECK(gcl_mem_alloc(ctx, N * sizeof(float), &dx));
  CHECK(gcl_mem_alloc(ctx, N * sizeof(float), &dy));
  CHECK(gcl_mem_upload(ctx, dx, x, N * sizeof(float)));
  CHECK(gcl_mem_upload(ctx, dy, y, N * sizeof(float)));
  float a = 1.75f;
  unsigned long long n = N;
  void *params[] = {&a, &dx, &dy, &n};
  CU(gcl__cu.cuLaunchKernel(fn, (N + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
  CHECK(gcl_context_synchronize(ctx));
  CHECK(gcl_mem_download(ctx, out, dy, N * sizeof(float)));
  for (int i = 0; i < N; i++) {
    float want = a * x[i] + y[i];
    cr_assert_float_eq(out[i], want, 1e-6f, "element %d: got %g, want %g", i, out[i], want);
  }
  CHECK(gcl_mem_free(ctx, dx));
  CHECK(gcl_mem_free(ctx, dy));
  CU(gcl__cu.cuLibraryUnload(lib));
  free(x);
  free(y);
  free(out);
  free(image);
  gcl_context_destroy(ctx);
}
