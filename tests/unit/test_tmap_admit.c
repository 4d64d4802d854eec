/* One admission for every write of a tensor map (issue 53), against libfakecuda.so: the same
 * script of sets, re-points and refusals runs twice in one process -- once with re-points by the
 * driver (GCL_TMAP_PATCH=0), once with gclaunch's proven patch -- into args by parameter element,
 * args by struct member, a descriptor table by index, and a one-map encode. Every step must give
 * the status the script expects (the DLPack flags rules 27 and 28 refuse a read-only tensor under
 * a store map and unknown flag bits whatever the slot held: same address, moved, or fresh), and
 * the two runs must give the same statuses, the same messages and the same bytes of every map,
 * while the driver's cuTensorMapReplaceAddress is called only in the first (so the patch was
 * really taken in the second). */
#ifdef GCL_TMAP_ADMIT_GPU
/* tests/gpu/test_tmap_admit.c: the same script against the real driver (a GPU suite, skipped
 * without a device): no call counts, no fake; the patch-on run must find the patch proven. */
#include <criterion/criterion.h>
#include <string.h>

#include "gclaunch/gclaunch.h"

#define assert_msg_has(text)                                                                      \
  cr_assert(strstr(gcl_last_error(), (text)) != NULL, "message lacks \"%s\": %s", (text),        \
            gcl_last_error())
static void fake_use(void) {}
static void assert_nothing_live(void) {}
typedef struct fake_tensor {
  int64_t shape[2], strides[2];
  DLTensor t;
} fake_tensor;
static void fake_tensor_init(fake_tensor *f, uint64_t address, int64_t rows, int64_t cols) {
  f->shape[0] = rows, f->shape[1] = cols;
  f->strides[0] = cols, f->strides[1] = 1;
  f->t = (DLTensor){.data = (void *)(uintptr_t)address, .device = {kDLCUDA, 0}, .ndim = 2,
                    .dtype = {kDLFloat, 32, 1}, .shape = f->shape, .strides = f->strides};
}
static gcl_tensormap_options fake_tmap_options(void) {
  gcl_tensormap_options o;
  memset(&o, 0, sizeof o);
  o.box[0] = 32, o.box[1] = 8;
  return o;
}
#else
#include "fakecuda_test.h"
#endif
#include "args_internal.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

/* lib/cuda/cuda_internal.h's: the re-point path learned per device (0: not yet checked). */
extern _Atomic unsigned char gcl__tmap_patch_state[64];

#define SIG "grid_constant tensormap[4] maps, grid_constant struct{tensormap m, u32 n} s"
#define TABLE_K 4
#define ADDR 0x10000000ull /* the tensors' memory: the fake never reads it */
#define RO DLPACK_FLAG_BITMASK_READ_ONLY
#define MAX_STEPS 128
#define ALL_MAPS (4 + 1 + TABLE_K + 1) /* args' array, the struct's, the table's, an encode's */

typedef struct record {
  char label[64];
  gcl_status status;
  char message[512];
  unsigned char maps[ALL_MAPS][128];
} record;

typedef struct world {
  gcl_context *ctx;
  gcl_signature *sig;
  gcl_layout *layout;
  gcl_args *args;
  gcl_tensormap_table *table;
  gcl_field elem[4], member;
  _Alignas(64) unsigned char encoded[128];
  record *log;
  int steps;
} world;

/* Where a step writes: args by element 1 ... 2 of maps[4], args by struct member s.m, the table
 * at entries 1 ... 2 -- through the 0.3 calls -- and the same args elements and table entries
 * through the 0.4 verbs (slots and sources). */
enum where { ARGS_ELEMENT, ARGS_MEMBER, TABLE, SLOTS_ARGS, SLOTS_TABLE, WHERE_COUNT };
static const char *const where_names[] = {"args element", "args member", "table", "args slots",
                                          "table slots"};

static void open_world(world *w, record *log) {
  memset(w, 0, sizeof *w);
  w->log = log;
  cr_assert_eq(gcl_context_create(0, &w->ctx), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_signature_parse(SIG, &w->sig), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_layout_create(w->sig, 90, &w->layout), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_args_create(w->layout, &w->args), GCL_OK);
  cr_assert_eq(gcl_tensormap_table_create(w->ctx, TABLE_K, &w->table), GCL_OK, "%s",
               gcl_last_error());
  gcl_field whole;
  cr_assert_eq(gcl_layout_param_field(w->layout, 0, &whole), GCL_OK);
  for (size_t i = 0; i < 4; i++)
    cr_assert_eq(gcl_layout_element_field(w->layout, &whole, i, &w->elem[i]), GCL_OK);
  cr_assert_eq(gcl_layout_field(w->layout, "s.m", &w->member), GCL_OK, "%s", gcl_last_error());
}

static void close_world(world *w) {
  gcl_tensormap_table_destroy(w->table);
  gcl_args_destroy(w->args);
  gcl_layout_destroy(w->layout);
  gcl_signature_destroy(w->sig);
  gcl_context_destroy(w->ctx);
  assert_nothing_live();
}

/* Every map's bytes as the device (or the table's host copy) holds them now. */
static void snapshot(const world *w, unsigned char maps[ALL_MAPS][128]) {
  const unsigned char *data = gcl__args_data(w->args);
  for (size_t i = 0; i < 4; i++) memcpy(maps[i], data + w->elem[i].offset, 128);
  memcpy(maps[4], data + w->member.offset, 128);
  for (size_t i = 0; i < TABLE_K; i++) memcpy(maps[5 + i], gcl_tensormap_table_map(w->table, i), 128);
  memcpy(maps[ALL_MAPS - 1], w->encoded, 128);
}

/* Records a step's outcome; asserts the status the script expects, a failure's message text
 * (when given), and that a failure changed no map. */
static void note(world *w, const char *label, gcl_status s, gcl_status expect, const char *text,
                 const unsigned char before[ALL_MAPS][128]) {
  cr_assert_lt(w->steps, MAX_STEPS);
  record *r = &w->log[w->steps++];
  snprintf(r->label, sizeof r->label, "%s", label);
  r->status = s;
  snprintf(r->message, sizeof r->message, "%s", s == GCL_OK ? "" : gcl_last_error());
  snapshot(w, r->maps);
  cr_assert_eq(s, expect, "%s: status %s, expected %s (%s)", label, gcl_status_name(s),
               gcl_status_name(expect), r->message);
  if (text) cr_assert(strstr(r->message, text), "%s: message lacks \"%s\": %s", label, text, r->message);
  if (s != GCL_OK)
    cr_assert_eq(memcmp(before, r->maps, sizeof r->maps), 0, "%s: a refused write changed maps",
                 label);
}

/* A 16 x 64 float tensor at ADDR + at. */
static void tensor_at(fake_tensor *f, uint64_t at) { fake_tensor_init(f, ADDR + at, 16, 64); }

/* Writes two maps (tensors a and b with flags fl, options o) at where through the _flags form. */
/* The slots of where (SLOTS_ARGS: elements 1 ... 2; SLOTS_TABLE: entries 1 ... 2). */
static gcl_tensormap_slots slots_of(world *w, enum where where) {
  gcl_tensormap_slots at;
  gcl_status s = where == SLOTS_TABLE ? gcl_tensormap_table_slots(w->table, 1, 2, &at)
                                      : gcl_args_tensormap_slots(w->args, &w->elem[1], 2, &at);
  cr_assert_eq(s, GCL_OK, "%s", gcl_last_error());
  return at;
}

static gcl_status set2(world *w, enum where where, const DLTensor *a, const DLTensor *b,
                       const uint64_t *fl, const gcl_tensormap_options *o) {
  const DLTensor *const ts[2] = {a, b};
  if (where == SLOTS_ARGS || where == SLOTS_TABLE) {
    gcl_tensormap_slots at = slots_of(w, where);
    gcl_tensormap_source src[2] = {{.tensor = a, .dlpack_flags = fl ? fl[0] : 0},
                                   {.tensor = b, .dlpack_flags = fl ? fl[1] : 0}};
    return gcl_tensormaps_set(where == SLOTS_ARGS ? w->ctx : NULL, &at, fl ? src : NULL, o, 2);
  }
  if (where == TABLE) return gcl_tensormap_table_set_flags(w->table, 1, 2, ts, fl, o, 2, 0);
  if (where == ARGS_MEMBER) /* one map there: b alone */
    return gcl_args_set_tensormaps_flags(w->args, w->ctx, &w->member, 1, ts + 1, fl ? fl + 1 : NULL,
                                         o + 1, 1, 0);
  return gcl_args_set_tensormaps_flags(w->args, w->ctx, &w->elem[1], 2, ts, fl, o, 2, 0);
}

static gcl_status repoint2(world *w, enum where where, const uint64_t *a) {
  if (where == SLOTS_ARGS || where == SLOTS_TABLE) {
    gcl_tensormap_slots at = slots_of(w, where);
    return gcl_tensormaps_repoint(w->ctx, &at, a);
  }
  if (where == TABLE) return gcl_tensormap_table_repoint(w->table, 1, 2, a);
  if (where == ARGS_MEMBER) return gcl_args_repoint_tensormaps(w->args, w->ctx, &w->member, 1, a + 1);
  return gcl_args_repoint_tensormaps(w->args, w->ctx, &w->elem[1], 2, a);
}

#define STEP(label, call, expect, text)                                                            \
  do {                                                                                             \
    unsigned char before_[ALL_MAPS][128];                                                          \
    snapshot(w, before_);                                                                          \
    char l_[64];                                                                                   \
    snprintf(l_, sizeof l_, "%s: %s", where_names[where], label);                                 \
    note(w, l_, (call), (expect), (text), (const unsigned char(*)[128])before_);                   \
  } while (0)

/* The repro, at one place: a store map set over a writable tensor, then the same shape
 * read-only (same address, then moved), unknown flag bits, NULL flags; then what is allowed. */
static void script_at(world *w, enum where where) {
  fake_tensor a, b, b2;
  tensor_at(&a, 0), tensor_at(&b, 4096);
  gcl_tensormap_options o[2] = {fake_tmap_options(), fake_tmap_options()};
  o[0].store = 1, o[1].store = 1;
  const uint64_t none[2] = {0, 0}, ro[2] = {0, RO}, odd[2] = {0, 0x80}, both[2] = {0, RO | 0x80};
  STEP("store maps over writable tensors", set2(w, where, &a.t, &b.t, none, o), GCL_OK, NULL);
  STEP("read-only, same address", set2(w, where, &a.t, &b.t, ro, o), GCL_ERROR_TENSOR,
       "tensor is read-only (DLPack flags 0x1) but options.store is set");
  tensor_at(&b2, 8192);
  STEP("read-only, moved", set2(w, where, &a.t, &b2.t, ro, o), GCL_ERROR_TENSOR,
       "tensor is read-only (DLPack flags 0x1) but options.store is set");
  STEP("unknown bit 0x80, moved", set2(w, where, &a.t, &b2.t, odd, o), GCL_ERROR_TENSOR,
       "unsupported DLPack flags 0x80");
  STEP("unknown bit 0x80, same address", set2(w, where, &a.t, &b.t, odd, o), GCL_ERROR_TENSOR,
       "unsupported DLPack flags 0x80");
  STEP("unknown bit and read-only", set2(w, where, &a.t, &b2.t, both, o), GCL_ERROR_TENSOR,
       "unsupported DLPack flags 0x81");
  STEP("NULL flags", set2(w, where, &a.t, &b2.t, NULL, o), GCL_ERROR_INVALID_ARGUMENT,
       where >= SLOTS_ARGS ? "sources: expected 2 sources, got NULL"
                           : where == ARGS_MEMBER ? "dlpack_flags: expected 1 flags, got NULL"
                                                  : "dlpack_flags: expected 2 flags, got NULL");
  STEP("moved, writable (a re-point)", set2(w, where, &a.t, &b2.t, none, o), GCL_OK, NULL);
  STEP("same again (skipped)", set2(w, where, &a.t, &b2.t, none, o), GCL_OK, NULL);
  uint64_t to[2] = {ADDR + 12288, ADDR + 16384}, bad[2] = {ADDR + 12288, ADDR + 8};
  STEP("re-point", repoint2(w, where, to), GCL_OK, NULL);
  STEP("re-point, unaligned", repoint2(w, where, bad), GCL_ERROR_INVALID_ARGUMENT,
       "TMA needs a nonzero 16-byte aligned global address");
  STEP("read-only after a re-point", set2(w, where, &a.t, &b.t, ro, o), GCL_ERROR_TENSOR,
       "tensor is read-only");
  o[1].store = 0; /* a load map over the read-only tensor: encoded (the options changed) */
  STEP("read-only under a load map", set2(w, where, &a.t, &b.t, ro, o), GCL_OK, NULL);
  tensor_at(&b, 20480);
  STEP("read-only load map, moved", set2(w, where, &a.t, &b.t, ro, o), GCL_OK, NULL);
  o[1].store = 1; /* the same tensor, now under a store map: refused, not re-pointed */
  STEP("read-only store map after a load map", set2(w, where, &a.t, &b.t, ro, o),
       GCL_ERROR_TENSOR, "tensor is read-only");
}

/* The one-map encode: the same rules, the same words. */
static void script_encode(world *w) {
  enum where where = ARGS_ELEMENT; /* for STEP's label only */
  fake_tensor a;
  tensor_at(&a, 0);
  gcl_tensormap_options o = fake_tmap_options();
  o.store = 1;
  STEP("encode, read-only store", gcl_tensormap_encode_flags(w->ctx, &a.t, RO, &o, w->encoded),
       GCL_ERROR_TENSOR, "tensor: tensor is read-only (DLPack flags 0x1)");
  STEP("encode, bit 0x80", gcl_tensormap_encode_flags(w->ctx, &a.t, 0x80, &o, w->encoded),
       GCL_ERROR_TENSOR, "tensor: unsupported DLPack flags 0x80");
  STEP("encode", gcl_tensormap_encode_flags(w->ctx, &a.t, 0, &o, w->encoded), GCL_OK, NULL);
}

/* The whole script in a fresh world with the patch on or off; the driver re-points it cost. */
static long run_script(record *log, int *steps, bool patch) {
  if (patch) unsetenv("GCL_TMAP_PATCH");
  else setenv("GCL_TMAP_PATCH", "0", 1);
  atomic_store(&gcl__tmap_patch_state[0], 0); /* learn the path again, from the variable */
  world w;
  open_world(&w, log);
  gcl_tensormap_path path;
  cr_assert_eq(gcl_tensormap_repoint_path(w.ctx, &path), GCL_OK, "%s", gcl_last_error());
#ifdef GCL_TMAP_ADMIT_GPU
  cr_assert(!patch || path.patched, "the device proved no re-point by patch: %s", path.reason);
  long before = 0;
#else
  cr_assert_eq(path.patched, patch ? 7u : 0u, "patched 0x%x: %s", path.patched, path.reason);
  long before = fakecuda_calls("cuTensorMapReplaceAddress");
#endif
  for (int where = 0; where < WHERE_COUNT; where++) script_at(&w, (enum where)where);
  script_encode(&w);
#ifdef GCL_TMAP_ADMIT_GPU
  long replaced = patch ? 0 : 1 + before; /* not counted on a real driver */
#else
  long replaced = fakecuda_calls("cuTensorMapReplaceAddress") - before;
#endif
  *steps = w.steps;
  close_world(&w);
  return replaced;
}

Test(tmap_admit, same_verdicts_messages_and_bytes_with_the_patch_on_and_off, .init = fake_use) {
  static record off[MAX_STEPS], on[MAX_STEPS];
  int n_off = 0, n_on = 0;
  long by_driver = run_script(off, &n_off, false);
  long with_patch = run_script(on, &n_on, true);
  cr_assert_gt(by_driver, 0, "GCL_TMAP_PATCH=0 re-pointed nothing through the driver");
  cr_assert_eq(with_patch, 0, "with the patch proven, %ld re-points still called the driver",
               with_patch);
  cr_assert_eq(n_off, n_on);
  for (int i = 0; i < n_on; i++) {
    cr_assert_str_eq(off[i].label, on[i].label);
    cr_assert_eq(off[i].status, on[i].status, "%s: %s off, %s on", on[i].label,
                 gcl_status_name(off[i].status), gcl_status_name(on[i].status));
    cr_assert_str_eq(off[i].message, on[i].message, "%s: messages differ", on[i].label);
    for (int m = 0; m < ALL_MAPS; m++)
      cr_assert_eq(memcmp(off[i].maps[m], on[i].maps[m], 128), 0,
                   "%s: map %d's bytes differ with the patch on and off", on[i].label, m);
  }
}

#ifndef GCL_TMAP_ADMIT_GPU
/* Rules 27 and 28 are numbered rows of docs/tensormap-rules.md, as every rule the admission
 * applies. */
Test(tmap_admit, flags_rules_are_numbered_in_the_docs) {
  char path[4096];
  snprintf(path, sizeof path, "%s/docs/tensormap-rules.md", gcl_test_source_dir());
  FILE *f = fopen(path, "r");
  cr_assert(f, "cannot open %s", path);
  char line[4096];
  bool r27 = false, r28 = false;
  while (fgets(line, sizeof line, f)) {
    r27 |= strncmp(line, "| 27 |", 6) == 0 && strstr(line, "unsupported DLPack flags");
    r28 |= strncmp(line, "| 28 |", 6) == 0 && strstr(line, "tensor is read-only");
  }
  fclose(f);
  cr_assert(r27 && r28, "rules 27 (%d) and 28 (%d) missing from %s", r27, r28, path);
}
#endif

/* The slots and sources' own refusals, before any map: nothing changes. */
Test(tmap_admit, slots_and_sources_refusals, .init = fake_use) {
  static record log[MAX_STEPS];
  world w;
  open_world(&w, log);
  fake_tensor a;
  tensor_at(&a, 0);
  gcl_tensormap_options o = fake_tmap_options();
  gcl_tensormap_slots at, bad;
  cr_assert_eq(gcl_args_tensormap_slots(w.args, &w.elem[3], 2, &at), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("n = 2 maps from here, but only 1 lie");
  cr_assert_eq(gcl_args_tensormap_slots(w.args, &w.elem[0], 0, &at), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl_tensormap_table_slots(w.table, 3, 2, &at), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("the table has 4 maps");
  cr_assert_eq(gcl_args_tensormap_slots(w.args, &w.elem[0], 1, &at), GCL_OK, "%s", gcl_last_error());
  gcl_tensormap_source src = {.tensor = &a.t};
  bad = at, bad.table = w.table;
  cr_assert_eq(gcl_tensormaps_set(w.ctx, &bad, &src, &o, 1), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("gcl_tensormaps_set: where names both args and a table");
  bad = at, bad.reserved[2] = 5;
  cr_assert_eq(gcl_tensormaps_set(w.ctx, &bad, &src, &o, 1), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("where->reserved[2] is 0x5");
  src.reserved[1] = 9;
  cr_assert_eq(gcl_tensormaps_set(w.ctx, &at, &src, &o, 1), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("parameter 0 'maps' field 'maps[0]': source.reserved[1] is 0x9");
  src.reserved[1] = 0;
  cr_assert_eq(gcl_tensormaps_set(NULL, &at, &src, &o, 1), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("gcl_tensormaps_set: ctx is NULL");
  cr_assert_eq(gcl_tensormaps_repoint(w.ctx, &at, (const uint64_t[]){ADDR}), GCL_ERROR_UNSET_ARGUMENT);
  gcl_context *other = NULL;
  cr_assert_eq(gcl_context_create(0, &other), GCL_OK);
  gcl_tensormap_slots t;
  cr_assert_eq(gcl_tensormap_table_slots(w.table, 0, 1, &t), GCL_OK);
  if (other != w.ctx) { /* a second context object of the same device */
    cr_assert_eq(gcl_tensormaps_set(other, &t, &src, &o, 1), GCL_ERROR_INVALID_ARGUMENT);
    assert_msg_has("ctx is not the table's context");
  }
  gcl_context_destroy(other);
  cr_assert_eq(gcl_tensormap_table_dirty(w.table), 0, "a refused set dirtied the table");
  cr_assert_eq(gcl_tensormaps_set(NULL, &t, &src, &o, 1), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_tensormaps_set(w.ctx, &at, &src, &o, 1), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_tensormap_table_dirty(w.table), 1);
  close_world(&w);
}
