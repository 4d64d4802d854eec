/* Re-points without the driver call (lib/cuda/tmap_patch.c), against libfakecuda.so, whose
 * cuTensorMapReplaceAddress keeps the address where driver 580 keeps it (bits 4 ... 56 of the
 * first 8 bytes) or, with fakecuda_set_tmap_layout, somewhere else. What users see: which path
 * gcl_tensormap_repoint_path reports, how many driver calls a re-point costs, and that the bytes
 * equal a fresh encode at the new address either way, for random descriptions of every rank,
 * type, interleave and mode; refusals and failures are those of the driver path. */
#include "fakecuda_test.h"

#include "args_internal.h"
#define UNIT_RNG_SEED 0x6a09e667f3bcc909ull
#include "../common/test_rng.h"
#include "../common/tmap_field.h"
#include "../common/tmap_gen.h"
#include "../common/tmap_rig.h"

#include <pthread.h>

#define N_MAPS 8
#define SIG "grid_constant tensormap[8] maps, u32 n"

typedef tmap_rig rig;
static tmap_gen gen = {0x3c6ef372fe94f82bull};

static const unsigned char *map_at(const rig *r, size_t i) {
  return (const unsigned char *)gcl__args_data(r->args) + r->maps_at + 128 * i;
}

/* d moved to a fresh aligned address inside the rig's memory, as the data + byte_offset. */
static uint64_t move(const rig *r, tmap_case *d) {
  uint64_t a = r->mem + 65536 + 32 * (uint64_t)rnd(4096);
  d->t.data = (void *)(uintptr_t)a, d->t.byte_offset = 0;
  return a;
}

static void assert_fresh(const rig *r, size_t i, const tmap_case *d, const char *what) {
  _Alignas(64) unsigned char m[128];
  cr_assert_eq(gcl_tensormap_encode(r->ctx, &d->t, &d->o, m), GCL_OK, "%s", gcl_last_error());
  for (int b = 0; b < 128; b++)
    cr_assert_eq(map_at(r, i)[b], m[b], "%s: map %zu differs from a fresh encode at byte %d",
                 what, i, b);
}

/* Sets every map from random valid descriptions (tiled and im2col; interleave among them). */
static void set_all(rig *r, tmap_case *d) {
  for (size_t i = 0; i < N_MAPS; i++) {
    tmap_gen_valid(&gen, &d[i], r->mem, i % 3 == 2);
    cr_assert_eq(gcl_args_set_tensormaps(r->args, r->ctx, TMAP_FIELD(r->args, 0, i), 1,
                                         (const DLTensor *const[]){&d[i].t}, &d[i].o, 1, 0),
                 GCL_OK, "%s", gcl_last_error());
  }
}

/* Rounds of re-points of all maps and of refreshes by address: the bytes of a fresh encode
 * every time; returns the driver re-points they cost, and how many maps had interleave. */
static long repoint_rounds(rig *r, tmap_case *d, int rounds, int *interleaved) {
  long before = fakecuda_calls("cuTensorMapReplaceAddress");
  *interleaved = 0;
  for (size_t i = 0; i < N_MAPS; i++) *interleaved += d[i].o.interleave != 0;
  for (int k = 0; k < rounds; k++) {
    uint64_t a[N_MAPS];
    const DLTensor *t[N_MAPS];
    gcl_tensormap_options o[N_MAPS];
    for (size_t i = 0; i < N_MAPS; i++) a[i] = move(r, &d[i]), t[i] = &d[i].t, o[i] = d[i].o;
    if (k % 2)
      cr_assert_eq(gcl_args_set_tensormaps(r->args, r->ctx, TMAP_FIELD(r->args, 0, 0), N_MAPS, t,
                                           o, N_MAPS, GCL_TENSORMAP_REFRESH), GCL_OK, "%s",
                   gcl_last_error());
    else
      cr_assert_eq(gcl_args_repoint_tensormaps(r->args, r->ctx, TMAP_FIELD(r->args, 0, 0), N_MAPS,
                                               a), GCL_OK, "%s", gcl_last_error());
    for (size_t i = 0; i < N_MAPS; i++) assert_fresh(r, i, &d[i], k % 2 ? "refresh" : "re-point");
  }
  return fakecuda_calls("cuTensorMapReplaceAddress") - before;
}

/* The fake keeps the address as driver 580 does: every interleave proven, no driver call. */
Test(tmap_patch, proven_layout_patches_without_the_driver) {
  rig r;
  tmap_rig_open(&r, SIG, 1 << 22, false);
  cr_assert_eq(r.path.patched, 7u, "patched modes 0x%x: %s", r.path.patched, r.path.reason);
  cr_assert_geq(r.path.checks, 36, "%d checks", r.path.checks);
  cr_assert_eq(r.path.mismatches, 0);
  cr_assert(strstr(r.path.reason, "byte-identical to cuTensorMapReplaceAddress"), "%s",
            r.path.reason);
  for (int round = 0; round < 20; round++) {
    tmap_case d[N_MAPS];
    set_all(&r, d);
    int interleaved;
    cr_assert_eq(repoint_rounds(&r, d, 4, &interleaved), 0, "the patch path called the driver");
  }
  tmap_rig_close(&r);
}

/* GCL_TMAP_PATCH=0: the check does not run and every re-point is the driver's. */
Test(tmap_patch, variable_forces_the_driver) {
  rig r;
  tmap_rig_driver_path();
  tmap_rig_open(&r, SIG, 1 << 22, false);
  cr_assert_eq(r.path.patched, 0u);
  cr_assert_eq(r.path.checks, 0);
  cr_assert_str_eq(r.path.reason, "GCL_TMAP_PATCH=0");
  tmap_case d[N_MAPS];
  set_all(&r, d);
  int interleaved;
  cr_assert_eq(repoint_rounds(&r, d, 4, &interleaved), 4 * N_MAPS);
  tmap_rig_close(&r);
}

/* A driver that keeps the address elsewhere: the check finds it, nothing is patched, and the
 * bytes are the driver's. */
Test(tmap_patch, another_layout_falls_back_to_the_driver) {
  fake_use();
  fakecuda_set_tmap_layout(1);
  rig r;
  tmap_rig_open(&r, SIG, 1 << 22, false);
  cr_assert_eq(r.path.patched, 0u, "patched 0x%x", r.path.patched);
  cr_assert_geq(r.path.mismatches, 3, "one per interleave mode at least");
  cr_assert(strstr(r.path.reason, "differs from cuTensorMapReplaceAddress at byte"), "%s",
            r.path.reason);
  tmap_case d[N_MAPS];
  set_all(&r, d);
  int interleaved;
  cr_assert_eq(repoint_rounds(&r, d, 4, &interleaved), 4 * N_MAPS);
  tmap_rig_close(&r);
}

/* A layout that differs for interleaved maps only: those call the driver, the others patch. */
Test(tmap_patch, each_interleave_mode_is_proven_alone) {
  fake_use();
  fakecuda_set_tmap_layout(2);
  rig r;
  tmap_rig_open(&r, SIG, 1 << 22, false);
  cr_assert_eq(r.path.patched, 1u, "patched 0x%x: %s", r.path.patched, r.path.reason);
  long seen_interleaved = 0;
  for (int round = 0; round < 20; round++) {
    tmap_case d[N_MAPS];
    set_all(&r, d);
    int interleaved;
    long calls = repoint_rounds(&r, d, 2, &interleaved);
    cr_assert_eq(calls, 2 * interleaved, "round %d: %ld driver re-points for %d interleaved maps",
                 round, calls, interleaved);
    seen_interleaved += interleaved;
  }
  cr_assert_gt(seen_interleaved, 0, "no interleaved map was generated");
  tmap_rig_close(&r);
}

/* Other bits of the description around the address, in the same 8 bytes: the patch keeps them
 * (the check proves it), and the bytes equal a fresh encode. */
Test(tmap_patch, patch_keeps_the_bits_around_the_address) {
  fake_use();
  fakecuda_set_tmap_layout(3);
  rig r;
  tmap_rig_open(&r, SIG, 1 << 22, false);
  cr_assert_eq(r.path.patched, 7u, "patched 0x%x: %s", r.path.patched, r.path.reason);
  for (int round = 0; round < 10; round++) {
    tmap_case d[N_MAPS];
    set_all(&r, d);
    int interleaved;
    cr_assert_eq(repoint_rounds(&r, d, 4, &interleaved), 0, "the patch path called the driver");
    uint64_t w;
    memcpy(&w, map_at(&r, 0), 8);
    cr_assert_eq(w & 15u, 0xAu, "bits 0-3 of the first word lost: 0x%llx", (unsigned long long)w);
  }
  tmap_rig_close(&r);
}

/* The refusals are checked before the patch, with the driver path's messages. */
Test(tmap_patch, refusals_are_the_drivers) {
  rig r;
  tmap_rig_open(&r, SIG, 1 << 22, false);
  cr_assert_eq(r.path.patched, 7u);
  tmap_case d[N_MAPS];
  set_all(&r, d);
  unsigned char before[128 * N_MAPS];
  memcpy(before, map_at(&r, 0), sizeof before);
  const uint64_t bad[] = {0, r.mem + 8, 1ull << 57, ~0ull - 15};
  for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
    cr_assert_eq(gcl_args_repoint_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 2), 1, &bad[k]),
                 GCL_ERROR_INVALID_ARGUMENT);
    assert_msg_has("parameter 0 'maps' field 'maps[2]': address 0x");
    assert_msg_has("TMA needs a nonzero");
  }
  cr_assert_eq(memcmp(before, map_at(&r, 0), sizeof before), 0, "a refused re-point wrote");
  tmap_rig_close(&r);
}

/* A batch of refreshes that only move the maps, but for map 5, which breaks a rule: the whole
 * batch is refused with the message of a single set of map 5, and nothing changes. */
static void refuse_batch(rig *r, tmap_case *d, gcl_status want, const char *text) {
  unsigned char before[128 * N_MAPS];
  gcl__tmap_entry cache[N_MAPS];
  memcpy(before, map_at(r, 0), sizeof before);
  memcpy(cache, r->args->tmaps, sizeof cache);
  const DLTensor *t[N_MAPS];
  gcl_tensormap_options o[N_MAPS];
  for (size_t i = 0; i < N_MAPS; i++) t[i] = &d[i].t, o[i] = d[i].o;
  cr_assert_eq(gcl_args_set_tensormaps(r->args, r->ctx, TMAP_FIELD(r->args, 0, 0), N_MAPS, t, o,
                                       N_MAPS, 0), want, "%s", gcl_last_error());
  assert_msg_has("parameter 0 'maps' field 'maps[5]': ");
  assert_msg_has(text);
  cr_assert_eq(memcmp(before, map_at(r, 0), sizeof before), 0, "%s: the maps changed", text);
  cr_assert_eq(memcmp(cache, r->args->tmaps, sizeof cache), 0, "%s: the cache changed", text);
}

Test(tmap_patch, refused_batches_of_moves_change_nothing) {
  rig r;
  tmap_rig_open(&r, SIG, 1 << 22, false);
  tmap_case d[N_MAPS];
  set_all(&r, d);
  for (size_t i = 0; i < N_MAPS; i++) move(&r, &d[i]);
  d[5].t.byte_offset = 8;
  refuse_batch(&r, d, GCL_ERROR_TENSOR, "is not ");
  d[5].t.byte_offset = 0, d[5].t.data = (void *)(uintptr_t)(1ull << 57);
  refuse_batch(&r, d, GCL_ERROR_TENSOR, "below 2^57");
  move(&r, &d[5]), d[5].t.device.device_id = 1;
  refuse_batch(&r, d, GCL_ERROR_TENSOR, "tensor is on CUDA device 1");
  d[5].t.device.device_id = 0;
  long calls = fakecuda_calls("cuTensorMapReplaceAddress");
  const DLTensor *t[N_MAPS];
  gcl_tensormap_options o[N_MAPS];
  for (size_t i = 0; i < N_MAPS; i++) t[i] = &d[i].t, o[i] = d[i].o;
  cr_assert_eq(gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 0), N_MAPS, t, o,
                                       N_MAPS, 0), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(fakecuda_calls("cuTensorMapReplaceAddress"), calls, "moves called the driver");
  for (size_t i = 0; i < N_MAPS; i++) assert_fresh(&r, i, &d[i], "after the refusals");
  tmap_rig_close(&r);
}

/* A batch whose last step fails (an encode the driver refuses) after patched re-points: the
 * patched maps get their bytes back, the cache is untouched, and the same batch then works. */
Test(tmap_patch, failed_batch_undoes_the_patches) {
  rig r;
  tmap_rig_open(&r, SIG, 1 << 22, false);
  tmap_case d[N_MAPS];
  set_all(&r, d);
  unsigned char before[128 * N_MAPS];
  memcpy(before, map_at(&r, 0), sizeof before);
  const DLTensor *t[N_MAPS];
  gcl_tensormap_options o[N_MAPS];
  for (size_t i = 0; i < N_MAPS; i++) move(&r, &d[i]), t[i] = &d[i].t, o[i] = d[i].o;
  o[N_MAPS - 1].l2_promotion = (o[N_MAPS - 1].l2_promotion + 1) % 4; /* the last one encodes */
  d[N_MAPS - 1].o = o[N_MAPS - 1];
  const char *enc = o[N_MAPS - 1].im2col.pixels ? "cuTensorMapEncodeIm2col"
                                                : "cuTensorMapEncodeTiled";
  fakecuda_fail_once(enc, 1, 0);
  cr_assert_eq(gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 0), N_MAPS, t, o,
                                       N_MAPS, GCL_TENSORMAP_REFRESH), GCL_ERROR_DRIVER);
  cr_assert_eq(memcmp(before, map_at(&r, 0), sizeof before), 0, "the failed batch left changes");
  cr_assert_eq(gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 0), N_MAPS, t, o,
                                       N_MAPS, GCL_TENSORMAP_REFRESH), GCL_OK, "%s",
               gcl_last_error());
  for (size_t i = 0; i < N_MAPS; i++) assert_fresh(&r, i, &d[i], "after the retry");
  tmap_rig_close(&r);
}

typedef struct on_thread {
  gcl_context *ctx;
  gcl_tensormap_path p;
  gcl_status s;
} on_thread;

static void *path_on_thread(void *arg) {
  on_thread *o = arg;
  o->s = gcl_tensormap_repoint_path(o->ctx, &o->p);
  return NULL;
}

/* The check on a thread where no context is current (a new thread): gclaunch binds the context
 * before its encodes, so the driver refuses none of them (compute-sanitizer counts a refused
 * call as an error: it reported one here on an H100 when the first encode was the bind's cue). */
Test(tmap_patch, check_binds_the_context_first) {
  fake_use();
  on_thread o = {.s = GCL_ERROR_DRIVER};
  cr_assert_eq(gcl_context_create(0, &o.ctx), GCL_OK, "%s", gcl_last_error());
  long refused = fakecuda_failed_calls("cuTensorMapEncodeTiled") +
                 fakecuda_failed_calls("cuTensorMapEncodeIm2col");
  pthread_t th;
  cr_assert_eq(pthread_create(&th, NULL, path_on_thread, &o), 0);
  pthread_join(th, NULL);
  cr_assert_eq(o.s, GCL_OK);
  cr_assert_eq(fakecuda_failed_calls("cuTensorMapEncodeTiled") +
                   fakecuda_failed_calls("cuTensorMapEncodeIm2col"), refused,
               "the check's encodes were refused for want of a context");
  cr_assert_eq(o.p.patched, 7u, "%s", o.p.reason);
  cr_assert_eq(o.p.mismatches, 0);
  gcl_context_destroy(o.ctx);
  assert_nothing_live();
}

Test(tmap_patch, null_arguments_are_named) {
  fake_use();
  gcl_tensormap_path p;
  cr_assert_eq(gcl_tensormap_repoint_path(NULL, &p), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("gcl_tensormap_repoint_path: ctx");
  gcl_context *ctx;
  cr_assert_eq(gcl_context_create(0, &ctx), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_tensormap_repoint_path(ctx, NULL), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("out");
  gcl_context_destroy(ctx);
}
