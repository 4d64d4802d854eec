/* One NVSHMEM PE per process on a gclaunch context: its life (start with the unique-id
 * bootstrap, queries, barrier, stop) and its symmetric memory (alloc, free, each peer's address
 * of it). The floors above reach it through cuda_internal.h's "The PE" section only: module
 * attach (module_attach.c) holds the PE while it calls NVSHMEM for a module, peer tensor maps
 * (tmap_peers.c) ask for the peers' addresses of a buffer. This file calls no file above it.
 *
 * pe_lock guards the PE's state below (context, ids, unique id, heap, symmetric blocks, the count
 * of modules attached), each module's attachment (written by module_attach.c while it holds the
 * PE) and serializes every NVSHMEM host call. No gclaunch lock is held when it is taken, and
 * under it only NVSHMEM's loader lock (nvshmem.c) is ever taken: no order to invert. */
#include "nvshmem.h"

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
  size_t attached;  /* modules attached (module_attach.c, through gcl__pe_release) */
  sym_block *blocks;
  size_t nblocks, cap;
  gcl__nvshmem_uid uid; /* NVSHMEM keeps a pointer to the id it started from: it lives here */
  gcl__pe_heap heap;    /* its limits and use: every size is admitted before NVSHMEM sees it */
} pe;

_Static_assert(sizeof(gcl_pe_unique_id) == sizeof(gcl__nvshmem_uid),
               "gcl_pe_unique_id holds nvshmemx_uniqueid_t");

gcl_status gcl__pe_not_started(const char *fn) {
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
  if (id) {
    /* NVSHMEM trusts the id: an id of another version, or one with nothing in it (a zeroed
     * buffer), makes its bootstrap connect to no address and then crash the process (H100,
     * NVSHMEM 3.4, bytes(128) from Python: "family 0 is neither AF_INET nor AF_INET6", then
     * SIGSEGV). What gcl_pe_unique_id_create makes is neither. */
    gcl__nvshmem_uid u;
    memcpy(&u, id->bytes, sizeof u);
    size_t used = 0;
    for (size_t i = 0; i < sizeof u.internal; i++) used += u.internal[i] != 0;
    if (u.version != GCL__NVSHMEM_UID_VERSION || used == 0)
      return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_pe_start: id is no unique id made by "
                       "gcl_pe_unique_id_create (version word %d, expected %d; %zu of its %zu "
                       "other bytes set, expected some)", u.version, GCL__NVSHMEM_UID_VERSION,
                       used, sizeof u.internal);
  }
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
  gcl_status s = pe.ctx ? GCL_OK : gcl__pe_not_started("gcl_pe_stop");
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
  gcl_status s = pe.ctx ? GCL_OK : gcl__pe_not_started("gcl_pe_id");
  if (s == GCL_OK) *id = pe.pe;
  pthread_mutex_unlock(&pe_lock);
  return s;
}

gcl_status gcl_pe_count(int *count) {
  if (!count) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_pe_count: count is NULL");
  pthread_mutex_lock(&pe_lock);
  gcl_status s = pe.ctx ? GCL_OK : gcl__pe_not_started("gcl_pe_count");
  if (s == GCL_OK) *count = pe.count;
  pthread_mutex_unlock(&pe_lock);
  return s;
}

gcl_status gcl_pe_barrier(gcl_stream *stream) {
  pthread_mutex_lock(&pe_lock);
  gcl_status s = pe.ctx ? GCL_OK : gcl__pe_not_started("gcl_pe_barrier");
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
  gcl_status s = pe.ctx ? GCL_OK : gcl__pe_not_started("gcl_symmetric_alloc");
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
  gcl_status s = pe.ctx ? GCL_OK : gcl__pe_not_started("gcl_symmetric_free");
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
  gcl_status s = pe.ctx ? GCL_OK : gcl__pe_not_started("gcl_symmetric_peer_address");
  if (s == GCL_OK) s = gcl__context_bind(pe.ctx);
  if (s == GCL_OK) s = peer_of("gcl_symmetric_peer_address", address, peer, out);
  pthread_mutex_unlock(&pe_lock);
  return s;
}

/* --- For the floors above: the PE held, the peers' addresses ---------------------------------- */

gcl_context *gcl__pe_hold(void) {
  pthread_mutex_lock(&pe_lock);
  return pe.ctx;
}

void gcl__pe_release(int attached) {
  if (attached < 0) pe.attached -= (size_t)-attached;
  else pe.attached += (size_t)attached;
  pthread_mutex_unlock(&pe_lock);
}

gcl_status gcl__pe_peer_addresses(const char *fn, uint64_t address, const int *pes, size_t n,
                                  gcl__pe_visit *visit, void *user, size_t *failed) {
  *failed = n;
  pthread_mutex_lock(&pe_lock);
  gcl_status s = pe.ctx ? GCL_OK : gcl__pe_not_started(fn);
  if (s == GCL_OK) s = gcl__context_bind(pe.ctx);
  uint64_t peer = 0;
  for (size_t i = 0; s == GCL_OK && i < n; i++) /* resolve all first: nothing visited */
    if ((s = peer_of(fn, address, pes[i], &peer)) != GCL_OK) *failed = i;
  for (size_t i = 0; s == GCL_OK && i < n; i++) {
    peer_of(fn, address, pes[i], &peer); /* resolved above: cannot fail */
    visit(user, i, peer);
  }
  pthread_mutex_unlock(&pe_lock);
  return s;
}
