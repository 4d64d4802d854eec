/* Programmatic dependent launch (PDL) inside graphs, against libfakecuda.so (docs/graphs.md). A
 * PDL launch after a kernel is captured as an edge that carries data (type PROGRAMMATIC); the
 * old cuGraphGetEdges and cuGraphGetEdges_v2 without room for the data refuse such a graph with
 * CUDA_ERROR_LOSSY_QUERY (driver 580 on the H100 did, issue 55), so gcl_graph_capture_end must
 * ask with the data. The pair is captured with a tensor-map table, instantiated, updated with
 * new args and a re-pointed table, and replayed with its programmatic edge intact; a driver
 * older than 12.3 (no edge data, the old call) works as before. */
#include "fakecuda_test.h"

#include <stdio.h>

TestSuite(graph_pdl, .init = fake_use);

#define K 4
#define CHECK(call) cr_assert_eq((call), GCL_OK, "%s: %s", #call, gcl_last_error())

typedef struct pair {
  gcl_context *ctx;
  gcl_module *mod;
  gcl_kernel *k;
  gcl_args *a[2];            /* the producer's and the dependent's */
  gcl_stream *s;
  gcl_tensormap_table *t;
  uint64_t buf[2];
  fake_tensor x[K];
  gcl_graph *g;
} pair;

/* args a of k: the map over buf[b], c, out = buf[1 - b]. */
static void set_args(pair *p, gcl_args *a, int b, int8_t c) {
  gcl_tensormap_options o = fake_tmap_options();
  fake_tensor x;
  fake_tensor_init(&x, p->buf[b], 16, 64);
  const DLTensor *tp = &x.t;
  gcl_field m;
  CHECK(gcl_layout_param_field(gcl_kernel_layout(p->k), 0, &m));
  CHECK(gcl_args_set_tensormaps(a, p->ctx, &m, 1, &tp, &o, 1, 0));
  CHECK(gcl_args_set(a, 1, &c, 1));
  CHECK(gcl_args_set_ptr(a, 2, p->buf[1 - b]));
}

static void open_pair(pair *p) {
  memset(p, 0, sizeof *p);
  CHECK(gcl_context_create(0, &p->ctx));
  CHECK(gcl_mem_alloc(p->ctx, 1 << 16, &p->buf[0]));
  CHECK(gcl_mem_alloc(p->ctx, 1 << 16, &p->buf[1]));
  CHECK(gcl_module_load_data(p->ctx, fake_ptx, sizeof fake_ptx, &p->mod));
  CHECK(gcl_module_find_kernel(p->mod, "k", FAKE_K_SIGNATURE, &p->k));
  for (int i = 0; i < 2; i++) {
    CHECK(gcl_args_create(gcl_kernel_layout(p->k), &p->a[i]));
    set_args(p, p->a[i], 0, (int8_t)(i + 1));
  }
  gcl_tensormap_options o = fake_tmap_options();
  const DLTensor *tp[K];
  for (int i = 0; i < K; i++) {
    fake_tensor_init(&p->x[i], p->buf[0] + 1024 * (uint64_t)i, 16, 64);
    tp[i] = &p->x[i].t;
  }
  CHECK(gcl_tensormap_table_create(p->ctx, K, &p->t));
  CHECK(gcl_tensormap_table_set(p->t, 0, K, tp, &o, 1, 0));
  CHECK(gcl_stream_create(p->ctx, 0, &p->s));
}

/* Captures the table, k, then k again with PDL (the fake's PTX does not tell whether k waits). */
static gcl_status capture_pair(pair *p) {
  gcl_launch_config prod = {.grid = {4}, .block = {64}, .stream = gcl_stream_handle(p->s)};
  gcl_launch_config dep = prod;
  dep.programmatic_dependent_launch = true, dep.flags = GCL_LAUNCH_PDL_UNCHECKED;
  CHECK(gcl_graph_capture_begin(p->s));
  CHECK(gcl_graph_capture_table(p->s, p->t));
  CHECK(gcl_launch(p->k, &prod, p->a[0]));
  CHECK(gcl_launch(p->k, &dep, p->a[1]));
  return gcl_graph_capture_end(p->s, &p->g);
}

static void close_pair(pair *p) {
  gcl_graph_destroy(p->g);
  gcl_stream_destroy(p->s);
  gcl_tensormap_table_destroy(p->t);
  for (int i = 0; i < 2; i++) gcl_args_destroy(p->a[i]);
  gcl_module_destroy(p->mod);
  gcl_mem_free(p->ctx, p->buf[0]);
  gcl_mem_free(p->ctx, p->buf[1]);
  gcl_context_destroy(p->ctx);
  assert_nothing_live();
}

/* Replays g once and checks the two launches: the dependent one last, with PDL, carrying the
 * bytes of args a[1], and `edges` programmatic edges in the exec; the table uploaded. */
static void replay_and_check(pair *p, long edges, int round) {
  long before = fakecuda_launch_count();
  CHECK(gcl_graph_launch(p->g, p->s));
  CHECK(gcl_stream_synchronize(p->s));
  cr_assert_eq(fakecuda_launch_count(), before + 2, "round %d: two kernel nodes replayed", round);
  cr_assert_eq(fakecuda_programmatic_edges(), edges, "round %d: programmatic edges in the exec",
               round);
  fakecuda_launch last;
  cr_assert_eq(fakecuda_last_launch(&last), 0);
  cr_assert_eq(last.programmatic, 1, "round %d: the dependent node keeps its PDL launch", round);
  const void *b;
  size_t n;
  CHECK(gcl_args_buffer(p->a[1], &b, &n));
  cr_assert(!memcmp(last.params, b, n), "round %d: the dependent node has args a[1]", round);
  unsigned char dev[K * 128];
  CHECK(gcl_mem_download(p->ctx, dev, gcl_tensormap_table_address(p->t), K * 128));
  cr_assert(!memcmp(dev, gcl_tensormap_table_map(p->t, 0), K * 128),
                    "round %d: the replay uploaded the table as last set", round);
}

Test(graph_pdl, pair_captured_updated_and_replayed) {
  pair p;
  open_pair(&p);
  cr_assert_eq(capture_pair(&p), GCL_OK, "a captured PDL pair: %s", gcl_last_error());
  size_t n = 0;
  CHECK(gcl_graph_kernel_count(p.g, &n));
  cr_assert_eq(n, 2);
  replay_and_check(&p, 1, 0);
  for (int round = 1; round <= 6; round++) {
    int b = round % 2;
    set_args(&p, p.a[0], b, 10);
    set_args(&p, p.a[1], b, (int8_t)(20 + round));
    uint64_t addr[K];
    for (int i = 0; i < K; i++) addr[i] = p.buf[b] + 1024 * (uint64_t)i;
    CHECK(gcl_tensormap_table_repoint(p.t, 0, K, addr));
    CHECK(gcl_graph_set_args(p.g, 0, p.k, p.a[0]));
    CHECK(gcl_graph_set_args(p.g, 1, p.k, p.a[1]));
    CHECK(gcl_graph_set_table(p.g, p.t));
    replay_and_check(&p, 1, round);
  }
  cr_assert_eq(fakecuda_failed_calls("cuGraphGetEdges"), 0, "no lossy query was tried");
  close_pair(&p);
}

/* A driver that refuses even the count of a graph with a PDL edge as lossy: the edges are
 * listed into arrays sized from the node count instead. */
Test(graph_pdl, a_lossy_count_is_worked_around) {
  fakecuda_set_lossy_edge_count(1);
  pair p;
  open_pair(&p);
  cr_assert_eq(capture_pair(&p), GCL_OK, "%s", gcl_last_error());
  cr_assert_gt(fakecuda_failed_calls("cuGraphGetEdges"), 0, "the count was refused");
  size_t n = 0;
  CHECK(gcl_graph_kernel_count(p.g, &n));
  cr_assert_eq(n, 2);
  replay_and_check(&p, 1, 0);
  fakecuda_set_lossy_edge_count(0);
  close_pair(&p);
}

/* A driver before CUDA 12.3 has no cuGraphGetEdges_v2 and no edge data: the old call orders the
 * nodes. (cuGetProcAddress_v2 of such a driver answers a request for ABI 12030 with the old
 * function: gclaunch must not call it with the new signature.) */
Test(graph_pdl, a_driver_before_12_3_uses_the_old_call) {
  fakecuda_set_driver_version(12020);
  pair p;
  open_pair(&p);
  cr_assert_eq(capture_pair(&p), GCL_OK, "%s", gcl_last_error());
  cr_assert_gt(fakecuda_calls("cuGraphGetEdges"), 0, "the old call ordered the nodes");
  replay_and_check(&p, 0, 0);
  close_pair(&p);
}

/* The fake itself: the old call and the new one without data refuse a graph with a PDL edge,
 * as driver 580 does (so the test above can fail). Driven through the fake's own entry points. */
Test(graph_pdl, the_fake_refuses_a_lossy_query) {
  pair p;
  open_pair(&p);
  gcl_launch_config prod = {.grid = {4}, .block = {64}, .stream = gcl_stream_handle(p.s)};
  gcl_launch_config dep = prod;
  dep.programmatic_dependent_launch = true, dep.flags = GCL_LAUNCH_PDL_UNCHECKED;
  CHECK(gcl_graph_capture_begin(p.s));
  CHECK(gcl_launch(p.k, &prod, p.a[0]));
  CHECK(gcl_launch(p.k, &dep, p.a[1]));
  extern int cuGetProcAddress_v2(const char *, void **, int, unsigned long long, int *);
  void *v1 = NULL, *v2 = NULL, *end = NULL;
  int q;
  cr_assert_eq(cuGetProcAddress_v2("cuGraphGetEdges", &v1, 10000, 0, &q), 0);
  cr_assert_eq(cuGetProcAddress_v2("cuGraphGetEdges", &v2, 12030, 0, &q), 0);
  cr_assert_eq(cuGetProcAddress_v2("cuStreamEndCapture", &end, 10000, 0, &q), 0);
  cr_assert(v1 && v2 && end && v1 != v2);
  void *graph = NULL;
  cr_assert_eq(((int (*)(void *, void **))end)(gcl_stream_handle(p.s), &graph), 0);
  void *from[2], *to[2];
  unsigned char data[2][8];
  size_t e = 2;
  cr_assert_eq(((int (*)(void *, void **, void **, size_t *))v1)(graph, from, to, &e), 402);
  cr_assert_eq(((int (*)(void *, void **, void **, void *, size_t *))v2)(graph, from, to, NULL, &e), 402);
  cr_assert_eq(((int (*)(void *, void **, void **, void *, size_t *))v2)(graph, from, to, data, &e), 0);
  cr_assert_eq(e, 1);
  cr_assert_eq(data[0][0], 1, "from_port PROGRAMMATIC");
  cr_assert_eq(data[0][2], 1, "type PROGRAMMATIC");
  void *destroy = NULL;
  cr_assert_eq(cuGetProcAddress_v2("cuGraphDestroy", &destroy, 10000, 0, &q), 0);
  cr_assert_eq(((int (*)(void *))destroy)(graph), 0);
  /* The stream's capture ended behind gclaunch's back: its end reports the driver's refusal. */
  cr_assert_neq(gcl_graph_capture_end(p.s, &p.g), GCL_OK);
  assert_msg_has("cuStreamEndCapture");
  close_pair(&p);
}
