/* Issue 36 on the CPU: gclaunch's tensor-map checks are one pass over the rule table
 * (lib/core/tmap.c) that forms the message of the first rule broken; what it accepts must be the
 * driver arguments the generator makes without checks, what it refuses must say why, and the
 * shared generator's valid descriptions must pass. Random descriptions from tests/unit/
 * tmap_gen.h at every limit (seed printed; GCL_TEST_SEED reproduces). Also the rules added
 * beyond the first documented set, by message, and the Blackwell bit-85 fix-up against the fake
 * driver. */
#include "fakecuda_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tmap.h"
#include "../common/tmap_gen.h"

static uint64_t seed_for(const char *what) {
  const char *env = getenv("GCL_TEST_SEED");
  uint64_t s = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL) * 2654435761u + 7;
  fprintf(stderr, "%s seed %llu (GCL_TEST_SEED reproduces)\n", what, (unsigned long long)s);
  return s;
}

static const gcl__tmap_who who = {.text = "tensor"};

/* d (what gcl_tensormap_check accepted) against r (the generator's own driver arguments for the
 * same case, made without any check, tests/common/tmap_gen.h): NULL when equal, else the field. */
static const char *differs(const gcl_tensormap_desc *d, const tmap_raw *r) {
  if ((int)d->type != r->type || d->rank != r->rank || d->address != r->address) return "type, rank or address";
  if ((int)d->interleave != r->interleave || (int)d->swizzle != r->swizzle ||
      (int)d->l2_promotion != r->l2_promotion || (int)d->oob_fill != r->oob_fill)
    return "options";
  if ((d->im2col.pixels != 0) != r->im2col) return "mode";
  for (uint32_t i = 0; i < d->rank; i++) {
    if (d->dims[i] != r->dims[i]) return "dims";
    if (i + 1 < d->rank && d->strides[i] != r->strides[i]) return "strides";
    if (d->element_strides[i] != (r->element_strides[i] ? r->element_strides[i] : 1u))
      return "element strides";
    if (!r->im2col && d->box[i] != r->box[i]) return "box";
  }
  if (!r->im2col) return NULL;
  if (d->im2col.pixels != r->pixels || d->im2col.channels != r->channels) return "pixels, channels";
  for (uint32_t i = 0; i + 2 < d->rank; i++)
    if (d->im2col.lower[i] != r->lower[i] || d->im2col.upper[i] != r->upper[i]) return "corners";
  return NULL;
}

/* The one pass over the rule table at every limit: a refusal names the tensor and says why; an
 * acceptance gives exactly the driver arguments the generator makes for the case without any
 * check (tmap_gen_raw: TMA order, strides in bytes, size-1 strides replaced as gclaunch does). */
Test(tmap_diff_cpu, one_pass_refuses_with_a_message_or_gives_the_driver_arguments) {
  tmap_gen g;
  uint64_t seed = seed_for("one_pass_at_every_limit");
  tmap_gen_seed(&g, seed);
  long accepted = 0, refused = 0;
  for (long n = 0; n < 300000; n++) {
    tmap_case c;
    if (n % 4 == 0) tmap_gen_valid(&g, &c, 0x7f0000001000ull, n % 12 == 0);
    else tmap_gen_edge(&g, &c, 0x7f0000001000ull);
    gcl_tensormap_desc d;
    memset(&d, 0x5a, sizeof d);
    gcl_status s = gcl__tmap_translate(&c.t, &c.o, &who, &d);
    char line[1024];
    tmap_case_format(&c, line, sizeof line);
    if (s != GCL_OK) {
      refused++;
      cr_assert(s == GCL_ERROR_TENSOR || s == GCL_ERROR_INVALID_ARGUMENT, "case %ld: status %d",
                n, (int)s);
      cr_assert(strncmp(gcl_last_error(), "tensor: ", 8) == 0 && strlen(gcl_last_error()) > 20,
                "case %ld (seed %llu): refused without a reason: '%s': %s", n,
                (unsigned long long)seed, gcl_last_error(), line);
      continue;
    }
    accepted++;
    tmap_raw r;
    const char *none = tmap_gen_raw(&c, &r);
    cr_assert(!none, "case %ld: accepted, but the generator says %s: %s", n, none, line);
    const char *what = differs(&d, &r);
    cr_assert(!what, "case %ld (seed %llu): %s differ from the driver arguments: %s", n,
              (unsigned long long)seed, what, line);
  }
  fprintf(stderr, "one_pass_at_every_limit: 300000 descriptions, %ld accepted, %ld refused\n",
          accepted, refused);
  cr_assert_gt(accepted, 60000);
  cr_assert_gt(refused, 60000);
}

Test(tmap_diff_cpu, valid_descriptions_pass_every_check) {
  tmap_gen g;
  uint64_t seed = seed_for("valid_descriptions_pass");
  tmap_gen_seed(&g, seed);
  for (long n = 0; n < 100000; n++) {
    tmap_case c;
    tmap_gen_valid(&g, &c, 0x7f0000000000ull + 4096 * (uint64_t)(n % 64), n % 3 == 0);
    gcl_tensormap_desc d;
    gcl_status s = gcl_tensormap_check(&c.t, &c.o, &d);
    char line[1024];
    tmap_case_format(&c, line, sizeof line);
    cr_assert_eq(s, GCL_OK, "case %ld (seed %llu): %s: %s", n, (unsigned long long)seed,
                 gcl_last_error(), line);
  }
}

/* --- the rules beyond the first documented set, by their messages ----------------------------- */

typedef struct fixture {
  int64_t shape[5];
  DLTensor t;
  gcl_tensormap_options o;
} fixture;

static void nhwc(fixture *f, int64_t n, int64_t h, int64_t w, int64_t c) {
  memset(f, 0, sizeof *f);
  f->shape[0] = n, f->shape[1] = h, f->shape[2] = w, f->shape[3] = c;
  f->t = (DLTensor){.data = (void *)(uintptr_t)0x7f0000000000ull, .device = {kDLCUDA, 0},
                    .ndim = 4, .dtype = {kDLFloat, 16, 1}, .shape = f->shape};
  f->o.im2col.pixels = 64, f->o.im2col.channels = 64;
}

static void refused_with(fixture *f, const char *a, const char *b) {
  gcl_status s = gcl_tensormap_check(&f->t, &f->o, NULL);
  const char *m = gcl_last_error();
  cr_assert_eq(s, GCL_ERROR_TENSOR, "%s: %s", gcl_status_name(s), m);
  cr_assert(strstr(m, "tensor: "), "%s", m);
  cr_assert(strstr(m, a), "message lacks '%s': %s", a, m);
  if (b) cr_assert(strstr(m, b), "message lacks '%s': %s", b, m);
}

/* The im2col bounding box must hold a pixel along every spatial dimension: lower < size + upper,
 * the sum in the driver's signed 32 bits; with interleave the driver measures corner i against
 * the dimension one further in (all measured on the H200, driver 580). */
Test(tmap_diff_cpu, im2col_boxes_without_a_pixel_are_refused) {
  fixture f;
  nhwc(&f, 2, 8, 8, 64);
  f.o.im2col.lower[0] = 3, f.o.im2col.upper[0] = -5; /* W: 8 - 5 - 3 = 0 pixels */
  refused_with(&f, "im2col bounding box along W is empty: dimension 2 has size 8, and size + "
               "upper[0] - lower[0] = 8 + -5 - 3 = 0; expected at least 1", NULL);
  f.o.im2col.lower[0] = 2; /* one pixel */
  cr_assert_eq(gcl_tensormap_check(&f.t, &f.o, NULL), GCL_OK, "%s", gcl_last_error());
  f.o.im2col.lower[1] = -1, f.o.im2col.upper[1] = -10; /* H: 8 - 10 + 1 = -1 */
  refused_with(&f, "along H is empty: dimension 1 has size 8", "= -1; expected at least 1");
}

Test(tmap_diff_cpu, im2col_boxes_with_interleave_are_measured_one_dimension_further_in) {
  fixture f;
  nhwc(&f, 2, 8, 8, 64);
  f.o.interleave = GCL_TENSORMAP_INTERLEAVE_16B;
  f.o.im2col.lower[0] = 3, f.o.im2col.upper[0] = -5; /* against C = 64: 56 pixels */
  cr_assert_eq(gcl_tensormap_check(&f.t, &f.o, NULL), GCL_OK, "%s", gcl_last_error());
  f.o.im2col.lower[0] = 100, f.o.im2col.upper[0] = 36; /* 64 + 36 - 100 = 0 */
  refused_with(&f, "along W is empty: dimension 3 has size 64", "with interleave the driver "
               "measures corner 0 against dimension 3, one further in");
  f.o.im2col.lower[0] = 0, f.o.im2col.upper[0] = 0;
  f.o.im2col.lower[1] = 0, f.o.im2col.upper[1] = -8; /* H is measured against W = 8: 0 */
  refused_with(&f, "along H is empty: dimension 2 has size 8", "corner 1 against dimension 2");
}

Test(tmap_diff_cpu, im2col_box_sums_wrap_at_32_bits_as_the_drivers_do) {
  fixture f;
  nhwc(&f, 2, 8, 8, 64);
  f.t.ndim = 3, f.shape[0] = 1, f.shape[1] = 1ll << 31, f.shape[2] = 8; /* N, W, C */
  f.o.im2col.lower[0] = -3, f.o.im2col.upper[0] = 0; /* 2^31 + 0 wraps to -2^31 */
  refused_with(&f, "dimension 1 has size 2147483648, and size + upper[0] = 2147483648 wraps to "
               "-2147483648 in the driver's signed 32-bit arithmetic; lower[0] = -3 must be "
               "below it", NULL);
  f.o.im2col.upper[0] = -3; /* 2^31 - 3 */
  cr_assert_eq(gcl_tensormap_check(&f.t, &f.o, NULL), GCL_OK, "%s", gcl_last_error());
  f.shape[1] = (1ll << 32) - 1; /* + upper wraps to -4: above -32768, not above 0 */
  f.o.im2col.lower[0] = -32768;
  cr_assert_eq(gcl_tensormap_check(&f.t, &f.o, NULL), GCL_OK, "%s", gcl_last_error());
  f.o.im2col.lower[0] = 0, f.o.im2col.upper[0] = 0;
  refused_with(&f, "size + upper[0] = 4294967295 wraps to -1", "lower[0] = 0 must be below it");
}

/* The driver encodes global addresses below 2^57 only, whatever the extent (measured on an H100,
 * driver 580): 2^57 - 16 passes, 2^57 and every higher aligned address is refused. */
Test(tmap_diff_cpu, addresses_from_2_to_the_57_are_refused) {
  fixture f;
  nhwc(&f, 2, 8, 8, 64);
  f.t.data = (void *)(uintptr_t)((UINT64_C(1) << 57) - 16);
  cr_assert_eq(gcl_tensormap_check(&f.t, &f.o, NULL), GCL_OK, "%s", gcl_last_error());
  f.o.im2col.pixels = 0, f.o.box[0] = 64, f.o.box[1] = f.o.box[2] = f.o.box[3] = 2;
  cr_assert_eq(gcl_tensormap_check(&f.t, &f.o, NULL), GCL_OK, "%s", gcl_last_error());
  f.t.byte_offset = 16;
  refused_with(&f, "data + byte_offset = 0x1fffffffffffff0 + 16 = 0x200000000000000: the driver "
               "encodes global addresses below 2^57 = 0x200000000000000 only", NULL);
  f.t.data = (void *)(uintptr_t)UINT64_C(0xfffffffffffff000), f.t.byte_offset = 0;
  refused_with(&f, "= 0xfffffffffffff000: the driver encodes global addresses below 2^57", NULL);
}

/* The im2col box (pixels x channels) has the tiled box's limit: 228 KiB (measured on the H200). */
Test(tmap_diff_cpu, im2col_boxes_over_228_kib_are_refused) {
  fixture f;
  nhwc(&f, 2, 8, 8, 256);
  f.o.im2col.pixels = 456, f.o.im2col.channels = 256; /* 456 x 512 bytes = 233472: encoded */
  cr_assert_eq(gcl_tensormap_check(&f.t, &f.o, NULL), GCL_OK, "%s", gcl_last_error());
  f.o.im2col.pixels = 457;
  refused_with(&f, "im2col.pixels x channels = 457 x 256 elements of 2 bytes = 233984 bytes", "228 KiB");
}

Test(tmap_diff_cpu, im2col_channels_are_a_multiple_of_16_bytes) {
  fixture f;
  nhwc(&f, 2, 8, 8, 64);
  f.o.im2col.channels = 12; /* 24 bytes */
  refused_with(&f, "im2col.channels (dimension 3) = 12 elements of 2 bytes = 24 bytes", "multiple of 16 bytes");
  f.o.im2col.channels = 8;
  cr_assert_eq(gcl_tensormap_check(&f.t, &f.o, NULL), GCL_OK, "%s", gcl_last_error());
}

/* The driver's box limit, measured on the H200 (driver 580): element bytes x the product of
 * floor(box / element stride) over every dimension at most 228 KiB. */
Test(tmap_diff_cpu, boxes_over_228_kib_are_refused) {
  fixture f;
  memset(&f, 0, sizeof f);
  for (int i = 0; i < 5; i++) f.shape[i] = 64;
  f.t = (DLTensor){.data = (void *)(uintptr_t)0x7f0000000000ull, .device = {kDLCUDA, 0},
                   .ndim = 5, .dtype = {kDLFloat, 16, 1}, .shape = f.shape};
  uint32_t box[5] = {64, 8, 8, 8, 4}; /* 256 KiB */
  memcpy(f.o.box, box, sizeof box);
  refused_with(&f, "box = {64, 8, 8, 8, 4} with element_strides = {1, 1, 1, 1, 1} (TMA order): 2 "
               "bytes x the product of floor(box / element stride) = 262144 bytes", "233472 (228 KiB");
  f.o.box[4] = 3, f.o.box[3] = 7, f.o.box[2] = 8, f.o.box[1] = 8; /* 64*8*8*7*3*2 = 172032 */
  cr_assert_eq(gcl_tensormap_check(&f.t, &f.o, NULL), GCL_OK, "%s", gcl_last_error());
  uint32_t exact[5] = {64, 8, 19, 12, 1}; /* 233472 bytes exactly: encoded */
  memcpy(f.o.box, exact, sizeof exact);
  cr_assert_eq(gcl_tensormap_check(&f.t, &f.o, NULL), GCL_OK, "%s", gcl_last_error());
  f.o.box[3] = 3, f.o.box[4] = 8, f.o.element_strides[4] = 3; /* floor(8 / 3) = 2: 116736 */
  cr_assert_eq(gcl_tensormap_check(&f.t, &f.o, NULL), GCL_OK, "%s", gcl_last_error());
  f.o.element_strides[4] = 1; /* 8 planes: 466944 bytes */
  refused_with(&f, "element_strides = {1, 1, 1, 1, 1}", "= 466944 bytes");
}

Test(tmap_diff_cpu, size_1_dimension_stride_keeps_32_byte_interleave) {
  int64_t shape[3] = {4, 1, 8}, strides[3] = {64, 3, 1}; /* dim 1 has size 1, stride ignored */
  DLTensor t = {.data = (void *)(uintptr_t)0x7f0000000000ull, .device = {kDLCUDA, 0}, .ndim = 3,
                .dtype = {kDLFloat, 16, 1}, .shape = shape, .strides = strides};
  gcl_tensormap_options o = {0};
  o.interleave = GCL_TENSORMAP_INTERLEAVE_32B, o.swizzle = GCL_TENSORMAP_SWIZZLE_32B;
  o.box[0] = 8, o.box[1] = 1, o.box[2] = 4;
  gcl_tensormap_desc d;
  cr_assert_eq(gcl_tensormap_check(&t, &o, &d), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(d.strides[0], 32u, "8 halves = 16 bytes, padded to the 32 the interleave needs");
}

/* --- the Blackwell bit-85 fix-up, against the fake driver -------------------------------------- */

static bool bit85(const unsigned char *map) { return (map[10] >> 5) & 1u; }

/* A 2-D f32 view: rows x 8 with a row pitch of `pitch` elements (8: dense). */
typedef struct view { int64_t shape[2], strides[2]; DLTensor t; gcl_tensormap_options o; } view;
static void make_view(view *v, uint64_t mem, int device, int64_t rows, int64_t pitch) {
  memset(v, 0, sizeof *v);
  v->shape[0] = rows, v->shape[1] = 8, v->strides[0] = pitch, v->strides[1] = 1;
  v->t = (DLTensor){.data = (void *)(uintptr_t)mem, .device = {kDLCUDA, device}, .ndim = 2,
                    .dtype = {kDLFloat, 32, 1}, .shape = v->shape, .strides = v->strides};
  v->o.box[0] = 8, v->o.box[1] = 8;
}

/* Encodes v on ctx (device dev) and returns whether the map keeps bit 85. */
static bool encoded_bit85(gcl_context *ctx, const view *v) {
  _Alignas(128) unsigned char m[128];
  cr_assert_eq(gcl_tensormap_encode(ctx, &v->t, &v->o, m), GCL_OK, "%s", gcl_last_error());
  return bit85(m);
}

static gcl_context *blackwell_rig(int driver_version, uint64_t *mem) {
  fake_use();
  cr_assert_eq(fakecuda_set_devices(2), 0);
  fakecuda_set_driver_version(driver_version);
  fakecuda_set_tmap_bit85(1);
  gcl_context *ctx;
  cr_assert_eq(gcl_context_create(1, &ctx), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_context_sm(ctx), 100, "device 1 is the fake B200");
  cr_assert_eq(gcl_mem_alloc(ctx, 1u << 20, mem), GCL_OK, "%s", gcl_last_error());
  return ctx;
}

Test(tmap_diff_cpu, bit85_is_cleared_on_blackwell_for_small_sparse_maps) {
  uint64_t mem;
  gcl_context *ctx = blackwell_rig(13010, &mem);
  view v;
  make_view(&v, mem, 1, 64, 16); /* padded rows: not dense; 64 rows of 64 bytes: 4 KiB */
  cr_assert(!encoded_bit85(ctx, &v), "a small padded view keeps bit 85");
  make_view(&v, mem, 1, 64, 8); /* dense */
  cr_assert(encoded_bit85(ctx, &v), "a dense view lost bit 85");
  make_view(&v, mem, 1, 4096, 16); /* not dense, but 256 KiB from first to last element */
  cr_assert(encoded_bit85(ctx, &v), "a large view lost bit 85");
  /* Re-pointing (the fake sets the bit again, as a recomputing driver would) keeps it clear. */
  gcl_signature *sig;
  gcl_layout *layout;
  gcl_args *args;
  cr_assert_eq(gcl_signature_parse("grid_constant tensormap[2] maps", &sig), GCL_OK);
  cr_assert_eq(gcl_layout_create(sig, 100, &layout), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_args_create(layout, &args), GCL_OK);
  gcl_field f;
  cr_assert_eq(gcl_layout_field(layout, "maps[0]", &f), GCL_OK, "%s", gcl_last_error());
  view two[2];
  make_view(&two[0], mem, 1, 64, 16), make_view(&two[1], mem, 1, 64, 8);
  const DLTensor *t[2] = {&two[0].t, &two[1].t};
  gcl_tensormap_options o[2] = {two[0].o, two[1].o};
  cr_assert_eq(gcl_args_set_tensormaps(args, ctx, &f, 2, t, o, 2, 0), GCL_OK, "%s", gcl_last_error());
  size_t at;
  cr_assert_eq(gcl_layout_param(layout, 0, &at, NULL, NULL), GCL_OK);
  const void *buf;
  size_t size;
  cr_assert_eq(gcl_args_buffer(args, &buf, &size), GCL_OK, "%s", gcl_last_error());
  const unsigned char *maps = (const unsigned char *)buf + at;
  cr_assert(!bit85(maps) && bit85(maps + 128), "set: bit 85 only on the sparse map cleared");
  cr_assert_eq(gcl_args_repoint_tensormaps(args, ctx, &f, 2, (const uint64_t[]){mem + 4096, mem + 8192}), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_args_buffer(args, &buf, &size), GCL_OK);
  maps = (const unsigned char *)buf + at;
  cr_assert(!bit85(maps) && bit85(maps + 128), "re-point: bit 85 only on the sparse map cleared");
  two[0].t.byte_offset = 16384, two[1].t.byte_offset = 32768;
  cr_assert_eq(gcl_args_set_tensormaps(args, ctx, &f, 2, t, o, 2, GCL_TENSORMAP_REFRESH), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_args_buffer(args, &buf, &size), GCL_OK);
  maps = (const unsigned char *)buf + at;
  cr_assert(!bit85(maps) && bit85(maps + 128), "refresh: bit 85 only on the sparse map cleared");
  gcl_args_destroy(args), gcl_layout_destroy(layout), gcl_signature_destroy(sig);
  gcl_mem_free(ctx, mem);
  gcl_context_destroy(ctx);
}

Test(tmap_diff_cpu, bit85_is_left_alone_on_fixed_drivers) {
  uint64_t mem;
  gcl_context *ctx = blackwell_rig(13030, &mem);
  view v;
  make_view(&v, mem, 1, 64, 16);
  cr_assert(encoded_bit85(ctx, &v), "driver 13.3: the encode's bytes stay the driver's");
  gcl_mem_free(ctx, mem);
  gcl_context_destroy(ctx);
}

Test(tmap_diff_cpu, bit85_is_left_alone_on_hopper) {
  fake_use();
  fakecuda_set_driver_version(13010);
  fakecuda_set_tmap_bit85(2); /* the fake sets it on every device */
  gcl_context *h;
  uint64_t mem;
  cr_assert_eq(gcl_context_create(0, &h), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_context_sm(h), 90);
  cr_assert_eq(gcl_mem_alloc(h, 1u << 16, &mem), GCL_OK);
  view v;
  make_view(&v, mem, 0, 64, 16); /* small and padded: cleared on Blackwell, not here */
  cr_assert(encoded_bit85(h, &v), "sm_90: gclaunch changed the driver's bytes");
  gcl_mem_free(h, mem);
  gcl_context_destroy(h);
}
