/* gcl_args_set_tensormaps on the CPU, against libfakecuda.so (whose cuTensorMapEncodeTiled writes
 * recomputable bytes: u64 address, u32 type, u32 rank, u64 dims[5] at 16, u64 strides[4] at 56,
 * u32 box[5] at 88): each descriptor must land in its element of the tensormap[N] parameter at
 * the offset the device reads, with byte_offset folded in; rejected tensors must not reach the
 * driver and must leave the arguments as they were. */
#include "fakecuda_test.h"
#include "args_internal.h"

#include <stdio.h>
#include "../common/tmap_field.h"

#define SIG(n) "grid_constant tensormap[" #n "] maps, const void* work, u32 n_work"
#define SIG64(n) "grid_constant tensormap align(64)[" #n "] maps, const void* work, u32 n_work"

typedef struct rig {
  gcl_context *ctx;
  gcl_module *mod;
  gcl_kernel *kernel;
  gcl_args *args;
  uint64_t mem;
} rig;

/* Declares `name` to the fake with the sm_90 offsets of kernels/megakernel.cu and opens it. */
static void open_rig(rig *r, const char *name, const char *sig, size_t n, size_t maps_at) {
  memset(r, 0, sizeof *r);
  size_t off[3] = {maps_at, maps_at + 128 * n, maps_at + 128 * n + 8};
  size_t size[3] = {128 * n, 8, 4};
  cr_assert_eq(fakecuda_set_params(name, 3, off, size), 0);
  cr_assert_eq(gcl_context_create(0, &r->ctx), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_mem_alloc(r->ctx, 1 << 20, &r->mem), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_module_load_data(r->ctx, fake_ptx, sizeof fake_ptx, &r->mod), GCL_OK);
  cr_assert_eq(gcl_module_find_kernel(r->mod, name, sig, &r->kernel), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_args_create(gcl_kernel_layout(r->kernel), &r->args), GCL_OK);
}

static void close_rig(rig *r) {
  gcl_args_destroy(r->args);
  gcl_module_destroy(r->mod);
  gcl_mem_free(r->ctx, r->mem);
  gcl_context_destroy(r->ctx);
  assert_nothing_live();
}

/* A (rows x cols) float view with a 64-float pitch, 256 bytes per element index e apart. */
static void view_for(fake_tensor *f, uint64_t mem, size_t e, int64_t rows, int64_t cols) {
  fake_tensor_init(f, mem, rows, cols);
  f->strides[0] = 64;
  f->t.byte_offset = 256 * e; /* 16-byte aligned, not zero */
}

/* Fills every element, launches, and checks each descriptor where the device would read it. */
static void fill_and_check(rig *r, size_t n, size_t maps_at) {
  gcl_tensormap_options o = fake_tmap_options();
  for (size_t e = 0; e < n; e++) {
    fake_tensor f;
    view_for(&f, r->mem, e, 10 + (int64_t)e % 7, 33 + (int64_t)e % 5);
    cr_assert_eq(gcl_args_set_tensormaps(r->args, r->ctx, TMAP_FIELD(r->args, 0, e), 1, (const DLTensor *const[]){&f.t}, &o, 1, 0), GCL_OK, "element %zu: %s",
                 e, gcl_last_error());
  }
  cr_assert_eq(gcl_args_set_ptr(r->args, 1, r->mem), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_args_set_u32(r->args, 2, 5), GCL_OK);
  gcl_launch_config cfg = {.grid = {1, 1, 1}, .block = {32, 1, 1}};
  cr_assert_eq(gcl_launch(r->kernel, &cfg, r->args), GCL_OK, "%s", gcl_last_error());
  static fakecuda_launch l;
  cr_assert_eq(fakecuda_last_launch(&l), 0);
  cr_assert_eq(l.param_bytes, maps_at + 128 * n + 12);
  for (size_t e = 0; e < n; e++) {
    const unsigned char *m = l.params + maps_at + 128 * e;
    uint64_t addr, dim0, dim1, stride0;
    uint32_t type, rank;
    memcpy(&addr, m, 8), memcpy(&type, m + 8, 4), memcpy(&rank, m + 12, 4);
    memcpy(&dim0, m + 16, 8), memcpy(&dim1, m + 24, 8), memcpy(&stride0, m + 56, 8);
    cr_assert_eq(addr, r->mem + 256 * e, "element %zu: address 0x%llx", e,
                 (unsigned long long)addr);
    cr_assert_eq(type, (uint32_t)GCL_TENSORMAP_F32);
    cr_assert_eq(rank, 2u);
    cr_assert_eq(dim0, 33u + e % 5, "element %zu: dims[0] is the DLPack innermost size", e);
    cr_assert_eq(dim1, 10u + e % 7);
    cr_assert_eq(stride0, 256u, "pitch of 64 floats in bytes");
  }
}

TestSuite(tensormap_args, .init = fake_use);

Test(tensormap_args, n255_every_element_where_the_device_reads_it) {
  rig r;
  open_rig(&r, "megakernel_copy_255", SIG(255), 255, 0x70);
  fill_and_check(&r, 255, 0x70);
  close_rig(&r);
}

Test(tensormap_args, align64_maps_sit_at_0x30) {
  rig r;
  open_rig(&r, "megakernel_copy_a64_16", SIG64(16), 16, 0x30);
  fill_and_check(&r, 16, 0x30);
  close_rig(&r);
}

Test(tensormap_args, unaligned_view_never_reaches_the_driver) {
  rig r;
  open_rig(&r, "megakernel_copy_16", SIG(16), 16, 0x70);
  fill_and_check(&r, 16, 0x70);
  const void *buf = NULL;
  size_t size = 0;
  cr_assert_eq(gcl_args_buffer(r.args, &buf, &size), GCL_OK);
  unsigned char *before = malloc(size);
  cr_assert_not_null(before);
  memcpy(before, buf, size);
  long encodes = fakecuda_calls("cuTensorMapEncodeTiled");
  fake_tensor f;
  view_for(&f, r.mem, 0, 8, 32);
  f.t.byte_offset = 4 * 3; /* three floats: 12 bytes */
  gcl_tensormap_options o = fake_tmap_options();
  cr_assert_eq(gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 7), 1, (const DLTensor *const[]){&f.t}, &o, 1, 0), GCL_ERROR_TENSOR);
  assert_msg_has("parameter 0 'maps' field 'maps[7]'");
  assert_msg_has("not 16-byte aligned");
  char addr[32];
  snprintf(addr, sizeof addr, "0x%llx", (unsigned long long)(r.mem + 12));
  assert_msg_has(addr);
  cr_assert_eq(fakecuda_calls("cuTensorMapEncodeTiled"), encodes, "the driver was called");
  cr_assert_eq(gcl_args_buffer(r.args, &buf, &size), GCL_OK);
  cr_assert(!memcmp(before, buf, size), "a failed set changed the buffer");
  free(before);
  close_rig(&r);
}

Test(tensormap_args, driver_failure_names_the_element) {
  rig r;
  open_rig(&r, "megakernel_copy_16", SIG(16), 16, 0x70);
  fake_tensor f;
  view_for(&f, r.mem, 1, 8, 32);
  gcl_tensormap_options o = fake_tmap_options();
  fakecuda_fail_once("cuTensorMapEncodeTiled", 1, 0);
  cr_assert_eq(gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 9), 1, (const DLTensor *const[]){&f.t}, &o, 1, 0), GCL_ERROR_DRIVER);
  assert_msg_has("parameter 0 'maps' field 'maps[9]'");
  assert_msg_has("CUDA_ERROR_INVALID_VALUE");
  cr_assert(!gcl_args_is_set(r.args, 0));
  close_rig(&r);
}

Test(tensormap_args, slot_kinds) {
  rig r;
  open_rig(&r, "megakernel_copy_16", SIG(16), 16, 0x70);
  fake_tensor f;
  view_for(&f, r.mem, 0, 8, 32);
  gcl_tensormap_options o = fake_tmap_options();
  gcl_field past;
  cr_assert_eq(gcl_layout_field(gcl_args_layout(r.args), "maps[16]", &past), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("index 16 out of range");
  const DLTensor *two[2] = {&f.t, &f.t};
  cr_assert_eq(gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 15), 2, two, &o, 1, 0),
               GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("parameter 0 'maps' field 'maps[15]': n = 2 maps from here, but only 1 lie");
  cr_assert_eq(gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 1, 0), 1, (const DLTensor *const[]){&f.t}, &o, 1, 0), GCL_ERROR_TYPE_MISMATCH);
  assert_msg_has("parameter 1 'work'");
  cr_assert_eq(gcl_args_set_tensormaps(r.args, r.ctx, NULL, 1, (const DLTensor *const[]){&f.t}, &o, 1, 0), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("gcl_args_set_tensormaps: first is NULL");
  f.t.device.device_id = 1;
  cr_assert_eq(gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 2), 1, (const DLTensor *const[]){&f.t}, &o, 1, 0), GCL_ERROR_TENSOR);
  assert_msg_has("parameter 0 'maps' field 'maps[2]': tensor is on CUDA device 1");
  close_rig(&r);
}

/* A single `tensormap` parameter takes one map (n = 1); so does an untyped 128-byte one. */
Test(tensormap_args, single_and_raw_tensormap) {
  gcl_context *ctx = NULL;
  gcl_module *mod = NULL;
  gcl_kernel *typed = NULL, *raw = NULL;
  gcl_args *a = NULL, *b = NULL;
  uint64_t mem = 0;
  cr_assert_eq(gcl_context_create(0, &ctx), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_mem_alloc(ctx, 1 << 16, &mem), GCL_OK);
  cr_assert_eq(gcl_module_load_data(ctx, fake_ptx, sizeof fake_ptx, &mod), GCL_OK);
  cr_assert_eq(gcl_module_find_kernel(mod, "k", FAKE_K_SIGNATURE, &typed), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_module_find_kernel(mod, "k", NULL, &raw), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_args_create(gcl_kernel_layout(typed), &a), GCL_OK);
  cr_assert_eq(gcl_args_create(gcl_kernel_layout(raw), &b), GCL_OK);
  fake_tensor f;
  fake_tensor_init(&f, mem, 64, 64);
  gcl_tensormap_options o = fake_tmap_options();
  cr_assert_eq(gcl_args_set_tensormaps(a, ctx, TMAP_FIELD(a, 0, 0), 1, (const DLTensor *const[]){&f.t}, &o, 1, 0), GCL_OK, "%s", gcl_last_error());
  cr_assert(gcl_args_is_set(a, 0));
  /* A map that is the whole parameter is named by the parameter alone (the admission asks the
   * layout only when it formats the message); a refused re-point leaves its bytes alone. */
  const unsigned char *data =
      (const unsigned char *)gcl__args_data(a) + TMAP_FIELD(a, 0, 0)->offset;
  unsigned char before[128];
  memcpy(before, data, sizeof before);
  uint64_t odd = mem + 8;
  cr_assert_eq(gcl_args_repoint_tensormaps(a, ctx, TMAP_FIELD(a, 0, 0), 1, &odd),
               GCL_ERROR_INVALID_ARGUMENT, "%s", gcl_last_error());
  assert_msg_has("parameter 0 'm': address 0x");
  cr_assert(strstr(gcl_last_error(), "field") == NULL, "%s", gcl_last_error());
  cr_assert(memcmp(before, data, sizeof before) == 0, "a refused re-point changed the map");
  const DLTensor *two[2] = {&f.t, &f.t};
  cr_assert_eq(gcl_args_set_tensormaps(a, ctx, TMAP_FIELD(a, 0, 0), 2, two, &o, 1, 0), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("parameter 0 'm': n = 2 maps from here, but only 1 lie");
  cr_assert_eq(gcl_args_set_tensormaps(b, ctx, TMAP_FIELD(b, 0, 0), 1, (const DLTensor *const[]){&f.t}, &o, 1, 0), GCL_OK, "%s", gcl_last_error());
  cr_assert(gcl_args_is_set(b, 0));
  cr_assert_eq(gcl_args_set_tensormaps(b, ctx, TMAP_FIELD(b, 2, 0), 1, (const DLTensor *const[]){&f.t}, &o, 1, 0), GCL_ERROR_TYPE_MISMATCH);
  gcl_args_destroy(a);
  gcl_args_destroy(b);
  gcl_module_destroy(mod);
  gcl_mem_free(ctx, mem);
  gcl_context_destroy(ctx);
}

Test(tensormap_args, standalone_encode) {
  rig r;
  open_rig(&r, "megakernel_copy_1", SIG(1), 1, 0x70);
  fake_tensor f;
  view_for(&f, r.mem, 3, 8, 32);
  gcl_tensormap_options o = fake_tmap_options();
  _Alignas(128) unsigned char map[128];
  memset(map, 0x5c, sizeof map);
  cr_assert_eq(gcl_tensormap_encode(r.ctx, &f.t, &o, map + 16), GCL_ERROR_INVALID_ARGUMENT);
  f.t.byte_offset = 8;
  cr_assert_eq(gcl_tensormap_encode(r.ctx, &f.t, &o, map), GCL_ERROR_TENSOR);
  cr_assert_eq(map[0], 0x5c, "map changed on failure");
  f.t.byte_offset = 768;
  cr_assert_eq(gcl_tensormap_encode(r.ctx, &f.t, &o, map), GCL_OK, "%s", gcl_last_error());
  uint64_t addr;
  memcpy(&addr, map, 8);
  cr_assert_eq(addr, r.mem + 768);
  close_rig(&r);
}

/* A store destination whose rows end off a 16-byte boundary (33 floats = 132 bytes) is refused
 * before the driver, naming the element: a TMA store would overwrite 12 bytes after each row. The
 * same view as a load map (store = 0) and a 36-float store destination are encoded. */
Test(tensormap_args, odd_store_destination_never_reaches_the_driver) {
  rig r;
  open_rig(&r, "megakernel_copy_16", SIG(16), 16, 0x70);
  fake_tensor f;
  view_for(&f, r.mem, 2, 8, 33);
  gcl_tensormap_options o = fake_tmap_options();
  o.store = 1;
  long encodes = fakecuda_calls("cuTensorMapEncodeTiled");
  cr_assert_eq(gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 4), 1, (const DLTensor *const[]){&f.t}, &o, 1, 0), GCL_ERROR_TENSOR);
  assert_msg_has("parameter 0 'maps' field 'maps[4]'");
  assert_msg_has("132 bytes");
  assert_msg_has("overwrite the 12 bytes after each row");
  _Alignas(128) unsigned char map[128];
  memset(map, 0x5c, sizeof map);
  cr_assert_eq(gcl_tensormap_encode(r.ctx, &f.t, &o, map), GCL_ERROR_TENSOR);
  cr_assert_eq(map[0], 0x5c, "map changed on failure");
  cr_assert_eq(fakecuda_calls("cuTensorMapEncodeTiled"), encodes, "the driver was called");
  o.store = 0;
  cr_assert_eq(gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 4), 1, (const DLTensor *const[]){&f.t}, &o, 1, 0), GCL_OK, "%s",
               gcl_last_error());
  view_for(&f, r.mem, 3, 8, 36);
  o.store = 1;
  cr_assert_eq(gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 5), 1, (const DLTensor *const[]){&f.t}, &o, 1, 0), GCL_OK, "%s",
               gcl_last_error());
  cr_assert_eq(fakecuda_calls("cuTensorMapEncodeTiled"), encodes + 2);
  close_rig(&r);
}

/* issue 50: a tensor flagged DLPACK_FLAG_BITMASK_READ_ONLY (its producer's
 * DLManagedTensorVersioned.flags) is refused for a store map, by name, before the driver, as a
 * pointer parameter that is not const refuses it (gcl_args_set_field_dltensor_flags); a load
 * map over it, and a store map over a writable tensor in the same batch, are encoded. The
 * encode and table forms refuse it the same way; unknown flag bits are refused as there. */
Test(tensormap_args, read_only_tensor_refused_for_a_store_map) {
  rig r;
  open_rig(&r, "megakernel_copy_16", SIG(16), 16, 0x70);
  fake_tensor a, b;
  view_for(&a, r.mem, 2, 8, 32);
  view_for(&b, r.mem, 3, 8, 32);
  gcl_tensormap_options o[2] = {fake_tmap_options(), fake_tmap_options()};
  o[0].store = 1, o[1].store = 1;
  const DLTensor *const ts[2] = {&a.t, &b.t};
  uint64_t ro[2] = {0, DLPACK_FLAG_BITMASK_READ_ONLY};
  long encodes = fakecuda_calls("cuTensorMapEncodeTiled");
  unsigned char before[2 * 128];
  const gcl_field *f4 = TMAP_FIELD(r.args, 0, 4);
  const void *raw = NULL;
  size_t raw_size = 0;
  /* the buffer is complete only once every parameter is set: set them, maps zero, first */
  cr_assert_eq(gcl_args_set_ptr(r.args, 1, r.mem), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_args_set_u32(r.args, 2, 1), GCL_OK, "%s", gcl_last_error());
  gcl_field whole;
  static const unsigned char zeros[16 * 128];
  cr_assert_eq(gcl_layout_param_field(gcl_args_layout(r.args), 0, &whole), GCL_OK);
  cr_assert_eq(gcl_args_set_field(r.args, &whole, zeros, sizeof zeros), GCL_OK, "%s",
               gcl_last_error());
  cr_assert_eq(gcl_args_buffer(r.args, &raw, &raw_size), GCL_OK, "%s", gcl_last_error());
  memcpy(before, (const unsigned char *)raw + f4->offset, sizeof before);
  cr_assert_eq(gcl_args_set_tensormaps_flags(r.args, r.ctx, f4, 2, ts, ro, o, 2, 0), GCL_ERROR_TENSOR);
  assert_msg_has("parameter 0 'maps' field 'maps[5]'");
  assert_msg_has("tensor is read-only (DLPack flags 0x1) but options.store is set");
  cr_assert_eq(memcmp(before, (const unsigned char *)raw + f4->offset, sizeof before), 0,
               "maps changed");
  _Alignas(128) unsigned char map[128];
  memset(map, 0x5c, sizeof map);
  cr_assert_eq(gcl_tensormap_encode_flags(r.ctx, &b.t, ro[1], &o[1], map), GCL_ERROR_TENSOR);
  assert_msg_has("tensor is read-only (DLPack flags 0x1) but options.store is set");
  cr_assert_eq(map[0], 0x5c, "map changed on failure");
  gcl_tensormap_table *table = NULL;
  cr_assert_eq(gcl_tensormap_table_create(r.ctx, 4, &table), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_tensormap_table_set_flags(table, 0, 2, ts, ro, o, 2, 0), GCL_ERROR_TENSOR);
  assert_msg_has("entry 1");
  assert_msg_has("tensor is read-only (DLPack flags 0x1) but options.store is set");
  cr_assert_eq(gcl_tensormap_table_dirty(table), 0);
  uint64_t odd[2] = {0, 0x100};
  cr_assert_eq(gcl_args_set_tensormaps_flags(r.args, r.ctx, f4, 2, ts, odd, o, 2, 0), GCL_ERROR_TENSOR);
  assert_msg_has("unsupported DLPack flags 0x100");
  cr_assert_eq(gcl_args_set_tensormaps_flags(r.args, r.ctx, f4, 2, ts, NULL, o, 2, 0),
               GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("dlpack_flags");
  cr_assert_eq(fakecuda_calls("cuTensorMapEncodeTiled"), encodes, "the driver was called");
  o[1].store = 0; /* a load map over the read-only tensor, a store map over the writable one */
  cr_assert_eq(gcl_args_set_tensormaps_flags(r.args, r.ctx, f4, 2, ts, ro, o, 2, 0), GCL_OK, "%s",
               gcl_last_error());
  cr_assert_eq(gcl_tensormap_table_set_flags(table, 0, 2, ts, ro, o, 2, 0), GCL_OK, "%s",
               gcl_last_error());
  cr_assert_eq(gcl_tensormap_encode_flags(r.ctx, &b.t, ro[1], &o[1], map), GCL_OK, "%s",
               gcl_last_error());
  cr_assert_eq(fakecuda_calls("cuTensorMapEncodeTiled"), encodes + 5);
  gcl_tensormap_table_destroy(table);
  close_rig(&r);
}

/* im2col maps go through cuTensorMapEncodeIm2col (never the tiled call) into their element, with
 * pixels, channels and the W/H corners as given; tiled and im2col elements can share one
 * tensormap[N]. A driver failure names the element and the im2col call. */
Test(tensormap_args, im2col_element_through_the_im2col_call) {
  rig r;
  open_rig(&r, "megakernel_copy_16", SIG(16), 16, 0x70);
  fill_and_check(&r, 16, 0x70); /* every element tiled first */
  int64_t shape[4] = {2, 9, 14, 64}; /* NHWC, float32 */
  DLTensor t = {.data = (void *)(uintptr_t)r.mem, .device = {kDLCUDA, 0}, .ndim = 4,
                .dtype = {kDLFloat, 32, 1}, .shape = shape, .strides = NULL,
                .byte_offset = 64 * 4 * 14}; /* starts one image row in */
  gcl_tensormap_options o = {0};
  o.im2col.pixels = 96, o.im2col.channels = 32;
  o.im2col.lower[0] = -1, o.im2col.lower[1] = -2, o.im2col.upper[0] = -1, o.im2col.upper[1] = 0;
  long tiled = fakecuda_calls("cuTensorMapEncodeTiled");
  cr_assert_eq(gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 5), 1, (const DLTensor *const[]){&t}, &o, 1, 0), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(fakecuda_calls("cuTensorMapEncodeIm2col"), 1);
  cr_assert_eq(fakecuda_calls("cuTensorMapEncodeTiled"), tiled, "im2col went through the tiled call");
  const void *buf = NULL;
  size_t size = 0;
  cr_assert_eq(gcl_args_buffer(r.args, &buf, &size), GCL_OK);
  const unsigned char *m = (const unsigned char *)buf + 0x70 + 128 * 5;
  uint64_t addr, dims[4], strides[3];
  uint32_t rank, channels, pixels;
  int16_t corners[4];
  memcpy(&addr, m, 8), memcpy(&rank, m + 12, 4), memcpy(dims, m + 16, sizeof dims);
  memcpy(strides, m + 56, sizeof strides), memcpy(&channels, m + 88, 4);
  memcpy(&pixels, m + 92, 4), memcpy(corners, m + 96, sizeof corners);
  cr_assert_eq(addr, r.mem + 64 * 4 * 14, "byte_offset folded in");
  cr_assert_eq(rank, 4u);
  cr_assert(dims[0] == 64 && dims[1] == 14 && dims[2] == 9 && dims[3] == 2, "C, W, H, N");
  cr_assert(strides[0] == 256 && strides[1] == 256 * 14 && strides[2] == 256 * 14 * 9);
  cr_assert_eq(channels, 32u);
  cr_assert_eq(pixels, 96u);
  cr_assert(corners[0] == -1 && corners[1] == -2 && corners[2] == -1 && corners[3] == 0,
            "lower W, H, upper W, H: %d %d %d %d", corners[0], corners[1], corners[2], corners[3]);
  cr_assert_eq(m[127], 0x1C, "the fake's im2col mark");
  cr_assert_eq(m[127 - 128], 0xFA, "element 4 is still the tiled map");

  fakecuda_fail_once("cuTensorMapEncodeIm2col", 1, 0);
  cr_assert_eq(gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 6), 1, (const DLTensor *const[]){&t}, &o, 1, 0), GCL_ERROR_DRIVER);
  assert_msg_has("parameter 0 'maps' field 'maps[6]': cuTensorMapEncodeIm2col(float32, rank 4");
  assert_msg_has("96 pixels of 32 channels");
  o.im2col.lower[1] = 200; /* rank 4 allows [-128, 127]: refused before the driver */
  cr_assert_eq(gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 6), 1, (const DLTensor *const[]){&t}, &o, 1, 0), GCL_ERROR_TENSOR);
  assert_msg_has("im2col.lower[1] (H, dimension 1) = 200");
  cr_assert_eq(fakecuda_calls("cuTensorMapEncodeIm2col"), 2, "the refused map reached the driver");
  close_rig(&r);
}

/* Tensor maps into a globals struct by field: the driver's bytes land in the member, a bad tensor
 * is named by the field's path before the driver, and a failed set changes nothing. */
Test(tensormap_args, maps_in_a_globals_struct_by_field) {
  rig r;
  memset(&r, 0, sizeof r);
  size_t off[1] = {0x70}, size[1] = {2176};
  cr_assert_eq(fakecuda_set_params("megakernel_globals_16", 1, off, size), 0);
  cr_assert_eq(gcl_context_create(0, &r.ctx), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_mem_alloc(r.ctx, 1 << 20, &r.mem), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_module_load_data(r.ctx, fake_ptx, sizeof fake_ptx, &r.mod), GCL_OK);
  cr_assert_eq(gcl_module_find_kernel(r.mod, "megakernel_globals_16",
                              "grid_constant struct{tensormap[16] maps, const void* work, u32 n_work} g",
                              &r.kernel), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_args_create(gcl_kernel_layout(r.kernel), &r.args), GCL_OK);
  gcl_field m3, n;
  cr_assert_eq(gcl_layout_field(gcl_kernel_layout(r.kernel), "g.maps[3]", &m3), GCL_OK);
  cr_assert_eq(gcl_layout_field(gcl_kernel_layout(r.kernel), "g.n_work", &n), GCL_OK);
  fake_tensor f;
  view_for(&f, r.mem, 3, 8, 32);
  gcl_tensormap_options o = fake_tmap_options();
  cr_assert_eq(gcl_args_set_tensormaps(r.args, r.ctx, &m3, 1, (const DLTensor *const[]){&f.t}, &o, 1, 0), GCL_OK, "%s", gcl_last_error());
  cr_assert(gcl_args_field_is_set(r.args, &m3));
  _Alignas(64) unsigned char want[128];
  cr_assert_eq(gcl_tensormap_encode(r.ctx, &f.t, &o, want), GCL_OK);
  const unsigned char *data = gcl__args_data(r.args);
  cr_assert(!memcmp(data + m3.offset, want, 128), "the member holds the driver's bytes");
  long encodes = fakecuda_calls("cuTensorMapEncodeTiled");
  f.t.byte_offset += 4; /* no longer 16-byte aligned */
  cr_assert_eq(gcl_args_set_tensormaps(r.args, r.ctx, &m3, 1, (const DLTensor *const[]){&f.t}, &o, 1, 0), GCL_ERROR_TENSOR);
  assert_msg_has("parameter 0 'g' field 'g.maps[3]'");
  assert_msg_has("not 16-byte aligned");
  cr_assert_eq(fakecuda_calls("cuTensorMapEncodeTiled"), encodes, "the driver was called");
  cr_assert(!memcmp(data + m3.offset, want, 128), "a failed set changed the member");
  cr_assert_eq(gcl_args_set_tensormaps(r.args, r.ctx, &n, 1, (const DLTensor *const[]){&f.t}, &o, 1, 0), GCL_ERROR_TYPE_MISMATCH);
  assert_msg_has("parameter 0 'g' field 'g.n_work'");
  close_rig(&r);
}
