/* Peer tensor maps: a source maker. One symmetric tensor and a PE list give one source per PE,
 * the tensor over that PE's copy (its address from the PE: gcl__pe_peer_addresses, pe.c), and
 * the 0.3 peer calls hand those sources to the one admission (gcl__tensormaps_set, tmap_slots.c)
 * like any other batch. Takes no lock of its own: the PE's lock is held by pe.c while the
 * peers are resolved and the storage written, and released before the admission runs. */
#include "cuda_internal.h"

#include <stdio.h>

/* Writes source i: storage[i] is the tensor with PE pes[i]'s address. Runs under the PE's lock
 * (gcl__pe_visit): writes caller memory only. */
typedef struct peer_out {
  const DLTensor *t;
  DLTensor *storage;
  gcl_tensormap_source *out;
} peer_out;

static void put_peer(void *user, size_t i, uint64_t peer) {
  peer_out *o = user;
  o->storage[i] = *o->t;
  o->storage[i].data = (void *)(uintptr_t)peer;
  o->out[i] = (gcl_tensormap_source){.tensor = &o->storage[i]};
}

/* storage[i]: t with data = PE pes[i]'s copy of t->data, every peer resolved before any is
 * written; out[i] = {&storage[i], 0}. */
static gcl_status peer_sources(const char *fn, const DLTensor *t, const int *pes, size_t n,
                               DLTensor *storage, gcl_tensormap_source *out) {
  if (!t || !pes || n == 0)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: %s", fn, !t ? "tensor is NULL" :
                     !pes ? "pes is NULL" : "n is 0, expected at least one PE");
  if (n > 65536) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: n %zu is too many PEs", fn, n);
  if (!storage || !out)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", fn, !storage ? "storage" : "out");
  peer_out o = {t, storage, out};
  size_t failed = n;
  gcl_status s = gcl__pe_peer_addresses(fn, (uint64_t)(uintptr_t)t->data, pes, n, put_peer, &o,
                                        &failed);
  if (s != GCL_OK && failed < n) {
    char at[64];
    snprintf(at, sizeof at, " (pes[%zu]; no map was encoded)", failed);
    gcl__fail_append(at);
  }
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
