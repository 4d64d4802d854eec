/* Thread safety on the CPU: the once-only loaders raced from 16 threads released together by a
 * barrier (every thread must see the same status and message, and the fake driver must see
 * exactly one cuInit), then 8 threads launching one shared kernel through the fake driver, each
 * with its own args and stream, every launch's bytes accounted for. Each test is its own
 * process, so each race starts from an unloaded driver. */
#include "fakecuda_test.h"

#include <pthread.h>
#include <stdio.h>

#define THREADS 16

typedef struct racer {
  pthread_barrier_t *start;
  gcl_status init, count, nvrtc;
  int devices;
  char init_msg[512], nvrtc_path[512];
} racer;

static void *race(void *arg) {
  racer *r = arg;
  pthread_barrier_wait(r->start);
  r->init = gcl_driver_init();
  snprintf(r->init_msg, sizeof r->init_msg, "%s", r->init ? gcl_last_error() : "");
  r->devices = -1;
  r->count = gcl_device_count(&r->devices);
  r->nvrtc = gcl_nvrtc_init();
  snprintf(r->nvrtc_path, sizeof r->nvrtc_path, "%s", gcl_nvrtc_path());
  return NULL;
}

/* Runs THREADS racers; checks they agree and returns the first one's view. */
static racer run_race(void) {
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, THREADS);
  racer r[THREADS];
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++) {
    memset(&r[i], 0, sizeof r[i]);
    r[i].start = &start;
    cr_assert_eq(pthread_create(&t[i], NULL, race, &r[i]), 0);
  }
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  pthread_barrier_destroy(&start);
  for (int i = 1; i < THREADS; i++) {
    cr_assert_eq(r[i].init, r[0].init, "thread %d: %s vs %s", i, gcl_status_name(r[i].init),
                 gcl_status_name(r[0].init));
    cr_assert_str_eq(r[i].init_msg, r[0].init_msg, "thread %d saw another message", i);
    cr_assert_eq(r[i].count, r[0].count);
    cr_assert_eq(r[i].devices, r[0].devices);
    cr_assert_eq(r[i].nvrtc, r[0].nvrtc);
    cr_assert_str_eq(r[i].nvrtc_path, r[0].nvrtc_path);
  }
  return r[0];
}

Test(loader_race, working_driver_initialises_once) {
  fake_use();
  racer r = run_race();
  cr_assert_eq(r.init, GCL_OK, "%s", r.init_msg);
  cr_assert_eq(r.count, GCL_OK);
  cr_assert_eq(r.devices, 1);
  cr_assert_eq(fakecuda_calls("cuInit"), 1, "cuInit ran %ld times", fakecuda_calls("cuInit"));
  cr_assert_eq(fakecuda_calls("cuDeviceGetCount"), THREADS);
}

Test(loader_race, stub_driver_failure_is_the_same_everywhere) {
  fake_use();
  fakecuda_fail("cuInit", 34, 0);
  racer r = run_race();
  cr_assert_eq(r.init, GCL_ERROR_STUB_DRIVER);
  cr_assert(strstr(r.init_msg, "CUDA_ERROR_STUB_LIBRARY"), "%s", r.init_msg);
  cr_assert_eq(r.count, GCL_ERROR_STUB_DRIVER);
  cr_assert_eq(r.devices, -1, "a failed count writes nothing");
  cr_assert_eq(fakecuda_calls("cuInit"), 1);
}

Test(loader_race, missing_driver_is_the_same_everywhere) {
  setenv("GCL_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  racer r = run_race();
  cr_assert_eq(r.init, GCL_ERROR_NO_DRIVER);
  cr_assert(strstr(r.init_msg, "/nonexistent/libcuda.so.1"), "%s", r.init_msg);
}

/* --- many threads launching one kernel -------------------------------------------------------- */

#define LAUNCHERS 8
#define LAUNCHES 2000

/* The fake's own stream functions, fetched as gclaunch fetches them (this test has no cuda.h). */
int cuGetProcAddress_v2(const char *symbol, void **pfn, int version, unsigned long long flags,
                        int *status);
static int fake_stream_create(void **stream, unsigned flags) {
  void *fn = NULL;
  int found = 0;
  if (cuGetProcAddress_v2("cuStreamCreate", &fn, 2000, 0, &found) != 0 || !fn) return -1;
  return ((int (*)(void **, unsigned))fn)(stream, flags);
}
static int fake_stream_destroy(void *stream) {
  void *fn = NULL;
  int found = 0;
  if (cuGetProcAddress_v2("cuStreamDestroy", &fn, 4000, 0, &found) != 0 || !fn) return -1;
  return ((int (*)(void *))fn)(stream);
}

typedef struct launcher {
  pthread_barrier_t *start;
  gcl_kernel *kernel;
  gcl_context *ctx;
  int id;
  gcl_status status;
  char message[512];
  uint64_t digest; /* of this thread's launches */
} launcher;

/* Own args and stream; parameter c changes every launch so that each launch's bytes differ. */
static void *launch_loop(void *arg) {
  launcher *l = arg;
  gcl_args *args = NULL;
  gcl_status s = gcl_args_create(gcl_kernel_layout(l->kernel), &args);
  unsigned char map[128] = {0};
  gcl_launch_config c = {.grid = {1, 1, 1}, .block = {32, 1, 1}};
  map[0] = (unsigned char)l->id;
  if (s == GCL_OK) s = gcl_context_bind(l->ctx); /* the fake's cuStreamCreate needs it */
  if (s == GCL_OK && fake_stream_create(&c.stream, 1) != 0)
    s = GCL_ERROR_DRIVER;
  if (s == GCL_OK) s = gcl_args_set(args, 0, map, sizeof map);
  if (s == GCL_OK) s = gcl_args_set_ptr(args, 2, 0x100000ull * (uint64_t)(l->id + 1));
  pthread_barrier_wait(l->start);
  for (int i = 0; i < LAUNCHES && s == GCL_OK; i++) {
    int8_t v = (int8_t)(i * 7 + l->id);
    const void *data;
    size_t size;
    if ((s = gcl_args_set(args, 1, &v, 1)) || (s = gcl_launch(l->kernel, &c, args)) ||
        (s = gcl_args_buffer(args, &data, &size)))
      break;
    l->digest += fakecuda_digest(data, size);
  }
  l->status = s;
  if (s != GCL_OK) snprintf(l->message, sizeof l->message, "%s", gcl_last_error());
  gcl_args_destroy(args);
  if (c.stream) fake_stream_destroy(c.stream);
  return NULL;
}

Test(loader_race, eight_threads_launch_one_kernel) {
  fake_use();
  gcl_context *ctx = NULL;
  gcl_module *mod = NULL;
  gcl_kernel *k = NULL;
  cr_assert_eq(gcl_context_create(0, &ctx), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_module_load_data(ctx, fake_ptx, sizeof fake_ptx, &mod), GCL_OK);
  cr_assert_eq(gcl_module_find_kernel(mod, "k", FAKE_K_SIGNATURE, &k), GCL_OK, "%s", gcl_last_error());
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, LAUNCHERS);
  launcher l[LAUNCHERS];
  pthread_t t[LAUNCHERS];
  for (int i = 0; i < LAUNCHERS; i++) {
    l[i] = (launcher){.start = &start, .kernel = k, .ctx = ctx, .id = i};
    cr_assert_eq(pthread_create(&t[i], NULL, launch_loop, &l[i]), 0);
  }
  uint64_t expected = 0;
  for (int i = 0; i < LAUNCHERS; i++) {
    pthread_join(t[i], NULL);
    cr_assert_eq(l[i].status, GCL_OK, "thread %d: %s", i, l[i].message);
    expected += l[i].digest;
  }
  pthread_barrier_destroy(&start);
  cr_assert_eq(fakecuda_launch_count(), (long)LAUNCHERS * LAUNCHES);
  cr_assert_eq(fakecuda_launch_digest(), expected, "some launch carried another thread's bytes");
  gcl_module_destroy(mod);
  gcl_context_destroy(ctx);
  assert_nothing_live();
}
