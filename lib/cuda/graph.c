/* CUDA graphs: capture gclaunch launches on a gcl_stream into an instantiated graph, replace one
 * kernel node's parameters from a gcl_args (any size up to the 32,764-byte limit, grid-constant
 * aggregates included), replay. gcl_launch itself needs nothing special to be captured: it makes
 * no synchronous or allocating driver call. */
#include "cuda_internal.h"

#include <stdio.h>
#include <stdlib.h>

struct gcl_graph {
  uint32_t magic;
  gcl_context *ctx;          /* borrowed: the capture stream's */
  CUgraph graph;             /* kept: exec node updates name the graph's nodes */
  CUgraphExec exec;
  size_t kernel_count;
  CUgraphNode *kernels;      /* kernel nodes in capture order (owned) */
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

/* Orders nodes topologically (ties in listing order): the capture order of one stream, whose
 * nodes form a chain, whatever order cuGraphGetNodes lists them in. A driver without
 * cuGraphGetEdges (< 12.3) keeps the listing order. */
static gcl_status capture_order(CUgraph g, CUgraphNode *nodes, size_t n, CUgraphNode *out) {
  if (!gcl__cu.cuGraphGetEdges) {
    for (size_t i = 0; i < n; i++) out[i] = nodes[i];
    return GCL_OK;
  }
  size_t e = 0;
  CUresult rc = gcl__cu.cuGraphGetEdges(g, NULL, NULL, NULL, &e);
  CUgraphNode *from = gcl__calloc(e + 1, sizeof *from), *to = gcl__calloc(e + 1, sizeof *to);
  size_t *indeg = gcl__calloc(n + 1, sizeof *indeg);
  gcl_status s = GCL_OK;
  if (rc == CUDA_SUCCESS && (!from || !to || !indeg)) s = gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "graph: %zu edges", e);
  /* No edges (one node): the driver refuses arrays with a count of 0 (INVALID_VALUE, driver 580). */
  if (s == GCL_OK && rc == CUDA_SUCCESS && e) rc = gcl__cu.cuGraphGetEdges(g, from, to, NULL, &e);
  if (s == GCL_OK && rc != CUDA_SUCCESS) s = gcl__cu_fail(rc, "cuGraphGetEdges");
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

static void graph_free(gcl_graph *g) {
  if (g->exec) gcl__cu.cuGraphExecDestroy(g->exec);
  if (g->graph) gcl__cu.cuGraphDestroy(g->graph);
  gcl__free(g->kernels);
  g->magic = 0;
  gcl__free(g);
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
  if (rc != CUDA_SUCCESS) {
    if (g) gcl__cu.cuGraphDestroy(g);
    return gcl__cu_fail(rc, "cuStreamEndCapture(device %d)%s", s->ctx->device,
                        rc == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
                            ? " (an operation not allowed during capture ran on the stream)" : "");
  }
  return build(s, g, out);
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

gcl_status gcl_graph_launch(gcl_graph *g, gcl_stream *s) {
  gcl_status st = graph_check(g);
  if (st == GCL_OK) st = gcl__stream_check(s, g->ctx, "s", true);
  if (st != GCL_OK) return st;
  CUresult rc = gcl__cu.cuGraphLaunch(g->exec, gcl__cu_stream(s));
  if (rc != CUDA_SUCCESS)
    return gcl__cu_fail(rc, "cuGraphLaunch(%zu kernel nodes, device %d)", g->kernel_count, g->ctx->device);
  return GCL_OK;
}

void gcl_graph_destroy(gcl_graph *g) {
  if (!g || g->magic != GCL__GRAPH_MAGIC) return;
  (void)gcl__context_bind(g->ctx); /* best effort, as gcl_stream_destroy */
  graph_free(g);
}
