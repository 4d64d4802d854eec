/* Refreshing and re-pointing tensor maps on the CPU, against libfakecuda.so (whose encodes are a
 * function of every argument, and whose cuTensorMapReplaceAddress patches exactly what a fresh
 * encode at another address changes): for random tiled and im2col descriptions, a refresh or an
 * address replacement must leave the bytes of a fresh encode at the new address, call the
 * driver's replace-address (not an encode) when only the address changed, re-encode otherwise,
 * and change nothing when it fails. */
#include "fakecuda_test.h"

#include <pthread.h>
#include <stdio.h>

#include "args_internal.h"
#define UNIT_RNG_SEED 0x9e3779b97f4a7c15ull
#include "../common/test_rng.h"
#include "../common/tmap_field.h"
#include "../common/tmap_gen.h"
#include "../common/tmap_rig.h"

#define N_MAPS 8
#define SIG "grid_constant tensormap[8] maps, u32 n, grid_constant tensormap one"

typedef tmap_rig rig;
static void open_rig(rig *r) { tmap_rig_open(r, SIG, 1 << 22, false); }
static void close_rig(rig *r) { tmap_rig_close(r); }

static const unsigned char *map_at(const rig *r, size_t element) {
  return (const unsigned char *)gcl__args_data(r->args) + r->maps_at + 128 * element;
}

/* --- random descriptions that every check accepts --------------------------------------------- */

/* The shared generator (tmap_gen.h): descriptions every rule gclaunch knows accepts. */
typedef tmap_case desc;
static tmap_gen gen = {0x2545f4914f6cdd1dull};

static void random_desc(desc *d, uint64_t mem, bool im2col) { tmap_gen_valid(&gen, d, mem, im2col); }

/* The same description moved to another aligned address. */
static void move(desc *d, uint64_t mem) {
  d->t.data = (void *)(uintptr_t)mem;
  d->t.byte_offset = (d->o.interleave == GCL_TENSORMAP_INTERLEAVE_32B ? 32u : 16u) * rnd(64);
}

/* A fresh encode of d, to compare with. */
static void fresh(const rig *r, const desc *d, unsigned char out[128]) {
  _Alignas(64) unsigned char m[128];
  cr_assert_eq(gcl_tensormap_encode(r->ctx, &d->t, &d->o, m), GCL_OK, "%s", gcl_last_error());
  memcpy(out, m, 128);
}

static void assert_fresh(const rig *r, size_t element, const desc *d, const char *what, int i) {
  unsigned char want[128];
  fresh(r, d, want);
  cr_assert(memcmp(map_at(r, element), want, 128) == 0,
            "%s, case %d (rank %d, im2col %u): bytes differ from a fresh encode", what, i,
            d->t.ndim, d->o.im2col.pixels);
}

/* --- refresh and replace against fresh encodes ------------------------------------------------ */

Test(tmap_refresh, same_description_replaces_address_with_fresh_bytes) {
  rig r;
  open_rig(&r);
  for (int i = 0; i < 400; i++) {
    desc d;
    size_t e = rnd(N_MAPS);
    random_desc(&d, r.mem + 4096 * rnd(64), i % 3 == 0);
    cr_assert_eq(gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, e), 1, (const DLTensor *const[]){&d.t}, &d.o, 1, 0), GCL_OK, "case %d: %s", i,
                 gcl_last_error());
    move(&d, r.mem + 4096 * rnd(64));
    long enc = fakecuda_calls("cuTensorMapEncodeTiled") + fakecuda_calls("cuTensorMapEncodeIm2col");
    cr_assert_eq(gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, e), 1, (const DLTensor *const[]){&d.t}, &d.o, 1, GCL_TENSORMAP_REFRESH), GCL_OK, "%s",
                 gcl_last_error());
    long enc_after =
        fakecuda_calls("cuTensorMapEncodeTiled") + fakecuda_calls("cuTensorMapEncodeIm2col");
    cr_assert_eq(enc_after, enc, "case %d: a refresh of the same description encoded", i);
    assert_fresh(&r, e, &d, "refresh", i);
  }
  close_rig(&r);
}

Test(tmap_refresh, changed_description_reencodes) {
  rig r;
  open_rig(&r);
  for (int i = 0; i < 300; i++) {
    desc a, b;
    random_desc(&a, r.mem, i % 4 == 0);
    random_desc(&b, r.mem + 4096 * rnd(64), i % 5 == 0);
    cr_assert_eq(gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 3), 1, (const DLTensor *const[]){&a.t}, &a.o, 1, 0), GCL_OK, "%s",
                 gcl_last_error());
    cr_assert_eq(gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 3), 1, (const DLTensor *const[]){&b.t}, &b.o, 1, GCL_TENSORMAP_REFRESH), GCL_OK, "%s",
                 gcl_last_error());
    assert_fresh(&r, 3, &b, "refresh of a new description", i);
  }
  /* One field at a time: each must reach the bytes (the cache key is exact, not a hash). */
  desc a;
  random_desc(&a, r.mem, false);
  cr_assert_eq(gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 1), 1, (const DLTensor *const[]){&a.t}, &a.o, 1, 0), GCL_OK);
  a.o.l2_promotion = (a.o.l2_promotion + 1) % 4;
  long enc = fakecuda_calls("cuTensorMapEncodeTiled");
  cr_assert_eq(gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 1), 1, (const DLTensor *const[]){&a.t}, &a.o, 1, GCL_TENSORMAP_REFRESH), GCL_OK);
  cr_assert_eq(fakecuda_calls("cuTensorMapEncodeTiled"), enc + 1, "l2_promotion change re-encodes");
  assert_fresh(&r, 1, &a, "l2 change", 0);
  close_rig(&r);
}

Test(tmap_refresh, replace_address_gives_fresh_bytes) {
  rig r;
  open_rig(&r);
  for (int i = 0; i < 300; i++) {
    desc d;
    random_desc(&d, r.mem, i % 3 == 1);
    cr_assert_eq(gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 5), 1, (const DLTensor *const[]){&d.t}, &d.o, 1, 0), GCL_OK, "%s",
                 gcl_last_error());
    move(&d, r.mem + 4096 * rnd(64));
    uint64_t a = (uint64_t)(uintptr_t)d.t.data + d.t.byte_offset;
    cr_assert_eq(gcl_args_repoint_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 5), 1, (const uint64_t[]){a}), GCL_OK, "%s",
                 gcl_last_error());
    assert_fresh(&r, 5, &d, "replace-address", i);
  }
  /* The whole-tensormap parameter works the same way. */
  desc d;
  random_desc(&d, r.mem, false);
  cr_assert_eq(gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 2, 0), 1, (const DLTensor *const[]){&d.t}, &d.o, 1, 0), GCL_OK);
  move(&d, r.mem + 8192);
  cr_assert_eq(gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 2, 0), 1, (const DLTensor *const[]){&d.t}, &d.o, 1, GCL_TENSORMAP_REFRESH), GCL_OK);
  unsigned char want[128];
  fresh(&r, &d, want);
  size_t one_at;
  cr_assert_eq(gcl_layout_param(r.layout, 2, &one_at, NULL, NULL), GCL_OK);
  cr_assert(memcmp((const unsigned char *)gcl__args_data(r.args) + one_at, want, 128) == 0);
  close_rig(&r);
}

/* Snapshot of the buffer and the cache: a failed call must leave both as they were. */
typedef struct snapshot {
  unsigned char data[4096];
  gcl__tmap_entry tmaps[N_MAPS];
} snapshot;

static void take(const rig *r, snapshot *s) {
  memcpy(s->data, gcl__args_data(r->args), gcl_layout_size(r->layout));
  memcpy(s->tmaps, r->args->tmaps, sizeof s->tmaps);
}

static void assert_unchanged(const rig *r, const snapshot *s, const char *what) {
  cr_assert(memcmp(s->data, gcl__args_data(r->args), gcl_layout_size(r->layout)) == 0,
            "%s changed the buffer", what);
  cr_assert(memcmp(s->tmaps, r->args->tmaps, sizeof s->tmaps) == 0,
            "%s changed the cache", what);
}

static void set_all(rig *r, desc *d) {
  const DLTensor *t[N_MAPS];
  gcl_tensormap_options o[N_MAPS];
  for (int i = 0; i < N_MAPS; i++) {
    random_desc(&d[i], r->mem + 4096 * (uint64_t)i, i == 2);
    t[i] = &d[i].t, o[i] = d[i].o;
  }
  cr_assert_eq(gcl_args_set_tensormaps(r->args, r->ctx, TMAP_FIELD(r->args, 0, 0), N_MAPS, t, o, N_MAPS, 0), GCL_OK, "%s",
               gcl_last_error());
}

Test(tmap_refresh, replace_refusals_change_nothing) {
  rig r;
  tmap_rig_driver_path(); /* the driver's refusal and its undo */
  open_rig(&r);
  snapshot s;
  take(&r, &s);
  cr_assert_eq(gcl_args_repoint_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 2), 1, (const uint64_t[]){r.mem}), GCL_ERROR_UNSET_ARGUMENT);
  assert_msg_has("parameter 0 'maps' field 'maps[2]': no tensor map encoded by gclaunch here");
  desc d[N_MAPS];
  set_all(&r, d);
  take(&r, &s);
  cr_assert_eq(gcl_args_repoint_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 4), 1, (const uint64_t[]){r.mem + 8}),
               GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("parameter 0 'maps' field 'maps[4]': address 0x");
  assert_msg_has("16-byte aligned");
  uint64_t addrs[3] = {r.mem + 64, r.mem + 128, 0};
  cr_assert_eq(gcl_args_repoint_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 1), 3, addrs),
               GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("field 'maps[3]': address 0x0");
  addrs[2] = UINT64_C(1) << 57; /* aligned, but past the driver's bound (measured, driver 580) */
  cr_assert_eq(gcl_args_repoint_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 1), 3, addrs),
               GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("field 'maps[3]': address 0x200000000000000: TMA needs a nonzero 16-byte "
                 "aligned global address below 2^57");
  addrs[2] = 0;
  cr_assert_eq(gcl_args_repoint_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 6), 3, addrs),
               GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("field 'maps[6]': n = 3 maps from here, but only 2 lie");
  cr_assert_eq(gcl_args_repoint_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 1, 0), 1, (const uint64_t[]){r.mem}), GCL_ERROR_TYPE_MISMATCH);
  assert_msg_has("parameter 1 'n' is no tensor map");
  cr_assert_eq(gcl_args_repoint_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 2, 0), 2, addrs),
               GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("parameter 2 'one': n = 2 maps from here, but only 1 lie");
  assert_unchanged(&r, &s, "refused replacements");
  /* The driver failing on the third map: the first two are put back. */
  addrs[2] = r.mem + 256;
  fakecuda_fail_once("cuTensorMapReplaceAddress", 1, 2);
  cr_assert_eq(gcl_args_repoint_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 1), 3, addrs), GCL_ERROR_DRIVER);
  assert_msg_has("field 'maps[3]': cuTensorMapReplaceAddress(0x");
  assert_unchanged(&r, &s, "a replacement the driver failed");
  /* A raw write over a map makes gclaunch forget it. */
  unsigned char raw[128] = {0};
  cr_assert_eq(gcl_args_set_element(r.args, 0, 6, raw, sizeof raw), GCL_OK);
  cr_assert_eq(gcl_args_repoint_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 6), 1, (const uint64_t[]){r.mem}), GCL_ERROR_UNSET_ARGUMENT);
  desc e = d[6];
  move(&e, r.mem + 4096);
  long enc = fakecuda_calls("cuTensorMapEncodeTiled") + fakecuda_calls("cuTensorMapEncodeIm2col");
  cr_assert_eq(gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 6), 1, (const DLTensor *const[]){&e.t}, &e.o, 1, GCL_TENSORMAP_REFRESH), GCL_OK);
  cr_assert_eq(fakecuda_calls("cuTensorMapEncodeTiled") + fakecuda_calls("cuTensorMapEncodeIm2col"),
               enc + 1, "a refresh over raw bytes re-encodes");
  assert_fresh(&r, 6, &e, "refresh over raw bytes", 0);
  close_rig(&r);
}

/* --- batches ------------------------------------------------------------------------------------ */

Test(tmap_refresh, batch_set_equals_single_sets) {
  rig r;
  open_rig(&r);
  for (int round = 0; round < 40; round++) {
    desc d[N_MAPS];
    set_all(&r, d);
    for (int i = 0; i < N_MAPS; i++) assert_fresh(&r, (size_t)i, &d[i], "batch set", round);
  }
  /* One options struct for every map. */
  desc d[4];
  const DLTensor *t[4];
  for (int i = 0; i < 4; i++) {
    random_desc(&d[i], r.mem + 4096 * (uint64_t)i, false);
    d[i].o = d[0].o;
    t[i] = &d[i].t;
  }
  gcl_status s = gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 4), 4, t, &d[0].o, 1, 0);
  if (s == GCL_OK)
    for (int i = 0; i < 4; i++) assert_fresh(&r, 4 + (size_t)i, &d[i], "shared options", i);
  else /* the shared box may not fit another rank or dtype: then the message names the element */
    cr_assert(strstr(gcl_last_error(), "parameter 0 'maps' field 'maps["), "%s", gcl_last_error());
  cr_assert_eq(gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 0), 2, t, &d[0].o, 3, 0), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("options_count = 3: expected 1");
  close_rig(&r);
}

Test(tmap_refresh, batch_failure_changes_nothing) {
  rig r;
  open_rig(&r);
  desc d[N_MAPS];
  set_all(&r, d);
  snapshot s;
  take(&r, &s);
  const DLTensor *t[N_MAPS];
  gcl_tensormap_options o[N_MAPS];
  desc nd[N_MAPS];
  for (int i = 0; i < N_MAPS; i++) {
    random_desc(&nd[i], r.mem, false);
    t[i] = &nd[i].t, o[i] = nd[i].o;
  }
  nd[5].t.byte_offset += 4; /* misaligned: refused before the driver */
  cr_assert_eq(gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 0), N_MAPS, t, o, N_MAPS, 0), GCL_ERROR_TENSOR);
  assert_msg_has("parameter 0 'maps' field 'maps[5]': data + byte_offset");
  assert_unchanged(&r, &s, "a failed batch set");
  cr_assert_eq(gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 0), N_MAPS, t, o, N_MAPS, GCL_TENSORMAP_REFRESH), GCL_ERROR_TENSOR);
  assert_unchanged(&r, &s, "a failed batch refresh");
  nd[5].t.byte_offset -= 4;
  fakecuda_fail_once("cuTensorMapEncodeTiled", 1, 6); /* the driver refuses the seventh */
  gcl_status st = gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 0), N_MAPS, t, o, N_MAPS, 0);
  cr_assert_eq(st, GCL_ERROR_DRIVER, "%s", gcl_last_error());
  assert_unchanged(&r, &s, "a batch set the driver failed");
  fakecuda_fail_once("cuTensorMapEncodeTiled", 0, 0);
  close_rig(&r);
}

Test(tmap_refresh, batch_refresh_mixed) {
  rig r;
  open_rig(&r);
  for (int round = 0; round < 30; round++) {
    desc d[N_MAPS];
    set_all(&r, d);
    const DLTensor *t[N_MAPS];
    gcl_tensormap_options o[N_MAPS];
    int changed = 0;
    for (int i = 0; i < N_MAPS; i++) {
      if (rnd(3) == 0) random_desc(&d[i], r.mem, i == 1), changed++;
      else if (rnd(2)) move(&d[i], r.mem + 4096 * rnd(64));
      t[i] = &d[i].t, o[i] = d[i].o;
    }
    long enc = fakecuda_calls("cuTensorMapEncodeTiled") + fakecuda_calls("cuTensorMapEncodeIm2col");
    cr_assert_eq(gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 0), N_MAPS, t, o, N_MAPS, GCL_TENSORMAP_REFRESH), GCL_OK,
                 "%s", gcl_last_error());
    long enc_after =
        fakecuda_calls("cuTensorMapEncodeTiled") + fakecuda_calls("cuTensorMapEncodeIm2col");
    cr_assert_leq(enc_after - enc, changed, "round %d: more encodes than changed descriptions", round);
    for (int i = 0; i < N_MAPS; i++) assert_fresh(&r, (size_t)i, &d[i], "batch refresh", round);
  }
  close_rig(&r);
}

/* A thread with no current context: the driver may ask for one; gclaunch binds ctx and retries. */
static void *replace_on_thread(void *arg) {
  rig *r = arg;
  uint64_t a[N_MAPS];
  for (int i = 0; i < N_MAPS; i++) a[i] = r->mem + 65536 + 256 * (uint64_t)i;
  return (void *)(uintptr_t)gcl_args_repoint_tensormaps(r->args, r->ctx, TMAP_FIELD(r->args, 0, 0), N_MAPS, a);
}

Test(tmap_refresh, replace_binds_context_when_asked) {
  rig r;
  tmap_rig_driver_path(); /* the driver asks for a context: bound, and asked again */
  open_rig(&r);
  desc d[N_MAPS];
  set_all(&r, d);
  pthread_t th;
  void *ret = NULL;
  cr_assert_eq(pthread_create(&th, NULL, replace_on_thread, &r), 0);
  pthread_join(th, &ret);
  cr_assert_eq((gcl_status)(uintptr_t)ret, GCL_OK);
  for (int i = 0; i < N_MAPS; i++) {
    d[i].t.data = (void *)(uintptr_t)(r.mem + 65536 + 256 * (uint64_t)i);
    d[i].t.byte_offset = 0;
    assert_fresh(&r, (size_t)i, &d[i], "replace on another thread", i);
  }
  close_rig(&r);
}


/* --- maps inside a globals struct: the same calls, the same cache ----------------------------- */

#define GSIG "grid_constant struct{u32 n, tensormap[5] loads, ptr work, " \
             "struct{tensormap a, u64 len}[3] segs, tensormap align(64) last} g"

typedef struct gmaps {
  gcl_layout *layout;
  gcl_args *args;
  gcl_field loads0, segs_a[3], last, n, whole;
} gmaps;

static void open_gmaps(const rig *r, gmaps *g) {
  gcl_signature *sig;
  cr_assert_eq(gcl_signature_parse(GSIG, &sig), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_layout_create(sig, 90, &g->layout), GCL_OK, "%s", gcl_last_error());
  gcl_signature_destroy(sig);
  cr_assert_eq(gcl_args_create(g->layout, &g->args), GCL_OK);
  cr_assert_eq(gcl_layout_field(g->layout, "g.loads[0]", &g->loads0), GCL_OK);
  char path[32];
  for (int i = 0; i < 3; i++) {
    snprintf(path, sizeof path, "g.segs[%d].a", i);
    cr_assert_eq(gcl_layout_field(g->layout, path, &g->segs_a[i]), GCL_OK, "%s", gcl_last_error());
  }
  cr_assert_eq(gcl_layout_field(g->layout, "g.last", &g->last), GCL_OK);
  cr_assert_eq(gcl_layout_field(g->layout, "g.n", &g->n), GCL_OK);
  cr_assert_eq(gcl_layout_field(g->layout, "g", &g->whole), GCL_OK);
  (void)r;
}

static void close_gmaps(gmaps *g) {
  gcl_args_destroy(g->args);
  gcl_layout_destroy(g->layout);
}

static void assert_fresh_at(const rig *r, const gcl_args *a, const gcl_field *f, const desc *d,
                            const char *what) {
  unsigned char want[128];
  fresh(r, d, want);
  cr_assert(memcmp((const unsigned char *)gcl__args_data(a) + f->offset, want, 128) == 0,
            "%s: the map at offset %zu differs from a fresh encode", what, f->offset);
}

/* The reported bug: a map set by field inside a struct could not be re-pointed (no cache slot).
 * Every tensormap leaf -- an array in the struct, a member of an array of structs, an
 * over-aligned one -- is set, refreshed and re-pointed like a parameter, with fresh bytes. */
Test(tmap_refresh, maps_in_a_struct_like_parameters) {
  rig r;
  open_rig(&r);
  gmaps g;
  open_gmaps(&r, &g);
  desc d[5], s[3], l;
  const DLTensor *t[5];
  gcl_tensormap_options o[5];
  for (int i = 0; i < 5; i++) {
    random_desc(&d[i], r.mem + 4096 * (uint64_t)i, i == 1);
    t[i] = &d[i].t, o[i] = d[i].o;
  }
  cr_assert_eq(gcl_args_set_tensormaps(g.args, r.ctx, &g.loads0, 5, t, o, 5, 0), GCL_OK, "%s",
               gcl_last_error());
  for (int i = 0; i < 3; i++) {
    random_desc(&s[i], r.mem + 65536 + 4096 * (uint64_t)i, false);
    const DLTensor *ti = &s[i].t;
    cr_assert_eq(gcl_args_set_tensormaps(g.args, r.ctx, &g.segs_a[i], 1, &ti, &s[i].o, 1, 0),
                 GCL_OK, "%s", gcl_last_error());
  }
  random_desc(&l, r.mem + 131072, false);
  const DLTensor *tl = &l.t;
  cr_assert_eq(gcl_args_set_tensormaps(g.args, r.ctx, &g.last, 1, &tl, &l.o, 1, 0), GCL_OK);
  /* Re-point all five loads in one call, then one map of an array of structs. */
  uint64_t a[5];
  for (int i = 0; i < 5; i++) {
    move(&d[i], r.mem + 262144 + 4096 * (uint64_t)i);
    a[i] = (uint64_t)(uintptr_t)d[i].t.data + d[i].t.byte_offset;
  }
  long enc = fakecuda_calls("cuTensorMapEncodeTiled") + fakecuda_calls("cuTensorMapEncodeIm2col");
  cr_assert_eq(gcl_args_repoint_tensormaps(g.args, r.ctx, &g.loads0, 5, a), GCL_OK, "%s",
               gcl_last_error());
  move(&s[1], r.mem + 524288);
  uint64_t a1 = (uint64_t)(uintptr_t)s[1].t.data + s[1].t.byte_offset;
  cr_assert_eq(gcl_args_repoint_tensormaps(g.args, r.ctx, &g.segs_a[1], 1, &a1), GCL_OK, "%s",
               gcl_last_error());
  /* A refresh of the over-aligned one at a new address: re-pointed, not encoded. */
  move(&l, r.mem + 655360);
  cr_assert_eq(gcl_args_set_tensormaps(g.args, r.ctx, &g.last, 1, &tl, &l.o, 1,
                                       GCL_TENSORMAP_REFRESH), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(fakecuda_calls("cuTensorMapEncodeTiled") + fakecuda_calls("cuTensorMapEncodeIm2col"),
               enc, "re-pointing and refreshing by address encoded");
  for (int i = 0; i < 5; i++) {
    gcl_field li;
    char path[32];
    snprintf(path, sizeof path, "g.loads[%d]", i);
    cr_assert_eq(gcl_layout_field(g.layout, path, &li), GCL_OK);
    assert_fresh_at(&r, g.args, &li, &d[i], "g.loads re-pointed in one call");
  }
  assert_fresh_at(&r, g.args, &g.segs_a[1], &s[1], "g.segs[1].a re-pointed");
  assert_fresh_at(&r, g.args, &g.segs_a[0], &s[0], "g.segs[0].a untouched");
  assert_fresh_at(&r, g.args, &g.last, &l, "g.last refreshed");
  /* Writing the whole struct raw forgets its maps: a re-point is refused, naming the path. An
   * address every map takes (32-byte aligned: interleave 32B maps need it). */
  cr_assert_eq(gcl_args_set_field_u32(g.args, &g.n, 7), GCL_OK);
  a1 = r.mem + 589824;
  cr_assert_eq(gcl_args_repoint_tensormaps(g.args, r.ctx, &g.segs_a[2], 1, &a1), GCL_OK,
               "a scalar beside the maps keeps them: %s", gcl_last_error());
  static unsigned char raw[65536];
  cr_assert_eq(gcl_args_set_field(g.args, &g.whole, raw, g.whole.size), GCL_OK);
  cr_assert_eq(gcl_args_repoint_tensormaps(g.args, r.ctx, &g.segs_a[2], 1, &a1),
               GCL_ERROR_UNSET_ARGUMENT);
  assert_msg_has("parameter 0 'g' field 'g.segs[2].a': no tensor map encoded by gclaunch here");
  close_gmaps(&g);
  close_rig(&r);
}

/* After a recorded kernel fault, no tensor-map call reaches the driver: each returns the fault,
 * and the buffer and the cache stay as they were. */
Test(tmap_refresh, after_a_fault_no_tensormap_call_reaches_the_driver) {
  rig r;
  open_rig(&r);
  desc d[N_MAPS];
  set_all(&r, d);
  const DLTensor *t[N_MAPS];
  gcl_tensormap_options o[N_MAPS];
  uint64_t a[N_MAPS];
  for (int i = 0; i < N_MAPS; i++) {
    move(&d[i], r.mem + 131072 + 4096 * (uint64_t)i); /* refreshable: only the address moved */
    t[i] = &d[i].t, o[i] = d[i].o;
    a[i] = (uint64_t)(uintptr_t)d[i].t.data + d[i].t.byte_offset;
  }
  fakecuda_fail_once("cuCtxSynchronize", 700, 0);
  cr_assert_eq(gcl_context_synchronize(r.ctx), GCL_ERROR_KERNEL_FAULT);
  static const char *const entries[] = {"cuTensorMapEncodeTiled", "cuTensorMapEncodeIm2col",
                                        "cuTensorMapReplaceAddress", "cuCtxGetCurrent",
                                        "cuCtxSetCurrent"};
  long before[5];
  for (int e = 0; e < 5; e++) before[e] = fakecuda_calls(entries[e]);
  snapshot s;
  take(&r, &s);
  _Alignas(64) unsigned char m[128];
  const gcl_field *f0 = TMAP_FIELD(r.args, 0, 0), *one = TMAP_FIELD(r.args, 2, 0);
  gcl_status got[] = {
      gcl_tensormap_encode(r.ctx, t[0], &o[0], m),
      gcl_args_set_tensormaps(r.args, r.ctx, f0, 1, t, o, 1, 0),
      gcl_args_set_tensormaps(r.args, r.ctx, f0, N_MAPS, t, o, N_MAPS, 0),
      gcl_args_set_tensormaps(r.args, r.ctx, one, 1, t, o, 1, 0),
      gcl_args_set_tensormaps(r.args, r.ctx, f0, 1, t, o, 1, GCL_TENSORMAP_REFRESH),
      gcl_args_set_tensormaps(r.args, r.ctx, f0, N_MAPS, t, o, N_MAPS, GCL_TENSORMAP_REFRESH),
      gcl_args_repoint_tensormaps(r.args, r.ctx, f0, 1, a),
      gcl_args_repoint_tensormaps(r.args, r.ctx, f0, N_MAPS, a)};
  for (size_t i = 0; i < sizeof got / sizeof *got; i++)
    cr_assert_eq(got[i], GCL_ERROR_KERNEL_FAULT, "call %zu: %s", i, gcl_status_name(got[i]));
  for (int e = 0; e < 5; e++)
    cr_assert_eq(fakecuda_calls(entries[e]), before[e], "%s was called after the fault",
                 entries[e]);
  assert_unchanged(&r, &s, "a call after the fault");
  close_rig(&r);
}
