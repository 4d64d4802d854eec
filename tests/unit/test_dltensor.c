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
    {"wrong device", F32, V8, .dev_id = 1, .restrict_dev = 1, REJECT("device 1, expected device 0")},
    {"right device", F32, V8, .dev_id = 1, .restrict_dev = 2},
    {"any device", F32, V8, .dev_id = 3},
    {"negative device id", F32, V8, .dev_id = -1, REJECT("device id -1")},
    {"managed reports 0 on any device", F32, V8, .dev_type = 13, .restrict_dev = 2},
    /* dtype */
    {"int into f32", .scalar = GCL_SCALAR_F32, .code = kDLInt, .bits = 32, V8, REJECT("code 0, bits 32")},
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
    {"byte_offset 2 under the f32 default", F32, V8, .byte_offset = 2, REJECT("not 4-byte aligned")},
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
