/* Streams, events, asynchronous copies, pinned host memory, kernel attributes and interop
 * accessors against libfakecuda.so: what reaches the driver, every bad input named (nothing
 * changed), and nothing left behind. */
#include "fakecuda_test.h"

#include <time.h>

/* The launch edge's contract (docs/api.md, docs/runtime.md), verbatim: a redeclaration that differs from the header's
 * fails to compile. */
gcl_status gcl_stream_create(gcl_context *ctx, int priority, gcl_stream **out);  /* non-blocking */
void       gcl_stream_destroy(gcl_stream *s);
gcl_status gcl_stream_synchronize(gcl_stream *s);
void      *gcl_stream_handle(const gcl_stream *s);       /* the CUstream: gcl_launch_config.stream */
gcl_status gcl_mem_upload_async(gcl_context *ctx, uint64_t dst, const void *src, size_t n, gcl_stream *s);
gcl_status gcl_mem_download_async(gcl_context *ctx, void *dst, uint64_t src, size_t n, gcl_stream *s);
gcl_status gcl_event_create(gcl_context *ctx, gcl_event **out);
void       gcl_event_destroy(gcl_event *e);
gcl_status gcl_event_record(gcl_event *e, gcl_stream *s);
gcl_status gcl_event_synchronize(gcl_event *e);
gcl_status gcl_event_elapsed_us(gcl_event *start, gcl_event *stop, double *us);
gcl_status gcl_stream_wait_event(gcl_stream *s, gcl_event *e);
gcl_status gcl_kernel_occupancy(const gcl_kernel *k, unsigned block_threads, size_t dynamic_smem,
                                int *blocks_per_sm);
gcl_status gcl_graph_capture_begin(gcl_stream *s);
gcl_status gcl_graph_capture_end(gcl_stream *s, gcl_graph **out);     /* instantiated */
gcl_status gcl_graph_kernel_count(const gcl_graph *g, size_t *count);
gcl_status gcl_graph_set_args(gcl_graph *g, size_t kernel_node, gcl_kernel *k, const gcl_args *args);
gcl_status gcl_graph_launch(gcl_graph *g, gcl_stream *s);
gcl_status gcl_stream_check(gcl_context *ctx, void *stream, unsigned flags);
void       gcl_graph_destroy(gcl_graph *g);

TestSuite(stream, .init = fake_use);

Test(stream, status_kernel_fault_is_21) {
  cr_assert_eq((int)GCL_ERROR_KERNEL_FAULT, 21);
  cr_assert_str_eq(gcl_status_name(GCL_ERROR_KERNEL_FAULT), "GCL_ERROR_KERNEL_FAULT");
  cr_assert_str_eq(gcl_status_text(GCL_ERROR_KERNEL_FAULT),
                   "a kernel faulted: the process's CUDA state is lost; only a new process recovers");
}

static gcl_context *open_ctx(void) {
  gcl_context *ctx = NULL;
  cr_assert_eq(gcl_context_create(0, &ctx), GCL_OK, "%s", gcl_last_error());
  return ctx;
}

Test(stream, create_priorities_and_accessors) {
  gcl_context *ctx = open_ctx();
  gcl_stream *hi = NULL, *lo = NULL;
  cr_assert_eq(gcl_stream_create(ctx, -5, &hi), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_stream_create(ctx, 0, &lo), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(fakecuda_live("stream"), 2);
  cr_assert_eq(gcl_stream_priority(hi), -5);
  cr_assert_eq(gcl_stream_context(lo), ctx);
  cr_assert_not_null(gcl_stream_handle(hi));
  cr_assert_neq(gcl_stream_handle(hi), gcl_stream_handle(lo));
  cr_assert_null(gcl_stream_handle(NULL));
  cr_assert_null(gcl_stream_context(NULL));
  cr_assert_eq(gcl_stream_synchronize(hi), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(fakecuda_calls("cuStreamCreateWithPriority"), 2);
  cr_assert_not_null(gcl_context_cu_context(ctx));
  cr_assert_null(gcl_context_cu_context(NULL));
  gcl_stream_destroy(hi);
  gcl_stream_destroy(lo);
  gcl_stream_destroy(NULL);
  gcl_context_destroy(ctx);
  assert_nothing_live();
}

Test(stream, priority_out_of_range_is_refused_with_the_range) {
  gcl_context *ctx = open_ctx();
  gcl_stream *s = (gcl_stream *)0x5;
  cr_assert_eq(gcl_stream_create(ctx, 1, &s), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("priority: expected -5 (highest) ... 0 (lowest) on device 0, got 1");
  cr_assert_eq(gcl_stream_create(ctx, -6, &s), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("got -6");
  cr_assert_eq(s, (gcl_stream *)0x5);
  cr_assert_eq(gcl_stream_create(NULL, 0, &s), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("ctx");
  cr_assert_eq(gcl_stream_create(ctx, 0, NULL), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("out");
  cr_assert_eq(gcl_last_cuda_error(), 0, "not a driver failure");
  cr_assert_eq(gcl_stream_synchronize(NULL), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("s: expected a stream, got NULL");
  cr_assert_eq(fakecuda_live("stream"), 0);
  gcl_context_destroy(ctx);
  assert_nothing_live();
}

Test(stream, not_a_stream_is_named) {
  gcl_context *ctx = open_ctx();
  uint32_t junk[16] = {0xdead};
  cr_assert_eq(gcl_stream_synchronize((gcl_stream *)junk), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("s: not a live stream");
  gcl_stream_destroy((gcl_stream *)junk); /* ignored */
  gcl_context_destroy(ctx);
}

Test(stream, driver_failures_leave_nothing_behind) {
  gcl_context *ctx = open_ctx();
  gcl_stream *s = NULL;
  fakecuda_fail_once("cuStreamCreateWithPriority", 2, 0);
  cr_assert_eq(gcl_stream_create(ctx, 0, &s), GCL_ERROR_OUT_OF_MEMORY);
  assert_msg_has("cuStreamCreateWithPriority(device 0, priority 0): CUDA_ERROR_OUT_OF_MEMORY");
  cr_assert_eq(gcl_last_cuda_error(), 2);
  fakecuda_fail_once("cuCtxGetStreamPriorityRange", 999, 0);
  cr_assert_eq(gcl_stream_create(ctx, 0, &s), GCL_ERROR_DRIVER);
  assert_msg_has("cuCtxGetStreamPriorityRange");
  cr_assert_null(s);
  cr_assert_eq(gcl_stream_create(ctx, 0, &s), GCL_OK, "%s", gcl_last_error());
  fakecuda_fail_once("cuStreamSynchronize", 999, 0);
  cr_assert_eq(gcl_stream_synchronize(s), GCL_ERROR_DRIVER);
  assert_msg_has("cuStreamSynchronize(device 0): CUDA_ERROR_UNKNOWN");
  cr_assert_eq(gcl_last_cuda_error(), 999);
  gcl_stream_destroy(s);
  gcl_context_destroy(ctx);
  assert_nothing_live();
}

static void sleep_us(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  while (nanosleep(&ts, &ts)) {}
}

Test(stream, events_record_wait_query_and_time) {
  gcl_context *ctx = open_ctx();
  gcl_stream *a, *b;
  gcl_event *start, *stop;
  cr_assert_eq(gcl_stream_create(ctx, 0, &a), GCL_OK);
  cr_assert_eq(gcl_stream_create(ctx, -1, &b), GCL_OK);
  cr_assert_eq(gcl_event_create(ctx, &start), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_event_create(ctx, &stop), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_event_record(start, a), GCL_OK, "%s", gcl_last_error());
  sleep_us(2000);
  cr_assert_eq(gcl_event_record(stop, NULL), GCL_OK, "%s", gcl_last_error()); /* default stream */
  cr_assert_eq(gcl_stream_wait_event(b, stop), GCL_OK, "%s", gcl_last_error());
  bool done = false;
  cr_assert_eq(gcl_event_query(stop, &done), GCL_OK, "%s", gcl_last_error());
  cr_assert(done);
  fakecuda_fail_once("cuEventQuery", 600 /* NOT_READY */, 0);
  cr_assert_eq(gcl_event_query(stop, &done), GCL_OK, "%s", gcl_last_error());
  cr_assert(!done, "NOT_READY is an answer, not an error");
  cr_assert_eq(gcl_event_synchronize(stop), GCL_OK);
  double us = -1;
  cr_assert_eq(gcl_event_elapsed_us(start, stop, &us), GCL_OK, "%s", gcl_last_error());
  cr_assert(us >= 2000 * 0.99 && us < 2e6, "elapsed %.1f us for a 2000 us sleep", us);
  cr_assert_eq(fakecuda_calls("cuStreamWaitEvent"), 1);
  gcl_event_destroy(start);
  gcl_event_destroy(stop);
  gcl_event_destroy(NULL);
  gcl_stream_destroy(a);
  gcl_stream_destroy(b);
  gcl_context_destroy(ctx);
  assert_nothing_live();
}

Test(stream, event_misuse_is_named_and_changes_nothing) {
  gcl_context *ctx = open_ctx();
  gcl_event *e, *f, *keep = (gcl_event *)0x9;
  cr_assert_eq(gcl_event_create(NULL, &keep), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("ctx");
  cr_assert_eq(gcl_event_create(ctx, NULL), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("out");
  cr_assert_eq(keep, (gcl_event *)0x9);
  cr_assert_eq(gcl_event_create(ctx, &e), GCL_OK);
  cr_assert_eq(gcl_event_create(ctx, &f), GCL_OK);
  double us = 42;
  cr_assert_eq(gcl_event_elapsed_us(e, f, &us), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("start: never recorded");
  cr_assert_eq(gcl_event_record(e, NULL), GCL_OK);
  cr_assert_eq(gcl_event_elapsed_us(e, f, &us), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("stop: never recorded");
  cr_assert_eq(gcl_event_elapsed_us(e, NULL, &us), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("stop: expected an event, got NULL");
  cr_assert_eq(gcl_event_elapsed_us(e, f, NULL), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("us: expected a pointer");
  cr_assert_eq(us, 42);
  cr_assert_eq(gcl_event_record(NULL, NULL), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("e: expected an event");
  cr_assert_eq(gcl_event_synchronize(NULL), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl_event_query(e, NULL), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("done");
  cr_assert_eq(gcl_stream_wait_event(NULL, e), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("s: expected a stream");
  gcl_stream *s;
  cr_assert_eq(gcl_stream_create(ctx, 0, &s), GCL_OK);
  cr_assert_eq(gcl_stream_wait_event(s, NULL), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("e: expected an event");
  fakecuda_fail_once("cuEventRecord", 999, 0);
  cr_assert_eq(gcl_event_record(f, s), GCL_ERROR_DRIVER);
  assert_msg_has("cuEventRecord(device 0): CUDA_ERROR_UNKNOWN");
  cr_assert_eq(gcl_event_elapsed_us(e, f, &us), GCL_ERROR_INVALID_ARGUMENT, "a failed record records nothing");
  gcl_event_destroy(e);
  gcl_event_destroy(f);
  gcl_stream_destroy(s);
  gcl_context_destroy(ctx);
  assert_nothing_live();
}

Test(stream, async_copies_fills_and_pinned_memory) {
  gcl_context *ctx = open_ctx();
  gcl_stream *s;
  uint64_t a, b;
  uint32_t *host = NULL;
  cr_assert_eq(gcl_stream_create(ctx, 0, &s), GCL_OK);
  cr_assert_eq(gcl_mem_alloc(ctx, 256, &a), GCL_OK);
  cr_assert_eq(gcl_mem_alloc(ctx, 256, &b), GCL_OK);
  cr_assert_eq(gcl_host_alloc(ctx, 256, (void **)&host), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(fakecuda_live("host"), 1);
  for (int i = 0; i < 64; i++) host[i] = (uint32_t)i * 3u;
  cr_assert_eq(gcl_mem_upload_async(ctx, a, host, 256, s), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_mem_copy_async(ctx, b, a, 256, s), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_mem_fill_u32_async(ctx, b + 16, 0xabcdef01u, 4, s), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_mem_fill_u8_async(ctx, b + 32, 0x7f, 3, NULL), GCL_OK, "%s", gcl_last_error());
  memset(host, 0, 256);
  cr_assert_eq(gcl_mem_download_async(ctx, host, b, 256, s), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_stream_synchronize(s), GCL_OK);
  for (int i = 0; i < 64; i++) {
    uint32_t want = i >= 4 && i < 8 ? 0xabcdef01u : (uint32_t)i * 3u;
    if (i == 8) want = 0x007f7f7fu; /* little-endian: 3 bytes of 0x7f, then the old top byte */
    if (i == 8) want |= ((uint32_t)i * 3u) & 0xff000000u;
    cr_assert_eq(host[i], want, "word %d: 0x%x, expected 0x%x", i, host[i], want);
  }
  cr_assert_eq(fakecuda_calls("cuMemcpyHtoDAsync"), 1);
  cr_assert_eq(fakecuda_calls("cuMemsetD32Async"), 1);
  cr_assert_eq(gcl_host_free(ctx, host), GCL_OK);
  cr_assert_eq(gcl_host_free(ctx, NULL), GCL_OK);
  gcl_mem_free(ctx, a);
  gcl_mem_free(ctx, b);
  gcl_stream_destroy(s);
  gcl_context_destroy(ctx);
  assert_nothing_live();
}

Test(stream, async_copy_misuse_is_named) {
  gcl_context *ctx = open_ctx();
  gcl_stream *s;
  uint64_t a;
  char buf[64];
  void *keep = (void *)0x3;
  cr_assert_eq(gcl_stream_create(ctx, 0, &s), GCL_OK);
  cr_assert_eq(gcl_mem_alloc(ctx, 64, &a), GCL_OK);
  cr_assert_eq(gcl_mem_upload_async(NULL, a, buf, 64, s), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("ctx");
  cr_assert_eq(gcl_mem_upload_async(ctx, a, NULL, 64, s), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("src");
  cr_assert_eq(gcl_mem_download_async(ctx, NULL, a, 64, s), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("dst");
  cr_assert_eq(gcl_mem_fill_u32_async(ctx, a + 2, 1, 4, s), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("not 4-byte aligned");
  cr_assert_eq(gcl_mem_upload_async(ctx, a, buf, 65, s), GCL_ERROR_DRIVER, "past the allocation");
  assert_msg_has("cuMemcpyHtoDAsync(65 bytes, device 0): CUDA_ERROR_INVALID_VALUE");
  cr_assert_eq(gcl_last_cuda_error(), 1);
  uint32_t junk[16] = {0xbad};
  cr_assert_eq(gcl_mem_copy_async(ctx, a, a, 8, (gcl_stream *)junk), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("s: not a live stream");
  cr_assert_eq(gcl_host_alloc(ctx, 0, &keep), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("bytes");
  cr_assert_eq(gcl_host_alloc(NULL, 8, &keep), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl_host_alloc(ctx, 8, NULL), GCL_ERROR_INVALID_ARGUMENT);
  fakecuda_fail_once("cuMemHostAlloc", 2, 0);
  cr_assert_eq(gcl_host_alloc(ctx, 8, &keep), GCL_ERROR_OUT_OF_MEMORY);
  assert_msg_has("cuMemHostAlloc(8 bytes, device 0)");
  cr_assert_eq(keep, (void *)0x3);
  cr_assert_eq(gcl_host_free(NULL, buf), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl_host_free(ctx, buf), GCL_ERROR_DRIVER, "not from gcl_host_alloc");
  assert_msg_has("cuMemFreeHost");
  gcl_mem_free(ctx, a);
  gcl_stream_destroy(s);
  gcl_context_destroy(ctx);
  assert_nothing_live();
}

/* Two devices: a stream of device 1 is refused where device 0's context is given. */
Test(stream, stream_of_another_context_is_refused) {
  cr_assert_eq(fakecuda_set_devices(2), 0);
  gcl_context *c0, *c1;
  gcl_stream *s1;
  gcl_event *e0;
  uint64_t a;
  char buf[16] = {0};
  cr_assert_eq(gcl_context_create(0, &c0), GCL_OK);
  cr_assert_eq(gcl_context_create(1, &c1), GCL_OK);
  cr_assert_eq(gcl_stream_create(c1, 0, &s1), GCL_OK);
  cr_assert_eq(gcl_event_create(c0, &e0), GCL_OK);
  cr_assert_eq(gcl_mem_alloc(c0, 16, &a), GCL_OK);
  cr_assert_eq(gcl_mem_upload_async(c0, a, buf, 16, s1), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("s: a stream of device 1, expected one of device 0");
  cr_assert_eq(gcl_event_record(e0, s1), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("s: a stream of device 1, expected one of device 0");
  cr_assert_eq(fakecuda_calls("cuMemcpyHtoDAsync") + fakecuda_calls("cuEventRecord"), 0);
  cr_assert_eq(gcl_event_record(e0, NULL), GCL_OK);
  cr_assert_eq(gcl_stream_wait_event(s1, e0), GCL_OK, "another device's event may gate a stream: %s", gcl_last_error());
  gcl_mem_free(c0, a);
  gcl_event_destroy(e0);
  gcl_stream_destroy(s1);
  gcl_context_destroy(c0);
  gcl_context_destroy(c1);
  assert_nothing_live();
}

/* gcl_stream_check: handles from outside (Python ints, other libraries) are refused without
 * being read unless mapped, then the driver says whose stream it is. */
Test(stream, handles_from_outside_are_checked_without_a_fault) {
  cr_assert_eq(fakecuda_set_devices(2), 0);
  gcl_context *c0, *c1;
  gcl_stream *s0, *s1;
  cr_assert_eq(gcl_context_create(0, &c0), GCL_OK);
  cr_assert_eq(gcl_context_create(1, &c1), GCL_OK);
  cr_assert_eq(gcl_stream_create(c0, 0, &s0), GCL_OK);
  cr_assert_eq(gcl_stream_create(c1, 0, &s1), GCL_OK);
  for (uintptr_t ok = 0; ok <= 2; ok++) cr_assert_eq(gcl_stream_check(c0, (void *)ok, 0), GCL_OK);
  cr_assert_eq(gcl_stream_check(c0, gcl_stream_handle(s0), 0), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_stream_check(c0, gcl_stream_handle(s0), GCL_STREAM_CHECK_MAPPED), GCL_OK);
  static const uintptr_t small[] = {3, 12345 % 4096, 4095, (uintptr_t)-1, (uintptr_t)-5, (uintptr_t)1 << 63,
                                    0x7fffffff, 0x10004};
  for (size_t i = 0; i < sizeof small / sizeof *small; i++) {
    cr_assert_eq(gcl_stream_check(c0, (void *)small[i], 0), GCL_ERROR_INVALID_ARGUMENT);
    assert_msg_has("not a stream handle");
  }
  cr_assert_eq(gcl_stream_check(c0, (void *)(uintptr_t)0x3038, 0), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("stream 0x3038: not a live stream (no memory is mapped there)");
  char junk[64] = {0}; /* mapped, no stream */
  cr_assert_neq(gcl_stream_check(c0, junk, 0), GCL_OK);
  assert_msg_has("not a live stream (cuStreamGetCtx)");
  cr_assert_eq(gcl_stream_check(c0, gcl_stream_handle(s1), 0), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("a stream of another context, expected one of device 0's");
  cr_assert_eq(gcl_stream_check(NULL, NULL, 0), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl_stream_check(c0, NULL, 4), GCL_ERROR_INVALID_ARGUMENT);
  gcl_stream_destroy(s0);
  gcl_stream_destroy(s1);
  gcl_context_destroy(c0);
  gcl_context_destroy(c1);
  assert_nothing_live();
}

/* --- kernel attributes and interop ---------------------------------------------------------- */

Test(stream, kernel_attributes_set_and_read_back) {
  gcl_context *ctx = open_ctx();
  gcl_module *mod;
  gcl_kernel *k;
  cr_assert_eq(gcl_module_load_data(ctx, fake_ptx, sizeof fake_ptx, &mod), GCL_OK);
  cr_assert_eq(gcl_module_find_kernel(mod, "k", FAKE_K_SIGNATURE, &k), GCL_OK, "%s", gcl_last_error());
  cr_assert_not_null(gcl_module_cu_library(mod));
  cr_assert_not_null(gcl_kernel_cu_function(k));
  cr_assert_null(gcl_kernel_cu_function(NULL));
  cr_assert_null(gcl_module_cu_library(NULL));
  const struct { gcl_kernel_attr a; int v; } set[] = {
      {GCL_KERNEL_MAX_DYNAMIC_SHARED_BYTES, 200000}, {GCL_KERNEL_PREFERRED_CARVEOUT, 100},
      {GCL_KERNEL_CLUSTER_SCHEDULING_POLICY, 1}, {GCL_KERNEL_NONPORTABLE_CLUSTER_SIZE_ALLOWED, 1}};
  for (size_t i = 0; i < 4; i++) {
    int v = -7;
    cr_assert_eq(gcl_kernel_set_attribute(k, set[i].a, set[i].v), GCL_OK, "%s", gcl_last_error());
    cr_assert_eq(gcl_kernel_attribute(k, set[i].a, &v), GCL_OK, "%s", gcl_last_error());
    cr_assert_eq(v, set[i].v, "attr %d", (int)set[i].a);
  }
  /* The launch path now knows the raised limit: 200000 bytes need no further opt-in. */
  long before = fakecuda_calls("cuFuncSetAttribute");
  gcl_args *args;
  int8_t c = 1;
  cr_assert_eq(gcl_args_create(gcl_kernel_layout(k), &args), GCL_OK);
  unsigned char map[128] = {0};
  cr_assert_eq(gcl_args_set(args, 0, map, 128), GCL_OK);
  cr_assert_eq(gcl_args_set(args, 1, &c, 1), GCL_OK);
  cr_assert_eq(gcl_args_set_ptr(args, 2, 0), GCL_OK);
  gcl_launch_config cfg = {.grid = {1}, .block = {32}, .shared_bytes = 200000, .cluster = {16, 1, 1}};
  cfg.grid[0] = 16;
  cr_assert_eq(gcl_launch(k, &cfg, args), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(fakecuda_calls("cuFuncSetAttribute"), before, "no opt-in needed any more");
  gcl_args_destroy(args);
  gcl_module_destroy(mod);
  gcl_context_destroy(ctx);
  assert_nothing_live();
}

Test(stream, kernel_attribute_misuse_is_named) {
  gcl_context *ctx = open_ctx();
  gcl_module *mod;
  gcl_kernel *k;
  cr_assert_eq(gcl_module_load_data(ctx, fake_ptx, sizeof fake_ptx, &mod), GCL_OK);
  cr_assert_eq(gcl_module_find_kernel(mod, "k", FAKE_K_SIGNATURE, &k), GCL_OK);
  gcl_kernel *none = NULL;
  cr_assert_eq(gcl_module_find_kernel(mod, "nope", NULL, &none), GCL_ERROR_NOT_FOUND);
  cr_assert_eq(gcl_last_cuda_error(), 500, "CUDA_ERROR_NOT_FOUND is the driver's answer");
  cr_assert_eq(gcl_kernel_set_attribute(NULL, GCL_KERNEL_PREFERRED_CARVEOUT, 1), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl_last_cuda_error(), 0, "a bad argument is not a driver failure");
  assert_msg_has("kernel");
  cr_assert_eq(gcl_kernel_set_attribute(k, GCL_KERNEL_REGISTERS, 1), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("attr: 2 is read-only");
  cr_assert_eq(gcl_kernel_set_attribute(k, GCL_KERNEL_PREFERRED_CARVEOUT, 101), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("value: expected -1 ... 100");
  cr_assert_eq(gcl_kernel_set_attribute(k, GCL_KERNEL_MAX_DYNAMIC_SHARED_BYTES, 300000), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("value: expected 0 ... 232448");
  cr_assert_eq(gcl_kernel_set_attribute(k, GCL_KERNEL_CLUSTER_SCHEDULING_POLICY, 3), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl_kernel_set_attribute(k, (gcl_kernel_attr)99, 0), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(fakecuda_calls("cuFuncSetAttribute"), 0, "nothing reached the driver");
  fakecuda_fail_once("cuFuncSetAttribute", 999, 0);
  cr_assert_eq(gcl_kernel_set_attribute(k, GCL_KERNEL_MAX_DYNAMIC_SHARED_BYTES, 100000), GCL_ERROR_DRIVER);
  assert_msg_has("cuFuncSetAttribute(kernel 'k', attr 3 = 100000)");
  int v = 0;
  cr_assert_eq(gcl_kernel_attribute(k, GCL_KERNEL_MAX_DYNAMIC_SHARED_BYTES, &v), GCL_OK);
  cr_assert_eq(v, 48 * 1024, "a failed set changes nothing");
  gcl_module_destroy(mod);
  gcl_context_destroy(ctx);
  assert_nothing_live();
}

/* gcl_stream_wrap: a borrowed stream over someone else's CUstream (issue 32: torch, CuPy,
 * cuda.core streams in Python): usable for events and copies, destroyed without the CUstream. */
Test(stream, wrap_borrows_a_foreign_stream) {
  gcl_context *ctx = open_ctx();
  gcl_stream *own = NULL, *w = NULL, *def = NULL;
  cr_assert_eq(gcl_stream_create(ctx, -4, &own), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_stream_wrap(ctx, gcl_stream_handle(own), &w), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(fakecuda_live("stream"), 1);
  cr_assert_eq(gcl_stream_handle(w), gcl_stream_handle(own));
  cr_assert_eq(gcl_stream_priority(w), -4); /* the driver's priority of it */
  cr_assert_eq(gcl_stream_context(w), ctx);
  gcl_event *e = NULL;
  cr_assert_eq(gcl_event_create(ctx, &e), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_event_record(e, w), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_stream_wait_event(w, e), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_stream_synchronize(w), GCL_OK, "%s", gcl_last_error());
  gcl_stream_destroy(w);
  cr_assert_eq(fakecuda_live("stream"), 1); /* the CUstream stays its creator's */
  cr_assert_eq(gcl_stream_synchronize(own), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_stream_wrap(ctx, NULL, &def), GCL_OK, "%s", gcl_last_error()); /* the default stream */
  cr_assert_null(gcl_stream_handle(def));
  gcl_stream_destroy(def);
  /* live memory holding no stream: refused as gcl_stream_check refuses it, nothing is made */
  uint32_t not_a_stream[16] = {0};
  gcl_stream *bad = (gcl_stream *)0x1;
  cr_assert_eq(gcl_stream_wrap(ctx, not_a_stream, &bad), GCL_ERROR_DRIVER);
  cr_assert_eq(bad, (gcl_stream *)0x1);
  cr_assert(strstr(gcl_last_error(), "not a live stream") != NULL, "%s", gcl_last_error());
  cr_assert_eq(gcl_stream_wrap(NULL, NULL, &bad), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl_stream_wrap(ctx, NULL, NULL), GCL_ERROR_INVALID_ARGUMENT);
  gcl_event_destroy(e);
  gcl_stream_destroy(own);
  cr_assert_eq(fakecuda_live("stream"), 0);
  gcl_context_destroy(ctx);
}
