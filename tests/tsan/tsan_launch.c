/* Concurrent launches on one kernel with separate args, and concurrent setters on separate args:
 * 8 threads, each with its own args (tensor map encoded from a tensor, scalar, pointer, all reset
 * every round), launch one shared kernel 200 times each through the fake driver; half of them ask
 * for 64 KiB of dynamic shared memory, so the once-per-kernel opt-in races too; each thread also
 * provokes failures and must read back its own message. Every launch must reach the driver. */
#include "tsan_common.h"

#include <stdint.h>
#include "../common/tmap_field.h"

#define THREADS 8
#define ROUNDS 200

static gcl_context *ctx;
static gcl_kernel *kernel;
static uint64_t buffer;

static void body(int i) {
  gcl_args *args = NULL;
  CHECK(gcl_args_create(gcl_kernel_layout(kernel), &args));
  int64_t shape[2] = {64, 64}, strides[2] = {64, 1};
  DLTensor t = {.data = (void *)(uintptr_t)buffer, .device = {kDLCUDA, 0}, .ndim = 2,
                .dtype = {kDLFloat, 32, 1}, .shape = shape, .strides = strides};
  gcl_tensormap_options o = {0};
  o.box[0] = 16, o.box[1] = 16;
  gcl_launch_config cfg = {.grid = {2}, .block = {128}, .shared_bytes = i % 2 ? 64 * 1024 : 0};
  char want[128];
  for (int r = 0; r < ROUNDS; r++) {
    int8_t c = (int8_t)(i * 16 + r % 16);
    CHECK(gcl_args_set_tensormaps(args, ctx, TMAP_FIELD(args, 0, 0), 1, (const DLTensor *const[]){&t}, &o, 1, 0));
    CHECK(gcl_args_set(args, 1, &c, 1));
    CHECK(gcl_args_set_ptr(args, 2, buffer + 4u * (unsigned)i));
    CHECK(gcl_launch(kernel, &cfg, args));
    if (r % 50 == 0) { /* this thread's message, not another's */
      EXPECT(gcl_args_set_i32(args, 40 + (size_t)i, 1) == GCL_ERROR_INVALID_ARGUMENT, "bad index accepted");
      snprintf(want, sizeof want, "parameter index %d out of range", 40 + i);
      EXPECT(strncmp(gcl_last_error(), want, strlen(want)) == 0, "thread %d read: %s", i, gcl_last_error());
    }
  }
  gcl_args_destroy(args);
}

int main(void) {
  tsan_use_fake();
  const size_t off[] = {112, 240, 248}, size[] = {128, 1, 8};
  EXPECT(fakecuda_set_params("k", 3, off, size) == 0, "fakecuda_set_params");
  static const char ptx[] = "//\n.version 8.0\n.target sm_90\n.address_size 64\n";
  gcl_module *mod = NULL;
  CHECK(gcl_context_create(0, &ctx));
  CHECK(gcl_mem_alloc(ctx, 64 * 64 * 4, &buffer));
  CHECK(gcl_module_load_data(ctx, ptx, sizeof ptx, &mod));
  CHECK(gcl_module_find_kernel(mod, "k", "grid_constant tensormap m, i8 c, i32* out", &kernel));
  tsan_run(THREADS, body);
  long launches = fakecuda_launch_count();
  EXPECT(launches == THREADS * ROUNDS, "%ld launches reached the driver, expected %d", launches,
         THREADS * ROUNDS);
  gcl_module_destroy(mod);
  CHECK(gcl_mem_free(ctx, buffer));
  gcl_context_destroy(ctx);
  printf("tsan_launch: %d threads x %d launches on one kernel, separate args: %ld launches\n",
         THREADS, ROUNDS, launches);
  return 0;
}
