/* THE admission of a tensor map, and the plan that applies it to a batch. Internal.
 *
 * Every write of a map -- whatever the owner (args, a descriptor table, a one-map encode) or the
 * caller (C, Python, peer maps, a table a graph captured) -- is decided by gcl__tmap_admit, and
 * only there: SKIP (the slot already holds this description at this address), REPOINT (the same
 * description at a new address), ENCODE (these driver arguments), or a refusal naming the map and
 * the rule of docs/tensormap-rules.md. How a REPOINT is made (gclaunch's patch or the driver's
 * replace) is execution's choice, after this (lib/cuda/tmap_driver.c): no path checks beside it.
 *
 * Inline (always_inline), so that the args' entry points in lib/cuda/tmap_driver.c and the tables'
 * plan in lib/core/tmap_args.c are each one straight function: a one-map re-point is this, the
 * patch and the commit, with no call on the way while the rules hold. The refusals are out of
 * line (tmap_args.c): messages are formatted only on failure. */
#ifndef GCL_TMAP_ADMIT_H
#define GCL_TMAP_ADMIT_H

#include "tmap_plan.h"

/* The refusals, formatted only on failure (tmap_args.c). Each names map i of run. */
__attribute__((noinline, cold)) gcl_status gcl__tmap_refuse_device(GCL__TMAP_RUN_PARAMS, size_t i,
                                                                   gcl__tmap_device dev,
                                                                   const DLTensor *t);
__attribute__((noinline, cold)) gcl_status gcl__tmap_refuse_repoint(GCL__TMAP_RUN_PARAMS, size_t i,
                                                                    uint64_t a);
__attribute__((noinline, cold)) gcl_status
gcl__tmap_refuse_source_flags(GCL__TMAP_RUN_PARAMS, size_t i, int rule, const DLTensor *t,
                              const gcl_tensormap_options *o, uint64_t flags);
__attribute__((noinline, cold)) gcl_status gcl__tmap_refuse_reserved(GCL__TMAP_RUN_PARAMS, size_t i,
                                                                     uint64_t r0, uint64_t r1);

/* Step i of the plan: op, to address a; returns op. */
__attribute__((always_inline)) static inline unsigned gcl__tmap_step(const gcl__tmap_space *sp,
                                                                     size_t i, unsigned op,
                                                                     uint64_t a) {
  sp->ops[i] = op;
  sp->addresses[i] = a;
  return op;
}

/* A re-point of map i of run (entry e) to address a: its slot must hold a map gclaunch
 * encoded, the address be one the driver takes (nonzero, aligned as the map needs, rule 26).
 * Step i goes to ops[i], to[i]. Scalars: the batch loop keeps them in registers. */
__attribute__((always_inline)) static inline gcl_status
gcl__tmap_admit_address(const gcl__tmap_run *run, const gcl__tmap_entry *e, size_t i, uint64_t a,
                        uint32_t *ops, uint64_t *to, unsigned *op) {
  if (!gcl__tmap_repoint_ok(e, a))
    return GCL__REFUSED_IF_CONST(i, gcl__tmap_refuse_repoint(GCL__TMAP_RUN_VALUES(run), i, a));
  *op = a == e->address ? GCL__TMAP_SKIP : GCL__TMAP_REPOINT;
  ops[i] = *op, to[i] = a;
  return GCL_OK;
}

/* A plan's answer (no status of the table) when the one-map args write asked the admission to
 * stop before a translation (defer): map 0's source passed the rules before the snapshot
 * comparison and is not the slot's description moved; gcl__tmap_admit_new is the rest. */
#define GCL__TMAP_DEFERRED ((gcl_status)0x40000002)

/* The admission's end for a source that is not its slot's description moved (t, o: item i):
 * translated through every other rule (gcl__tmap_translate) and checked against the device:
 * ENCODE, to step i of sp. */
__attribute__((always_inline)) static inline gcl_status
gcl__tmap_admit_new(const gcl__tmap_run *run, size_t i, const DLTensor *t,
                    const gcl_tensormap_options *o, gcl__tmap_device dev,
                    const gcl__tmap_space *sp, unsigned *op) {
  gcl__tmap_who name = gcl__tmap_run_who(run, i); /* a copy: the run's address is not taken */
  gcl_tensormap_desc *d = &sp->descs[i];
  /* Called, not inlined: inlined into the one-map admissions (tmap_pass.h) it saved 34
   * instructions of a new description but cost a one-map refresh about 1.3 ns on the fake
   * driver (the hit path spread over twice the code) */
  gcl_status s = gcl__tmap_translate(t, o, &name, d);
  if (s != GCL_OK) return s;
  if (!gcl__tmap_device_ok(dev.device, t))
    return gcl__tmap_refuse_device(GCL__TMAP_RUN_VALUES(run), i, dev, t);
  *op = gcl__tmap_step(sp, i, GCL__TMAP_ENCODE, d->address);
  return GCL_OK;
}

/* A source for map i of run: the DLPack flags rules (27, 28) and the source's reserved words
 * first, whatever the slot holds; then a source equal to the slot's snapshot but for the
 * address, at an address a re-point takes, on dev's device, is SKIP or REPOINT (nothing else
 * depends on the address: tmap.h's snapshot); anything else is translated through every other
 * rule (gcl__tmap_translate) and checked against the device: ENCODE. */
__attribute__((always_inline)) static inline gcl_status
gcl__tmap_admit_source(const gcl__tmap_run *run, const gcl__tmap_entry *e, size_t i,
                       const gcl__tmap_what *w, gcl__tmap_device dev, const gcl__tmap_space *sp,
                       unsigned *op, bool defer) {
  const DLTensor *t = gcl__tmap_what_tensor(w, i);
  const gcl_tensormap_options *o = gcl__tmap_what_options(w, i);
  if (w->flags) {
    uint64_t f = gcl__tmap_what_word(w->flags, w->step, i);
    int rule = gcl__tmap_flags_rule(f, o);
    if (rule)
      return gcl__tmap_refuse_source_flags(GCL__TMAP_RUN_VALUES(run), i, rule, t, o, f);
  }
  if (w->reserved) {
    uint64_t r0 = gcl__tmap_what_word(w->reserved, w->step, i);
    uint64_t r1 = gcl__tmap_what_word(w->reserved + 8, w->step, i);
    if (r0 | r1) return gcl__tmap_refuse_reserved(GCL__TMAP_RUN_VALUES(run), i, r0, r1);
  }
  uint64_t a;
  /* Expected: the hot path laid out straight, the translation (inlined in one-map calls) apart */
  if (__builtin_expect(gcl__tmap_snap_match(&e->snap, t, o) &&
                           gcl__tmap_snap_address(t, e->snap.align, &a) &&
                           gcl__tmap_device_ok(dev.device, t),
                       1)) {
    *op = gcl__tmap_step(sp, i, a == e->address ? GCL__TMAP_SKIP : GCL__TMAP_REPOINT, a);
    return GCL_OK;
  }
  /* not the slot's description moved: the rest (a one-map write may take it apart, defer) */
  return defer ? GCL__TMAP_DEFERRED : gcl__tmap_admit_new(run, i, t, o, dev, sp, op);
}

/* THE admission of map i of run (its cache entry e = run->entry + i: the hot path reads the
 * entry through e, run only names the map in a refusal), from item i of w (tensor: w->tensor
 * != NULL, a source; else an address): step i of sp and *op, or a refusal. */
__attribute__((always_inline)) static inline gcl_status
gcl__tmap_admit(const gcl__tmap_run *run, const gcl__tmap_entry *e, size_t i,
                const gcl__tmap_what *w, bool tensor, gcl__tmap_device dev,
                const gcl__tmap_space *sp, unsigned *op) {
  return tensor ? gcl__tmap_admit_source(run, e, i, w, dev, sp, op, false)
                : gcl__tmap_admit_address(run, e, i, gcl__tmap_what_word(w->address, w->step, i),
                                          sp->ops, sp->addresses, op);
}

/* gcl__tmap_plan_make's body (tmap_plan.h): gcl__tmap_admit for each map, in order, until one
 * refuses. The plan also records the interleave modes of its REPOINT steps, so that execution can tell
 * with one test whether the device patches all of them. Field by field: a compound literal of
 * the whole plan becomes `rep stos`, which costs more than planning a one-map re-point. */
/* The loop of gcl__tmap_plan_inline over maps [0, n), for sources (tensor true) or addresses:
 * the same admission, its branch decided once per batch. */
__attribute__((always_inline)) static inline gcl_status
gcl__tmap_admit_all(gcl__tmap_plan *plan, const gcl__tmap_what *w, const gcl__tmap_space *sp,
                    gcl__tmap_device dev, size_t n, bool tensor, bool defer) {
  const gcl__tmap_entry *const entry = plan->run->entry;
  size_t encodes = 0, repoints = 0;
  unsigned modes = 0;
  /* The re-points' inputs in registers (the steps' 64-bit stores may alias a size_t field). */
  const unsigned char *const at = w->address;
  const size_t step = w->step;
  uint32_t *const ops = sp->ops;
  uint64_t *const to = sp->addresses;
  for (size_t i = 0; i < n; i++) {
    unsigned op = GCL__TMAP_SKIP;
    gcl_status s = tensor ? gcl__tmap_admit_source(plan->run, entry + i, i, w, dev, sp, &op, defer)
                          : gcl__tmap_admit_address(plan->run, entry + i, i,
                                                    gcl__tmap_what_word(at, step, i), ops, to, &op);
    if (s != GCL_OK) return s;
    encodes += op == GCL__TMAP_ENCODE;
    if (op == GCL__TMAP_REPOINT) repoints++, modes |= entry[i].snap.mode;
  }
  plan->n = n;
  plan->encodes = encodes;
  plan->repoints = repoints;
  plan->repoint_modes = modes;
  return GCL_OK;
}

__attribute__((always_inline)) static inline gcl_status
gcl__tmap_plan_inline(gcl__tmap_plan *plan, const gcl__tmap_space *space, gcl__tmap_device dev,
                      size_t n, const gcl__tmap_what *what, bool defer) {
  /* Every count written first, whatever the verdict: inlined, the plan lives in registers, and
   * the compiler then sees it initialised on every path. */
  plan->n = n, plan->encodes = 0, plan->repoints = 0, plan->repoint_modes = 0;
  plan->space = space;
  if (what->tensor && dev.sm < 90)
    return GCL__REFUSED_IF_CONST(n, gcl__tmap_refuse_device(GCL__TMAP_RUN_VALUES(plan->run), 0,
                                                            dev, NULL));
  /* No copies of what or space: they were just written, and reading a struct back with wider
   * loads than its stores stalls store forwarding (measured: the copy cost more than a one-map
   * re-point); the steps are 32-bit stores, which alias none of their pointer fields. */
  gcl_status s = what->tensor ? gcl__tmap_admit_all(plan, what, space, dev, n, true, defer)
                              : gcl__tmap_admit_all(plan, what, space, dev, n, false, false);
  return s;
}

#endif
