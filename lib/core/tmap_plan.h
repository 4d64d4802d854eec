/* Tensor-map batches: admit, then execute, then commit. Internal.
 *
 * Every write of a tensor map -- gcl_tensormaps_set / _repoint and the 0.3 calls that wrap them
 * (gcl_args_set_tensormaps[_flags], gcl_args_repoint_tensormaps, gcl_tensormap_table_set[_flags],
 * gcl_tensormap_table_repoint, the peer calls, gcl_tensormap_encode[_flags]), Python's, and so
 * the maps of a table a graph captured -- goes through the same three steps:
 *   1. plan (lib/core/tmap_args.c, no driver): the batch's own arguments (gcl__tmap_what_*),
 *      then for each map THE admission (gcl__tmap_admit there: one function, no other door),
 *      which answers SKIP (the map already says this), REPOINT (same description, only the
 *      address moves), ENCODE (these driver arguments) or refuses by a numbered rule of
 *      docs/tensormap-rules.md (the DLPack flags rules 27 and 28 among them). Any refusal is
 *      named here and nothing changed;
 *   2. execute (lib/cuda/tmap_driver.c, gcl__tmap_execute): one loop over the steps; the fast
 *      paths are decisions here, after admission: a REPOINT patches the address bits itself
 *      where the device proved the patch for the map's interleave mode (tmap_patch.c), else
 *      calls cuTensorMapReplaceAddress; ENCODE encodes into the plan's scratch. A driver
 *      failure at map i puts the saved bytes of maps [0, i) back, so a failed batch changes
 *      nothing, and no driver call is needed to undo (a driver that keeps failing cannot leave
 *      half a batch);
 *   3. commit (gcl__tmap_plan_commit, cannot fail): the encoded scratch into the maps, the cache
 *      entries updated. The owner (args or table) then does its own book-keeping (set-tracking,
 *      dirty bits).
 * The plan's storage (gcl__tmap_space) belongs to the owner and is allocated with it, or, for a
 * one-map write of args or a one-map encode, lies on the caller's stack (the same admission and
 * execution, inlined with n a constant 1: the step stays in registers): no allocation on the way. GCL_TMAP_PATCH=0 changes step 2 only, so statuses, messages and bytes
 * are the same with the patch on and off (tests/unit/test_tmap_admit.c holds them to it). */
#ifndef GCL_TMAP_PLAN_H
#define GCL_TMAP_PLAN_H

#include "tmap.h"

/* The cache slot of one map: where it points now and the inputs gclaunch last encoded it from.
 * snap.ndim 0: the bytes there are not a map gclaunch encoded (never set, or overwritten by a raw
 * setter), so only a full encode may write there. */
typedef struct gcl__tmap_entry {
  _Alignas(16) uint64_t address; /* entries 16-byte aligned: the snapshot's options are too */
  gcl__tmap_snap snap;
} gcl__tmap_entry;
/* gcl__tmap_options_equal reads the snapshot's options as aligned vectors. 240 bytes, not a
 * padded 256: a 256-byte stride maps a batch's entries onto a quarter of the L1 sets (measured:
 * 240 re-points in one call 1.9 -> 2.3 ns a map on the fake driver). */
_Static_assert(offsetof(gcl__tmap_entry, snap.options) % 16 == 0 &&
                   sizeof(gcl__tmap_entry) == 240,
               "a cache entry: 240 bytes, its snapshot's options 16-byte aligned");

/* n consecutive maps: their bytes, their cache entries, and who the first one is for messages. */
typedef struct gcl__tmap_run {
  unsigned char *map;     /* the first map's bytes; map i at map + 128 i */
  gcl__tmap_entry *entry; /* its entry; entry i for map i */
  gcl__tmap_who who;      /* the first map (gcl__tmap_run_who gives map i) */
} gcl__tmap_run;

/* A run handed to the cold paths (refusals, driver failures, restoring a failed batch) as its
 * values, not its address: nothing on the hot path then takes the run's address, and a one-map
 * call keeps it in registers (its stores were a tenth of a one-map re-point). The callee takes
 * GCL__TMAP_RUN_PARAMS and rebuilds it with GCL__TMAP_RUN_REBUILD (a const gcl__tmap_run *run). */
#define GCL__TMAP_RUN_VALUES(r)                                                                    \
  (r)->map, (r)->entry, (r)->who.text, (r)->who.field, (r)->who.rel, (r)->who.indexed
#define GCL__TMAP_RUN_PARAMS                                                                       \
  unsigned char *run_map, gcl__tmap_entry *run_entry, const char *run_text,                        \
      const gcl_field *run_field, size_t run_rel, bool run_indexed
#define GCL__TMAP_RUN_REBUILD                                                                      \
  const gcl__tmap_run run_v = {run_map, run_entry, {run_text, run_field, run_rel, run_indexed}};   \
  const gcl__tmap_run *run = &run_v

/* Who map i of run is in messages. */
static inline gcl__tmap_who gcl__tmap_run_who(const gcl__tmap_run *run, size_t i) {
  gcl__tmap_who w = run->who;
  w.rel += i * GCL_TENSORMAP_BYTES;
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
  uint32_t *ops;              /* cap steps: GCL__TMAP_SKIP, _REPOINT, _ENCODE (not bytes: a byte
                                 store may alias every field the admission loop reads) */
  uint64_t *addresses;        /* cap: the address each map points to after the batch */
  gcl_tensormap_desc *descs;  /* cap: the driver's arguments (ENCODE steps only) */
  unsigned char *out;         /* cap * 128 bytes, 64-byte aligned: the maps execute encoded,
                                 and the saved bytes of those it re-pointed in place */
} gcl__tmap_space;

/* The device the maps are made for (from the context): messages and the sm_90 rule. */
typedef struct gcl__tmap_device {
  int device, sm;
} gcl__tmap_device;

/* What a batch writes, map by map: a source (a DLPack tensor with its producer's flags, and
 * the options) or, for a re-point, an address. A strided view over the caller's arrays, so that
 * neither the 0.3 calls' parallel arrays (tensors[], dlpack_flags[]: step 8) nor the 0.4 calls'
 * gcl_tensormap_source[] (step 32) are copied. Built by gcl__tmap_what_*, which check the batch's
 * own arguments. */
typedef struct gcl__tmap_what {
  const unsigned char *tensor;   /* map 0's `const DLTensor *`; NULL: a re-point by address */
  const unsigned char *flags;    /* map 0's uint64_t DLPack flags; NULL: 0 for every map */
  const unsigned char *address;  /* a re-point: map 0's uint64_t address */
  const unsigned char *reserved; /* sources: map 0's reserved words (must be 0); NULL: none */
  size_t step;                   /* bytes from map i's items to map i + 1's */
  const gcl_tensormap_options *options;
  size_t ostep;                  /* 0: options[0] for every map; 1: options[i] */
} gcl__tmap_what;

static inline const DLTensor *gcl__tmap_what_tensor(const gcl__tmap_what *w, size_t i) {
  const DLTensor *t;
  memcpy(&t, w->tensor + i * w->step, sizeof t);
  return t;
}

static inline uint64_t gcl__tmap_what_word(const unsigned char *at, size_t step, size_t i) {
  uint64_t v;
  memcpy(&v, at + i * step, sizeof v);
  return v;
}

static inline const gcl_tensormap_options *gcl__tmap_what_options(const gcl__tmap_what *w,
                                                                  size_t i) {
  return w->options + i * w->ostep;
}

/* The batch arguments' refusal, naming fn: GCL_ERROR_INVALID_ARGUMENT. Failure paths only. */
gcl_status gcl__tmap_what_error(size_t n, const void *items, const char *items_name,
                                const uint64_t *dlflags, bool with_flags,
                                const gcl_tensormap_options *options, size_t options_count,
                                unsigned flags, const char *fn);

/* The 0.3 forms: tensors[i] (and dlflags[i] when with_flags; NULL is then refused) with
 * options[i] (options_count n) or options[0] (options_count 1); flags 0 or
 * GCL_TENSORMAP_REFRESH (accepted, ignored: every set re-points what only moved). */
static inline gcl_status gcl__tmap_what_tensors(gcl__tmap_what *w, size_t n,
                                                const DLTensor *const *tensors, bool with_flags,
                                                const uint64_t *dlflags,
                                                const gcl_tensormap_options *options,
                                                size_t options_count, unsigned flags,
                                                const char *fn) {
  w->tensor = (const unsigned char *)tensors; /* written first, whatever the verdict: the */
  w->flags = (const unsigned char *)dlflags;  /* compiler then sees w initialised on every path */
  w->address = NULL, w->reserved = NULL;
  w->step = sizeof *tensors;
  w->options = options;
  w->ostep = options_count == 1 ? 0 : 1;
  if (!tensors || !options || (options_count != 1 && options_count != n) ||
      (flags & ~GCL_TENSORMAP_REFRESH) || (with_flags && !dlflags))
    return GCL__REFUSED_IF_CONST(n, gcl__tmap_what_error(n, tensors, "tensors", dlflags,
                                                         with_flags, options, options_count,
                                                         flags, fn));
  return GCL_OK;
}

/* The 0.4 form: sources[i] (tensor, DLPack flags, reserved words) with options as above. */
static inline gcl_status gcl__tmap_what_sources(gcl__tmap_what *w, size_t n,
                                                const gcl_tensormap_source *sources,
                                                const gcl_tensormap_options *options,
                                                size_t options_count, const char *fn) {
  w->tensor = sources ? (const unsigned char *)&sources->tensor : NULL; /* first, as above */
  w->flags = sources ? (const unsigned char *)&sources->dlpack_flags : NULL;
  w->reserved = sources ? (const unsigned char *)sources->reserved : NULL;
  w->address = NULL;
  w->step = sizeof *sources;
  w->options = options;
  w->ostep = options_count == 1 ? 0 : 1;
  if (!sources || !options || (options_count != 1 && options_count != n))
    return GCL__REFUSED_IF_CONST(n, gcl__tmap_what_error(n, sources, "sources", NULL, false,
                                                         options, options_count, 0, fn));
  return GCL_OK;
}

/* Re-points: addresses[i], the new data + byte_offset of map i. */
static inline gcl_status gcl__tmap_what_addresses(gcl__tmap_what *w, size_t n,
                                                  const uint64_t *addresses, const char *fn) {
  w->tensor = NULL, w->flags = NULL, w->reserved = NULL, w->options = NULL, w->ostep = 0;
  w->address = (const unsigned char *)addresses; /* first, as above */
  w->step = sizeof *addresses;
  if (!addresses)
    return GCL__REFUSED_IF_CONST(n, gcl__tmap_what_error(n, addresses, "addresses", NULL, false,
                                                         NULL, 0, 0, fn));
  return GCL_OK;
}

/* A batch's plan: its counts (in registers where the plan is inlined: nothing takes its address
 * but the inlined admission and execution), the maps and the steps. */
typedef struct gcl__tmap_plan {
  const gcl__tmap_run *run; /* the caller's: a refusal names its maps, so it lives in memory */
  size_t n;
  size_t encodes, repoints; /* steps by kind; 0 and 0: execute calls nothing */
  unsigned repoint_modes;   /* bit i: a REPOINT step's map has interleave mode i */
  const gcl__tmap_space *space;
} gcl__tmap_plan;

/* Plans writing what into maps 0 ... n - 1 of *plan->run (the caller points plan->run at a run
 * it filled in place: copying a freshly built run costs store-forwarding stalls; 1 <= n <=
 * space->cap):
 * gcl__tmap_admit for each map, in order, until one refuses. A source needs a device of sm_90 or
 * later (dev; checked once, before the maps). Messages name the map (run's who). Changes
 * nothing but the space. */
gcl_status gcl__tmap_plan_make(gcl__tmap_plan *plan, const gcl__tmap_space *space,
                               gcl__tmap_device dev, size_t n, const gcl__tmap_what *what);

/* After gcl__tmap_execute succeeded (which moved the entries of the REPOINT steps itself): the
 * scratch of every ENCODE step into its map, its entry's address and snapshot (of item i of w,
 * the batch the plan was made from: not kept in the plan, so that it may live in registers). Cannot fail.
 * Nothing to do for a plan without ENCODE steps. */
__attribute__((always_inline)) static inline void gcl__tmap_plan_commit(const gcl__tmap_plan *p,
                                                                        const gcl__tmap_what *w) {
  if (!p->encodes) return;
  const gcl__tmap_space *sp = p->space;
  for (size_t i = 0; i < p->n; i++) {
    if (sp->ops[i] != GCL__TMAP_ENCODE) continue;
    p->run->entry[i].address = sp->addresses[i];
    memcpy(p->run->map + i * GCL_TENSORMAP_BYTES, sp->out + i * GCL_TENSORMAP_BYTES,
           GCL_TENSORMAP_BYTES);
    gcl__tmap_snap_make(gcl__tmap_what_tensor(w, i), gcl__tmap_what_options(w, i),
                        &p->run->entry[i].snap);
  }
}

#endif
