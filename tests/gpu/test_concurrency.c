/* Thread safety on a device: 8 threads share one kernel, each with its own args, stream and
 * output buffer, and each launches it 10,000 times re-setting two arguments per launch; every
 * launch stamps its own slot, and every slot of every thread is checked afterwards. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "cuda_internal.h"

#define CHECK(call) cr_assert_eq((call), GCL_OK, "%s: %s", #call, gcl_last_error())

enum { THREADS = 8, LAUNCHES = 10000 };

typedef struct worker {
  gcl_context *ctx;
  gcl_kernel *kernel;
  unsigned id;
  uint64_t out;
  gcl_status status;
  char message[512];
} worker;

static unsigned value_of(unsigned thread, unsigned i) { return (thread + 1) * 2654435761u ^ i; }

static void fail(worker *w, gcl_status s, const char *what) {
  w->status = s;
  snprintf(w->message, sizeof w->message, "thread %u: %s: %s", w->id, what, gcl_last_error());
}

static void *run(void *arg) {
  worker *w = arg;
  CUstream stream = NULL;
  gcl_args *args = NULL;
  gcl_status s;
  if ((s = gcl_context_bind(w->ctx)) != GCL_OK) return fail(w, s, "bind"), NULL;
  if (gcl__cu.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
    return fail(w, GCL_ERROR_DRIVER, "cuStreamCreate"), NULL;
  gcl_launch_config cfg = {.grid = {1, 1, 1}, .block = {32, 1, 1}, .stream = stream};
  if ((s = gcl_args_create(gcl_kernel_layout(w->kernel), &args)) != GCL_OK) fail(w, s, "args");
  if (!s && (s = gcl_args_set_ptr(args, 0, w->out)) != GCL_OK) fail(w, s, "set out");
  for (unsigned i = 0; !s && i < LAUNCHES; i++) {
    if ((s = gcl_args_set_u32(args, 1, i)) || (s = gcl_args_set_u32(args, 2, value_of(w->id, i))))
      fail(w, s, "set");
    else if ((s = gcl_launch(w->kernel, &cfg, args)) != GCL_OK)
      fail(w, s, "launch");
  }
  if (gcl__cu.cuStreamSynchronize(stream) != CUDA_SUCCESS && !s)
    fail(w, GCL_ERROR_DRIVER, "cuStreamSynchronize");
  gcl__cu.cuStreamDestroy(stream);
  gcl_args_destroy(args);
  return NULL;
}

Test(concurrency, eight_threads_share_one_kernel) {
  gcl_context *ctx;
  CHECK(gcl_context_create(0, &ctx));
  char path[1024];
  snprintf(path, sizeof path, "%s/concurrency.sm_%d.cubin", GCL_KERNEL_DIR, gcl_context_sm(ctx));
  gcl_module *mod;
  CHECK(gcl_module_load_file(ctx, path, &mod));
  gcl_kernel *k;
  CHECK(gcl_module_find_kernel(mod, "stamp", "u32* out, u32 slot, u32 value", &k));
  worker w[THREADS] = {{0}};
  pthread_t t[THREADS];
  unsigned *host = malloc(LAUNCHES * sizeof *host);
  cr_assert_not_null(host);
  for (unsigned i = 0; i < THREADS; i++) {
    w[i] = (worker){.ctx = ctx, .kernel = k, .id = i};
    CHECK(gcl_mem_alloc(ctx, LAUNCHES * sizeof(unsigned), &w[i].out));
    CHECK(gcl_mem_fill_u8(ctx, w[i].out, 0xA5, LAUNCHES * sizeof(unsigned)));
  }
  for (unsigned i = 0; i < THREADS; i++) cr_assert_eq(pthread_create(&t[i], NULL, run, &w[i]), 0);
  for (unsigned i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  for (unsigned i = 0; i < THREADS; i++) {
    cr_assert_eq(w[i].status, GCL_OK, "%s", w[i].message);
    CHECK(gcl_mem_download(ctx, host, w[i].out, LAUNCHES * sizeof(unsigned)));
    for (unsigned j = 0; j < LAUNCHES; j++)
      cr_assert_eq(host[j], value_of(i, j), "thread %u launch %u: slot holds 0x%08x, expected 0x%08x",
                   i, j, host[j], value_of(i, j));
    CHECK(gcl_mem_free(ctx, w[i].out));
  }
  free(host);
  gcl_module_destroy(mod);
  gcl_context_destroy(ctx);
}
