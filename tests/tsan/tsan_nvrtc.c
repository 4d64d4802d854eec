/* NVRTC compiles from several threads: 4 threads each compile a small kernel twice with
 * gcl_module_compile (NVRTC is real, the driver the fake) and look the kernel up. Exits 77, saying
 * why, when NVRTC cannot be loaded. */
#include "tsan_common.h"

#define THREADS 4

static gcl_context *ctx;

static void body(int i) {
  char src[256];
  snprintf(src, sizeof src,
           "extern \"C\" __global__ void add%d(float *x, float v) { x[threadIdx.x] += v; }\n", i);
  for (int r = 0; r < 2; r++) {
    gcl_module *mod = NULL;
    gcl_kernel *k = NULL;
    char name[32];
    snprintf(name, sizeof name, "add%d", i);
    CHECK(gcl_module_compile(ctx, src, "tsan.cu", NULL, 0, &mod));
    EXPECT(gcl_module_log(mod) != NULL, "no log");
    CHECK(gcl_module_find_kernel(mod, name, NULL, &k));
    gcl_module_destroy(mod);
  }
}

int main(void) {
  tsan_use_fake();
  if (gcl_nvrtc_init() != GCL_OK) {
    printf("SKIP tsan_nvrtc: NVRTC not available: %s\n", gcl_last_error());
    return 77;
  }
  const size_t off[] = {0, 8}, size[] = {8, 4};
  for (int i = 0; i < THREADS; i++) {
    char name[32];
    snprintf(name, sizeof name, "add%d", i);
    EXPECT(fakecuda_set_params(name, 2, off, size) == 0, "fakecuda_set_params");
  }
  CHECK(gcl_context_create(0, &ctx));
  tsan_run(THREADS, body);
  gcl_context_destroy(ctx);
  printf("tsan_nvrtc: %d threads x 2 NVRTC compiles and loads\n", THREADS);
  return 0;
}
