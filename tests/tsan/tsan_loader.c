/* The driver loader race: 16 threads at once call gcl_device_count, gcl_driver_version,
 * gcl_nvrtc_init and create, bind and destroy contexts while the once-only loaders run. Every
 * thread must see the same results; TSan must see no race. */
#include "tsan_common.h"

#define THREADS 16

static int counts[THREADS];
static gcl_status nvrtc[THREADS];

static void body(int i) {
  int n = -1, version = 0;
  CHECK(gcl_device_count(&n));
  counts[i] = n;
  CHECK(gcl_driver_version(&version));
  nvrtc[i] = gcl_nvrtc_init(); /* absent or not: the same answer everywhere */
  for (int round = 0; round < 20; round++) {
    gcl_context *ctx = NULL;
    CHECK(gcl_context_create(round % n, &ctx));
    CHECK(gcl_context_bind(ctx));
    EXPECT(gcl_context_sm(ctx) >= 90, "sm %d", gcl_context_sm(ctx));
    gcl_context_destroy(ctx);
  }
}

int main(void) {
  tsan_use_fake();
  fakecuda_set_devices(2);
  tsan_run(THREADS, body);
  for (int i = 1; i < THREADS; i++) {
    EXPECT(counts[i] == counts[0], "thread %d saw %d devices, thread 0 %d", i, counts[i], counts[0]);
    EXPECT(nvrtc[i] == nvrtc[0], "thread %d: NVRTC %s, thread 0 %s", i, gcl_status_name(nvrtc[i]),
           gcl_status_name(nvrtc[0]));
  }
  EXPECT(counts[0] == 2, "%d devices", counts[0]);
  EXPECT(fakecuda_calls("cuInit") == 1, "cuInit called %ld times", fakecuda_calls("cuInit"));
  printf("tsan_loader: %d threads, %d devices, cuInit once, NVRTC %s everywhere\n", THREADS,
         counts[0], gcl_status_name(nvrtc[0]));
  return 0;
}
