/* Graphs against libfakecuda.so: capture on a gcl_stream, kernel nodes in capture order, one
 * node's arguments replaced (a large grid-constant aggregate among them), replayed into the
 * fake's launch record; capture misuse; sticky kernel faults (the TMA hint); and one driver
 * failure at every call position of a whole stream/event/graph session. */
#include "fakecuda_test.h"

#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

TestSuite(graph, .init = fake_use);

#define BIG_BYTES 8192
#define BIG_SIGNATURE "grid_constant bytes(8192) align(16) p, u32 n"

typedef struct session {
  gcl_context *ctx;
  gcl_module *mod;
  gcl_kernel *k, *big;
  gcl_args *ka, *ba;
  gcl_stream *s;
  gcl_event *e0, *e1;
  gcl_graph *g;
  uint64_t buf;
  unsigned char payload[BIG_BYTES];
} session;

static void declare_big(void) {
  const size_t off[] = {0, BIG_BYTES}, size[] = {BIG_BYTES, 4};
  cr_assert_eq(fakecuda_set_params("big", 2, off, size), 0);
}

static void fill_payload(session *w, unsigned char seed) {
  for (size_t i = 0; i < BIG_BYTES; i++) w->payload[i] = (unsigned char)(i * 7u + seed);
}

/* Everything but the graph: context, module, kernels, args, stream, events, buffer. */
static gcl_status session_open(session *w) {
  gcl_status s;
  int8_t c = 3;
  unsigned char map[128] = {1};
  uint32_t n = 5;
  fill_payload(w, 1);
  if ((s = gcl_context_create(0, &w->ctx)) || (s = gcl_mem_alloc(w->ctx, 4096, &w->buf)) ||
      (s = gcl_module_load_data(w->ctx, fake_ptx, sizeof fake_ptx, &w->mod)) ||
      (s = gcl_module_find_kernel(w->mod, "k", FAKE_K_SIGNATURE, &w->k)) ||
      (s = gcl_module_find_kernel(w->mod, "big", BIG_SIGNATURE, &w->big)) ||
      (s = gcl_args_create(gcl_kernel_layout(w->k), &w->ka)) ||
      (s = gcl_args_create(gcl_kernel_layout(w->big), &w->ba)) ||
      (s = gcl_args_set(w->ka, 0, map, 128)) || (s = gcl_args_set(w->ka, 1, &c, 1)) ||
      (s = gcl_args_set_ptr(w->ka, 2, w->buf)) ||
      (s = gcl_args_set(w->ba, 0, w->payload, BIG_BYTES)) || (s = gcl_args_set_u32(w->ba, 1, n)) ||
      (s = gcl_stream_create(w->ctx, -2, &w->s)) || (s = gcl_event_create(w->ctx, &w->e0)) ||
      (s = gcl_event_create(w->ctx, &w->e1)))
    return s;
  return GCL_OK;
}

/* Captures k, big, k (with an async fill between) into w->g. */
static gcl_status session_capture(session *w) {
  gcl_launch_config cfg = {.grid = {2}, .block = {64}, .stream = gcl_stream_handle(w->s)};
  gcl_launch_config cfg_big = {.grid = {3}, .block = {128}, .stream = gcl_stream_handle(w->s)};
  gcl_status s;
  if ((s = gcl_graph_capture_begin(w->s)) || (s = gcl_launch(w->k, &cfg, w->ka)) ||
      (s = gcl_mem_fill_u8_async(w->ctx, w->buf, 0x5a, 64, w->s)) ||
      (s = gcl_launch(w->big, &cfg_big, w->ba)) || (s = gcl_launch(w->k, &cfg, w->ka)))
    return s;
  return gcl_graph_capture_end(w->s, &w->g);
}

/* The whole session: open, capture, replace node 1's args, replay timed, synchronize. */
static gcl_status session_run(session *w) {
  gcl_status s;
  double us = 0;
  if ((s = session_open(w)) || (s = session_capture(w))) return s;
  fill_payload(w, 9);
  if ((s = gcl_args_set(w->ba, 0, w->payload, BIG_BYTES)) ||
      (s = gcl_graph_set_args(w->g, 1, w->big, w->ba)) || (s = gcl_event_record(w->e0, w->s)) ||
      (s = gcl_graph_launch(w->g, w->s)) || (s = gcl_event_record(w->e1, w->s)) ||
      (s = gcl_stream_synchronize(w->s)))
    return s;
  return gcl_event_elapsed_us(w->e0, w->e1, &us);
}

static void session_close(session *w) {
  gcl_graph_destroy(w->g);
  gcl_event_destroy(w->e0);
  gcl_event_destroy(w->e1);
  gcl_stream_destroy(w->s);
  gcl_args_destroy(w->ka);
  gcl_args_destroy(w->ba);
  gcl_module_destroy(w->mod);
  if (w->buf) gcl_mem_free(w->ctx, w->buf);
  gcl_context_destroy(w->ctx);
  memset(w, 0, sizeof *w);
}

Test(graph, capture_replace_replay) {
  declare_big();
  static session w;
  cr_assert_eq(session_open(&w), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(session_capture(&w), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(fakecuda_launch_count(), 0, "captured launches do not run");
  cr_assert_eq(fakecuda_live("graph"), 1);
  cr_assert_eq(fakecuda_live("exec"), 1);
  size_t n = 0;
  cr_assert_eq(gcl_graph_kernel_count(w.g, &n), GCL_OK);
  cr_assert_eq(n, 3, "three kernel nodes (the fill is not one)");
  unsigned char *dev = (unsigned char *)(uintptr_t)w.buf;
  memset(dev, 0, 64);
  fill_payload(&w, 9);
  cr_assert_eq(gcl_args_set(w.ba, 0, w.payload, BIG_BYTES), GCL_OK);
  cr_assert_eq(gcl_args_set_u32(w.ba, 1, 77), GCL_OK);
  cr_assert_eq(gcl_graph_set_args(w.g, 1, w.big, w.ba), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_graph_launch(w.g, w.s), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(fakecuda_launch_count(), 3);
  cr_assert_eq(dev[63], 0x5a, "the captured fill ran in the replay");
  fakecuda_launch last;
  cr_assert_eq(fakecuda_last_launch(&last), 0);
  cr_assert_str_eq(last.kernel, "k", "the last node in capture order is k");
  cr_assert_eq(last.stream, gcl_stream_handle(w.s));
  /* The replay's bytes: the digest sum of its three launches against the packed buffers. */
  const void *kb, *bb;
  size_t ks, bs;
  cr_assert_eq(gcl_args_buffer(w.ka, &kb, &ks), GCL_OK);
  cr_assert_eq(gcl_args_buffer(w.ba, &bb, &bs), GCL_OK);
  cr_assert_eq(bs, BIG_BYTES + 4);
  uint64_t want = 2 * fakecuda_digest(kb, ks) + fakecuda_digest(bb, bs);
  cr_assert_eq(fakecuda_launch_digest(), want, "node 1 carried the replaced 8 KiB aggregate");
  /* The args may change after the update: the graph keeps what it was given. */
  fill_payload(&w, 200);
  cr_assert_eq(gcl_args_set(w.ba, 0, w.payload, BIG_BYTES), GCL_OK);
  cr_assert_eq(gcl_graph_launch(w.g, NULL), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(fakecuda_launch_digest(), 2 * want);
  session_close(&w);
  assert_nothing_live();
}

/* A graph of one kernel node has no edges (driver 580 refuses to list 0 of them into arrays). */
Test(graph, a_single_kernel_node) {
  declare_big();
  static session w;
  cr_assert_eq(session_open(&w), GCL_OK, "%s", gcl_last_error());
  gcl_launch_config cfg = {.grid = {1}, .block = {32}, .stream = gcl_stream_handle(w.s)};
  cr_assert_eq(gcl_graph_capture_begin(w.s), GCL_OK);
  cr_assert_eq(gcl_launch(w.k, &cfg, w.ka), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_graph_capture_end(w.s, &w.g), GCL_OK, "%s", gcl_last_error());
  size_t n = 0;
  cr_assert_eq(gcl_graph_kernel_count(w.g, &n), GCL_OK);
  cr_assert_eq(n, 1);
  cr_assert_eq(gcl_graph_set_args(w.g, 0, w.k, w.ka), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_graph_launch(w.g, w.s), GCL_OK, "%s", gcl_last_error());
  session_close(&w);
  assert_nothing_live();
}

Test(graph, nodes_are_numbered_in_capture_order) {
  declare_big();
  static session w;
  cr_assert_eq(session_open(&w), GCL_OK, "%s", gcl_last_error());
  gcl_launch_config cfg = {.grid = {1}, .block = {32}, .stream = gcl_stream_handle(w.s)};
  cr_assert_eq(gcl_graph_capture_begin(w.s), GCL_OK);
  cr_assert_eq(gcl_launch(w.k, &cfg, w.ka), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_mem_fill_u8_async(w.ctx, w.buf, 1, 8, w.s), GCL_OK);
  cr_assert_eq(gcl_launch(w.big, &cfg, w.ba), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_graph_capture_end(w.s, &w.g), GCL_OK, "%s", gcl_last_error());
  /* The fake lists nodes in reverse (big, fill, k); node 0 must still be the first launch. */
  cr_assert_eq(gcl_graph_set_args(w.g, 0, w.big, w.ba), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("kernel_node 0: it runs another kernel than 'big'");
  cr_assert_eq(gcl_graph_set_args(w.g, 1, w.k, w.ka), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("kernel_node 1: it runs another kernel than 'k'");
  cr_assert_eq(gcl_graph_set_args(w.g, 0, w.k, w.ka), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_graph_set_args(w.g, 1, w.big, w.ba), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_graph_launch(w.g, w.s), GCL_OK, "%s", gcl_last_error());
  fakecuda_launch last;
  cr_assert_eq(fakecuda_last_launch(&last), 0);
  cr_assert_str_eq(last.kernel, "big");
  session_close(&w);
  assert_nothing_live();
}

Test(graph, misuse_is_named_and_changes_nothing) {
  declare_big();
  static session w;
  cr_assert_eq(session_open(&w), GCL_OK, "%s", gcl_last_error());
  gcl_graph *keep = (gcl_graph *)0x7;
  cr_assert_eq(gcl_graph_capture_end(w.s, &keep), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("s: no capture in progress");
  cr_assert_eq(gcl_graph_capture_begin(NULL), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("s: expected a stream, got NULL");
  cr_assert_eq(gcl_graph_capture_begin(w.s), GCL_OK);
  cr_assert_eq(gcl_graph_capture_begin(w.s), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("s: already capturing");
  cr_assert_eq(gcl_stream_synchronize(w.s), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("capturing a graph");
  cr_assert_eq(gcl_graph_capture_end(w.s, NULL), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("out");
  cr_assert_eq(gcl_graph_capture_end(w.s, &keep), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("s: the capture launched no kernel");
  cr_assert_eq(keep, (gcl_graph *)0x7);
  cr_assert_eq(fakecuda_live("graph"), 0, "the empty graph was destroyed");
  cr_assert_eq(gcl_graph_capture_end(w.s, &keep), GCL_ERROR_INVALID_ARGUMENT, "the capture ended");
  cr_assert_eq(session_capture(&w), GCL_OK, "%s", gcl_last_error());
  size_t n = 99;
  cr_assert_eq(gcl_graph_kernel_count(NULL, &n), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("g: expected a graph");
  cr_assert_eq(gcl_graph_kernel_count(w.g, NULL), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(n, 99);
  cr_assert_eq(gcl_graph_set_args(w.g, 3, w.k, w.ka), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("kernel_node: expected 0 ... 2 (the graph has 3 kernel nodes, in capture order), got 3");
  cr_assert_eq(gcl_graph_set_args(w.g, 0, NULL, w.ka), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("k: expected a kernel");
  cr_assert_eq(gcl_graph_set_args(w.g, 0, w.k, NULL), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("args");
  cr_assert_eq(gcl_graph_set_args(w.g, 0, w.k, w.ba), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("args: their layout has 2 parameters, kernel 'k' has 3");
  gcl_args *unset;
  cr_assert_eq(gcl_args_create(gcl_kernel_layout(w.k), &unset), GCL_OK);
  cr_assert_eq(gcl_graph_set_args(w.g, 0, w.k, unset), GCL_ERROR_UNSET_ARGUMENT);
  gcl_args_destroy(unset);
  cr_assert_eq(fakecuda_calls("cuGraphExecKernelNodeSetParams"), 0, "nothing reached the driver");
  cr_assert_eq(gcl_graph_launch(NULL, w.s), GCL_ERROR_INVALID_ARGUMENT);
  uint32_t junk[16] = {0xbad};
  cr_assert_eq(gcl_graph_launch((gcl_graph *)junk, w.s), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("g: not a live graph");
  cr_assert_eq(gcl_graph_launch(w.g, (gcl_stream *)junk), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("s: not a live stream");
  cr_assert_eq(fakecuda_launch_count(), 0);
  gcl_graph_destroy(NULL);
  session_close(&w);
  assert_nothing_live();
}

Test(graph, a_sync_during_capture_invalidates_it) {
  declare_big();
  static session w;
  cr_assert_eq(session_open(&w), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_graph_capture_begin(w.s), GCL_OK);
  /* Around gclaunch's own check: the raw stream synchronized, as foreign code might. */
  gcl_launch_config cfg = {.grid = {1}, .block = {32}, .stream = gcl_stream_handle(w.s)};
  cr_assert_eq(gcl_launch(w.k, &cfg, w.ka), GCL_OK);
  gcl_event *e;
  cr_assert_eq(gcl_event_create(w.ctx, &e), GCL_OK);
  cr_assert_eq(gcl_event_record(e, w.s), GCL_OK, "%s", gcl_last_error());
  gcl_event_destroy(e);
  fakecuda_fail_once("cuStreamEndCapture", 901, 0);
  gcl_graph *g = (gcl_graph *)0x1;
  cr_assert_eq(gcl_graph_capture_end(w.s, &g), GCL_ERROR_DRIVER);
  assert_msg_has("CUDA_ERROR_STREAM_CAPTURE_INVALIDATED");
  assert_msg_has("not allowed during capture");
  cr_assert_eq(g, (gcl_graph *)0x1);
  session_close(&w);
  assert_nothing_live();
}

Test(graph, destroying_a_capturing_stream_discards_the_capture) {
  declare_big();
  static session w;
  cr_assert_eq(session_open(&w), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_graph_capture_begin(w.s), GCL_OK);
  gcl_launch_config cfg = {.grid = {1}, .block = {32}, .stream = gcl_stream_handle(w.s)};
  cr_assert_eq(gcl_launch(w.k, &cfg, w.ka), GCL_OK);
  session_close(&w);
  assert_nothing_live();
}

/* A capturing thread's cuMemFree and cuLibraryUnload are refused by the driver and the refusal
 * invalidates the capture: gclaunch keeps them until the capture ends, then makes them. */
Test(graph, releases_during_a_capture_wait_for_its_end) {
  declare_big();
  static session w;
  cr_assert_eq(session_open(&w), GCL_OK, "%s", gcl_last_error());
  uint64_t extra = 0, other = 0;
  gcl_module *m2 = NULL;
  cr_assert_eq(gcl_mem_alloc(w.ctx, 1 << 20, &extra), GCL_OK);
  cr_assert_eq(gcl_mem_alloc(w.ctx, 1 << 20, &other), GCL_OK);
  cr_assert_eq(gcl_module_load_data(w.ctx, fake_ptx, sizeof fake_ptx, &m2), GCL_OK);
  gcl_graph *old = NULL;
  cr_assert_eq(session_capture(&w), GCL_OK, "%s", gcl_last_error());
  old = w.g;
  long mem = fakecuda_live("memory"), libs = fakecuda_live("library");
  long execs = fakecuda_live("exec");
  cr_assert_eq(gcl_graph_capture_begin(w.s), GCL_OK);
  gcl_launch_config cfg = {.grid = {1}, .block = {32}, .stream = gcl_stream_handle(w.s)};
  cr_assert_eq(gcl_launch(w.k, &cfg, w.ka), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_mem_free(w.ctx, extra), GCL_OK, "%s", gcl_last_error());
  gcl_module_destroy(m2);
  gcl_graph_destroy(old);
  cr_assert_eq(fakecuda_live("memory"), mem, "freed during the capture");
  cr_assert_eq(fakecuda_live("library"), libs, "unloaded during the capture");
  cr_assert_eq(fakecuda_live("exec"), execs, "graph exec destroyed during the capture");
  cr_assert_eq(gcl_graph_capture_end(w.s, &w.g), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(fakecuda_live("memory"), mem - 1, "not freed when the capture ended");
  cr_assert_eq(fakecuda_live("library"), libs - 1, "not unloaded when the capture ended");
  cr_assert_eq(fakecuda_live("exec"), execs, "the old exec not destroyed (and the new one made)");
  /* No capture: a free is made at once. */
  cr_assert_eq(gcl_mem_free(w.ctx, other), GCL_OK);
  cr_assert_eq(fakecuda_live("memory"), mem - 2);
  session_close(&w);
  assert_nothing_live();
}

/* A stream destroyed while it captures discards the capture and makes what it deferred; a
 * context destroyed makes what is left of its own. */
Test(graph, releases_deferred_by_a_discarded_capture_are_made) {
  declare_big();
  static session w;
  cr_assert_eq(session_open(&w), GCL_OK, "%s", gcl_last_error());
  uint64_t extra = 0;
  cr_assert_eq(gcl_mem_alloc(w.ctx, 4096, &extra), GCL_OK);
  long mem = fakecuda_live("memory");
  cr_assert_eq(gcl_graph_capture_begin(w.s), GCL_OK);
  cr_assert_eq(gcl_mem_free(w.ctx, extra), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(fakecuda_live("memory"), mem);
  gcl_stream_destroy(w.s);
  w.s = NULL;
  cr_assert_eq(fakecuda_live("memory"), mem - 1, "not freed when the capturing stream went");
  session_close(&w);
  assert_nothing_live();
}

Test(graph, kernel_of_another_device_is_refused) {
  cr_assert_eq(fakecuda_set_devices(2), 0);
  declare_big();
  static session w;
  cr_assert_eq(session_open(&w), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(session_capture(&w), GCL_OK, "%s", gcl_last_error());
  gcl_context *c1;
  gcl_kernel *k1;
  gcl_stream *s1;
  cr_assert_eq(gcl_context_create(1, &c1), GCL_OK);
  cr_assert_eq(gcl_module_find_kernel_on(w.mod, c1, "k", NULL, &k1), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_graph_set_args(w.g, 0, k1, w.ka), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("k: kernel 'k' runs on device 1, the graph on device 0");
  cr_assert_eq(gcl_stream_create(c1, 0, &s1), GCL_OK);
  cr_assert_eq(gcl_graph_launch(w.g, s1), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("s: a stream of device 1, expected one of device 0");
  cr_assert_eq(fakecuda_launch_count(), 0);
  gcl_stream_destroy(s1);
  session_close(&w); /* the module frees k1 too */
  gcl_context_destroy(c1);
  assert_nothing_live();
}

/* --- sticky faults --------------------------------------------------------------------------- */

Test(graph, a_fault_in_a_replay_is_sticky) {
  declare_big();
  static session w;
  cr_assert_eq(session_open(&w), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(session_capture(&w), GCL_OK, "%s", gcl_last_error());
  fakecuda_fail_once("cuGraphLaunch", 700, 0);
  cr_assert_eq(gcl_graph_launch(w.g, w.s), GCL_ERROR_KERNEL_FAULT);
  assert_msg_has("cuGraphLaunch(3 kernel nodes, device 0): CUDA_ERROR_ILLEGAL_ADDRESS");
  assert_msg_has("only a new process recovers");
  cr_assert(strstr(gcl_last_error(), "TMA") == NULL, "no TMA hint for ILLEGAL_ADDRESS: %s", gcl_last_error());
  long calls = fakecuda_calls("*");
  cr_assert_eq(gcl_stream_synchronize(w.s), GCL_ERROR_KERNEL_FAULT);
  cr_assert_eq(gcl_event_record(w.e0, w.s), GCL_ERROR_KERNEL_FAULT);
  bool done = true;
  cr_assert_eq(gcl_event_query(w.e0, &done), GCL_ERROR_KERNEL_FAULT);
  cr_assert_eq(gcl_graph_launch(w.g, w.s), GCL_ERROR_KERNEL_FAULT);
  gcl_stream *s2 = NULL;
  cr_assert_eq(gcl_stream_create(w.ctx, 0, &s2), GCL_ERROR_KERNEL_FAULT);
  cr_assert_null(s2);
  cr_assert_eq(gcl_last_cuda_error(), 700);
  cr_assert_eq(fakecuda_calls("*"), calls, "no call reached the driver after the fault");
  session_close(&w); /* destroys still give everything back */
  assert_nothing_live();
}

/* A sticky ILLEGAL_INSTRUCTION in a process that encoded a tensor map names the TMA rule. */
Test(graph, illegal_instruction_after_tensor_maps_names_the_tma_rule) {
  gcl_context *ctx;
  uint64_t buf;
  fake_tensor t;
  unsigned char map[128] __attribute__((aligned(64)));
  gcl_tensormap_options o = fake_tmap_options();
  cr_assert_eq(gcl_context_create(0, &ctx), GCL_OK);
  cr_assert_eq(gcl_mem_alloc(ctx, 64 * 64 * 4, &buf), GCL_OK);
  fake_tensor_init(&t, buf, 64, 64);
  cr_assert_eq(gcl_tensormap_encode(ctx, &t.t, &o, map), GCL_OK, "%s", gcl_last_error());
  fakecuda_fail_once("cuCtxSynchronize", 715, 0);
  cr_assert_eq(gcl_context_synchronize(ctx), GCL_ERROR_KERNEL_FAULT);
  assert_msg_has("CUDA_ERROR_ILLEGAL_INSTRUCTION");
  assert_msg_has("a TMA load/store whose innermost coordinate x element size is not a multiple of "
                 "16 bytes ends the kernel with CUDA_ERROR_ILLEGAL_INSTRUCTION");
  cr_assert_eq(gcl_last_cuda_error(), 715);
  gcl_mem_free(ctx, buf);
  gcl_context_destroy(ctx);
  assert_nothing_live();
}

Test(graph, illegal_instruction_without_tensor_maps_has_no_hint) {
  gcl_context *ctx;
  cr_assert_eq(gcl_context_create(0, &ctx), GCL_OK);
  fakecuda_fail_once("cuCtxSynchronize", 715, 0);
  cr_assert_eq(gcl_context_synchronize(ctx), GCL_ERROR_KERNEL_FAULT);
  assert_msg_has("CUDA_ERROR_ILLEGAL_INSTRUCTION");
  cr_assert(strstr(gcl_last_error(), "TMA") == NULL, "%s", gcl_last_error());
  gcl_context_destroy(ctx);
  assert_nothing_live();
}

/* A kernel whose signature has a tensormap parameter counts as using tensor maps. */
Test(graph, a_tensormap_signature_is_enough_for_the_hint) {
  declare_big();
  static session w;
  cr_assert_eq(session_open(&w), GCL_OK, "%s", gcl_last_error()); /* k: grid_constant tensormap */
  fakecuda_fail_once("cuLaunchKernelEx", 715, 0);
  gcl_launch_config cfg = {.grid = {1}, .block = {32}, .stream = gcl_stream_handle(w.s)};
  cr_assert_eq(gcl_launch(w.k, &cfg, w.ka), GCL_ERROR_KERNEL_FAULT);
  assert_msg_has("likely cause: a TMA load/store");
  session_close(&w);
  assert_nothing_live();
}

/* --- one failure at every call position of the session ------------------------------------- */

Test(graph, sweep_single_transient_failure) {
  declare_big();
  static session w;
  cr_assert_eq(gcl_driver_init(), GCL_OK);
  long before = fakecuda_calls("*");
  cr_assert_eq(session_run(&w), GCL_OK, "%s", gcl_last_error());
  long calls = fakecuda_calls("*") - before;
  session_close(&w);
  assert_nothing_live();
  int failed = 0;
  for (long n = 0; n < calls; n++) {
    fakecuda_fail_once("*", 999, (int)n);
    gcl_status s = session_run(&w);
    fakecuda_fail("*", 0, 0);
    session_close(&w);
    if (s != GCL_OK) {
      failed++;
      cr_assert_eq(s, GCL_ERROR_DRIVER, "call %ld: %s: %s", n, gcl_status_name(s), gcl_last_error());
      assert_msg_has("CUDA_ERROR_UNKNOWN");
      cr_assert_eq(gcl_last_cuda_error(), 999);
    }
    assert_nothing_live();
    cr_assert_eq(session_run(&w), GCL_OK, "after a failure at call %ld: %s", n, gcl_last_error());
    session_close(&w);
    assert_nothing_live();
  }
  cr_assert_gt(failed, calls / 2, "most single failures must surface: %d of %ld", failed, calls);
}

/* A sticky fault at every call position of the session: GCL_ERROR_KERNEL_FAULT whose message
 * says the state is lost, and everything given back. The fault is process-wide, so each
 * position runs in a forked child (the parent never faulted). */
static int sticky_child(long n) {
  static session w;
  fakecuda_fail_once("*", 715, (int)n);
  gcl_status s = session_run(&w);
  int bad = s != GCL_OK && (s != GCL_ERROR_KERNEL_FAULT ||
                            !strstr(gcl_last_error(), "the process's CUDA state is lost") ||
                            gcl_last_cuda_error() != 715);
  if (bad) fprintf(stderr, "call %ld: %s: %s\n", n, gcl_status_name(s), gcl_last_error());
  session_close(&w);
  const char *kinds[] = {"retain", "memory", "library", "stream", "event", "host", "graph", "exec"};
  for (int i = 0; i < 8; i++)
    if (fakecuda_live(kinds[i]) != 0) bad = 1, fprintf(stderr, "call %ld: %s left\n", n, kinds[i]);
  return bad ? 1 : s == GCL_OK ? 2 : 0;
}

Test(graph, sweep_sticky_fault_at_every_call) {
  declare_big();
  static session w;
  cr_assert_eq(gcl_driver_init(), GCL_OK);
  long before = fakecuda_calls("*");
  cr_assert_eq(session_run(&w), GCL_OK, "%s", gcl_last_error());
  long calls = fakecuda_calls("*") - before;
  session_close(&w);
  int faulted = 0;
  for (long n = 0; n < calls; n++) {
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) _exit(sticky_child(n));
    int st = 0;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) != 1, "sticky fault at call %ld (see stderr)", n);
    faulted += WEXITSTATUS(st) == 0;
  }
  cr_assert_gt(faulted, calls / 2, "most faults must surface: %d of %ld", faulted, calls);
}

/* A driver without cuGraphGetEdges (CUDA < 12.3): graphs still work, kernel nodes in the order
 * the driver lists them (the fake lists in reverse). */
Test(graph, without_cuGraphGetEdges_nodes_follow_the_listing) {
  fakecuda_hide("cuGraphGetEdges", 1);
  declare_big();
  static session w;
  cr_assert_eq(session_open(&w), GCL_OK, "%s", gcl_last_error());
  gcl_launch_config cfg = {.grid = {1}, .block = {32}, .stream = gcl_stream_handle(w.s)};
  cr_assert_eq(gcl_graph_capture_begin(w.s), GCL_OK);
  cr_assert_eq(gcl_launch(w.k, &cfg, w.ka), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_launch(w.big, &cfg, w.ba), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_graph_capture_end(w.s, &w.g), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_graph_set_args(w.g, 0, w.big, w.ba), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(fakecuda_calls("cuGraphGetEdges"), 0);
  session_close(&w);
  assert_nothing_live();
}

/* examples/persistent.c against the fake: every gclaunch call of its host side succeeds (exit 2
 * would name the failing call); the fake runs no kernel, so its check must then see the results
 * missing (exit 1) -- the check is not vacuous. */
Test(graph, example_persistent_host_side_runs_on_the_fake) {
  char build[1024], cmd[4096];
  snprintf(build, sizeof build, "%s", FAKECUDA_PATH);
  for (int up = 0; up < 3; up++) *strrchr(build, '/') = 0; /* build/tests/fakecuda/libfakecuda.so */
  snprintf(cmd, sizeof cmd, "GCL_LIBCUDA='%s' FAKECUDA_PARAMS='persistent_axpy=0/4,8/8,16/8,24/8;"
           "persistent_table=0/8208,8208/8,8216/8,8224/8' '%s/examples/example_persistent' "
           "'%s/kernels/persistent.sm_90.cubin' 2>&1; echo \"exit $?\"", FAKECUDA_PATH, build, build);
  FILE *p = popen(cmd, "r");
  cr_assert(p != NULL);
  static char out[16384];
  size_t n = fread(out, 1, sizeof out - 1, p);
  out[n] = 0;
  pclose(p);
  if (strstr(out, "not found") && strstr(out, "exit 127")) cr_skip_test("example not built: %s", out);
  cr_assert(strstr(out, "elements differ") && strstr(out, "exit 1"), "%s", out);
}
