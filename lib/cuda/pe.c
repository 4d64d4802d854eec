/* One NVSHMEM PE per process on a gclaunch context: start (unique-id bootstrap), queries,
 * barrier, stop; symmetric memory and each peer's address of it; modules attached
 * (nvshmemx_culibrary_init) before any launch; tensor maps over the peers' copies of a buffer.
 * The process-wide state is kept under one lock. */
#include "nvshmem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sym_block {
  uint64_t base;
  size_t size;
} sym_block;

static pthread_mutex_t pe_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  gcl_context *ctx; /* non-NULL while a PE is started */
  int pe, count;
  size_t attached;  /* modules attached */
  sym_block *blocks;
  size_t nblocks, cap;
  gcl__nvshmem_uid uid; /* NVSHMEM keeps a pointer to the id it started from: it lives here */
  gcl__pe_heap heap;    /* its limits and use: every size is admitted before NVSHMEM sees it */
} pe;

_Static_assert(sizeof(gcl_pe_unique_id) == sizeof(gcl__nvshmem_uid),
               "gcl_pe_unique_id holds nvshmemx_uniqueid_t");

static gcl_status not_started(const char *fn) {
  return gcl__fail(GCL_ERROR_NVSHMEM, "%s: no PE is started in this process (call gcl_pe_start "
                   "first)", fn);
}

/* A failed NVSHMEM call: its name and return value. */
static gcl_status call_failed(const char *fn, const char *call, int rc) {
  return gcl__fail(GCL_ERROR_NVSHMEM, "%s: %s returned %d", fn, call, rc);
}

gcl_status gcl_pe_unique_id_create(gcl_pe_unique_id *out) {
  if (!out) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_pe_unique_id_create: out is NULL");
  gcl_status s = gcl__nvshmem_load();
  if (s != GCL_OK) return s;
  gcl__nvshmem_uid uid;
  memset(&uid, 0, sizeof uid);
  uid.version = GCL__NVSHMEM_UID_VERSION;
  int rc = gcl__nvshmem.nvshmemx_get_uniqueid(&uid);
  if (rc != 0) return call_failed("gcl_pe_unique_id_create", "nvshmemx_get_uniqueid", rc);
  memcpy(out->bytes, &uid, sizeof uid);
  return GCL_OK;
}

static gcl_status check_start(gcl_context *ctx, const gcl_pe_unique_id *id, int rank, int count) {
  if (!ctx) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_pe_start: ctx is NULL");
  if (count < 1 || rank < 0 || rank >= count)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_pe_start: rank %d of count %d: expected "
                     "count >= 1 and 0 <= rank < count", rank, count);
  if (!id && count != 1)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_pe_start: id is NULL with count %d (only a "
                     "single PE, count 1, may start without the unique id of rank 0)", count);
  if (pe.ctx)
    return gcl__fail(GCL_ERROR_NVSHMEM, "gcl_pe_start: a PE is already started in this process "
                     "(PE %d of %d on device %d); one PE per process: gcl_pe_stop first",
                     pe.pe, pe.count, pe.ctx->device);
  return GCL_OK;
}

/* nvshmemx_init_attr_t V2 for the unique-id bootstrap on ctx's device. */
static gcl_status init_pe(gcl_context *ctx, gcl__nvshmem_uid *uid, int rank, int count) {
  gcl__nvshmem_init_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.version = GCL__NVSHMEM_INIT_ATTR_V2;
  attr.args.version = GCL__NVSHMEM_INIT_ARGS_V2;
  attr.args.uid_args.version = GCL__NVSHMEM_UID_ARGS_VERSION;
  attr.args.uid_args.myrank = attr.args.uid_args.nranks = -1;
  int rc = gcl__nvshmem.nvshmemx_set_attr_uniqueid_args(rank, count, uid, &attr);
  if (rc != 0) return call_failed("gcl_pe_start", "nvshmemx_set_attr_uniqueid_args", rc);
  attr.args.cuda_device_id = ctx->device;
  rc = gcl__nvshmem.nvshmemx_hostlib_init_attr(GCL__NVSHMEMX_INIT_WITH_UNIQUEID, &attr);
  if (rc != 0) return call_failed("gcl_pe_start", "nvshmemx_hostlib_init_attr", rc);
  int me = gcl__nvshmem.nvshmem_my_pe(), n = gcl__nvshmem.nvshmem_n_pes();
  if (me != rank || n != count) {
    gcl__nvshmem.nvshmemx_hostlib_finalize();
    return gcl__fail(GCL_ERROR_NVSHMEM, "gcl_pe_start: NVSHMEM started PE %d of %d, expected "
                     "rank %d of count %d", me, n, rank, count);
  }
  return GCL_OK;
}

gcl_status gcl_pe_start(gcl_context *ctx, const gcl_pe_unique_id *id, int rank, int count) {
  gcl_status s = gcl__nvshmem_load();
  if (s != GCL_OK) return s;
  pthread_mutex_lock(&pe_lock);
  s = check_start(ctx, id, rank, count);
  if (s == GCL_OK) s = gcl__context_bind(ctx); /* NVSHMEM starts on the current context */
  gcl_pe_unique_id own;
  if (s == GCL_OK && !id) s = gcl_pe_unique_id_create(&own); /* a single PE makes its own */
  if (s == GCL_OK) memcpy(&pe.uid, id ? id->bytes : own.bytes, sizeof pe.uid);
  if (s == GCL_OK) s = init_pe(ctx, &pe.uid, rank, count);
  if (s == GCL_OK) pe.ctx = ctx, pe.pe = rank, pe.count = count, gcl__pe_heap_start(&pe.heap);
  pthread_mutex_unlock(&pe_lock);
  return s;
}

/* Work still running in the PE's context (bound) may use the symmetric heap that finalize
 * unmaps, or wait in a barrier: it is finished first; a failure is reported and stops nothing. */
static gcl_status drain(const char *fn) {
  CUresult rc = gcl__cu.cuCtxSynchronize();
  if (rc == CUDA_SUCCESS) return GCL_OK;
  gcl_status s = gcl__cu_fail(rc, "%s: cuCtxSynchronize (the PE's work outstanding)", fn);
  gcl__fail_append(": the PE was not stopped");
  return s;
}

gcl_status gcl_pe_stop(void) {
  pthread_mutex_lock(&pe_lock);
  gcl_status s = pe.ctx ? GCL_OK : not_started("gcl_pe_stop");
  if (s == GCL_OK && pe.attached)
    s = gcl__fail(GCL_ERROR_NVSHMEM, "gcl_pe_stop: %zu module(s) still attached: detach or "
                  "destroy them first (NVSHMEM would write into their memory)", pe.attached);
  if (s == GCL_OK) s = gcl__context_bind(pe.ctx);
  if (s == GCL_OK) s = drain("gcl_pe_stop");
  if (s == GCL_OK) {
    gcl__nvshmem.nvshmemx_hostlib_finalize(); /* frees the symmetric heap */
    gcl__free(pe.blocks);
    pe.blocks = NULL;
    pe.nblocks = pe.cap = 0;
    pe.ctx = NULL;
  }
  pthread_mutex_unlock(&pe_lock);
  return s;
}

gcl_context *gcl_pe_context(void) {
  pthread_mutex_lock(&pe_lock);
  gcl_context *ctx = pe.ctx;
  pthread_mutex_unlock(&pe_lock);
  return ctx;
}

gcl_status gcl_pe_id(int *id) {
  if (!id) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_pe_id: id is NULL");
  pthread_mutex_lock(&pe_lock);
  gcl_status s = pe.ctx ? GCL_OK : not_started("gcl_pe_id");
  if (s == GCL_OK) *id = pe.pe;
  pthread_mutex_unlock(&pe_lock);
  return s;
}

gcl_status gcl_pe_count(int *count) {
  if (!count) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_pe_count: count is NULL");
  pthread_mutex_lock(&pe_lock);
  gcl_status s = pe.ctx ? GCL_OK : not_started("gcl_pe_count");
  if (s == GCL_OK) *count = pe.count;
  pthread_mutex_unlock(&pe_lock);
  return s;
}

gcl_status gcl_pe_barrier(gcl_stream *stream) {
  pthread_mutex_lock(&pe_lock);
  gcl_status s = pe.ctx ? GCL_OK : not_started("gcl_pe_barrier");
  if (s == GCL_OK) s = gcl__stream_check(stream, pe.ctx, "gcl_pe_barrier: stream", true);
  if (s == GCL_OK) gcl__nvshmem.nvshmemx_barrier_all_on_stream(gcl__cu_stream(stream));
  pthread_mutex_unlock(&pe_lock);
  return s;
}

/* --- Symmetric memory ----------------------------------------------------------------------- */

/* The live block holding address (NULL if none). Under pe_lock. */
static sym_block *block_of(uint64_t address) {
  for (size_t i = 0; i < pe.nblocks; i++)
    if (address >= pe.blocks[i].base && address - pe.blocks[i].base < pe.blocks[i].size)
      return &pe.blocks[i];
  return NULL;
}

static gcl_status remember_block(uint64_t base, size_t size) {
  if (pe.nblocks == pe.cap) {
    size_t cap = pe.cap ? 2 * pe.cap : 16;
    sym_block *b = gcl__realloc(pe.blocks, cap * sizeof *b);
    if (!b) return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "gcl_symmetric_alloc: out of host memory");
    pe.blocks = b, pe.cap = cap;
  }
  pe.blocks[pe.nblocks++] = (sym_block){base, size};
  return GCL_OK;
}

gcl_status gcl_symmetric_alloc(size_t bytes, uint64_t *address) {
  if (!address) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_symmetric_alloc: address is NULL");
  pthread_mutex_lock(&pe_lock);
  gcl_status s = pe.ctx ? GCL_OK : not_started("gcl_symmetric_alloc");
  if (s == GCL_OK) s = gcl__context_bind(pe.ctx);
  if (s == GCL_OK) s = gcl__pe_heap_admit(&pe.heap, bytes); /* NVSHMEM never sees a size it dies of */
  void *p = NULL;
  if (s == GCL_OK && !(p = gcl__nvshmem.nvshmem_align(GCL_SYMMETRIC_ALIGN, bytes)))
    s = gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "gcl_symmetric_alloc: nvshmem_align(%d, %zu) returned "
                  "NULL (the symmetric heap is full)", GCL_SYMMETRIC_ALIGN, bytes);
  if (s == GCL_OK && (s = remember_block((uint64_t)(uintptr_t)p, bytes)) != GCL_OK)
    gcl__nvshmem.nvshmem_free(p);
  if (s == GCL_OK) gcl__pe_heap_took(&pe.heap, bytes), *address = (uint64_t)(uintptr_t)p;
  pthread_mutex_unlock(&pe_lock);
  return s;
}

gcl_status gcl_symmetric_free(uint64_t address) {
  pthread_mutex_lock(&pe_lock);
  gcl_status s = pe.ctx ? GCL_OK : not_started("gcl_symmetric_free");
  sym_block *b = s == GCL_OK ? block_of(address) : NULL;
  if (s == GCL_OK && (!b || b->base != address))
    s = gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_symmetric_free: address 0x%llx is not one "
                  "gcl_symmetric_alloc returned (or was freed)", (unsigned long long)address);
  if (s == GCL_OK) s = gcl__context_bind(pe.ctx);
  if (s == GCL_OK) {
    gcl__nvshmem.nvshmem_free((void *)(uintptr_t)address);
    gcl__pe_heap_gave(&pe.heap, b->size);
    *b = pe.blocks[--pe.nblocks];
  }
  pthread_mutex_unlock(&pe_lock);
  return s;
}

/* Under pe_lock, a PE started. */
static gcl_status peer_of(const char *fn, uint64_t address, int peer, uint64_t *out) {
  if (!block_of(address))
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: address 0x%llx is not in a symmetric buffer "
                     "(gcl_symmetric_alloc)", fn, (unsigned long long)address);
  if (peer < 0 || peer >= pe.count)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: PE %d: expected 0 ... %d", fn, peer,
                     pe.count - 1);
  void *p = gcl__nvshmem.nvshmem_ptr((const void *)(uintptr_t)address, peer);
  if (!p)
    return gcl__fail(GCL_ERROR_PEER_UNREACHABLE, "%s: PE %d's memory is not load/store reachable "
                     "from PE %d (nvshmem_ptr returned NULL: no NVLink or P2P path)", fn, peer, pe.pe);
  *out = (uint64_t)(uintptr_t)p;
  return GCL_OK;
}

gcl_status gcl_symmetric_peer_address(uint64_t address, int peer, uint64_t *out) {
  if (!out) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_symmetric_peer_address: out is NULL");
  pthread_mutex_lock(&pe_lock);
  gcl_status s = pe.ctx ? GCL_OK : not_started("gcl_symmetric_peer_address");
  if (s == GCL_OK) s = gcl__context_bind(pe.ctx);
  if (s == GCL_OK) s = peer_of("gcl_symmetric_peer_address", address, peer, out);
  pthread_mutex_unlock(&pe_lock);
  return s;
}

/* --- Modules attached --------------------------------------------------------------------- */

int gcl_module_uses_nvshmem(const gcl_module *mod) { return mod && mod->nvshmem ? 1 : 0; }

bool gcl__kernel_attached(const gcl_module *m, const gcl_context *ctx) {
  return !m->nvshmem || (m->attached && ctx == m->ctx);
}

gcl_status gcl__kernel_unattached(const gcl_kernel *k, const char *fn) {
  const gcl_module *m = k->mod;
  if (m->attached)
    return gcl__fail(GCL_ERROR_NOT_ATTACHED, "%s: kernel '%s' of module '%s' uses NVSHMEM: the "
                     "module is attached on device %d, the kernel was found on device %d (NVSHMEM's "
                     "state lives in the PE's context only)", fn, k->name, m->name,
                     m->ctx->device, k->ctx->device);
  return gcl__fail(GCL_ERROR_NOT_ATTACHED, "%s: kernel '%s' of module '%s' uses NVSHMEM and the "
                   "module is not attached (gcl_module_attach after gcl_pe_start); launched so it "
                   "would read NVSHMEM's unset device state (an illegal address)", fn, k->name,
                   m->name);
}

/* Marks the kernels of m found in its context attached or not. */
static void mark_kernels(gcl_module *m) {
  for (gcl_kernel *k = m->kernels; k; k = k->next) k->unattached = !gcl__kernel_attached(m, k->ctx);
}

/* NVSHMEM's own rule: equal majors, the module's minor at most the host's. */
static gcl_status check_versions(const gcl_module *m) {
  int v[3];
  if (gcl_image_nvshmem_version(m->records, &v[0], &v[1], &v[2]) != GCL_OK) return GCL_OK;
  const int *h = gcl__nvshmem.version;
  if (v[0] == h[0] && v[1] <= h[1]) return GCL_OK;
  return gcl__fail(GCL_ERROR_NVSHMEM_VERSION, "gcl_module_attach: module '%s' was device-linked "
                   "with NVSHMEM %d.%d.%d, the host library '%s' is %d.%d.%d (the majors must be "
                   "equal and the module's minor at most the host's): rebuild it against the "
                   "host library's libnvshmem_device", m->name, v[0], v[1], v[2], gcl_nvshmem_path(),
                   h[0], h[1], h[2]);
}

static gcl_status check_attach(const gcl_module *m) {
  if (!pe.ctx) return not_started("gcl_module_attach");
  if (!m->nvshmem)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_module_attach: module '%s' does not use "
                     "NVSHMEM (it defines no nvshmemi_device_state_d: not device-linked with "
                     "libnvshmem_device)", m->name);
  if (m->ctx != pe.ctx)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_module_attach: module '%s' was loaded on "
                     "device %d, the PE runs on device %d: load it in the PE's context",
                     m->name, m->ctx->device, pe.ctx->device);
  return check_versions(m);
}

gcl_status gcl_module_attach(gcl_module *mod) {
  if (!mod) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_module_attach: mod is NULL");
  pthread_mutex_lock(&pe_lock);
  gcl_status s = mod->attached ? GCL_OK : check_attach(mod);
  if (s == GCL_OK && !mod->attached) s = gcl__context_bind(mod->ctx);
  if (s == GCL_OK && !mod->attached) {
    int rc = gcl__nvshmem.nvshmemx_culibrary_init(mod->lib);
    if (rc != 0) s = call_failed("gcl_module_attach", "nvshmemx_culibrary_init", rc);
    if (rc != 0) gcl__fail_append(" (module '"), gcl__fail_append(mod->name), gcl__fail_append("')");
  }
  if (s == GCL_OK && !mod->attached) {
    mod->attached = true;
    pe.attached++;
    mark_kernels(mod);
  }
  pthread_mutex_unlock(&pe_lock);
  return s;
}

/* Under pe_lock, mod attached. */
static gcl_status detach(gcl_module *mod) {
  gcl_status s = gcl__context_bind(mod->ctx);
  int rc = s == GCL_OK ? gcl__nvshmem.nvshmemx_culibrary_finalize(mod->lib) : 0;
  mod->attached = false; /* unattached either way: no launch may trust its state now */
  pe.attached--;
  mark_kernels(mod);
  if (s == GCL_OK && rc != 0) s = call_failed("gcl_module_detach", "nvshmemx_culibrary_finalize", rc);
  return s;
}

gcl_status gcl_module_detach(gcl_module *mod) {
  if (!mod) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_module_detach: mod is NULL");
  pthread_mutex_lock(&pe_lock);
  gcl_status s = GCL_OK;
  if (!mod->attached)
    s = gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_module_detach: module '%s' is not attached",
                  mod->name);
  else s = detach(mod);
  pthread_mutex_unlock(&pe_lock);
  return s;
}

void gcl__module_detach_quiet(gcl_module *m) {
  pthread_mutex_lock(&pe_lock);
  if (m->attached) detach(m);
  pthread_mutex_unlock(&pe_lock);
}

/* --- Tensor maps over the peers' copies ----------------------------------------------------- */

/* storage[i]: t with data = PE pes[i]'s copy of t->data, every peer resolved (under pe_lock)
 * before any is written; out[i] = {&storage[i], 0}. */
static gcl_status peer_sources(const char *fn, const DLTensor *t, const int *pes, size_t n,
                               DLTensor *storage, gcl_tensormap_source *out) {
  if (!t || !pes || n == 0)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: %s", fn, !t ? "tensor is NULL" :
                     !pes ? "pes is NULL" : "n is 0, expected at least one PE");
  if (n > 65536) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: n %zu is too many PEs", fn, n);
  if (!storage || !out)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", fn, !storage ? "storage" : "out");
  pthread_mutex_lock(&pe_lock);
  gcl_status s = pe.ctx ? GCL_OK : not_started(fn);
  if (s == GCL_OK) s = gcl__context_bind(pe.ctx);
  uint64_t peer = 0;
  for (size_t i = 0; s == GCL_OK && i < n; i++) { /* resolve all first: storage untouched */
    s = peer_of(fn, (uint64_t)(uintptr_t)t->data, pes[i], &peer);
    if (s != GCL_OK) {
      char at[64];
      snprintf(at, sizeof at, " (pes[%zu]; no map was encoded)", i);
      gcl__fail_append(at);
    }
  }
  for (size_t i = 0; s == GCL_OK && i < n; i++) {
    peer_of(fn, (uint64_t)(uintptr_t)t->data, pes[i], &peer); /* resolved above: cannot fail */
    storage[i] = *t;
    storage[i].data = (void *)(uintptr_t)peer;
    out[i] = (gcl_tensormap_source){.tensor = &storage[i]};
  }
  pthread_mutex_unlock(&pe_lock);
  return s;
}

gcl_status gcl_symmetric_sources(const DLTensor *t, const int *pes, size_t n, DLTensor *storage,
                                 gcl_tensormap_source *out) {
  return peer_sources("gcl_symmetric_sources", t, pes, n, storage, out);
}

/* The 0.3 peer calls: sources over the peers, then gcl_tensormaps_set into where (the caller
 * made it from its arguments). storage: n DLTensors and n sources, freed here. */
static gcl_status set_peers(const char *fn, gcl_context *ctx, const gcl_tensormap_slots *where,
                            const DLTensor *tensor, const int *pes, size_t n,
                            const gcl_tensormap_options *options, unsigned flags) {
  if (flags & ~GCL_TENSORMAP_REFRESH)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: flags = 0x%x: expected 0 or "
                     "GCL_TENSORMAP_REFRESH (0x1)", fn, flags);
  void *block = n && n <= 65536 ? gcl__malloc(n * (sizeof(DLTensor) + sizeof(gcl_tensormap_source)))
                                : NULL;
  if (!block && n && n <= 65536) return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "%s: out of host memory", fn);
  DLTensor *storage = block;
  gcl_tensormap_source *src = block ? (gcl_tensormap_source *)(void *)(storage + n) : NULL;
  gcl_status s = peer_sources(fn, tensor, pes, n, storage, src);
  if (s == GCL_OK) s = gcl__tensormaps_set(ctx, where, src, options, 1, fn);
  gcl__free(block);
  return s;
}

gcl_status gcl_args_set_peer_tensormaps(gcl_args *args, const gcl_field *first,
                                        const DLTensor *tensor, const int *pes, size_t n,
                                        const gcl_tensormap_options *options, unsigned flags) {
  static const char fn[] = "gcl_args_set_peer_tensormaps";
  if (!args || !first || !options)
    return gcl__fail_null(fn, 3, "args", (const void *)args, "first", (const void *)first,
                          "options", (const void *)options);
  gcl_tensormap_slots at;
  gcl_status s = n ? gcl_args_tensormap_slots(args, first, n, &at) : GCL_OK;
  if (s != GCL_OK) return s;
  return set_peers(fn, gcl_pe_context(), &at, tensor, pes, n, options, flags);
}

gcl_status gcl_tensormap_table_set_peers(gcl_tensormap_table *table, size_t first,
                                         const DLTensor *tensor, const int *pes, size_t n,
                                         const gcl_tensormap_options *options, unsigned flags) {
  static const char fn[] = "gcl_tensormap_table_set_peers";
  if (!table || !options)
    return gcl__fail_null(fn, 2, "table", (const void *)table, "options", (const void *)options);
  gcl_tensormap_slots at;
  gcl_status s = n ? gcl_tensormap_table_slots(table, first, n, &at) : GCL_OK;
  if (s != GCL_OK) return s;
  return set_peers(fn, NULL, &at, tensor, pes, n, options, flags);
}
