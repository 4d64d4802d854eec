/* Tensor-map batches, planned (tmap_plan.h), and the tensor-map cache of args: one slot per
 * tensormap leaf of the layout (top level, in arrays, in structs, in arrays of structs), numbered
 * in buffer order when the layout is made. A slot remembers where its map points and the inputs
 * gclaunch last encoded it from (tmap.h's snapshot), so that a plan re-points instead of
 * re-encoding. The plan is made here: every check, the cache read and every failure message but
 * the driver's own; lib/cuda/tensormap.c executes it and the commit (tmap_plan.h, and
 * args_internal.h for args) changes the maps and slots. Here too: forgetting slots when raw bytes
 * are written over their maps. */
#include "args_internal.h" /* and layout_internal.h */

#include <string.h>

gcl_status gcl__args_tmap_run_error(const gcl_args *a, const gcl_field *f, size_t n,
                                    const char *fn) {
  if (!f) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: first is NULL", fn);
  if (gcl__f_layout(f) != a->layout || f->param >= a->count)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: the field was resolved in another layout "
                     "than the args' (a field belongs to the layout given to gcl_layout_field)", fn);
  char l[768];
  gcl__field_label(f, l, sizeof l);
  size_t span = gcl__f(f, GCL__F_SPAN);
  if (!span)
    return gcl__fail(GCL_ERROR_TYPE_MISMATCH, "%s: %s is no tensor map (%zu bytes, %s): expected "
                     "a tensormap leaf or an array of them", fn, l, f->size,
                     f->info.kind == GCL_PARAM_STRUCT ? "a struct: name one of its maps" : "not a map");
  return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: %s: n = %zu maps from here, but only %zu lie "
                   "from here to the end of its array (a map in no array counts as one)", fn, l,
                   n, span);
}

void gcl__args_tmap_forget(gcl_args *args, size_t slot, size_t n) {
  for (size_t i = slot; i < slot + n; i++) args->tmaps[i].snap.ndim = 0;
}

/* --- the plan: one admission per map ------------------------------------------------------ */

__attribute__((noinline, cold)) gcl_status
gcl__tmap_what_error(size_t n, const void *items, const char *items_name, const uint64_t *dlflags,
                     bool with_flags, const gcl_tensormap_options *options, size_t options_count,
                     unsigned flags, const char *fn) {
  if (!items)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: %s: expected %zu %s, got NULL", fn,
                     items_name, n, items_name);
  if (!options)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: options: expected a pointer, got NULL", fn);
  if (options_count != 1 && options_count != n)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: options_count = %zu: expected 1 (the same "
                     "options for every map) or n = %zu", fn, options_count, n);
  if (with_flags && !dlflags)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: dlpack_flags: expected %zu flags, got NULL",
                     fn, n);
  return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: flags = 0x%x: expected 0 or "
                   "GCL_TENSORMAP_REFRESH (0x1)", fn, flags);
}

__attribute__((noinline, cold)) static gcl_status device_error(const gcl__tmap_run *run, size_t i,
                                                               gcl__tmap_device dev,
                                                               const DLTensor *t) {
  gcl__tmap_who who = gcl__tmap_run_who(run, i);
  if (dev.sm < 90)
    return gcl__tmap_fail(&who, GCL_ERROR_INVALID_ARGUMENT,
                          "device %d is sm_%d: tensor maps need sm_90 or later", dev.device, dev.sm);
  return gcl__tmap_fail(&who, GCL_ERROR_TENSOR, "tensor is on CUDA device %d, the context on "
                        "device %d", (int)t->device.device_id, dev.device);
}

__attribute__((noinline, cold)) static gcl_status repoint_refused(const gcl__tmap_run *run,
                                                                  size_t i, uint64_t a) {
  gcl__tmap_who who = gcl__tmap_run_who(run, i);
  const gcl__tmap_snap *snap = &run->entry[i].snap;
  if (!snap->ndim)
    return gcl__tmap_fail(&who, GCL_ERROR_UNSET_ARGUMENT,
                          "no tensor map encoded by gclaunch here to re-point (encode it with "
                          "gcl_args_set_tensormaps or gcl_tensormap_table_set first; raw setters "
                          "forget it)");
  return gcl__tmap_fail(&who, GCL_ERROR_INVALID_ARGUMENT,
                        "address 0x%llx: TMA needs a nonzero %u-byte aligned global address "
                        "below 2^57 = 0x200000000000000", (unsigned long long)a, snap->align);
}

__attribute__((noinline, cold)) static gcl_status flags_refused(const gcl__tmap_run *run, size_t i,
                                                                int rule,
                                                                const gcl__tmap_what *w) {
  gcl__tmap_who who = gcl__tmap_run_who(run, i);
  return gcl__tmap_refuse_flags(rule, &who, gcl__tmap_what_tensor(w, i),
                                gcl__tmap_what_options(w, i),
                                gcl__tmap_what_word(w->flags, w->step, i));
}

__attribute__((noinline, cold)) static gcl_status reserved_refused(const gcl__tmap_run *run,
                                                                   size_t i,
                                                                   const gcl__tmap_what *w) {
  gcl__tmap_who who = gcl__tmap_run_who(run, i);
  uint64_t r0 = gcl__tmap_what_word(w->reserved, w->step, i);
  uint64_t r1 = gcl__tmap_what_word(w->reserved + 8, w->step, i);
  return gcl__tmap_fail(&who, GCL_ERROR_INVALID_ARGUMENT, "source.reserved[%d] is 0x%llx, "
                        "expected 0 (zero-initialise the sources)", r0 ? 0 : 1,
                        (unsigned long long)(r0 ? r0 : r1));
}

/* Step i of the plan: op, to address a. */
static inline void step(const gcl__tmap_space *sp, size_t i, unsigned op, uint64_t a) {
  sp->ops[i] = (unsigned char)op;
  sp->addresses[i] = a;
}

/* A re-point of map i of run: its slot must hold a map gclaunch encoded, the address be one the
 * driver takes (rule 26 and address 0). */
__attribute__((always_inline)) static inline gcl_status
admit_address(const gcl__tmap_run *run, size_t i, const gcl__tmap_what *w,
              const gcl__tmap_space *sp) {
  const gcl__tmap_entry *e = &run->entry[i];
  uint64_t a = gcl__tmap_what_word(w->address, w->step, i);
  if (!gcl__tmap_repoint_ok(e, a)) return repoint_refused(run, i, a);
  step(sp, i, a == e->address ? GCL__TMAP_SKIP : GCL__TMAP_REPOINT, a);
  return GCL_OK;
}

/* A source for map i of run: the DLPack flags rules (27, 28) and the source's reserved words
 * first, whatever the slot holds; then a source equal to the slot's snapshot but for the
 * address, at an address a re-point takes, on dev's device, is SKIP or REPOINT (nothing else
 * depends on the address: tmap.h's snapshot); anything else is translated through every other
 * rule (gcl__tmap_translate) and checked against the device: ENCODE. */
__attribute__((always_inline)) static inline gcl_status
admit_source(const gcl__tmap_run *run, size_t i, const gcl__tmap_what *w, gcl__tmap_device dev,
             const gcl__tmap_space *sp) {
  const DLTensor *t = gcl__tmap_what_tensor(w, i);
  const gcl_tensormap_options *o = gcl__tmap_what_options(w, i);
  if (w->flags) {
    int rule = gcl__tmap_flags_rule(gcl__tmap_what_word(w->flags, w->step, i), o);
    if (rule) return flags_refused(run, i, rule, w);
  }
  if (w->reserved && (gcl__tmap_what_word(w->reserved, w->step, i) |
                      gcl__tmap_what_word(w->reserved + 8, w->step, i)))
    return reserved_refused(run, i, w);
  const gcl__tmap_entry *e = &run->entry[i];
  uint64_t a;
  if (gcl__tmap_snap_match(&e->snap, t, o) && gcl__tmap_snap_address(t, e->snap.align, &a) &&
      gcl__tmap_device_ok(dev.device, t)) {
    step(sp, i, a == e->address ? GCL__TMAP_SKIP : GCL__TMAP_REPOINT, a);
    return GCL_OK;
  }
  gcl__tmap_who who = gcl__tmap_run_who(run, i);
  gcl_tensormap_desc *d = &sp->descs[i];
  gcl_status s = gcl__tmap_translate(t, o, &who, d);
  if (s != GCL_OK) return s;
  if (!gcl__tmap_device_ok(dev.device, t)) return device_error(run, i, dev, t);
  step(sp, i, GCL__TMAP_ENCODE, d->address);
  return GCL_OK;
}

/* THE admission of a map (tmap_plan.h): every write of a map, whatever the owner (args, table,
 * a one-map encode) or the caller (C, Python, peers), is decided here and only here -- SKIP,
 * REPOINT, ENCODE (space's step i) or a refusal naming the map and the rule. How a REPOINT is
 * made (patch or driver) is execution's choice (lib/cuda/tensormap.c), after this. */
__attribute__((always_inline)) static inline gcl_status
admit(const gcl__tmap_run *run, size_t i, const gcl__tmap_what *w, gcl__tmap_device dev,
                const gcl__tmap_space *sp) {
  return w->tensor ? admit_source(run, i, w, dev, sp) : admit_address(run, i, w, sp);
}

/* Field by field: a compound literal of the whole plan becomes `rep stos`, which costs more than
 * planning a one-map re-point. */
static inline void plan_fill(gcl__tmap_plan *p, size_t n, size_t encodes, size_t repoints,
                             const gcl__tmap_space *space, const gcl__tmap_what *what) {
  p->n = n;
  p->encodes = encodes;
  p->repoints = repoints;
  p->space = space;
  p->what = what;
}

/* The plan's body, inlined into the args' entry point (one call less on the hot path) and behind
 * gcl__tmap_plan_make for tables and one-map encodes. */
__attribute__((always_inline)) static inline gcl_status
plan_make(gcl__tmap_plan *plan, const gcl__tmap_space *space, gcl__tmap_device dev, size_t n,
          const gcl__tmap_what *what) {
  if (what->tensor && dev.sm < 90) return device_error(&plan->run, 0, dev, NULL);
  size_t count[3] = {0, 0, 0}; /* by op: SKIP, REPOINT, ENCODE */
  for (size_t i = 0; i < n; i++) {
    gcl_status s = admit(&plan->run, i, what, dev, space);
    if (s != GCL_OK) return s;
    count[space->ops[i]]++;
  }
  plan_fill(plan, n, count[GCL__TMAP_ENCODE], count[GCL__TMAP_REPOINT], space, what);
  return GCL_OK;
}

gcl_status gcl__tmap_plan_make(gcl__tmap_plan *plan, const gcl__tmap_space *space,
                               gcl__tmap_device dev, size_t n, const gcl__tmap_what *what) {
  return plan_make(plan, space, dev, n, what);
}

gcl_status gcl__args_tmap_plan(gcl_args *args, const gcl_field *first, size_t n,
                               gcl__tmap_device dev, const gcl__tmap_what *what, const char *fn,
                               gcl__tmap_plan *plan) {
  gcl_status s = gcl__args_tmap_run(args, first, n, fn, &plan->run);
  if (s != GCL_OK) return s;
  return plan_make(plan, &args->tspace, dev, n, what);
}
