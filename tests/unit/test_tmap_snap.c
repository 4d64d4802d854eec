/* The refresh fast path: gcl_args_set_tensormaps with GCL_TENSORMAP_REFRESH compares the tensor
 * and options with a snapshot of the inputs of the map's last encode and, when only data /
 * byte_offset differ, checks the address and re-points the map without translating. Against libfakecuda.so: the bytes must equal
 * a fresh encode, every other change must reach a full translation (and an encode when the
 * description changed), every writer of a map must drop its snapshot, and a failure changes
 * nothing. */
#include "fakecuda_test.h"

#include "args_internal.h"
#define UNIT_RNG_SEED 0x2545f4914f6cdd1dull
#include "../common/test_rng.h"
#include "../common/tmap_field.h"
#include "../common/tmap_rig.h"

#define N_MAPS 8
#define SIG "grid_constant tensormap[8] maps, u32 n, grid_constant tensormap one"

typedef tmap_rig rig;
static void open_rig(rig *r) { tmap_rig_open(r, SIG, 1 << 22, false); }
static void close_rig(rig *r) { tmap_rig_close(r); }


typedef struct desc {
  int64_t shape[5], strides[5];
  DLTensor t;
  gcl_tensormap_options o;
} desc;

/* A rank-3 bf16 / f32 view with a padded pitch at mem + byte_offset; tiled or im2col. */
static void make_desc(desc *d, uint64_t mem, bool f32, bool im2col) {
  memset(d, 0, sizeof *d);
  unsigned esize = f32 ? 4 : 2;
  d->shape[0] = 2 + rnd(3), d->shape[1] = 8 + rnd(9), d->shape[2] = 32 + 8 * rnd(4);
  d->strides[2] = 1;
  d->strides[1] = (d->shape[2] * esize + 16 + 15) / 16 * 16 / esize;
  d->strides[0] = d->strides[1] * d->shape[1] + 16 / esize;
  d->t = (DLTensor){.data = (void *)(uintptr_t)mem, .device = {kDLCUDA, 0}, .ndim = 3,
                    .dtype = {f32 ? kDLFloat : kDLBfloat, (uint8_t)(8 * esize), 1},
                    .shape = d->shape, .strides = d->strides, .byte_offset = 16 * rnd(64)};
  d->o.swizzle = GCL_TENSORMAP_SWIZZLE_128B;
  if (im2col) {
    d->o.im2col.pixels = 1 + rnd(64), d->o.im2col.channels = 16;
    d->o.im2col.lower[0] = -1, d->o.im2col.upper[0] = 1;
    return;
  }
  d->o.box[0] = 32, d->o.box[1] = 1 + rnd(8), d->o.box[2] = 1 + rnd(2);
}

static void move(desc *d, uint64_t mem) {
  d->t.data = (void *)(uintptr_t)mem;
  d->t.byte_offset = 16 * rnd(64);
}

static long encodes(void) {
  return fakecuda_calls("cuTensorMapEncodeTiled") + fakecuda_calls("cuTensorMapEncodeIm2col");
}

static const unsigned char *map_at(const rig *r, size_t element) {
  return (const unsigned char *)gcl__args_data(r->args) + r->maps_at + 128 * element;
}

static void assert_fresh(const rig *r, size_t element, const desc *d, const char *what) {
  _Alignas(64) unsigned char want[128];
  cr_assert_eq(gcl_tensormap_encode(r->ctx, &d->t, &d->o, want), GCL_OK, "%s", gcl_last_error());
  cr_assert(memcmp(map_at(r, element), want, 128) == 0, "%s: bytes differ from a fresh encode",
            what);
}

/* One refresh of element e from d. */
static gcl_status refresh(rig *r, size_t e, desc *d) {
  return gcl_args_set_tensormaps(r->args, r->ctx, TMAP_FIELD(r->args, 0, e), 1,
                                 (const DLTensor *const[]){&d->t}, &d->o, 1, GCL_TENSORMAP_REFRESH);
}

/* Set, then one refresh (which records the snapshot): the fast path is live for element e. */
static void prime(rig *r, size_t e, desc *d) {
  cr_assert_eq(gcl_args_set_tensormaps(r->args, r->ctx, TMAP_FIELD(r->args, 0, e), 1, (const DLTensor *const[]){&d->t}, &d->o, 1, 0), GCL_OK, "%s",
               gcl_last_error());
  move(d, r->mem + 4096 * rnd(64));
  cr_assert_eq(refresh(r, e, d), GCL_OK, "%s", gcl_last_error());
  cr_assert_neq(r->args->tmaps[e].snap.ndim, 0, "a refresh leaves a snapshot");
}

/* Refreshes d (changed by the caller) at a new address: the bytes of a fresh encode, and
 * `want_encodes` driver encodes on the way. */
static void refresh_expect(rig *r, size_t e, desc *d, long want_encodes, const char *what) {
  move(d, r->mem + 4096 * rnd(64));
  long enc = encodes();
  cr_assert_eq(refresh(r, e, d), GCL_OK, "%s: %s", what, gcl_last_error());
  cr_assert_eq(encodes() - enc, want_encodes, "%s: %ld encodes, expected %ld", what,
               encodes() - enc, want_encodes);
  assert_fresh(r, e, d, what);
}

/* A template map (NULL data, the driver encodes address 0): a refresh to address 0 encodes afresh
 * instead of re-pointing; from NULL data plus an offset it re-points as from any address. */
Test(tmap_snap, refreshes_to_address_0_encode) {
  rig r;
  open_rig(&r);
  desc d;
  make_desc(&d, r.mem, true, false);
  prime(&r, 3, &d);
  d.t.data = NULL, d.t.byte_offset = 0;
  long enc = encodes(), replaced = fakecuda_calls("cuTensorMapReplaceAddress");
  cr_assert_eq(refresh(&r, 3, &d), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(encodes() - enc, 1, "address 0: one encode");
  cr_assert_eq(fakecuda_calls("cuTensorMapReplaceAddress"), replaced, "address 0: no re-point");
  assert_fresh(&r, 3, &d, "a map at address 0");
  d.t.byte_offset = 4096; /* NULL data + an offset: a real address to the driver */
  enc = encodes();
  cr_assert_eq(refresh(&r, 3, &d), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(encodes() - enc, 0, "address 4096: re-pointed");
  assert_fresh(&r, 3, &d, "a map at address 4096");
  close_rig(&r);
}

Test(tmap_snap, repeated_refreshes_replace_with_fresh_bytes) {
  rig r;
  open_rig(&r);
  for (int i = 0; i < 200; i++) {
    desc d;
    size_t e = rnd(N_MAPS);
    make_desc(&d, r.mem, i % 2, i % 5 == 0);
    prime(&r, e, &d);
    long replaced = fakecuda_calls("cuTensorMapReplaceAddress");
    for (int k = 0; k < 3; k++) refresh_expect(&r, e, &d, 0, "a refresh of the same inputs");
    long calls = fakecuda_calls("cuTensorMapReplaceAddress") - replaced;
    if (r.path.patched & 1u) /* re-pointed by the patch: the driver is not called */
      cr_assert_eq(calls, 0, "%ld driver re-points on the patch path", calls);
    else
      cr_assert_geq(calls, 1);
  }
  close_rig(&r);
}

/* Every input but the address, changed one at a time after the snapshot was made. */
Test(tmap_snap, any_other_change_translates) {
  rig r;
  open_rig(&r);
  desc d;
  make_desc(&d, r.mem, false, false);
  prime(&r, 2, &d);
  d.shape[1] += 1;                 refresh_expect(&r, 2, &d, 1, "shape");
  d.strides[0] += 8;               refresh_expect(&r, 2, &d, 1, "stride");
  d.t.dtype.code = kDLFloat;       refresh_expect(&r, 2, &d, 1, "dtype code (bf16 -> f16)");
  d.t.device.device_type = 13;     refresh_expect(&r, 2, &d, 1, "device type (CUDA managed)");
  d.t.device.device_type = kDLCUDA; refresh_expect(&r, 2, &d, 1, "device type back");
  d.o.box[1] = d.o.box[1] % 8 + 1; refresh_expect(&r, 2, &d, 1, "box");
  d.o.element_strides[1] = 2;      refresh_expect(&r, 2, &d, 1, "element_strides");
  d.o.l2_promotion = 2;            refresh_expect(&r, 2, &d, 1, "l2_promotion");
  d.o.oob_fill = 1;                refresh_expect(&r, 2, &d, 1, "oob_fill");
  d.o.swizzle = GCL_TENSORMAP_SWIZZLE_64B; refresh_expect(&r, 2, &d, 1, "swizzle");
  d.o.interleave = GCL_TENSORMAP_INTERLEAVE_16B; d.o.swizzle = 0;
  refresh_expect(&r, 2, &d, 1, "interleave");
  d.o.interleave = 0;              refresh_expect(&r, 2, &d, 1, "interleave back");
  d.t.ndim = 2, d.t.shape = d.shape + 1, d.t.strides = d.strides + 1;
  refresh_expect(&r, 2, &d, 1, "rank");
  d.o.im2col.pixels = 0;           refresh_expect(&r, 2, &d, 0, "same again");
  /* The cache compares inputs, not translations: a different input that describes the same map
   * is encoded again (the bytes are a fresh encode's either way). */
  d.shape[1] = 1, d.strides[1] = 77; /* a dimension of size 1: its stride is never used */
  refresh_expect(&r, 2, &d, 1, "size-1 dimension");
  d.strides[1] = 99;               refresh_expect(&r, 2, &d, 1, "its unused stride");
  d.t.ndim = 1, d.t.shape = d.shape + 2, d.t.strides = NULL;
  refresh_expect(&r, 2, &d, 1, "rank 1, NULL strides");
  d.t.strides = d.strides + 2;     refresh_expect(&r, 2, &d, 1, "the same strides given");
  d.o.store = 1;                   refresh_expect(&r, 2, &d, 1, "store on a whole-chunk row");
  refresh_expect(&r, 2, &d, 0, "and the same inputs again");
  close_rig(&r);
}

/* Snapshot of the buffer, the cache and the snapshots: a failed call changes none of them. */
typedef struct state {
  unsigned char data[4096];
  gcl__tmap_entry tmaps[N_MAPS];
} state;

static void take(const rig *r, state *s) {
  memcpy(s->data, gcl__args_data(r->args), gcl_layout_size(r->layout));
  memcpy(s->tmaps, r->args->tmaps, sizeof s->tmaps);
}

static void assert_unchanged(const rig *r, const state *s, const char *what) {
  cr_assert(memcmp(s->data, gcl__args_data(r->args), gcl_layout_size(r->layout)) == 0,
            "%s changed the buffer", what);
  cr_assert(memcmp(s->tmaps, r->args->tmaps, sizeof s->tmaps) == 0, "%s changed the cache", what);
}

static void refuse(rig *r, desc *d, gcl_status want, const char *text, const char *what) {
  state s;
  take(r, &s);
  cr_assert_eq(gcl_args_set_tensormaps(r->args, r->ctx, TMAP_FIELD(r->args, 0, 5), 1, (const DLTensor *const[]){&d->t}, &d->o, 1, GCL_TENSORMAP_REFRESH), want, "%s: %s",
               what, gcl_last_error());
  assert_msg_has("parameter 0 'maps' field 'maps[5]': ");
  assert_msg_has(text);
  assert_unchanged(r, &s, what);
}

Test(tmap_snap, refusals_on_the_fast_path_change_nothing) {
  rig r;
  tmap_rig_driver_path(); /* the driver's refusal and its undo */
  open_rig(&r);
  desc d;
  make_desc(&d, r.mem, true, false);
  prime(&r, 5, &d);
  d.t.byte_offset += 8;
  refuse(&r, &d, GCL_ERROR_TENSOR, "is not 16-byte aligned", "a misaligned address");
  d.t.data = (void *)(uintptr_t)r.mem, d.t.byte_offset = UINT64_MAX - 15;
  refuse(&r, &d, GCL_ERROR_TENSOR, "overflows", "an overflowing byte_offset");
  d.t.byte_offset = (UINT64_C(1) << 57) - (uint64_t)(uintptr_t)r.mem; /* the address 2^57 */
  refuse(&r, &d, GCL_ERROR_TENSOR, "= 0x200000000000000: the driver encodes global addresses "
         "below 2^57", "an address past the driver's bound");
  d.t.byte_offset = 0, d.t.device.device_id = 1;
  refuse(&r, &d, GCL_ERROR_TENSOR, "tensor is on CUDA device 1", "another device");
  d.t.device.device_id = 0, d.o.reserved[3] = 1;
  refuse(&r, &d, GCL_ERROR_INVALID_ARGUMENT, "options.reserved[3] is 1", "reserved options");
  d.o.reserved[3] = 0;
  /* The snapshot's head (device, ndim, dtype: one 16-byte comparison) differs in one field. */
  d.t.dtype.lanes = 2;
  refuse(&r, &d, GCL_ERROR_TENSOR, "lanes 2) has no tensor map element type", "two lanes");
  d.t.dtype.lanes = 1, d.t.ndim = 6;
  refuse(&r, &d, GCL_ERROR_TENSOR, "ndim = 6: a tensor map has rank 1 ... 5", "rank 6");
  d.t.ndim = 3, d.t.device.device_type = kDLCPU;
  refuse(&r, &d, GCL_ERROR_TENSOR, "device type 1 is not CUDA", "a CPU tensor");
  d.t.device.device_type = kDLCUDA;
  /* The driver failing the re-point: the map and its cache stay as they were. */
  state s;
  take(&r, &s);
  move(&d, r.mem + 8192);
  fakecuda_fail_once("cuTensorMapReplaceAddress", 1, 0);
  cr_assert_eq(gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 5), 1, (const DLTensor *const[]){&d.t}, &d.o, 1, GCL_TENSORMAP_REFRESH), GCL_ERROR_DRIVER);
  assert_msg_has("parameter 0 'maps' field 'maps[5]': cuTensorMapReplaceAddress(0x");
  assert_unchanged(&r, &s, "a re-point the driver failed");
  refresh_expect(&r, 5, &d, 0, "after the failure");
  close_rig(&r);
}

/* Whatever else writes the map drops its snapshot: a refresh from the old inputs must encode. */
Test(tmap_snap, other_writers_drop_the_snapshot) {
  rig r;
  open_rig(&r);
  desc a, b;
  make_desc(&a, r.mem, false, false);
  make_desc(&b, r.mem, true, false);
  prime(&r, 1, &a);
  cr_assert_eq(gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 1), 1, (const DLTensor *const[]){&b.t}, &b.o, 1, 0), GCL_OK);
  refresh_expect(&r, 1, &a, 1, "after gcl_args_set_tensormaps of another tensor");
  const DLTensor *t[2] = {&b.t, &b.t};
  cr_assert_eq(gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 0), 2, t, &b.o, 1, 0), GCL_OK);
  refresh_expect(&r, 1, &a, 1, "after gcl_args_set_tensormaps");
  unsigned char raw[128] = {0};
  cr_assert_eq(gcl_args_set_element(r.args, 0, 1, raw, sizeof raw), GCL_OK);
  refresh_expect(&r, 1, &a, 1, "after a raw write");
  /* Re-pointing by address keeps the snapshot: it holds no address. */
  cr_assert_eq(gcl_args_repoint_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 1), 1, (const uint64_t[]){r.mem + 4096}), GCL_OK);
  refresh_expect(&r, 1, &a, 0, "after replace-address");
  /* A clone carries the snapshots along with the maps. */
  gcl_args *c;
  cr_assert_eq(gcl_args_clone(r.args, &c), GCL_OK);
  gcl_args *orig = r.args;
  r.args = c;
  refresh_expect(&r, 1, &a, 0, "a clone");
  r.args = orig;
  gcl_args_destroy(c);
  close_rig(&r);
}

Test(tmap_snap, batch_refresh_fast_and_mixed) {
  rig r;
  open_rig(&r);
  desc d[N_MAPS];
  const DLTensor *t[N_MAPS];
  gcl_tensormap_options o[N_MAPS];
  for (int i = 0; i < N_MAPS; i++) {
    make_desc(&d[i], r.mem + 4096 * (uint64_t)i, i % 2, i == 3);
    t[i] = &d[i].t, o[i] = d[i].o;
  }
  cr_assert_eq(gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 0), N_MAPS, t, o, N_MAPS, 0), GCL_OK);
  for (int round = 0; round < 12; round++) {
    int changed = round % 3 == 2 ? (int)rnd(N_MAPS) : -1;
    for (int i = 0; i < N_MAPS; i++) move(&d[i], r.mem + 4096 * rnd(64));
    if (changed >= 0) d[changed].o.l2_promotion = (d[changed].o.l2_promotion + 1) % 4;
    for (int i = 0; i < N_MAPS; i++) o[i] = d[i].o;
    long enc = encodes();
    cr_assert_eq(gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 0), N_MAPS, t, o, N_MAPS, GCL_TENSORMAP_REFRESH), GCL_OK,
                 "round %d: %s", round, gcl_last_error());
    long want = changed >= 0 || round == 0 ? (changed >= 0) : 0;
    cr_assert_eq(encodes() - enc, want, "round %d: %ld encodes", round, encodes() - enc);
    for (int i = 0; i < N_MAPS; i++) {
      assert_fresh(&r, (size_t)i, &d[i], "batch refresh");
      cr_assert_neq(r.args->tmaps[i].snap.ndim, 0, "round %d: map %d has a snapshot", round, i);
    }
  }
  /* A misaligned map in a batch whose snapshots all match: refused, nothing changed. */
  state s;
  take(&r, &s);
  d[6].t.byte_offset += 4;
  cr_assert_eq(gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 0), N_MAPS, t, o, N_MAPS, GCL_TENSORMAP_REFRESH),
               GCL_ERROR_TENSOR);
  assert_msg_has("parameter 0 'maps' field 'maps[6]': ");
  assert_unchanged(&r, &s, "a failed batch refresh");
  close_rig(&r);
}
