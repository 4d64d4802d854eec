/* DLPack tensors into pointer parameters: every check of gcl__dltensor_check has a rejecting and
 * an accepting case, and each rejection's message must name the parameter and the offending
 * value. Then ownership through the public args API: deleters counted on every path. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <string.h>

#include "args_internal.h"

typedef struct tcase {
  const char *what;
  /* the pointer parameter: 2 'src' */
  gcl_scalar scalar;
  bool is_const;
  size_t align; /* 0: the element's size (as the signature parser defaults it) */
  /* the tensor */
  bool null_data;
  uint64_t data; /* 0: 0x10000 */
  uint64_t byte_offset;
  int dev_type; /* 0: kDLCUDA */
  int dev_id;
  uint8_t code, bits;
  uint16_t lanes; /* 0: 1 */
  int32_t ndim;
  bool null_shape;
  int64_t shape[3];
  int64_t *strides; /* NULL: compact */
  uint64_t flags;
  int restrict_dev; /* 0: -1 (any); else device + 1 */
  /* expectations */
  gcl_status want;
  const char *msg;    /* rejections: the offending value as the message must show it */
  uint64_t want_addr; /* acceptances: 0 means data + byte_offset */
} tcase;

#define F32 .scalar = GCL_SCALAR_F32, .code = kDLFloat, .bits = 32
#define V8 .ndim = 1, .shape = {8}
#define ST(...) .strides = (int64_t[]){__VA_ARGS__}
#define REJECT(m) .want = GCL_ERROR_TENSOR, .msg = m

static const tcase cases[] = {
    /* flags */
    {"unknown flag bit", F32, V8, .flags = 0x8, REJECT("flags 0x8")},
    {"padded sub-byte flag", F32, V8, .flags = 0x4, REJECT("flags 0x4")},
    {"IS_COPIED is informational", F32, V8, .flags = DLPACK_FLAG_BITMASK_IS_COPIED},
    {"read-only into non-const", F32, V8, .flags = 1, REJECT("read-only (flags 0x1)")},
    {"read-only into const", F32, V8, .is_const = true, .flags = 1},
    /* device type and id */
    {"CPU tensor", F32, V8, .dev_type = kDLCPU, REJECT("device type 1")},
    {"ROCm tensor", F32, V8, .dev_type = kDLROCM, REJECT("device type 10")},
    {"CUDA host tensor", F32, V8, .dev_type = kDLCUDAHost},
    {"CUDA managed tensor", F32, V8, .dev_type = 13},
    {"wrong device", F32, V8, .dev_id = 1, .restrict_dev = 1,
     REJECT("device 1, expected device 0")},
    {"right device", F32, V8, .dev_id = 1, .restrict_dev = 2},
    {"any device", F32, V8, .dev_id = 3},
    {"negative device id", F32, V8, .dev_id = -1, REJECT("device id -1")},
    {"managed reports 0 on any device", F32, V8, .dev_type = 13, .restrict_dev = 2},
    /* dtype */
    {"int into f32", .scalar = GCL_SCALAR_F32, .code = kDLInt, .bits = 32, V8,
     REJECT("code 0, bits 32")},
    {"f64 into f32", .scalar = GCL_SCALAR_F32, .code = kDLFloat, .bits = 64, V8, REJECT("bits 64")},
    {"float4 vector into f32", F32, V8, .lanes = 4, REJECT("lanes 4")},
    {"f64 into f64", .scalar = GCL_SCALAR_F64, .code = kDLFloat, .bits = 64, V8},
    {"bool into bool", .scalar = GCL_SCALAR_BOOL, .code = 6, .bits = 8, V8},
    {"u8 into bool", .scalar = GCL_SCALAR_BOOL, .code = kDLUInt, .bits = 8, V8, REJECT("code 1")},
    {"f16 into f16", .scalar = GCL_SCALAR_F16, .code = kDLFloat, .bits = 16, V8},
    {"f16 into bf16", .scalar = GCL_SCALAR_BF16, .code = kDLFloat, .bits = 16, V8,
     REJECT("float16 (code 2")},
    {"bf16 into bf16", .scalar = GCL_SCALAR_BF16, .code = kDLBfloat, .bits = 16, V8},
    {"i8 into i8", .scalar = GCL_SCALAR_I8, .code = kDLInt, .bits = 8, V8},
    {"u16 into u16", .scalar = GCL_SCALAR_U16, .code = kDLUInt, .bits = 16, V8},
    {"i32 into u32", .scalar = GCL_SCALAR_U32, .code = kDLInt, .bits = 32, V8, REJECT("int32")},
    {"u64 into u64", .scalar = GCL_SCALAR_U64, .code = kDLUInt, .bits = 64, V8},
    {"i64 into i64", .scalar = GCL_SCALAR_I64, .code = kDLInt, .bits = 64, V8},
    {"complex64 into void*", .scalar = GCL_SCALAR_VOID, .code = kDLComplex, .bits = 64, V8},
    {"fp4x2 into void*", .scalar = GCL_SCALAR_VOID, .code = 17, .bits = 4, .lanes = 2, V8},
    {"lone fp4 into void*", .scalar = GCL_SCALAR_VOID, .code = 17, .bits = 4, V8,
     REJECT("bits 4, lanes 1")},
    /* ndim and shape */
    {"negative ndim", F32, .ndim = -1, REJECT("ndim -1")},
    {"scalar tensor, NULL shape", F32, .ndim = 0, .null_shape = true},
    {"NULL shape with ndim 2", F32, .ndim = 2, .null_shape = true, REJECT("NULL with ndim 2")},
    {"negative extent", F32, .ndim = 2, .shape = {2, -3}, REJECT("shape[1] = -3")},
    {"2-d compact", F32, .ndim = 2, .shape = {2, 3}},
    /* strides */
    {"broadcast into non-const", F32, .ndim = 2, .shape = {4, 8}, ST(0, 1),
     REJECT("strides[0] = 0 (broadcast)")},
    {"broadcast into const", F32, .is_const = true, .ndim = 2, .shape = {4, 8}, ST(0, 1)},
    {"negative into non-const", F32, V8, ST(-1), REJECT("strides[0] = -1 (negative)")},
    {"negative into const", F32, .is_const = true, V8, ST(-1), .data = 0x10040},
    {"stride 0 of a size-1 dim", F32, .ndim = 2, .shape = {1, 32}, ST(0, 1)},
    {"padded rows", F32, .ndim = 2, .shape = {4, 8}, ST(16, 1)},
    /* extent */
    {"numel overflows", F32, .ndim = 2, .shape = {INT64_C(1) << 62, 4}, REJECT("dimension 0")},
    {"stride overflows", F32, .ndim = 1, .shape = {4}, ST(INT64_C(1) << 62),
     REJECT("stride 4611686018427387904")},
    {"bytes overflow", F32, .ndim = 1, .shape = {INT64_C(1) << 62}, REJECT("4611686018427387904")},
    {"last element at INT64_MAX", F32, .ndim = 1, .shape = {2}, ST(INT64_MAX),
     REJECT("extent of 9223372036854775808 elements of 4 bytes")},
    {"data + byte_offset wraps", F32, V8, .data = UINT64_C(0xfffffffffffff000),
     .byte_offset = 0x2000, REJECT("byte_offset 8192 overflows")},
    {"end wraps", F32, V8, .data = UINT64_C(0xfffffffffffffff0), REJECT("8 elements of 4 bytes")},
    {"end just fits", F32, V8, .data = UINT64_C(0xffffffffffffff00)},
    {"negative strides below 0", F32, .is_const = true, V8, ST(-1), .data = 0x10,
     REJECT("7 elements below")},
    {"NULL data with elements", F32, V8, .null_data = true, REJECT("data is NULL")},
    {"large byte_offset", F32, V8, .data = 0x1000, .byte_offset = UINT64_C(0x7fff00000000)},
    /* alignment of data + byte_offset */
    {"byte_offset 4 under align(16)", F32, .align = 16, V8, .byte_offset = 4,
     REJECT("data + byte_offset = 0x10004 is not 16-byte aligned (data 0x10000, byte_offset 4)")},
    {"byte_offset 16 under align(16)", F32, .align = 16, V8, .byte_offset = 16},
    {"folded offset 4 under align(16)", F32, .align = 16, V8, .data = 0x10004,
     REJECT("0x10004 is not 16-byte aligned")},
    {"folded offset 4 under align(4)", F32, .align = 4, V8, .data = 0x10004},
    {"byte_offset 2 under the f32 default", F32, V8, .byte_offset = 2,
     REJECT("not 4-byte aligned")},
    {"odd void* address", .scalar = GCL_SCALAR_VOID, .align = 1, .code = kDLUInt, .bits = 8, V8,
     .byte_offset = 3},
    /* size 0 */
    {"size 0, NULL data", F32, .ndim = 2, .shape = {0, 3}, .null_data = true, .want_addr = 0},
    {"size 0, misaligned, negative stride", F32, .align = 16, .ndim = 2, .shape = {3, 0},
     ST(-1, 1), .data = 0x10001},
    {"size 0 still checks dtype", .scalar = GCL_SCALAR_F32, .code = kDLInt, .bits = 32, .ndim = 1,
     .shape = {0},
     REJECT("code 0")},
};

static void build(const tcase *c, gcl_param_info *p, DLTensor *t) {
  memset(p, 0, sizeof *p);
  p->name = "src";
  p->kind = p->elem_kind = GCL_PARAM_POINTER;
  p->scalar = c->scalar;
  p->is_const = c->is_const;
  p->size = p->align = 8;
  p->pointee_align = c->align ? c->align : (c->scalar == GCL_SCALAR_VOID ? 1 : c->bits / 8);
  memset(t, 0, sizeof *t);
  t->data = c->null_data ? NULL : (void *)(uintptr_t)(c->data ? c->data : 0x10000);
  t->byte_offset = c->byte_offset;
  t->device.device_type = c->dev_type ? (DLDeviceType)c->dev_type : kDLCUDA;
  t->device.device_id = c->dev_id;
  t->dtype.code = c->code;
  t->dtype.bits = c->bits;
  t->dtype.lanes = c->lanes ? c->lanes : 1;
  t->ndim = c->ndim;
  t->shape = c->null_shape ? NULL : (int64_t *)c->shape;
  t->strides = c->strides;
}

Test(dltensor, matrix) {
  size_t n = sizeof cases / sizeof cases[0], accepted = 0, rejected = 0;
  for (size_t i = 0; i < n; i++) {
    const tcase *c = &cases[i];
    gcl_param_info p;
    DLTensor t;
    build(c, &p, &t);
    uint64_t addr = 0xdeadbeef;
    gcl_status s = gcl__dltensor_check(&t, c->flags, &p, 2, c->restrict_dev - 1, &addr);
    cr_expect_eq(s, c->want, "%s: status %s, want %s (%s)", c->what, gcl_status_name(s),
                 gcl_status_name(c->want), gcl_last_error());
    if (c->want != GCL_OK) {
      rejected++;
      cr_log_info("%-36s %s", c->what, gcl_last_error());
      cr_expect(strstr(gcl_last_error(), "parameter 2 'src': "), "%s: message '%s' names no "
                "parameter", c->what, gcl_last_error());
      cr_expect(strstr(gcl_last_error(), c->msg), "%s: message '%s' lacks '%s'", c->what,
                gcl_last_error(), c->msg);
      cr_expect_eq(addr, 0xdeadbeef, "%s: address changed on failure", c->what);
    } else {
      accepted++;
      uint64_t want = c->null_data ? c->byte_offset : (uint64_t)(uintptr_t)t.data + t.byte_offset;
      cr_expect_eq(addr, want, "%s: address 0x%" PRIx64 ", want 0x%" PRIx64, c->what, addr, want);
    }
  }
  cr_expect_geq(accepted, 25);
  cr_expect_geq(rejected, 25);
}

Test(dltensor, not_a_pointer_parameter) {
  gcl_param_info p;
  DLTensor t;
  build(&cases[2], &p, &t);
  p.kind = p.elem_kind = GCL_PARAM_SCALAR;
  p.name = NULL;
  uint64_t addr = 7;
  cr_assert_eq(gcl__dltensor_check(&t, 0, &p, 0, -1, &addr), GCL_ERROR_TYPE_MISMATCH);
  cr_expect(strstr(gcl_last_error(), "parameter 0: a tensor needs a pointer parameter"), "%s",
            gcl_last_error());
  cr_expect_eq(addr, 7);
  cr_expect_eq(gcl__dltensor_check(NULL, 0, &p, 0, -1, &addr), GCL_ERROR_INVALID_ARGUMENT);
}

/* ---- ownership through the public API: every deleter runs exactly once ---- */

typedef struct owned {
  DLManagedTensorVersioned v;
  DLManagedTensor l;
  int64_t shape[1];
  int calls;
} owned;

static void count_versioned(DLManagedTensorVersioned *self) {
  ((owned *)self->manager_ctx)->calls++;
}
static void count_legacy(DLManagedTensor *self) { ((owned *)self->manager_ctx)->calls++; }

/* A deleter that fails a gclaunch call of its own: the take's message must survive it. */
static void clobbering_versioned(DLManagedTensorVersioned *self) {
  count_versioned(self);
  gcl_args_set(NULL, 0, NULL, 0);
}

/* 16 f32 at data + byte_offset, versioned (with flags) and legacy views of the same tensor. */
static owned *make_owned(owned *o, uint64_t data, uint64_t byte_offset, uint64_t flags) {
  memset(o, 0, sizeof *o);
  o->shape[0] = 16;
  DLTensor t = {.data = (void *)(uintptr_t)data, .device = {kDLCUDA, 0}, .ndim = 1,
                .dtype = {kDLFloat, 32, 1}, .shape = o->shape, .byte_offset = byte_offset};
  o->v = (DLManagedTensorVersioned){.version = {1, 3}, .manager_ctx = o,
                                    .deleter = count_versioned, .flags = flags, .dl_tensor = t};
  o->l = (DLManagedTensor){.dl_tensor = t, .manager_ctx = o, .deleter = count_legacy};
  return o;
}

/* out 0, src 1 (const, align 16), n 2 (not a pointer) */
#define OWN_SIG "f32* out, const f32* align(16) src, u64 n"

typedef struct own_fx {
  gcl_signature *sig;
  gcl_layout *layout;
  gcl_args *args;
} own_fx;

static void own_setup(own_fx *fx) {
  cr_assert_eq(gcl_signature_parse(OWN_SIG, &fx->sig), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_layout_create(fx->sig, 90, &fx->layout), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_args_create(fx->layout, &fx->args), GCL_OK, "%s", gcl_last_error());
}

static void own_teardown(own_fx *fx) {
  gcl_args_destroy(fx->args);
  gcl_layout_destroy(fx->layout);
  gcl_signature_destroy(fx->sig);
}

/* The address packed in pointer slot index. */
static uint64_t packed(const own_fx *fx, size_t index) {
  size_t off = 0;
  uint64_t v = 0;
  cr_assert_eq(gcl_layout_param(fx->layout, index, &off, NULL, NULL), GCL_OK);
  memcpy(&v, (const char *)gcl__args_data(fx->args) + off, sizeof v);
  return v;
}

Test(dlpack_owner, taken_tensor_released_on_destroy) {
  own_fx fx;
  own_setup(&fx);
  owned a, b;
  cr_assert_eq(gcl_args_take_dlpack(fx.args, 1, &make_owned(&a, 0x10000, 32, 0)->v), GCL_OK,
               "%s", gcl_last_error());
  cr_assert_eq(gcl_args_take_dlpack_legacy(fx.args, 0, &make_owned(&b, 0x20000, 4, 0)->l),
               GCL_OK, "%s", gcl_last_error());
  cr_expect_eq(packed(&fx, 1), 0x10020);
  cr_expect_eq(packed(&fx, 0), 0x20004);
  cr_expect(gcl_args_is_set(fx.args, 0) && gcl_args_is_set(fx.args, 1));
  cr_expect_eq(a.calls + b.calls, 0, "a deleter ran while the args hold the tensor");
  own_teardown(&fx);
  cr_expect_eq(a.calls, 1);
  cr_expect_eq(b.calls, 1);
}

/* Every setter that overwrites the slot releases the taken tensor, once. */
Test(dlpack_owner, taken_tensor_released_on_overwrite) {
  own_fx fx;
  own_setup(&fx);
  owned t[6], borrowed;
  uint64_t raw = 0x30000;
  make_owned(&borrowed, 0x40000, 0, 0);
  for (int i = 0; i < 6; i++) make_owned(&t[i], 0x10000 + 0x100 * (uint64_t)i, 0, 0);
  cr_assert_eq(gcl_args_take_dlpack(fx.args, 0, &t[0].v), GCL_OK);
  cr_assert_eq(gcl_args_take_dlpack_legacy(fx.args, 0, &t[1].l), GCL_OK);
  cr_expect_eq(t[0].calls, 1, "take over take");
  cr_assert_eq(gcl_args_take_dlpack(fx.args, 0, &t[2].v), GCL_OK);
  cr_expect_eq(t[1].calls, 1, "take over take_legacy");
  cr_assert_eq(gcl_args_set_dltensor(fx.args, 0, &borrowed.v.dl_tensor), GCL_OK);
  cr_expect_eq(t[2].calls, 1, "set_dltensor over take");
  cr_expect_eq(packed(&fx, 0), 0x40000);
  cr_assert_eq(gcl_args_take_dlpack(fx.args, 0, &t[3].v), GCL_OK);
  cr_assert_eq(gcl_args_set(fx.args, 0, &raw, sizeof raw), GCL_OK, "%s", gcl_last_error());
  cr_expect_eq(t[3].calls, 1, "raw set over take");
  cr_assert_eq(gcl_args_take_dlpack_legacy(fx.args, 0, &t[4].l), GCL_OK);
  cr_assert_eq(gcl_args_set_ptr(fx.args, 0, 0x50000), GCL_OK, "%s", gcl_last_error());
  cr_expect_eq(t[4].calls, 1, "set_ptr over take_legacy");
  cr_assert_eq(gcl_args_take_dlpack(fx.args, 0, &t[5].v), GCL_OK);
  own_teardown(&fx);
  for (int i = 0; i < 6; i++) cr_expect_eq(t[i].calls, 1, "tensor %d: %d deleter calls", i,
                                           t[i].calls);
  cr_expect_eq(borrowed.calls, 0, "a borrowed tensor's deleter must never run");
}

/* A failing take runs the deleter before it returns and leaves the slot's value and owner. */
static void expect_failed_take(own_fx *fx, owned *held, size_t index, bool legacy, owned *o,
                               gcl_status want, const char *msg, const char *what) {
  uint64_t before = packed(fx, 1);
  gcl_status s = legacy ? gcl_args_take_dlpack_legacy(fx->args, index, &o->l)
                        : gcl_args_take_dlpack(fx->args, index, &o->v);
  cr_expect_eq(s, want, "%s: %s (%s)", what, gcl_status_name(s), gcl_last_error());
  cr_expect(strstr(gcl_last_error(), msg), "%s: message '%s' lacks '%s'", what,
            gcl_last_error(), msg);
  cr_expect_eq(o->calls, 1, "%s: %d deleter calls", what, o->calls);
  cr_expect_eq(held->calls, 0, "%s: the slot's owner was released", what);
  cr_expect_eq(packed(fx, 1), before, "%s: the slot changed", what);
}

Test(dlpack_owner, failed_takes_release_the_tensor) {
  own_fx fx;
  own_setup(&fx);
  owned held, o;
  cr_assert_eq(gcl_args_take_dlpack(fx.args, 1, &make_owned(&held, 0x10000, 0, 0)->v), GCL_OK);
  for (int legacy = 0; legacy <= 1; legacy++) {
    expect_failed_take(&fx, &held, 1, legacy, make_owned(&o, 0x10000, 4, 0), GCL_ERROR_TENSOR,
                       "parameter 1 'src': data + byte_offset = 0x10004 is not 16-byte aligned",
                       "misaligned");
    expect_failed_take(&fx, &held, 9, legacy, make_owned(&o, 0x10000, 0, 0),
                       GCL_ERROR_INVALID_ARGUMENT, "9", "index out of range");
    expect_failed_take(&fx, &held, 2, legacy, make_owned(&o, 0x10000, 0, 0),
                       GCL_ERROR_TYPE_MISMATCH, "parameter 2 'n'", "not a pointer");
    make_owned(&o, 0x10000, 0, 0);
    o.v.dl_tensor.dtype.bits = 64, o.l.dl_tensor.dtype.bits = 64;
    expect_failed_take(&fx, &held, 1, legacy, &o, GCL_ERROR_TENSOR, "bits 64", "dtype");
    o.calls = 0;
    gcl_status s = legacy ? gcl_args_take_dlpack_legacy(NULL, 0, &o.l)
                          : gcl_args_take_dlpack(NULL, 0, &o.v);
    cr_expect_eq(s, GCL_ERROR_INVALID_ARGUMENT, "NULL args: %s", gcl_status_name(s));
    cr_expect_eq(o.calls, 1, "NULL args: %d deleter calls", o.calls);
  }
  own_teardown(&fx);
  cr_expect_eq(held.calls, 1);
}

Test(dlpack_owner, unknown_major_version_reads_nothing_else) {
  own_fx fx;
  own_setup(&fx);
  owned held, o;
  cr_assert_eq(gcl_args_take_dlpack(fx.args, 1, &make_owned(&held, 0x10000, 0, 0)->v), GCL_OK);
  make_owned(&o, 0x10000, 0, 0);
  o.v.version.major = 2;
  /* Fields past flags may mean anything in version 2: poison them so a read would show. */
  memset(&o.v.dl_tensor, 0xff, sizeof o.v.dl_tensor);
  expect_failed_take(&fx, &held, 1, false, &o, GCL_ERROR_TENSOR_VERSION,
                     "parameter 1 'src': DLPack version 2.3, expected major version 1", "major 2");
  o.calls = 0;
  o.v.version.major = 0;
  expect_failed_take(&fx, &held, 9, false, &o, GCL_ERROR_TENSOR_VERSION, "version 0.3",
                     "major 0");
  own_teardown(&fx);
}

Test(dlpack_owner, read_only_only_into_const) {
  own_fx fx;
  own_setup(&fx);
  owned held, ro, ro2;
  cr_assert_eq(gcl_args_take_dlpack(fx.args, 1, &make_owned(&held, 0x10000, 0, 0)->v), GCL_OK);
  make_owned(&ro, 0x20000, 0, DLPACK_FLAG_BITMASK_READ_ONLY);
  cr_expect_eq(gcl_args_take_dlpack(fx.args, 0, &ro.v), GCL_ERROR_TENSOR);
  cr_expect(strstr(gcl_last_error(), "parameter 0 'out': tensor is read-only"), "%s",
            gcl_last_error());
  cr_expect_eq(ro.calls, 1);
  cr_expect(!gcl_args_is_set(fx.args, 0));
  cr_expect_eq(gcl_args_set_dltensor_flags(fx.args, 0, &ro.v.dl_tensor, 1), GCL_ERROR_TENSOR);
  cr_assert_eq(gcl_args_take_dlpack(fx.args, 1, &make_owned(&ro2, 0x20000, 0, 1)->v), GCL_OK,
               "%s", gcl_last_error());
  cr_expect_eq(held.calls, 1, "replaced by the read-only tensor");
  own_teardown(&fx);
  cr_expect_eq(ro2.calls, 1);
}

Test(dlpack_owner, null_deleter_null_tensor_and_message_kept) {
  own_fx fx;
  own_setup(&fx);
  owned o, c;
  make_owned(&o, 0x10000, 0, 0);
  o.v.deleter = NULL;
  o.l.deleter = NULL;
  cr_expect_eq(gcl_args_take_dlpack(fx.args, 0, &o.v), GCL_OK);
  cr_expect_eq(gcl_args_take_dlpack_legacy(fx.args, 0, &o.l), GCL_OK);
  cr_expect_eq(gcl_args_take_dlpack(fx.args, 9, &o.v), GCL_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(gcl_args_take_dlpack(fx.args, 0, NULL), GCL_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(gcl_args_take_dlpack_legacy(fx.args, 0, NULL), GCL_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(gcl_args_set_dltensor(fx.args, 0, NULL), GCL_ERROR_INVALID_ARGUMENT);
  make_owned(&c, 0x10000, 2, 0);
  c.v.deleter = clobbering_versioned;
  cr_expect_eq(gcl_args_take_dlpack(fx.args, 0, &c.v), GCL_ERROR_TENSOR);
  cr_expect_eq(c.calls, 1);
  cr_expect(strstr(gcl_last_error(), "parameter 0 'out': data + byte_offset = 0x10002"),
            "the deleter's own failure replaced the message: %s", gcl_last_error());
  own_teardown(&fx);
  cr_expect_eq(o.calls, 0);
}

Test(dlpack_owner, failed_borrowed_set_keeps_owner) {
  own_fx fx;
  own_setup(&fx);
  owned held, bad;
  cr_assert_eq(gcl_args_take_dlpack(fx.args, 1, &make_owned(&held, 0x10000, 0, 0)->v), GCL_OK);
  make_owned(&bad, 0x10008, 0, 0);
  cr_expect_eq(gcl_args_set_dltensor(fx.args, 1, &bad.v.dl_tensor), GCL_ERROR_TENSOR);
  cr_expect_eq(held.calls, 0);
  cr_expect_eq(packed(&fx, 1), 0x10000);
  cr_expect_eq(gcl_args_set_dltensor(fx.args, 2, &bad.v.dl_tensor), GCL_ERROR_TYPE_MISMATCH);
  own_teardown(&fx);
  cr_expect_eq(held.calls, 1);
  cr_expect_eq(bad.calls, 0);
}
