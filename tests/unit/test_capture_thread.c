/* What a capturing thread may not do, against libfakecuda.so (which models capture mode
 * THREAD_LOCAL as driver 580 behaves, FACTS): while a gclaunch stream of this thread captures,
 * this thread's allocations, event queries and synchronizes, stream synchronizes and graph
 * instantiation fail, and the message names the capturing stream and how to end the capture
 * (issue 55). Another thread is not affected; after the capture ends everything works again; a
 * capture begun outside gclaunch is said to be one. */
#include "fakecuda_test.h"

#include <pthread.h>
#include <stdio.h>

TestSuite(capture_thread, .init = fake_use);

#define CHECK(call) cr_assert_eq((call), GCL_OK, "%s: %s", #call, gcl_last_error())

typedef struct rig {
  gcl_context *ctx;
  gcl_module *mod;
  gcl_kernel *k;
  gcl_args *a;
  gcl_stream *s, *other;
  gcl_event *e;
  uint64_t buf;
} rig;

static void open_rig(rig *r) {
  memset(r, 0, sizeof *r);
  unsigned char map[128] = {1};
  int8_t c = 1;
  CHECK(gcl_context_create(0, &r->ctx));
  CHECK(gcl_mem_alloc(r->ctx, 4096, &r->buf));
  CHECK(gcl_module_load_data(r->ctx, fake_ptx, sizeof fake_ptx, &r->mod));
  CHECK(gcl_module_find_kernel(r->mod, "k", FAKE_K_SIGNATURE, &r->k));
  CHECK(gcl_args_create(gcl_kernel_layout(r->k), &r->a));
  CHECK(gcl_args_set(r->a, 0, map, 128));
  CHECK(gcl_args_set(r->a, 1, &c, 1));
  CHECK(gcl_args_set_ptr(r->a, 2, r->buf));
  CHECK(gcl_stream_create(r->ctx, 0, &r->s));
  CHECK(gcl_stream_create(r->ctx, 0, &r->other));
  CHECK(gcl_event_create(r->ctx, &r->e));
  CHECK(gcl_event_record(r->e, r->other));
}

static void close_rig(rig *r) {
  gcl_event_destroy(r->e);
  gcl_stream_destroy(r->s);
  gcl_stream_destroy(r->other);
  gcl_args_destroy(r->a);
  gcl_module_destroy(r->mod);
  gcl_mem_free(r->ctx, r->buf);
  gcl_context_destroy(r->ctx);
  assert_nothing_live();
}

static void launch_on(rig *r, gcl_stream *s) {
  gcl_launch_config cfg = {.grid = {1}, .block = {32}, .stream = gcl_stream_handle(s)};
  CHECK(gcl_launch(r->k, &cfg, r->a));
}

/* The refusal of a call made while s captures: a driver error naming the stream and the way out. */
static void assert_names_capture(gcl_status st, const gcl_stream *s, const char *call) {
  cr_assert_eq(st, GCL_ERROR_DRIVER, "%s during a capture: %s", call, gcl_last_error());
  char stream[64];
  snprintf(stream, sizeof stream, "gcl_stream %p (CUstream %p, device 0)", (const void *)s,
           gcl_stream_handle(s));
  assert_msg_has("CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED");
  assert_msg_has("This thread is capturing a graph on 1 gclaunch stream: ");
  assert_msg_has(stream);
  assert_msg_has("gcl_graph_capture_end");
  assert_msg_has("stream.end_capture()");
}

static void *alloc_elsewhere(void *arg) {
  rig *r = arg;
  uint64_t p = 0;
  gcl_status st = gcl_mem_alloc(r->ctx, 256, &p);
  if (st == GCL_OK) gcl_mem_free(r->ctx, p);
  return (void *)(intptr_t)st;
}

Test(capture_thread, unsafe_calls_fail_naming_the_stream_and_the_way_out) {
  rig r;
  open_rig(&r);
  CHECK(gcl_graph_capture_begin(r.s));
  launch_on(&r, r.s);
  uint64_t p = 0;
  bool done = false;
  assert_names_capture(gcl_mem_alloc(r.ctx, 256, &p), r.s, "gcl_mem_alloc");
  assert_names_capture(gcl_event_synchronize(r.e), r.s, "gcl_event_synchronize");
  assert_names_capture(gcl_event_query(r.e, &done), r.s, "gcl_event_query");
  assert_names_capture(gcl_stream_synchronize(r.other), r.s, "gcl_stream_synchronize(other)");
  pthread_t t;
  void *got = NULL;
  cr_assert_eq(pthread_create(&t, NULL, alloc_elsewhere, &r), 0);
  pthread_join(t, &got);
  cr_assert_eq((gcl_status)(intptr_t)got, GCL_OK, "another thread may allocate meanwhile");
  gcl_graph *g = NULL;
  CHECK(gcl_graph_capture_end(r.s, &g)); /* the refusals left the capture intact */
  CHECK(gcl_mem_alloc(r.ctx, 256, &p));  /* and, ended, everything works again */
  CHECK(gcl_mem_free(r.ctx, p));
  CHECK(gcl_event_synchronize(r.e));
  CHECK(gcl_graph_launch(g, r.other));
  CHECK(gcl_stream_synchronize(r.other));
  gcl_graph_destroy(g);
  close_rig(&r);
}

/* Two captures on one thread: the graph of the first cannot be instantiated while the second is
 * open; the message names the second. Ended in the other order, both work. */
Test(capture_thread, a_second_capture_blocks_the_first_ones_graph) {
  rig r;
  open_rig(&r);
  CHECK(gcl_graph_capture_begin(r.s));
  launch_on(&r, r.s);
  CHECK(gcl_graph_capture_begin(r.other));
  launch_on(&r, r.other);
  gcl_graph *g = NULL, *h = NULL;
  assert_names_capture(gcl_graph_capture_end(r.s, &g), r.other, "gcl_graph_capture_end");
  assert_msg_has("cuGraphInstantiateWithFlags");
  cr_assert_null(g);
  CHECK(gcl_graph_capture_end(r.other, &h));
  CHECK(gcl_graph_capture_begin(r.s));
  launch_on(&r, r.s);
  CHECK(gcl_graph_capture_end(r.s, &g));
  gcl_graph_destroy(g);
  gcl_graph_destroy(h);
  close_rig(&r);
}

/* A capture begun outside gclaunch (here: the driver's own call on a gclaunch stream's handle):
 * no gclaunch stream to name, and the message says so. */
Test(capture_thread, a_capture_begun_elsewhere_is_said_to_be_one) {
  rig r;
  open_rig(&r);
  extern int cuGetProcAddress_v2(const char *, void **, int, unsigned long long, int *);
  void *begin = NULL, *end = NULL, *destroy = NULL;
  int q;
  cr_assert_eq(cuGetProcAddress_v2("cuStreamBeginCapture", &begin, 10010, 0, &q), 0);
  cr_assert_eq(cuGetProcAddress_v2("cuStreamEndCapture", &end, 10000, 0, &q), 0);
  cr_assert_eq(cuGetProcAddress_v2("cuGraphDestroy", &destroy, 10000, 0, &q), 0);
  cr_assert_eq(((int (*)(void *, int))begin)(gcl_stream_handle(r.other), 1 /* THREAD_LOCAL */), 0);
  uint64_t p = 0;
  cr_assert_eq(gcl_mem_alloc(r.ctx, 256, &p), GCL_ERROR_DRIVER);
  assert_msg_has("No gclaunch stream of this thread is capturing: a capture begun outside gclaunch");
  void *graph = NULL;
  cr_assert_eq(((int (*)(void *, void **))end)(gcl_stream_handle(r.other), &graph), 0);
  cr_assert_eq(((int (*)(void *))destroy)(graph), 0);
  close_rig(&r);
}
