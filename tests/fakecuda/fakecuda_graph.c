/* libfakecuda.so, part 6: graphs. Capture on a stream records its launches and copies as nodes
 * of a chain in order; cuGraphGetNodes lists them in REVERSE order (the real driver promises no
 * order either), edges give the chain; an exec is a copy whose kernel nodes' parameters
 * cuGraphExecKernelNodeSetParams replaces (copy nodes': cuGraphExecMemcpyNodeSetParams);
 * cuGraphLaunch replays the nodes into the launch record (kernels) or performs them (copies).
 * Only chains are modelled: cuGraphAddMemcpyNode puts a node without dependencies first (the
 * graph's one root) and one depending on the last node last; cuGraphAddDependencies accepts
 * only edges that agree with the chain's order. */
#include "fakecuda_internal.h"

#include <stdlib.h>
#include <string.h>

static fake_graph *graph_of(const void *g, uint32_t magic) {
  fake_graph *gr = (fake_graph *)g;
  return gr && gr->magic == magic ? gr : NULL;
}

static fake_node *node_of(const void *n) {
  fake_node *node = (fake_node *)n;
  return node && node->magic == NODE_MAGIC ? node : NULL;
}

static void node_free(fake_node *n) {
  if (!n) return;
  n->magic = 0;
  free(n->rec);
  free(n);
}

void fake_graph_free(fake_graph *g) {
  for (size_t i = 0; i < g->count; i++) node_free(g->nodes[i]);
  free(g->nodes);
  free(g->origin);
  g->magic = 0;
  free(g);
}

static fake_stream *capturing(CUstream s) {
  fake_stream *st = (fake_stream *)s;
  if (!s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD || !st->capturing) return NULL;
  return st;
}

static CUresult append(fake_graph *g, fake_node *n) {
  fake_node **grown = realloc(g->nodes, (g->count + 1) * sizeof *grown);
  if (!grown) {
    node_free(n);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  g->nodes = grown;
  g->nodes[g->count++] = n;
  return CUDA_SUCCESS;
}

int fake_capture_kernel(CUstream s, fake_function *f, const fakecuda_launch *rec, CUresult *rc) {
  fake_stream *st = capturing(s);
  if (!st) return 0;
  fake_node *n = calloc(1, sizeof *n);
  fakecuda_launch *copy = malloc(sizeof *copy);
  if (!n || !copy) {
    free(n), free(copy);
    *rc = CUDA_ERROR_OUT_OF_MEMORY;
    return 1;
  }
  *copy = *rec;
  *n = (fake_node){.magic = NODE_MAGIC, .type = CU_GRAPH_NODE_TYPE_KERNEL, .fn = f, .rec = copy};
  fake_graph *g = st->capture;
  /* PDL after a kernel: the edge lets this kernel start at the producer's programmatic port (a
   * driver before 12.3 has no edge data to show). */
  if (rec->programmatic && g->count && g->nodes[g->count - 1]->type == CU_GRAPH_NODE_TYPE_KERNEL &&
      atomic_load(&fake_driver_version) >= 12030)
    n->in = (CUgraphEdgeData){.from_port = CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC,
                              .type = CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC};
  *rc = append(g, n);
  return 1;
}

int fake_capture_copy(CUstream s, void *dst, const void *src, size_t bytes, uint32_t value,
                      uint32_t width, CUresult *rc) {
  fake_stream *st = capturing(s);
  if (!st) return 0;
  fake_node *n = calloc(1, sizeof *n);
  if (!n) {
    *rc = CUDA_ERROR_OUT_OF_MEMORY;
    return 1;
  }
  *n = (fake_node){.magic = NODE_MAGIC, .type = src ? CU_GRAPH_NODE_TYPE_MEMCPY : CU_GRAPH_NODE_TYPE_MEMSET,
                   .dst = dst, .src = src, .bytes = bytes, .value = value, .width = width};
  *rc = append(st->capture, n);
  return 1;
}

atomic_int fake_lossy_count; /* fakecuda_set_lossy_edge_count */

FAKE_API void fakecuda_set_lossy_edge_count(int on) { atomic_store(&fake_lossy_count, on); }

static fake_stream *capture_head; /* fake_lock */
static _Thread_local char thread_self;

void fake_capture_list(fake_stream *s, int add) {
  pthread_mutex_lock(&fake_lock);
  fake_stream **p = &capture_head;
  while (*p && *p != s) p = &(*p)->capture_next;
  if (add && !*p) s->capture_next = capture_head, capture_head = s;
  if (!add && *p) *p = s->capture_next;
  pthread_mutex_unlock(&fake_lock);
}

int fake_capture_forbids(void) {
  int forbids = 0;
  pthread_mutex_lock(&fake_lock);
  for (fake_stream *s = capture_head; s && !forbids; s = s->capture_next)
    forbids = s->mode == CU_STREAM_CAPTURE_MODE_GLOBAL ||
              (s->mode == CU_STREAM_CAPTURE_MODE_THREAD_LOCAL && s->thread == &thread_self);
  pthread_mutex_unlock(&fake_lock);
  return forbids;
}

static fake_graph *new_graph(uint32_t magic, int device, int live) {
  fake_graph *g = calloc(1, sizeof *g);
  if (!g) return NULL;
  g->magic = magic, g->device = device;
  pthread_mutex_lock(&fake_lock);
  fake_live[live]++;
  pthread_mutex_unlock(&fake_lock);
  return g;
}

CUresult fake_cuStreamBeginCapture(CUstream s, CUstreamCaptureMode m) {
  ENTER(cuStreamBeginCapture);
  NEED_CONTEXT();
  if (!s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  fake_stream *st = (fake_stream *)s;
  if (st->magic != STREAM_MAGIC) return CUDA_ERROR_INVALID_HANDLE;
  if (st->capturing) return CUDA_ERROR_ILLEGAL_STATE;
  if ((int)m < 0 || m > CU_STREAM_CAPTURE_MODE_RELAXED) return CUDA_ERROR_INVALID_VALUE;
  if (!(st->capture = calloc(1, sizeof *st->capture))) return CUDA_ERROR_OUT_OF_MEMORY;
  st->capture->magic = GRAPH_MAGIC, st->capture->device = (int)st->device;
  st->capturing = 1, st->invalidated = 0;
  st->mode = m, st->thread = &thread_self;
  fake_capture_list(st, 1);
  return CUDA_SUCCESS;
}

CUresult fake_cuStreamEndCapture(CUstream s, CUgraph *out) {
  ENTER(cuStreamEndCapture);
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  fake_stream *st = capturing(s);
  if (!fake_valid_stream(s)) return CUDA_ERROR_INVALID_HANDLE;
  if (!st) return CUDA_ERROR_ILLEGAL_STATE;
  fake_graph *g = st->capture;
  int invalidated = st->invalidated;
  st->capture = NULL, st->capturing = 0, st->invalidated = 0;
  fake_capture_list(st, 0);
  if (invalidated) {
    fake_graph_free(g);
    *out = NULL;
    return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  }
  pthread_mutex_lock(&fake_lock);
  fake_live[LIVE_GRAPH]++;
  pthread_mutex_unlock(&fake_lock);
  *out = (CUgraph)g;
  return CUDA_SUCCESS;
}

static CUresult destroy(void *h, uint32_t magic, int live) {
  fake_graph *g = graph_of(h, magic);
  if (!g) return CUDA_ERROR_INVALID_HANDLE;
  fake_graph_free(g);
  pthread_mutex_lock(&fake_lock);
  fake_live[live]--;
  pthread_mutex_unlock(&fake_lock);
  return CUDA_SUCCESS;
}

CUresult fake_cuGraphDestroy(CUgraph g) {
  ENTER(cuGraphDestroy);
  return destroy(g, GRAPH_MAGIC, LIVE_GRAPH);
}

CUresult fake_cuGraphExecDestroy(CUgraphExec e) {
  ENTER(cuGraphExecDestroy);
  return destroy(e, EXEC_MAGIC, LIVE_EXEC);
}

CUresult fake_cuGraphGetNodes(CUgraph g, CUgraphNode *nodes, size_t *count) {
  ENTER(cuGraphGetNodes);
  fake_graph *gr = graph_of(g, GRAPH_MAGIC);
  if (!count) return CUDA_ERROR_INVALID_VALUE;
  if (!gr) return CUDA_ERROR_INVALID_HANDLE;
  if (nodes)
    for (size_t i = 0; i < *count && i < gr->count; i++) nodes[i] = (CUgraphNode)gr->nodes[gr->count - 1 - i];
  *count = gr->count;
  return CUDA_SUCCESS;
}

/* Edges of the chain whose data is not the default (zeroed) one. */
static size_t data_edges(const fake_graph *g) {
  static const CUgraphEdgeData zero;
  size_t n = 0;
  for (size_t i = 1; i < g->count; i++) n += memcmp(&g->nodes[i]->in, &zero, sizeof zero) != 0;
  return n;
}

/* Both ABIs. As cuda.h documents: from and to NULL only count; data NULL with edges that carry
 * data is CUDA_ERROR_LOSSY_QUERY (driver 580 on the H100 refuses a captured PDL pair so). */
static CUresult get_edges(CUgraph g, CUgraphNode *from, CUgraphNode *to, CUgraphEdgeData *data,
                          size_t *count) {
  fake_graph *gr = graph_of(g, GRAPH_MAGIC);
  /* As driver 580 on the H200: arrays with a count of 0 are refused (a graph of one node). */
  if (!count || (!from) != (!to) || (data && !from) || (from && !*count))
    return CUDA_ERROR_INVALID_VALUE;
  if (!gr) return CUDA_ERROR_INVALID_HANDLE;
  if ((from || atomic_load(&fake_lossy_count)) && !data && data_edges(gr)) return CUDA_ERROR_LOSSY_QUERY;
  size_t edges = gr->count ? gr->count - 1 : 0;
  for (size_t i = 0; from && i < *count; i++) {
    from[i] = i < edges ? (CUgraphNode)gr->nodes[i] : NULL;
    to[i] = i < edges ? (CUgraphNode)gr->nodes[i + 1] : NULL;
    if (data) data[i] = i < edges ? gr->nodes[i + 1]->in : (CUgraphEdgeData){0};
  }
  *count = edges;
  return CUDA_SUCCESS;
}

CUresult fake_cuGraphGetEdges(CUgraph g, CUgraphNode *from, CUgraphNode *to,
                              CUgraphEdgeData *data, size_t *count) {
  ENTER(cuGraphGetEdges);
  return FAKE_RESULT(cuGraphGetEdges, get_edges(g, from, to, data, count));
}

CUresult fake_cuGraphGetEdges_v1(CUgraph g, CUgraphNode *from, CUgraphNode *to, size_t *count) {
  ENTER(cuGraphGetEdges);
  return FAKE_RESULT(cuGraphGetEdges, get_edges(g, from, to, NULL, count));
}

CUresult fake_cuGraphNodeGetType(CUgraphNode n, CUgraphNodeType *t) {
  ENTER(cuGraphNodeGetType);
  fake_node *node = node_of(n);
  if (!t) return CUDA_ERROR_INVALID_VALUE;
  if (!node) return CUDA_ERROR_INVALID_HANDLE;
  *t = node->type;
  return CUDA_SUCCESS;
}

CUresult fake_cuGraphKernelNodeGetParams(CUgraphNode n, CUDA_KERNEL_NODE_PARAMS *p) {
  ENTER(cuGraphKernelNodeGetParams);
  fake_node *node = node_of(n);
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  if (!node || node->type != CU_GRAPH_NODE_TYPE_KERNEL) return CUDA_ERROR_INVALID_VALUE;
  const fakecuda_launch *r = node->rec;
  memset(p, 0, sizeof *p);
  p->func = (CUfunction)node->fn;
  p->gridDimX = r->grid[0], p->gridDimY = r->grid[1], p->gridDimZ = r->grid[2];
  p->blockDimX = r->block[0], p->blockDimY = r->block[1], p->blockDimZ = r->block[2];
  p->sharedMemBytes = r->shared_bytes;
  return CUDA_SUCCESS;
}

static fake_node *node_copy(const fake_node *n) {
  fake_node *c = malloc(sizeof *c);
  if (!c) return NULL;
  *c = *n;
  c->rec = NULL;
  if (n->rec && !(c->rec = malloc(sizeof *c->rec))) {
    free(c);
    return NULL;
  }
  if (n->rec) *c->rec = *n->rec;
  return c;
}

CUresult fake_cuGraphInstantiateWithFlags(CUgraphExec *out, CUgraph g, unsigned long long flags) {
  ENTER(cuGraphInstantiateWithFlags);
  if (fake_capture_forbids()) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  fake_graph *gr = graph_of(g, GRAPH_MAGIC);
  if (!out || flags) return CUDA_ERROR_INVALID_VALUE;
  if (!gr) return CUDA_ERROR_INVALID_HANDLE;
  fake_graph *e = new_graph(EXEC_MAGIC, gr->device, LIVE_EXEC);
  if (!e) return CUDA_ERROR_OUT_OF_MEMORY;
  e->nodes = calloc(gr->count + 1, sizeof *e->nodes);
  e->origin = calloc(gr->count + 1, sizeof *e->origin);
  CUresult rc = e->nodes && e->origin ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
  for (size_t i = 0; rc == CUDA_SUCCESS && i < gr->count; i++, e->count++) {
    e->origin[i] = gr->nodes[i];
    if (!(e->nodes[i] = node_copy(gr->nodes[i]))) rc = CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (rc != CUDA_SUCCESS) {
    destroy(e, EXEC_MAGIC, LIVE_EXEC);
    return rc;
  }
  *out = (CUgraphExec)e;
  return CUDA_SUCCESS;
}

/* Packs the new parameters into the exec's copy of node n; the function must stay the same. */
CUresult fake_cuGraphExecKernelNodeSetParams(CUgraphExec e, CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS *p) {
  ENTER(cuGraphExecKernelNodeSetParams);
  fake_graph *ex = graph_of(e, EXEC_MAGIC);
  fake_node *node = node_of(n);
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  if (!ex || !node) return CUDA_ERROR_INVALID_HANDLE;
  size_t i = 0;
  while (i < ex->count && ex->origin[i] != node) i++;
  if (i == ex->count || node->type != CU_GRAPH_NODE_TYPE_KERNEL) return CUDA_ERROR_INVALID_VALUE;
  fake_node *target = ex->nodes[i];
  if ((fake_function *)p->func != target->fn) return CUDA_ERROR_INVALID_VALUE;
  fakecuda_launch *rec = malloc(sizeof *rec);
  if (!rec) return CUDA_ERROR_OUT_OF_MEMORY;
  *rec = *target->rec;
  pthread_mutex_lock(&fake_lock);
  CUresult rc = fake_pack(&target->fn->table, p->kernelParams, p->extra, rec);
  pthread_mutex_unlock(&fake_lock);
  if (rc == CUDA_SUCCESS) memcpy(target->rec, rec, sizeof *rec);
  free(rec);
  return rc;
}

/* Replays: kernels go into the launch record (on stream s), copies and fills are done. */
CUresult fake_cuGraphLaunch(CUgraphExec e, CUstream s) {
  ENTER(cuGraphLaunch);
  NEED_CONTEXT();
  fake_graph *ex = graph_of(e, EXEC_MAGIC);
  if (!ex || !fake_valid_stream(s)) return CUDA_ERROR_INVALID_HANDLE;
  if (ex->device != fake_context_device(fake_current)) return CUDA_ERROR_INVALID_CONTEXT;
  pthread_mutex_lock(&fake_lock);
  fake_programmatic_edges = (long)data_edges(ex);
  pthread_mutex_unlock(&fake_lock);
  for (size_t i = 0; i < ex->count; i++) {
    fake_node *n = ex->nodes[i];
    if (n->type != CU_GRAPH_NODE_TYPE_KERNEL) {
      fake_run_copy(n);
      continue;
    }
    n->rec->stream = s;
    fake_record_launch(n->rec);
  }
  return CUDA_SUCCESS;
}

static size_t position(const fake_graph *g, const fake_node *n) {
  size_t i = 0;
  while (i < g->count && g->nodes[i] != n) i++;
  return i;
}

/* A 1-D copy from host memory to device memory (what gclaunch's table nodes are). */
static int host_to_device_1d(const CUDA_MEMCPY3D *p) {
  return p && p->srcMemoryType == CU_MEMORYTYPE_HOST && p->srcHost &&
         p->dstMemoryType == CU_MEMORYTYPE_DEVICE && p->WidthInBytes && p->Height == 1 &&
         p->Depth == 1 && !p->srcXInBytes && !p->dstXInBytes &&
         fake_in_device_memory(p->dstDevice, p->WidthInBytes);
}

CUresult fake_cuGraphAddMemcpyNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t n,
                                   const CUDA_MEMCPY3D *p, CUcontext ctx) {
  ENTER(cuGraphAddMemcpyNode);
  fake_graph *gr = graph_of(g, GRAPH_MAGIC);
  if (!out || !ctx || (n && !deps)) return CUDA_ERROR_INVALID_VALUE;
  if (!gr) return CUDA_ERROR_INVALID_HANDLE;
  if (!host_to_device_1d(p)) return CUDA_ERROR_NOT_SUPPORTED; /* the fake's only copy node */
  if (n > 1 || (n == 1 && (!gr->count || deps[0] != (CUgraphNode)gr->nodes[gr->count - 1])))
    return CUDA_ERROR_NOT_SUPPORTED; /* not a chain */
  fake_node *node = calloc(1, sizeof *node);
  if (!node) return CUDA_ERROR_OUT_OF_MEMORY;
  *node = (fake_node){.magic = NODE_MAGIC, .type = CU_GRAPH_NODE_TYPE_MEMCPY,
                      .dst = (void *)(uintptr_t)p->dstDevice, .src = p->srcHost,
                      .bytes = p->WidthInBytes};
  CUresult rc = append(gr, node);
  if (rc != CUDA_SUCCESS) return rc;
  if (n == 0) { /* the new root goes first */
    memmove(gr->nodes + 1, gr->nodes, (gr->count - 1) * sizeof *gr->nodes);
    gr->nodes[0] = node;
  }
  *out = (CUgraphNode)node;
  return CUDA_SUCCESS;
}

CUresult fake_cuGraphGetRootNodes(CUgraph g, CUgraphNode *roots, size_t *count) {
  ENTER(cuGraphGetRootNodes);
  fake_graph *gr = graph_of(g, GRAPH_MAGIC);
  if (!count) return CUDA_ERROR_INVALID_VALUE;
  if (!gr) return CUDA_ERROR_INVALID_HANDLE;
  if (roots && *count && gr->count) roots[0] = (CUgraphNode)gr->nodes[0];
  *count = gr->count ? 1 : 0;
  return CUDA_SUCCESS;
}

CUresult fake_cuGraphAddDependencies(CUgraph g, const CUgraphNode *from, const CUgraphNode *to,
                                     size_t n) {
  ENTER(cuGraphAddDependencies);
  fake_graph *gr = graph_of(g, GRAPH_MAGIC);
  if (n && (!from || !to)) return CUDA_ERROR_INVALID_VALUE;
  if (!gr) return CUDA_ERROR_INVALID_HANDLE;
  for (size_t i = 0; i < n; i++) {
    size_t a = position(gr, node_of(from[i])), b = position(gr, node_of(to[i]));
    if (a == gr->count || b == gr->count || a == b) return CUDA_ERROR_INVALID_VALUE;
    if (a > b) return CUDA_ERROR_NOT_SUPPORTED; /* against the chain's order */
  }
  return CUDA_SUCCESS;
}

CUresult fake_cuGraphExecMemcpyNodeSetParams(CUgraphExec e, CUgraphNode n, const CUDA_MEMCPY3D *p,
                                             CUcontext ctx) {
  ENTER(cuGraphExecMemcpyNodeSetParams);
  fake_graph *ex = graph_of(e, EXEC_MAGIC);
  fake_node *node = node_of(n);
  if (!p || !ctx) return CUDA_ERROR_INVALID_VALUE;
  if (!ex || !node) return CUDA_ERROR_INVALID_HANDLE;
  size_t i = 0;
  while (i < ex->count && ex->origin[i] != node) i++;
  if (i == ex->count || node->type != CU_GRAPH_NODE_TYPE_MEMCPY) return CUDA_ERROR_INVALID_VALUE;
  if (!host_to_device_1d(p)) return CUDA_ERROR_INVALID_VALUE; /* operands stay 1-D */
  fake_node *target = ex->nodes[i];
  target->dst = (void *)(uintptr_t)p->dstDevice, target->src = p->srcHost;
  target->bytes = p->WidthInBytes;
  return CUDA_SUCCESS;
}
