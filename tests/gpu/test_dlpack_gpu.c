/* The motivating case on a device: views of one allocation of N + 4 floats at element offsets 0,
 * 4 and 1, each encoded both ways (offset folded into data, or storage base + byte_offset), go
 * through gclaunch's checks into `f32* align(16) out, u64 n, f32 base`; kernels/dlpack_fill.cu
 * writes out[i] = base + i. Every element inside the view must be written, every element outside
 * must keep its poison. The offset-1 view is rejected under align(16) and accepted under
 * align(4). */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cuda_internal.h"
#include "kernel_image.h"
#include "../common/test_rng.h"

#define CHECK(call) cr_assert_eq((call), GCL_OK, "%s: %s", #call, gcl_last_error())
#define CU(call) cr_assert_eq((call), CUDA_SUCCESS, "%s failed", #call)

enum { N = 4099, TOTAL = N + 4, POISON_BYTE = 0xA5 };

typedef struct fixture {
  gcl_context *ctx;
  CUlibrary lib;
  CUfunction fn;
  uint64_t base; /* TOTAL floats */
  float value_base;
} fixture;


static void setup(fixture *fx) {
  memset(fx, 0, sizeof *fx);
  CHECK(gcl_context_create(0, &fx->ctx));
  CHECK(gcl_context_bind(fx->ctx));
  size_t size = 0;
  void *image = kernel_image("dlpack_fill", gcl_context_sm(fx->ctx), &size);
  CUkernel kern;
  CU(gcl__cu.cuLibraryLoadData(&fx->lib, image, NULL, NULL, 0, NULL, NULL, 0));
  CU(gcl__cu.cuLibraryGetKernel(&kern, fx->lib, "fill"));
  CU(gcl__cu.cuKernelGetFunction(&fx->fn, kern));
  free(image);
  CHECK(gcl_mem_alloc(fx->ctx, TOTAL * sizeof(float), &fx->base));
  seed_rng_for("test_dlpack_gpu");
  fx->value_base = (float)rnd(100000); /* integral: base + i is exact in float */
  cr_log_info("value_base %g, base 0x%" PRIx64, fx->value_base, fx->base);
}

static void teardown(fixture *fx) {
  CHECK(gcl_mem_free(fx->ctx, fx->base));
  CU(gcl__cu.cuLibraryUnload(fx->lib));
  gcl_context_destroy(fx->ctx);
}

static gcl_args *make_args(const fixture *fx, const char *sig_text, gcl_layout **layout) {
  gcl_signature *sig = NULL;
  gcl_args *args = NULL;
  CHECK(gcl_signature_parse(sig_text, &sig));
  CHECK(gcl_layout_create(sig, gcl_context_sm(fx->ctx), layout));
  gcl_signature_destroy(sig);
  CHECK(gcl_args_create(*layout, &args));
  CHECK(gcl_args_restrict_device(args, gcl_context_device(fx->ctx)));
  return args;
}

/* A 1-d f32 view of N elements starting `offset` elements into the allocation. */
static DLTensor view(const fixture *fx, int64_t *shape, size_t offset, bool folded) {
  DLTensor t = {0};
  uint64_t bytes = offset * sizeof(float);
  t.data = (void *)(uintptr_t)(folded ? fx->base + bytes : fx->base);
  t.byte_offset = folded ? 0 : bytes;
  t.device.device_type = kDLCUDA;
  t.device.device_id = gcl_context_device(fx->ctx);
  t.ndim = 1;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  shape[0] = N;
  t.shape = shape;
  return t;
}

/* Launches fill with the packed buffer's values, as kernelParams pointing into it. */
static void launch(const fixture *fx, const gcl_layout *layout, const gcl_args *args) {
  const void *data = NULL;
  size_t size = 0, off[3];
  CHECK(gcl_args_buffer(args, &data, &size));
  cr_assert_eq(size, gcl_layout_size(layout));
  for (size_t i = 0; i < 3; i++) CHECK(gcl_layout_param(layout, i, &off[i], NULL, NULL));
  void *params[3];
  for (size_t i = 0; i < 3; i++) params[i] = (char *)data + off[i];
  CU(gcl__cu.cuLaunchKernel(fx->fn, (N + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
  CHECK(gcl_context_synchronize(fx->ctx));
}

/* Poisons the allocation, fills the view through args and checks every element. */
static void run_and_check(const fixture *fx, const gcl_layout *layout, const gcl_args *args,
                          size_t offset, const char *what) {
  const void *data = NULL;
  uint64_t packed = 0;
  size_t off0 = 0, size = 0;
  CHECK(gcl_args_buffer(args, &data, &size));
  CHECK(gcl_layout_param(layout, 0, &off0, NULL, NULL));
  memcpy(&packed, (const char *)data + off0, sizeof packed);
  cr_assert_eq(packed, fx->base + offset * sizeof(float), "%s: packed 0x%" PRIx64, what, packed);
  CHECK(gcl_mem_fill_u8(fx->ctx, fx->base, POISON_BYTE, TOTAL * sizeof(float)));
  launch(fx, layout, args);
  static float host[TOTAL];
  CHECK(gcl_mem_download(fx->ctx, host, fx->base, sizeof host));
  uint32_t poison;
  memset(&poison, POISON_BYTE, sizeof poison);
  for (size_t j = 0; j < TOTAL; j++) {
    if (j >= offset && j < offset + N) {
      float want = fx->value_base + (float)(j - offset);
      cr_assert_eq(host[j], want, "%s: element %zu got %g, want %g", what, j, host[j], want);
    } else {
      uint32_t bits;
      memcpy(&bits, &host[j], sizeof bits);
      cr_assert_eq(bits, poison, "%s: element %zu outside the view was written (0x%08x)", what, j,
                   bits);
    }
  }
}

static void fill_view(const fixture *fx, const char *sig_text, size_t offset, bool folded) {
  char what[160];
  snprintf(what, sizeof what, "[%s] offset %zu %s", sig_text, offset,
           folded ? "folded into data" : "as byte_offset");
  gcl_layout *layout = NULL;
  gcl_args *args = make_args(fx, sig_text, &layout);
  int64_t shape[1];
  DLTensor t = view(fx, shape, offset, folded);
  CHECK(gcl_args_set_dltensor(args, 0, &t));
  CHECK(gcl_args_set_u64(args, 1, N));
  CHECK(gcl_args_set_f32(args, 2, fx->value_base));
  run_and_check(fx, layout, args, offset, what);
  gcl_args_destroy(args);
  gcl_layout_destroy(layout);
}

#define SIG16 "f32* align(16) out, u64 n, f32 base"
#define SIG4 "f32* align(4) out, u64 n, f32 base"

Test(dlpack_gpu, views_at_offsets_0_and_4_under_align16) {
  fixture fx;
  setup(&fx);
  for (size_t offset = 0; offset <= 4; offset += 4) {
    fill_view(&fx, SIG16, offset, true);
    fill_view(&fx, SIG16, offset, false);
  }
  teardown(&fx);
}

Test(dlpack_gpu, view_at_offset_1_rejected_under_align16_accepted_under_align4) {
  fixture fx;
  setup(&fx);
  for (int folded = 0; folded <= 1; folded++) {
    gcl_layout *layout = NULL;
    gcl_args *args = make_args(&fx, SIG16, &layout);
    int64_t shape[1];
    DLTensor t = view(&fx, shape, 1, folded);
    cr_assert_eq(gcl_args_set_dltensor(args, 0, &t), GCL_ERROR_TENSOR);
    const char *msg = gcl_last_error();
    cr_log_info("rejected: %s", msg);
    cr_expect(strstr(msg, "parameter 0 'out'") && strstr(msg, "is not 16-byte aligned"), "%s", msg);
    cr_expect(strstr(msg, folded ? "byte_offset 0)" : "byte_offset 4)"), "%s", msg);
    cr_expect(!gcl_args_is_set(args, 0), "a rejected tensor must leave the slot unset");
    gcl_args_destroy(args);
    gcl_layout_destroy(layout);
    fill_view(&fx, SIG4, 1, folded);
  }
  teardown(&fx);
}

static int deleter_calls;
static void count_deleter(DLManagedTensorVersioned *self) {
  (void)self;
  deleter_calls++;
}

Test(dlpack_gpu, taken_view_with_byte_offset) {
  fixture fx;
  setup(&fx);
  gcl_layout *layout = NULL;
  gcl_args *args = make_args(&fx, SIG16, &layout);
  int64_t shape[1];
  DLManagedTensorVersioned m = {.version = {1, 3}, .deleter = count_deleter};
  m.dl_tensor = view(&fx, shape, 4, false);
  deleter_calls = 0;
  CHECK(gcl_args_take_dlpack(args, 0, &m));
  CHECK(gcl_args_set_u64(args, 1, N));
  CHECK(gcl_args_set_f32(args, 2, fx.value_base));
  run_and_check(&fx, layout, args, 4, "taken versioned, byte_offset 16");
  cr_expect_eq(deleter_calls, 0, "the deleter ran while the args still hold the tensor");
  gcl_args_destroy(args);
  cr_expect_eq(deleter_calls, 1, "destroying the args must run the deleter once");
  gcl_layout_destroy(layout);
  teardown(&fx);
}
