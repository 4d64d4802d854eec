/* Tensor-map batches: plan, then execute, then commit. Internal.
 *
 * Every call that writes tensor maps -- gcl_args_set_tensormaps (with or without
 * GCL_TENSORMAP_REFRESH), gcl_args_repoint_tensormaps, the gcl_tensormap_table calls, Python's
 * (which are those) -- goes through the same three steps:
 *   1. plan (lib/core/args_tmap.c, no driver): every check of the batch and of each map, the
 *      cache read, and per map one step: SKIP (the map already says this), REPOINT (only the
 *      address changes: gclaunch's patch where proven, else cuTensorMapReplaceAddress) or
 *      ENCODE (these driver arguments). Any failure is named here and nothing changed;
 *   2. execute (lib/cuda/tensormap.c, gcl__tmap_execute): one loop over the steps. ENCODE
 *      encodes into the plan's scratch; REPOINT saves the map's bytes into the scratch (all but
 *      the last step) and re-points the map in place (cuTensorMapReplaceAddress). A driver
 *      failure at map i copies the saved bytes of maps [0, i) back (map i was refused, so the
 *      driver left it alone), so the maps are as before and the cache was never touched: a
 *      failed batch changes nothing, and no driver call is needed to undo (a driver that keeps
 *      failing cannot leave half a batch);
 *   3. commit (gcl__tmap_plan_commit, cannot fail): the encoded scratch into the maps, the cache
 *      entries updated. The owner (args or table) then does its own book-keeping (set-tracking,
 *      dirty bits).
 * The plan's storage (gcl__tmap_space) belongs to the owner and is allocated with it: no
 * allocation on the way. */
#ifndef GCL_TMAP_PLAN_H
#define GCL_TMAP_PLAN_H

#include "tmap.h"

/* The cache slot of one map: where it points now and the inputs gclaunch last encoded it from.
 * snap.ndim 0: the bytes there are not a map gclaunch encoded (never set, or overwritten by a raw
 * setter), so only a full encode may write there. */
typedef struct gcl__tmap_entry {
  uint64_t address;
  gcl__tmap_snap snap;
} gcl__tmap_entry;

/* n consecutive maps: their bytes, their cache entries, and who the first one is for messages. */
typedef struct gcl__tmap_run {
  unsigned char *map;     /* the first map's bytes; map i at map + 128 i */
  gcl__tmap_entry *entry; /* its entry; entry i for map i */
  gcl__tmap_who who;      /* the first map (gcl__tmap_run_who gives map i) */
} gcl__tmap_run;

/* Who map i of run is in messages. */
static inline gcl__tmap_who gcl__tmap_run_who(const gcl__tmap_run *run, size_t i) {
  gcl__tmap_who w = run->who;
  w.rel += i * GCL_TENSORMAP_BYTES;
  w.whole = w.whole && i == 0;
  return w;
}

enum { GCL__TMAP_SKIP = 0, GCL__TMAP_REPOINT = 1, GCL__TMAP_ENCODE = 2 };

/* A re-point of the map in slot e to address a is allowed: e holds a map gclaunch encoded, and a
 * is nonzero, aligned as the map needs and below 2^57 (the driver's refusals, checked before any
 * re-point by the driver or by gclaunch's patch). */
static inline bool gcl__tmap_repoint_ok(const gcl__tmap_entry *e, uint64_t a) {
  return e->snap.ndim && a && !(a & (e->snap.align - 1u)) && a < GCL__TMAP_ADDRESS_LIMIT;
}

/* A tensor t may be used on device: not a kDLCUDA tensor of another device. */
static inline bool gcl__tmap_device_ok(int device, const DLTensor *t) {
  return t->device.device_type != kDLCUDA || t->device.device_id == device;
}

/* Storage for plans of up to cap maps, owned by the args (cap = the parameter with the most maps)
 * or the table. */
typedef struct gcl__tmap_space {
  size_t cap;
  unsigned char *ops;         /* cap steps: GCL__TMAP_SKIP, _REPOINT, _ENCODE */
  uint64_t *addresses;        /* cap: the address each map points to after the batch */
  gcl_tensormap_desc *descs;  /* cap: the driver's arguments (ENCODE steps only) */
  unsigned char *out;         /* cap * 128 bytes, 64-byte aligned: the maps execute encoded,
                                 and the saved bytes of those it re-pointed in place */
} gcl__tmap_space;

/* The device the maps are made for (from the context): messages and the sm_90 rule. */
typedef struct gcl__tmap_device {
  int device, sm;
} gcl__tmap_device;

typedef struct gcl__tmap_plan {
  gcl__tmap_run run;
  size_t n;
  size_t encodes, repoints; /* steps by kind; 0 and 0: execute calls nothing */
  const gcl__tmap_space *space;
  const DLTensor *const *tensors; /* the inputs recorded at commit (NULL for a re-point plan) */
  const gcl_tensormap_options *options;
  size_t options_count;
} gcl__tmap_plan;

/* Plans writing tensors[i] with options[i] (options_count n) or options[0] (options_count 1)
 * into map i of plan->run (the caller fills plan->run first, in place: copying a freshly built
 * run costs store-forwarding stalls), i < n (n <= space->cap, 1 <= n: callers checked the run). flags: 0 or
 * GCL_TENSORMAP_REFRESH, the same: a map whose entry equals its tensor and options but for the
 * address is REPOINT, or SKIP at the same address; any other is ENCODE (encode only what is
 * new). Checks tensors, options, options_count,
 * flags and the device (sm_90, a kDLCUDA tensor on dev's device), each map as
 * gcl_tensormap_check; messages name fn and the map (run's who). Changes nothing but the space. */
gcl_status gcl__tmap_plan_set(gcl__tmap_plan *plan, const gcl__tmap_space *space,
                              gcl__tmap_device dev, size_t n,
                              const DLTensor *const *tensors,
                              const gcl_tensormap_options *options, size_t options_count,
                              unsigned flags, const char *fn);
/* After a successful gcl__tmap_plan_set (or its args form) of the same n, options and
 * options_count, nothing executed yet: the DLPack flags of each map's tensor (dlflags[i], as a
 * DLManagedTensorVersioned carries them). GCL_ERROR_TENSOR naming the map for unknown bits, and
 * for DLPACK_FLAG_BITMASK_READ_ONLY on a map whose options have store set (a TMA store would
 * write a tensor its producer declared read-only: refused as for a non-const pointer);
 * GCL_ERROR_INVALID_ARGUMENT for NULL dlflags. Reads only. */
gcl_status gcl__tmap_plan_dlflags(const gcl__tmap_plan *plan, size_t n, const uint64_t *dlflags,
                                  const gcl_tensormap_options *options, size_t options_count,
                                  const char *fn);
/* Plans re-pointing map i of plan->run (filled by the caller) to addresses[i] (REPOINT, or SKIP when already there): each
 * map must have an entry (GCL_ERROR_UNSET_ARGUMENT) and each address be nonzero and aligned as
 * the map needs (GCL_ERROR_INVALID_ARGUMENT). Changes nothing but the space. */
gcl_status gcl__tmap_plan_repoint(gcl__tmap_plan *plan, const gcl__tmap_space *space,
                                  size_t n, const uint64_t *addresses,
                                  const char *fn);
/* After gcl__tmap_execute succeeded: the scratch of every ENCODE step into its map, entries
 * updated (the address of every REPOINT and ENCODE step; the snapshot of every ENCODE step).
 * Cannot fail. */
__attribute__((always_inline)) static inline void gcl__tmap_plan_commit(const gcl__tmap_plan *p) {
  const gcl__tmap_space *sp = p->space;
  for (size_t i = 0; i < p->n; i++) {
    unsigned op = sp->ops[i];
    if (op == GCL__TMAP_SKIP) continue;
    p->run.entry[i].address = sp->addresses[i];
    if (op != GCL__TMAP_ENCODE) continue; /* re-pointed in place */
    memcpy(p->run.map + i * GCL_TENSORMAP_BYTES, sp->out + i * GCL_TENSORMAP_BYTES,
           GCL_TENSORMAP_BYTES);
    gcl__tmap_snap_make(p->tensors[i],
                          p->options_count == 1 ? p->options : p->options + i,
                          &p->run.entry[i].snap);
  }
}

#endif
