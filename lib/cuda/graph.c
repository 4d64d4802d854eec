/* CUDA graphs: capture gclaunch launches on a gcl_stream into an instantiated graph, replace one
 * kernel node's parameters from a gcl_args (any size up to the 32,764-byte limit, grid-constant
 * aggregates included), replay. gcl_launch itself needs nothing special to be captured: it makes
 * no synchronous or allocating driver call.
 *
 * Tensor-map tables (gcl_graph_capture_table): the capture only notes the table; at the end of
 * the capture the graph gets, before all captured work, one copy node per table that copies all
 * K maps from a pinned copy the graph owns. gcl_graph_set_table snapshots the table's host maps
 * into the next of TABLE_SLOTS pinned copies and points the exec's copy node at it, so a replay
 * sees the maps as they were at the last gcl_graph_set_table before its gcl_graph_launch, like a
 * kernel node sees the args of the last gcl_graph_set_args. A copy is written again only after
 * the replays that read it finished (an event recorded after each launch on the slot in use). */
#include "cuda_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TABLE_SLOTS 3 /* pinned copies a table: the host may be two launches ahead */

typedef struct graph_table {
  gcl_tensormap_table *t;           /* borrowed */
  CUgraphNode node;                 /* its copy node, a root of the graph */
  size_t bytes;                     /* 128 x the table's K */
  void *slot[TABLE_SLOTS];          /* pinned copies of the table's maps (gcl_host_alloc) */
  CUevent done[TABLE_SLOTS];        /* recorded after each launch that read the slot */
  bool recorded[TABLE_SLOTS];
  unsigned current;                 /* the slot the exec's copy node reads */
} graph_table;

struct gcl_graph {
  uint32_t magic;
  gcl_context *ctx;          /* borrowed: the capture stream's */
  CUgraph graph;             /* kept: exec node updates name the graph's nodes */
  CUgraphExec exec;
  size_t kernel_count;
  CUgraphNode *kernels;      /* kernel nodes in capture order (owned) */
  size_t table_count;
  graph_table *tables;       /* gcl_graph_capture_table's, in that order (owned) */
};

/* Checks that node runs kernel k; `what` names the node in messages. */
static gcl_status check_node(const gcl_kernel *k, CUgraphNode node, const char *what,
                             CUDA_KERNEL_NODE_PARAMS *p) {
  if (gcl__cu.cuGraphNodeGetType) {
    CUgraphNodeType type;
    CUresult rc = gcl__cu.cuGraphNodeGetType(node, &type);
    if (rc != CUDA_SUCCESS) return gcl__cu_fail(rc, "cuGraphNodeGetType");
    if (type != CU_GRAPH_NODE_TYPE_KERNEL)
      return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: expected a kernel node, got node type %d", what, (int)type);
  }
  CUresult rc = gcl__cu.cuGraphKernelNodeGetParams(node, p);
  if (rc != CUDA_SUCCESS) return gcl__cu_fail(rc, "cuGraphKernelNodeGetParams");
  if (p->func != k->fn && !(p->func == NULL && p->kern == k->kern))
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: it runs another kernel than '%s' (pass the "
                     "kernel the node was captured from, and args of its layout)", what, k->name);
  return GCL_OK;
}

/* Checks args and node, then hands the packed parameters to the exec node. */
static gcl_status set_node_args(CUgraphExec exec, CUgraphNode node, const char *what,
                                gcl_kernel *kernel, const gcl_args *args) {
  CUDA_KERNEL_NODE_PARAMS p;
  gcl_status s;
  if ((s = gcl__kernel_stale(kernel, "gcl_graph_set_args")) || (s = gcl__launch_check_args(kernel, args)) || (s = gcl__context_bind(kernel->ctx)) ||
      (s = check_node(kernel, node, what, &p)))
    return s;
  size_t size = kernel->param_bytes;
  void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, (void *)gcl__args_data(args),
                   CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
  bool none = kernel->param_count == 0;
  p.kernelParams = none || kernel->use_extra ? NULL : gcl__args_param_pointers(args);
  p.extra = none || !kernel->use_extra ? NULL : extra;
  CUresult rc = gcl__cu.cuGraphExecKernelNodeSetParams(exec, node, &p);
  if (rc != CUDA_SUCCESS) return gcl__cu_fail(rc, "cuGraphExecKernelNodeSetParams(kernel '%s')", kernel->name);
  return GCL_OK;
}

/* --- capture ---------------------------------------------------------------------------------- */

gcl_status gcl_graph_capture_begin(gcl_stream *s) {
  gcl_status st = gcl__stream_check(s, NULL, "s", false);
  if (st != GCL_OK) return st;
  if (s->capturing)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "s: already capturing (gcl_graph_capture_begin "
                     "twice without gcl_graph_capture_end)");
  /* Thread-local mode: unsafe calls (synchronizing, allocating) are refused on this thread only. */
  CUresult rc = gcl__cu.cuStreamBeginCapture(s->stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
  if (rc != CUDA_SUCCESS) return gcl__cu_fail(rc, "cuStreamBeginCapture(device %d)", s->ctx->device);
  s->capturing = true;
  gcl__capture_note(s);
  return GCL_OK;
}

/* n nodes of g listed by cuGraphGetNodes into *nodes (owned by the caller). */
static gcl_status graph_nodes(CUgraph g, CUgraphNode **nodes, size_t *n) {
  size_t count = 0;
  CUresult rc = gcl__cu.cuGraphGetNodes(g, NULL, &count);
  CUgraphNode *list = rc == CUDA_SUCCESS ? gcl__calloc(count + 1, sizeof *list) : NULL;
  if (rc == CUDA_SUCCESS && !list) return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "graph: %zu nodes", count);
  if (rc == CUDA_SUCCESS) rc = gcl__cu.cuGraphGetNodes(g, list, &count);
  if (rc != CUDA_SUCCESS) {
    gcl__free(list);
    return gcl__cu_fail(rc, "cuGraphGetNodes");
  }
  *nodes = list, *n = count;
  return GCL_OK;
}

static size_t index_of(CUgraphNode *nodes, size_t n, CUgraphNode x) {
  for (size_t i = 0; i < n; i++)
    if (nodes[i] == x) return i;
  return n;
}

/* Lists up to cap edges of g into fresh arrays *f, *t (the caller's); *n: how many the driver
 * reported. cuGraphGetEdges_v2 (CUDA 12.3+) is given room for each edge's data: a captured
 * programmatic-dependent-launch pair has an edge of type PROGRAMMATIC, and without that room the
 * driver refuses with CUDA_ERROR_LOSSY_QUERY (driver 580). The data is only read, never written
 * back: gclaunch never rebuilds or clones the captured graph (the table nodes
 * gcl_graph_capture_table adds get default edges), so every edge keeps the type and ports the
 * capture gave it. An older driver has no edge data and the old call. */
static gcl_status list_edges(CUgraph g, bool v2, size_t cap, CUgraphNode **f, CUgraphNode **t,
                             size_t *n) {
  *f = gcl__calloc(cap + 1, sizeof **f), *t = gcl__calloc(cap + 1, sizeof **t);
  CUgraphEdgeData *data = v2 ? gcl__calloc(cap + 1, sizeof *data) : NULL;
  gcl_status s = !*f || !*t || (v2 && !data) ? gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "graph: %zu edges", cap) : GCL_OK;
  CUresult rc = CUDA_SUCCESS;
  *n = cap;
  /* No edges (one node): the driver refuses arrays with a count of 0 (INVALID_VALUE, driver 580). */
  if (s == GCL_OK && cap)
    rc = v2 ? gcl__cu.cuGraphGetEdges(g, *f, *t, data, n) : gcl__cu.cuGraphGetEdges_v1(g, *f, *t, n);
  if (s == GCL_OK && rc != CUDA_SUCCESS)
    s = gcl__cu_fail(rc, "cuGraphGetEdges%s(room for %zu edges)", v2 ? "_v2" : "", cap);
  gcl__free(data);
  if (s != GCL_OK) gcl__free(*f), gcl__free(*t), *f = *t = NULL;
  return s;
}

/* g's edges (nodes: how many g has) into from/to (the caller's), *e of them. The count comes
 * from a query without arrays (lossless by cuda.h's words); should a driver refuse that as lossy
 * too, the edges are listed into arrays sized from the node count, grown until they fit. */
static gcl_status graph_edges(CUgraph g, size_t nodes, CUgraphNode **from, CUgraphNode **to,
                              size_t *e) {
  bool v2 = gcl__cu.cuGraphGetEdges != NULL;
  size_t n = 0;
  CUresult rc = v2 ? gcl__cu.cuGraphGetEdges(g, NULL, NULL, NULL, &n) : gcl__cu.cuGraphGetEdges_v1(g, NULL, NULL, &n);
  bool counted = rc == CUDA_SUCCESS;
  if (!counted && !(v2 && rc == CUDA_ERROR_LOSSY_QUERY))
    return gcl__cu_fail(rc, "cuGraphGetEdges%s (count)", v2 ? "_v2" : "");
  size_t cap = counted ? n : 2 * nodes + 8;
  gcl_status s;
  while ((s = list_edges(g, v2, cap, from, to, &n)) == GCL_OK && !counted && n >= cap) {
    gcl__free(*from), gcl__free(*to), *from = *to = NULL;
    if (cap > ((size_t)1 << 40) / 4)
      return gcl__fail(GCL_ERROR_DRIVER, "cuGraphGetEdges_v2: more than %zu edges", cap);
    cap *= 4;
  }
  if (s == GCL_OK) *e = n < cap ? n : cap;
  return s;
}

/* Orders nodes topologically (ties in listing order): the capture order of one stream, whose
 * nodes form a chain, whatever order cuGraphGetNodes lists them in. A driver without either
 * cuGraphGetEdges keeps the listing order. */
static gcl_status capture_order(CUgraph g, CUgraphNode *nodes, size_t n, CUgraphNode *out) {
  if (!gcl__cu.cuGraphGetEdges && !gcl__cu.cuGraphGetEdges_v1) {
    for (size_t i = 0; i < n; i++) out[i] = nodes[i];
    return GCL_OK;
  }
  CUgraphNode *from = NULL, *to = NULL;
  size_t e = 0;
  gcl_status s = graph_edges(g, n, &from, &to, &e);
  if (s != GCL_OK) return s;
  size_t *indeg = gcl__calloc(n + 1, sizeof *indeg);
  if (!indeg) s = gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "graph: %zu nodes", n);
  for (size_t i = 0; s == GCL_OK && i < e; i++) indeg[index_of(nodes, n, to[i])]++;
  for (size_t done = 0; s == GCL_OK && done < n; done++) {
    size_t i = 0;
    while (i < n && (nodes[i] == NULL || indeg[i] != 0)) i++;
    if (i == n) { s = gcl__fail(GCL_ERROR_DRIVER, "graph: its edges form a cycle"); break; }
    out[done] = nodes[i], nodes[i] = NULL;
    for (size_t j = 0; j < e; j++)
      if (from[j] == out[done]) indeg[index_of(nodes, n, to[j])]--;
  }
  gcl__free(from), gcl__free(to), gcl__free(indeg);
  return s;
}

/* g's kernel nodes in capture order into gr->kernels. */
static gcl_status find_kernels(gcl_graph *gr) {
  CUgraphNode *nodes = NULL, *ordered = NULL;
  size_t n = 0;
  gcl_status s = graph_nodes(gr->graph, &nodes, &n);
  if (s != GCL_OK) return s;
  ordered = gcl__calloc(n + 1, sizeof *ordered);
  s = ordered ? capture_order(gr->graph, nodes, n, ordered)
              : gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "graph: %zu nodes", n);
  for (size_t i = 0; s == GCL_OK && i < n; i++) {
    CUgraphNodeType type = CU_GRAPH_NODE_TYPE_KERNEL;
    CUresult rc = gcl__cu.cuGraphNodeGetType ? gcl__cu.cuGraphNodeGetType(ordered[i], &type) : CUDA_SUCCESS;
    if (rc != CUDA_SUCCESS) s = gcl__cu_fail(rc, "cuGraphNodeGetType");
    else if (type == CU_GRAPH_NODE_TYPE_KERNEL) ordered[gr->kernel_count++] = ordered[i];
  }
  gcl__free(nodes);
  if (s != GCL_OK) gcl__free(ordered);
  else gr->kernels = ordered;
  return s;
}

/* Waits for the replays that read the table's copies, then frees them (best effort: a fault
 * leaves the memory to the driver, as gcl_tensormap_table_destroy does). */
static void table_free(graph_table *t) {
  for (unsigned i = 0; i < TABLE_SLOTS; i++) {
    if (t->recorded[i]) (void)gcl__cu.cuEventSynchronize(t->done[i]);
    if (t->done[i]) gcl__cu.cuEventDestroy(t->done[i]);
    if (t->slot[i]) gcl__cu.cuMemFreeHost(t->slot[i]);
  }
}

static void graph_free(gcl_graph *g) {
  for (size_t i = 0; i < g->table_count; i++) table_free(&g->tables[i]);
  if (g->exec) gcl__cu.cuGraphExecDestroy(g->exec);
  if (g->graph) gcl__cu.cuGraphDestroy(g->graph);
  gcl__free(g->kernels);
  gcl__free(g->tables);
  g->magic = 0;
  gcl__free(g);
}

static void graph_free_deferred(void *g) { graph_free(g); }

/* A 1-D copy of bytes from pinned host memory to device memory, as a copy node takes it. */
static CUDA_MEMCPY3D table_copy(const void *host, uint64_t device, size_t bytes) {
  CUDA_MEMCPY3D p;
  memset(&p, 0, sizeof p);
  p.srcMemoryType = CU_MEMORYTYPE_HOST, p.srcHost = host, p.srcPitch = bytes, p.srcHeight = 1;
  p.dstMemoryType = CU_MEMORYTYPE_DEVICE, p.dstDevice = (CUdeviceptr)device, p.dstPitch = bytes;
  p.dstHeight = 1, p.WidthInBytes = bytes, p.Height = 1, p.Depth = 1;
  return p;
}

/* Pinned copies and events of one table, the first copy filled from the table's host maps. */
static gcl_status table_slots(gcl_context *ctx, graph_table *t) {
  t->bytes = gcl_tensormap_table_count(t->t) * GCL_TENSORMAP_BYTES;
  for (unsigned i = 0; i < TABLE_SLOTS; i++) {
    gcl_status s = gcl_host_alloc(ctx, t->bytes, &t->slot[i]);
    if (s != GCL_OK) return s;
    CUresult rc = gcl__cu.cuEventCreate(&t->done[i], CU_EVENT_DISABLE_TIMING);
    if (rc != CUDA_SUCCESS) return t->done[i] = NULL, gcl__cu_fail(rc, "cuEventCreate");
  }
  memcpy(t->slot[0], gcl_tensormap_table_map(t->t, 0), t->bytes);
  return GCL_OK;
}

/* Adds t's copy node before every root of gr's graph: it runs first in every replay. */
static gcl_status table_node(gcl_graph *gr, graph_table *t) {
  size_t n = 0;
  CUresult rc = gcl__cu.cuGraphGetRootNodes(gr->graph, NULL, &n);
  CUgraphNode *roots = rc == CUDA_SUCCESS ? gcl__calloc(n + 1, sizeof *roots) : NULL;
  CUgraphNode *from = roots ? gcl__calloc(n + 1, sizeof *from) : NULL;
  gcl_status s = rc != CUDA_SUCCESS ? gcl__cu_fail(rc, "cuGraphGetRootNodes")
                 : !from ? gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "graph: %zu root nodes", n) : GCL_OK;
  if (s == GCL_OK && (rc = gcl__cu.cuGraphGetRootNodes(gr->graph, roots, &n)) != CUDA_SUCCESS)
    s = gcl__cu_fail(rc, "cuGraphGetRootNodes");
  CUDA_MEMCPY3D p = table_copy(t->slot[0], gcl_tensormap_table_address(t->t), t->bytes);
  if (s == GCL_OK && (rc = gcl__cu.cuGraphAddMemcpyNode(&t->node, gr->graph, NULL, 0, &p,
                                                        gr->ctx->ctx)) != CUDA_SUCCESS)
    s = gcl__cu_fail(rc, "cuGraphAddMemcpyNode(a table of %zu maps)", t->bytes / GCL_TENSORMAP_BYTES);
  for (size_t i = 0; s == GCL_OK && i < n; i++) from[i] = t->node;
  if (s == GCL_OK && n && (rc = gcl__cu.cuGraphAddDependencies(gr->graph, from, roots, n)) != CUDA_SUCCESS)
    s = gcl__cu_fail(rc, "cuGraphAddDependencies");
  gcl__free(roots), gcl__free(from);
  return s;
}

/* The tables noted during s's capture, each with its copies and copy node in gr's graph. */
static gcl_status add_tables(gcl_graph *gr, gcl_stream *s) {
  if (!s->table_count) return GCL_OK;
  gr->tables = gcl__calloc(s->table_count, sizeof *gr->tables);
  if (!gr->tables) return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "graph: %zu tables", s->table_count);
  gcl_status st = GCL_OK;
  for (size_t i = 0; st == GCL_OK && i < s->table_count; i++) {
    graph_table *t = &gr->tables[gr->table_count++];
    t->t = s->tables[i];
    if ((st = table_slots(gr->ctx, t)) == GCL_OK) st = table_node(gr, t);
  }
  return st;
}

/* Instantiates the captured graph g; takes it (destroyed with gr on failure). */
static gcl_status build(gcl_stream *s, CUgraph g, gcl_graph **out) {
  gcl_graph *gr = gcl__calloc(1, sizeof *gr);
  if (!gr) {
    gcl__cu.cuGraphDestroy(g);
    return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "gcl_graph_capture_end: out of memory");
  }
  gr->magic = GCL__GRAPH_MAGIC, gr->ctx = s->ctx, gr->graph = g;
  gcl_status st = find_kernels(gr);
  if (st == GCL_OK && gr->kernel_count == 0)
    st = gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "s: the capture launched no kernel (nothing was "
                   "launched on the stream between gcl_graph_capture_begin and _end)");
  if (st == GCL_OK) st = add_tables(gr, s);
  CUresult rc = st == GCL_OK ? gcl__cu.cuGraphInstantiateWithFlags(&gr->exec, g, 0) : CUDA_SUCCESS;
  if (rc != CUDA_SUCCESS) st = gcl__cu_fail(rc, "cuGraphInstantiateWithFlags(%zu kernel nodes)", gr->kernel_count);
  if (st != GCL_OK) {
    gr->exec = NULL;
    graph_free(gr);
    return st;
  }
  *out = gr;
  return GCL_OK;
}

/* Forgets the tables noted during s's capture (the graph, if made, has its own list). */
static void drop_tables(gcl_stream *s) {
  gcl__free(s->tables);
  s->tables = NULL, s->table_count = 0;
}

gcl_status gcl_graph_capture_end(gcl_stream *s, gcl_graph **out) {
  gcl_status st = gcl__stream_check(s, NULL, "s", false);
  if (st != GCL_OK) return st;
  if (!out) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "out: expected a pointer, got NULL");
  if (!s->capturing)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "s: no capture in progress (call "
                     "gcl_graph_capture_begin first)");
  CUgraph g = NULL;
  CUresult rc = gcl__cu.cuStreamEndCapture(s->stream, &g);
  s->capturing = false; /* ended either way: the driver leaves capture mode on failure too */
  gcl__capture_forget(s);
  gcl__deferred_drain(s->ctx); /* what this thread released while it captured */
  if (rc != CUDA_SUCCESS) {
    if (g) gcl__cu.cuGraphDestroy(g);
    drop_tables(s);
    return gcl__cu_fail(rc, "cuStreamEndCapture(device %d)%s", s->ctx->device,
                        rc == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
                            ? " (an operation not allowed during capture ran on the stream)" : "");
  }
  st = build(s, g, out);
  drop_tables(s);
  return st;
}

gcl_status gcl_graph_capture_table(gcl_stream *s, gcl_tensormap_table *t) {
  gcl_status st = gcl__stream_check(s, NULL, "s", false);
  if (st != GCL_OK) return st;
  if (!t) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "t: expected a table, got NULL");
  if (!s->capturing)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "s: no capture in progress (call "
                     "gcl_graph_capture_begin first)");
  for (size_t i = 0; i < s->table_count; i++)
    if (s->tables[i] == t)
      return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "t: already captured into this graph (table "
                       "%zu of the capture)", i);
  gcl_tensormap_table **grown = gcl__realloc(s->tables, (s->table_count + 1) * sizeof *grown);
  if (!grown) return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "gcl_graph_capture_table: out of memory");
  s->tables = grown;
  s->tables[s->table_count++] = t;
  return GCL_OK;
}

static gcl_status graph_check(const gcl_graph *g) {
  if (!g) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "g: expected a graph, got NULL");
  if (g->magic != GCL__GRAPH_MAGIC)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT,
                     "g: not a live graph (destroyed, or never made by gcl_graph_capture_end)");
  return GCL_OK;
}

gcl_status gcl_graph_kernel_count(const gcl_graph *g, size_t *count) {
  gcl_status s = graph_check(g);
  if (s != GCL_OK) return s;
  if (!count) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "count: expected a pointer, got NULL");
  *count = g->kernel_count;
  return GCL_OK;
}

gcl_status gcl_graph_set_args(gcl_graph *g, size_t kernel_node, gcl_kernel *k, const gcl_args *args) {
  gcl_status s = graph_check(g);
  if (s != GCL_OK) return s;
  if (kernel_node >= g->kernel_count)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "kernel_node: expected 0 ... %zu (the graph has "
                     "%zu kernel nodes, in capture order), got %zu", g->kernel_count - 1,
                     g->kernel_count, kernel_node);
  if (!k) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "k: expected a kernel, got NULL");
  if (!args) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_graph_set_args: args is NULL");
  if ((s = gcl__kernel_stale(k, "gcl_graph_set_args")) != GCL_OK) return s;
  if (k->unattached) return gcl__kernel_unattached(k, "gcl_graph_set_args");
  if (k->ctx != g->ctx)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "k: kernel '%s' runs on device %d, the graph on "
                     "device %d", k->name, k->ctx->device, g->ctx->device);
  char what[64];
  snprintf(what, sizeof what, "kernel_node %zu", kernel_node);
  return set_node_args(g->exec, g->kernels[kernel_node], what, k, args);
}

gcl_status gcl_graph_set_table(gcl_graph *g, gcl_tensormap_table *t) {
  gcl_status s = graph_check(g);
  if (s != GCL_OK) return s;
  if (!t) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "t: expected a table, got NULL");
  graph_table *gt = NULL;
  for (size_t i = 0; i < g->table_count && !gt; i++)
    if (g->tables[i].t == t) gt = &g->tables[i];
  if (!gt)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "t: not a table of this graph (the graph has %zu; "
                     "call gcl_graph_capture_table(s, t) during the capture)", g->table_count);
  if ((s = gcl__context_bind(g->ctx)) != GCL_OK) return s;
  unsigned next = (gt->current + 1) % TABLE_SLOTS;
  CUresult rc = gt->recorded[next] ? gcl__cu.cuEventSynchronize(gt->done[next]) : CUDA_SUCCESS;
  if (rc != CUDA_SUCCESS) return gcl__cu_fail(rc, "cuEventSynchronize(a replay that read the table)");
  gt->recorded[next] = false;
  memcpy(gt->slot[next], gcl_tensormap_table_map(t, 0), gt->bytes);
  CUDA_MEMCPY3D p = table_copy(gt->slot[next], gcl_tensormap_table_address(t), gt->bytes);
  rc = gcl__cu.cuGraphExecMemcpyNodeSetParams(g->exec, gt->node, &p, g->ctx->ctx);
  if (rc != CUDA_SUCCESS) return gcl__cu_fail(rc, "cuGraphExecMemcpyNodeSetParams(a table of %zu maps)", gt->bytes / GCL_TENSORMAP_BYTES);
  gt->current = next;
  return GCL_OK;
}

/* After a launch on stream: each table's slot in use is read until this point of the stream. A
 * failed record waits for the stream instead, so the slot is free when it is next written. */
static gcl_status mark_tables(gcl_graph *g, CUstream stream) {
  for (size_t i = 0; i < g->table_count; i++) {
    graph_table *t = &g->tables[i];
    CUresult rc = gcl__cu.cuEventRecord(t->done[t->current], stream);
    t->recorded[t->current] = rc == CUDA_SUCCESS;
    if (rc != CUDA_SUCCESS) {
      (void)gcl__cu.cuStreamSynchronize(stream);
      return gcl__cu_fail(rc, "cuEventRecord(after the replay, for table %zu)", i);
    }
  }
  return GCL_OK;
}

gcl_status gcl_graph_launch(gcl_graph *g, gcl_stream *s) {
  gcl_status st = graph_check(g);
  if (st == GCL_OK) st = gcl__stream_check(s, g->ctx, "s", true);
  if (st != GCL_OK) return st;
  CUresult rc = gcl__cu.cuGraphLaunch(g->exec, gcl__cu_stream(s));
  if (rc != CUDA_SUCCESS)
    return gcl__cu_fail(rc, "cuGraphLaunch(%zu kernel nodes, device %d)", g->kernel_count, g->ctx->device);
  return g->table_count ? mark_tables(g, gcl__cu_stream(s)) : GCL_OK;
}

void gcl_graph_destroy(gcl_graph *g) {
  if (!g || g->magic != GCL__GRAPH_MAGIC) return;
  (void)gcl__context_bind(g->ctx); /* best effort, as gcl_stream_destroy */
  /* A capturing thread's destroy (and a table's wait) would be refused and break its capture:
   * made when the capture ends (deferred.c). The handle is dead to the caller either way. */
  if (gcl__capture_mine()) {
    g->magic = 0;
    if (gcl__defer_call(g->ctx, graph_free_deferred, g) == GCL_OK) return;
  }
  graph_free(g);
}
