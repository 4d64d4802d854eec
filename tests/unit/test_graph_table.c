/* Re-pointed tensor maps in CUDA graphs, against libfakecuda.so (docs/graphs.md): a table
 * captured with gcl_graph_capture_table is copied to the device by every replay from the copy
 * the graph took at the last gcl_graph_set_table (not at the table's re-point, not at the
 * launch); a re-pointed map in the parameters reaches a replay through gcl_graph_set_args. And
 * the checks of the two table calls, and a failed set that changes nothing. */
#include "fakecuda_test.h"

#include <stdio.h>

TestSuite(graph_table, .init = fake_use);

#define K 6
#define CHECK(call) cr_assert_eq((call), GCL_OK, "%s: %s", #call, gcl_last_error())

typedef struct fixture {
  gcl_context *ctx;
  gcl_module *mod;
  gcl_kernel *k;
  gcl_args *args;
  gcl_stream *s;
  gcl_tensormap_table *t;
  uint64_t buf[2];       /* two buffers the maps alternate between */
  fake_tensor x[K];
  gcl_graph *g;
} fixture;

/* Context, kernel k with its args (map m over buf[0]), a table of K maps over buf[0]. */
static void open_fixture(fixture *f) {
  memset(f, 0, sizeof *f);
  CHECK(gcl_context_create(0, &f->ctx));
  CHECK(gcl_mem_alloc(f->ctx, 1 << 16, &f->buf[0]));
  CHECK(gcl_mem_alloc(f->ctx, 1 << 16, &f->buf[1]));
  CHECK(gcl_module_load_data(f->ctx, fake_ptx, sizeof fake_ptx, &f->mod));
  CHECK(gcl_module_find_kernel(f->mod, "k", FAKE_K_SIGNATURE, &f->k));
  CHECK(gcl_args_create(gcl_kernel_layout(f->k), &f->args));
  gcl_tensormap_options o = fake_tmap_options();
  const DLTensor *tp[K];
  for (int i = 0; i < K; i++) {
    fake_tensor_init(&f->x[i], f->buf[0] + 1024 * (uint64_t)i, 16, 64);
    tp[i] = &f->x[i].t;
  }
  gcl_field m;
  CHECK(gcl_layout_param_field(gcl_kernel_layout(f->k), 0, &m));
  CHECK(gcl_args_set_tensormaps(f->args, f->ctx, &m, 1, tp, &o, 1, 0));
  int8_t c = 1;
  CHECK(gcl_args_set(f->args, 1, &c, 1));
  CHECK(gcl_args_set_ptr(f->args, 2, f->buf[1]));
  CHECK(gcl_tensormap_table_create(f->ctx, K, &f->t));
  CHECK(gcl_tensormap_table_set(f->t, 0, K, tp, &o, 1, 0));
  CHECK(gcl_stream_create(f->ctx, 0, &f->s));
}

/* Captures: the table noted, then one launch of k. */
static void capture(fixture *f) {
  gcl_launch_config cfg = {.grid = {1}, .block = {32}, .stream = gcl_stream_handle(f->s)};
  CHECK(gcl_graph_capture_begin(f->s));
  CHECK(gcl_graph_capture_table(f->s, f->t));
  CHECK(gcl_launch(f->k, &cfg, f->args));
  CHECK(gcl_graph_capture_end(f->s, &f->g));
}

/* Everything given back; NULL handles are fine. */
static void release_fixture(fixture *f) {
  gcl_graph_destroy(f->g);
  gcl_stream_destroy(f->s);
  gcl_tensormap_table_destroy(f->t);
  gcl_args_destroy(f->args);
  gcl_module_destroy(f->mod);
  gcl_mem_free(f->ctx, f->buf[0]);
  gcl_mem_free(f->ctx, f->buf[1]);
  gcl_context_destroy(f->ctx);
  memset(f, 0, sizeof *f);
}

static void close_fixture(fixture *f) {
  release_fixture(f);
  assert_nothing_live();
}

/* The table's device memory now, map by map. */
static void device_maps(fixture *f, unsigned char *out) {
  CHECK(gcl_mem_download(f->ctx, out, gcl_tensormap_table_address(f->t), K * 128));
}

/* The host maps of the table as they are now. */
static void host_maps(fixture *f, unsigned char *out) {
  for (size_t i = 0; i < K; i++) memcpy(out + 128 * i, gcl_tensormap_table_map(f->t, i), 128);
}

/* Re-points every map of the table to buffer b (same offsets). */
static void repoint_table(fixture *f, int b) {
  uint64_t a[K];
  for (int i = 0; i < K; i++) a[i] = f->buf[b] + 1024 * (uint64_t)i;
  CHECK(gcl_tensormap_table_repoint(f->t, 0, K, a));
}

Test(graph_table, replay_uploads_the_copy_of_the_last_set_table) {
  fixture f;
  open_fixture(&f);
  capture(&f);
  size_t n = 0;
  CHECK(gcl_graph_kernel_count(f.g, &n));
  cr_assert_eq(n, 1, "the table's copy node is no kernel node: %zu", n);
  unsigned char dev[K * 128], want[K * 128], first[K * 128];
  host_maps(&f, first);
  device_maps(&f, dev);
  cr_assert(memcmp(dev, first, sizeof dev) != 0, "the capture uploaded the table already");
  CHECK(gcl_graph_launch(f.g, f.s));
  CHECK(gcl_stream_synchronize(f.s));
  device_maps(&f, dev);
  cr_assert(!memcmp(dev, first, sizeof dev), "the replay did not upload the captured maps");
  unsigned char prev[K * 128];
  memcpy(prev, first, sizeof prev);
  for (int round = 1; round <= 8; round++) {
    repoint_table(&f, round % 2);
    host_maps(&f, want);
    cr_assert(memcmp(want, prev, sizeof want) != 0, "round %d: the re-point changed no map", round);
    CHECK(gcl_mem_fill_u8(f.ctx, gcl_tensormap_table_address(f.t), 0, K * 128));
    CHECK(gcl_graph_launch(f.g, f.s)); /* not set yet: the previous copy */
    CHECK(gcl_stream_synchronize(f.s));
    device_maps(&f, dev);
    cr_assert(!memcmp(dev, prev, sizeof dev), "round %d: a replay before gcl_graph_set_table "
              "did not upload the previous copy", round);
    CHECK(gcl_graph_set_table(f.g, f.t));
    CHECK(gcl_mem_fill_u8(f.ctx, gcl_tensormap_table_address(f.t), 0, K * 128));
    CHECK(gcl_graph_launch(f.g, f.s));
    CHECK(gcl_stream_synchronize(f.s));
    device_maps(&f, dev);
    cr_assert(!memcmp(dev, want, sizeof dev), "round %d: the replay after set_table did not "
              "upload the re-pointed maps", round);
    memcpy(prev, want, sizeof prev);
  }
  cr_assert_eq(fakecuda_launch_count(), 17, "17 replays of one kernel node");
  close_fixture(&f);
}

/* Before any set, every replay uploads the maps the capture ended with, also after a re-point. */
Test(graph_table, repoint_alone_does_not_reach_the_replay) {
  fixture f;
  open_fixture(&f);
  capture(&f);
  unsigned char dev[K * 128], first[K * 128];
  host_maps(&f, first);
  repoint_table(&f, 1);
  CHECK(gcl_graph_launch(f.g, f.s));
  CHECK(gcl_stream_synchronize(f.s));
  device_maps(&f, dev);
  cr_assert(!memcmp(dev, first, sizeof dev), "the replay saw a re-point made after the capture "
            "without gcl_graph_set_table");
  close_fixture(&f);
}

Test(graph_table, repointed_parameter_map_reaches_the_replay_through_set_args) {
  fixture f;
  open_fixture(&f);
  capture(&f);
  gcl_field m;
  CHECK(gcl_layout_param_field(gcl_kernel_layout(f.k), 0, &m));
  const void *data = NULL;
  size_t size = 0;
  fakecuda_launch rec;
  for (int round = 1; round <= 6; round++) {
    uint64_t a = f.buf[round % 2];
    CHECK(gcl_args_repoint_tensormaps(f.args, f.ctx, &m, 1, &a));
    CHECK(gcl_graph_set_args(f.g, 0, f.k, f.args));
    CHECK(gcl_graph_launch(f.g, f.s));
    cr_assert_eq(fakecuda_last_launch(&rec), 0);
    CHECK(gcl_args_buffer(f.args, &data, &size));
    cr_assert(!memcmp(rec.params + m.offset, (const unsigned char *)data + m.offset, 128),
              "round %d: the replay's map is not the re-pointed one", round);
    uint64_t bits;
    memcpy(&bits, rec.params + m.offset, 8);
    cr_assert_eq(bits & 0x01fffffffffffff0ull, a & 0x01fffffffffffff0ull,
                 "round %d: the replay's map points at 0x%llx, expected 0x%llx", round,
                 (unsigned long long)(bits & 0x01fffffffffffff0ull), (unsigned long long)a);
  }
  close_fixture(&f);
}

Test(graph_table, checks_name_the_argument) {
  fixture f;
  open_fixture(&f);
  cr_assert_eq(gcl_graph_capture_table(f.s, f.t), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("s: no capture in progress");
  cr_assert_eq(gcl_graph_capture_table(NULL, f.t), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("s:");
  CHECK(gcl_graph_capture_begin(f.s));
  cr_assert_eq(gcl_graph_capture_table(f.s, NULL), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("t: expected a table, got NULL");
  CHECK(gcl_graph_capture_table(f.s, f.t));
  cr_assert_eq(gcl_graph_capture_table(f.s, f.t), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("t: already captured into this graph (table 0 of the capture)");
  gcl_launch_config cfg = {.grid = {1}, .block = {32}, .stream = gcl_stream_handle(f.s)};
  CHECK(gcl_launch(f.k, &cfg, f.args));
  CHECK(gcl_graph_capture_end(f.s, &f.g));
  gcl_tensormap_table *other;
  CHECK(gcl_tensormap_table_create(f.ctx, 2, &other));
  cr_assert_eq(gcl_graph_set_table(f.g, other), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("t: not a table of this graph (the graph has 1;");
  cr_assert_eq(gcl_graph_set_table(f.g, NULL), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("t: expected a table, got NULL");
  cr_assert_eq(gcl_graph_set_table(NULL, f.t), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("g: expected a graph, got NULL");
  gcl_tensormap_table_destroy(other);
  close_fixture(&f);
}

/* A capture that ends with no kernel drops its tables: the next capture starts without them. */
Test(graph_table, failed_capture_forgets_its_tables) {
  fixture f;
  open_fixture(&f);
  CHECK(gcl_graph_capture_begin(f.s));
  CHECK(gcl_graph_capture_table(f.s, f.t));
  cr_assert_eq(gcl_graph_capture_end(f.s, &f.g), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("s: the capture launched no kernel");
  cr_assert_null(f.g);
  gcl_launch_config cfg = {.grid = {1}, .block = {32}, .stream = gcl_stream_handle(f.s)};
  CHECK(gcl_graph_capture_begin(f.s));
  CHECK(gcl_launch(f.k, &cfg, f.args));
  CHECK(gcl_graph_capture_end(f.s, &f.g));
  cr_assert_eq(gcl_graph_set_table(f.g, f.t), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("the graph has 0");
  close_fixture(&f);
}

/* A stream destroyed in the middle of a capture with a table noted leaks nothing. */
Test(graph_table, stream_destroyed_mid_capture) {
  fixture f;
  open_fixture(&f);
  CHECK(gcl_graph_capture_begin(f.s));
  CHECK(gcl_graph_capture_table(f.s, f.t));
  gcl_stream_destroy(f.s);
  f.s = NULL;
  close_fixture(&f);
}

/* The driver refuses the node update: the call fails naming it, and replays keep the copy of
 * the previous set. */
Test(graph_table, failed_set_changes_nothing) {
  fixture f;
  open_fixture(&f);
  capture(&f);
  unsigned char dev[K * 128], first[K * 128];
  host_maps(&f, first);
  repoint_table(&f, 1);
  fakecuda_fail_once("cuGraphExecMemcpyNodeSetParams", 1, 0);
  cr_assert_eq(gcl_graph_set_table(f.g, f.t), GCL_ERROR_DRIVER);
  assert_msg_has("cuGraphExecMemcpyNodeSetParams(a table of 6 maps): CUDA_ERROR_INVALID_VALUE");
  CHECK(gcl_graph_launch(f.g, f.s));
  CHECK(gcl_stream_synchronize(f.s));
  device_maps(&f, dev);
  cr_assert(!memcmp(dev, first, sizeof dev), "a failed set changed what the replay uploads");
  close_fixture(&f);
}

/* Two tables in one graph: each its own copy node, each set on its own. */
Test(graph_table, two_tables) {
  fixture f;
  open_fixture(&f);
  gcl_tensormap_table *u;
  CHECK(gcl_tensormap_table_create(f.ctx, 3, &u));
  gcl_tensormap_options o = fake_tmap_options();
  const DLTensor *tp[3] = {&f.x[3].t, &f.x[4].t, &f.x[5].t};
  CHECK(gcl_tensormap_table_set(u, 0, 3, tp, &o, 1, 0));
  gcl_launch_config cfg = {.grid = {1}, .block = {32}, .stream = gcl_stream_handle(f.s)};
  CHECK(gcl_graph_capture_begin(f.s));
  CHECK(gcl_graph_capture_table(f.s, f.t));
  CHECK(gcl_launch(f.k, &cfg, f.args));
  CHECK(gcl_graph_capture_table(f.s, u));
  CHECK(gcl_launch(f.k, &cfg, f.args));
  CHECK(gcl_graph_capture_end(f.s, &f.g));
  uint64_t a[3] = {f.buf[1], f.buf[1] + 1024, f.buf[1] + 2048};
  CHECK(gcl_tensormap_table_repoint(u, 0, 3, a));
  repoint_table(&f, 1);
  unsigned char t_first[K * 128], got[3 * 128], want[3 * 128];
  CHECK(gcl_mem_download(f.ctx, t_first, gcl_tensormap_table_address(f.t), K * 128));
  CHECK(gcl_graph_set_table(f.g, u)); /* u only */
  CHECK(gcl_graph_launch(f.g, f.s));
  CHECK(gcl_stream_synchronize(f.s));
  for (size_t i = 0; i < 3; i++) memcpy(want + 128 * i, gcl_tensormap_table_map(u, i), 128);
  CHECK(gcl_mem_download(f.ctx, got, gcl_tensormap_table_address(u), sizeof got));
  cr_assert(!memcmp(got, want, sizeof got), "table u: not the set copy");
  unsigned char t_dev[K * 128], t_host[K * 128];
  device_maps(&f, t_dev);
  host_maps(&f, t_host);
  cr_assert(memcmp(t_dev, t_host, sizeof t_dev) != 0, "table t: the replay saw a re-point "
            "that was never set");
  gcl_graph_destroy(f.g);
  f.g = NULL;
  gcl_tensormap_table_destroy(u);
  close_fixture(&f);
}

/* --- one failure at every call position -------------------------------------------------------- */

/* The whole table session with statuses instead of assertions: context, buffers, kernel, args,
 * table, stream, capture (table, launch), re-point, set_table, launch, synchronize. */
static gcl_status table_session(fixture *f) {
  gcl_status s;
  memset(f, 0, sizeof *f);
  gcl_tensormap_options o = fake_tmap_options();
  const DLTensor *tp[K];
  int8_t c = 1;
  gcl_field m;
  if ((s = gcl_context_create(0, &f->ctx)) || (s = gcl_mem_alloc(f->ctx, 1 << 16, &f->buf[0])) ||
      (s = gcl_mem_alloc(f->ctx, 1 << 16, &f->buf[1])) ||
      (s = gcl_module_load_data(f->ctx, fake_ptx, sizeof fake_ptx, &f->mod)) ||
      (s = gcl_module_find_kernel(f->mod, "k", FAKE_K_SIGNATURE, &f->k)) ||
      (s = gcl_args_create(gcl_kernel_layout(f->k), &f->args)))
    return s;
  for (int i = 0; i < K; i++) {
    fake_tensor_init(&f->x[i], f->buf[0] + 1024 * (uint64_t)i, 16, 64);
    tp[i] = &f->x[i].t;
  }
  uint64_t a[K];
  for (int i = 0; i < K; i++) a[i] = f->buf[1] + 1024 * (uint64_t)i;
  gcl_launch_config cfg = {.grid = {1}, .block = {32}};
  if ((s = gcl_layout_param_field(gcl_kernel_layout(f->k), 0, &m)) ||
      (s = gcl_args_set_tensormaps(f->args, f->ctx, &m, 1, tp, &o, 1, 0)) ||
      (s = gcl_args_set(f->args, 1, &c, 1)) || (s = gcl_args_set_ptr(f->args, 2, f->buf[1])) ||
      (s = gcl_tensormap_table_create(f->ctx, K, &f->t)) ||
      (s = gcl_tensormap_table_set(f->t, 0, K, tp, &o, 1, 0)) ||
      (s = gcl_stream_create(f->ctx, 0, &f->s)))
    return s;
  cfg.stream = gcl_stream_handle(f->s);
  if ((s = gcl_graph_capture_begin(f->s)) || (s = gcl_graph_capture_table(f->s, f->t)) ||
      (s = gcl_launch(f->k, &cfg, f->args)) || (s = gcl_graph_capture_end(f->s, &f->g)))
    return s;
  for (int round = 0; round < 4; round++)
    if ((s = gcl_tensormap_table_repoint(f->t, 0, K, a)) || (s = gcl_graph_set_table(f->g, f->t)) ||
        (s = gcl_graph_launch(f->g, f->s)))
      return s;
  return gcl_stream_synchronize(f->s);
}

Test(graph_table, sweep_single_transient_failure) {
  static fixture f;
  cr_assert_eq(gcl_driver_init(), GCL_OK);
  /* A first session outside the count: the device's one-time re-point proof (its driver calls
   * fall back to the driver path when one fails, by design) is behind us. */
  cr_assert_eq(table_session(&f), GCL_OK, "%s", gcl_last_error());
  release_fixture(&f);
  long before = fakecuda_calls("*");
  cr_assert_eq(table_session(&f), GCL_OK, "%s", gcl_last_error());
  long calls = fakecuda_calls("*") - before;
  release_fixture(&f);
  assert_nothing_live();
  int failed = 0;
  for (long n = 0; n < calls; n++) {
    fakecuda_fail_once("*", 999, (int)n);
    gcl_status s = table_session(&f);
    fakecuda_fail("*", 0, 0);
    if (s != GCL_OK) {
      failed++;
      cr_assert_eq(s, GCL_ERROR_DRIVER, "call %ld: %s: %s", n, gcl_status_name(s), gcl_last_error());
      assert_msg_has("CUDA_ERROR_UNKNOWN");
    }
    release_fixture(&f);
    assert_nothing_live();
  }
  cr_assert_gt(failed, calls / 2, "most single failures must surface: %d of %ld", failed, calls);
}
