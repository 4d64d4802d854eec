/* Driver fault injection: gclaunch against libfakecuda.so, a CPU stand-in for libcuda whose entry
 * points fail on cue. Every path (load, context, module, kernel, launch, synchronize, tensor map)
 * must return a clean status naming the CUDA error, give back what it took (the fake counts
 * retains, allocations and libraries; ASan/LSan see host leaks) and keep working afterwards
 * where the driver allows. Also checks the whole launch path on the CPU: the bytes the fake
 * driver receives are exactly the packed args. Each Criterion test is a fresh process. */
#include "fakecuda_test.h"
#include "../common/suite.h"

#include <stdio.h>
#include "../common/tmap_field.h"

typedef struct world {
  gcl_context *ctx;
  gcl_module *mod;
  gcl_kernel *kernel;
  gcl_args *args;
  uint64_t buf;
  fake_tensor tensor;
} world;

static const gcl_launch_config launch2x128 = {.grid = {2, 1, 1}, .block = {128, 1, 1}};

/* The launch mode world_build gives its kernel (gcl_kernel_set_launch_mode). */
static gcl_launch_mode world_mode = GCL_LAUNCH_KERNEL_PARAMS;

/* Loads, looks up, packs, launches, synchronizes: the first failure is returned. */
static gcl_status world_build(world *w) {
  gcl_status s;
  int8_t c = 7;
  gcl_tensormap_options o = fake_tmap_options();
  if ((s = gcl_context_create(0, &w->ctx)) || (s = gcl_mem_alloc(w->ctx, 64 * 64 * 4, &w->buf)))
    return s;
  fake_tensor_init(&w->tensor, w->buf, 64, 64);
  if ((s = gcl_module_load_data(w->ctx, fake_ptx, sizeof fake_ptx, &w->mod)) ||
      (s = gcl_module_find_kernel(w->mod, "k", FAKE_K_SIGNATURE, &w->kernel)) ||
      (s = gcl_kernel_set_launch_mode(w->kernel, world_mode)) ||
      (s = gcl_args_create(gcl_kernel_layout(w->kernel), &w->args)) ||
      (s = gcl_args_set_tensormaps(w->args, w->ctx, TMAP_FIELD(w->args, 0, 0), 1, (const DLTensor *const[]){&w->tensor.t}, &o, 1, 0)) ||
      (s = gcl_args_set(w->args, 1, &c, 1)) || (s = gcl_args_set_ptr(w->args, 2, w->buf)) ||
      (s = gcl_launch(w->kernel, &launch2x128, w->args)) || (s = gcl_context_synchronize(w->ctx)))
    return s;
  unsigned char back[16];
  return gcl_mem_download(w->ctx, back, w->buf, sizeof back);
}

static void world_destroy(world *w) {
  gcl_args_destroy(w->args);
  gcl_module_destroy(w->mod); /* destroys the kernel */
  if (w->buf) gcl_mem_free(w->ctx, w->buf);
  gcl_context_destroy(w->ctx);
  memset(w, 0, sizeof *w);
}

TestSuite(faults, .init = fake_use);

/* --- loading the driver ---------------------------------------------------------------------- */

Test(faults, loader_uses_the_fake) {
  cr_assert_eq(gcl_driver_init(), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(fakecuda_calls("cuInit"), 1, "the loader must reach this very instance");
  cr_assert_gt(fakecuda_calls("cuGetProcAddress_v2"), 40);
  int v = 0, n = 0;
  cr_assert_eq(gcl_driver_version(&v), GCL_OK);
  cr_assert_eq(v, 13000);
  cr_assert_eq(gcl_device_count(&n), GCL_OK);
  cr_assert_eq(n, 1);
  gcl_device_info info;
  cr_assert_eq(gcl_device_query(0, &info), GCL_OK, "%s", gcl_last_error());
  cr_assert_str_eq(info.name, "Fake H200");
  cr_assert_eq(info.sm, 90);
  cr_assert_eq(info.multiprocessors, 132);
}

Test(faults, cuInit_stub_library) {
  fakecuda_fail("cuInit", 34, 0);
  cr_assert_eq(gcl_driver_init(), GCL_ERROR_STUB_DRIVER);
  assert_msg_has("CUDA_ERROR_STUB_LIBRARY");
  int n = -5;
  cr_assert_eq(gcl_device_count(&n), GCL_ERROR_STUB_DRIVER, "the failure is cached");
  cr_assert_eq(n, -5);
  fakecuda_fail("cuInit", 0, 0);
  cr_assert_eq(gcl_driver_init(), GCL_ERROR_STUB_DRIVER, "cached, not retried");
  cr_assert_eq(fakecuda_calls("cuInit"), 1);
}

Test(faults, cuInit_no_device) {
  fakecuda_fail("cuInit", 100, 0);
  cr_assert_eq(gcl_driver_init(), GCL_ERROR_NO_DEVICE);
  assert_msg_has("CUDA_ERROR_NO_DEVICE");
  gcl_context *ctx = (gcl_context *)0x1;
  cr_assert_eq(gcl_context_create(0, &ctx), GCL_ERROR_NO_DEVICE);
  cr_assert_eq(ctx, (gcl_context *)0x1);
}

Test(faults, cuInit_other_error_is_named) {
  fakecuda_fail("cuInit", 999, 0);
  cr_assert_eq(gcl_driver_init(), GCL_ERROR_DRIVER);
  assert_msg_has("cuInit");
  assert_msg_has("CUDA_ERROR_UNKNOWN");
}

Test(faults, driver_version_failure) {
  fakecuda_fail("cuDriverGetVersion", 34, 0);
  cr_assert_eq(gcl_driver_init(), GCL_ERROR_STUB_DRIVER);
  assert_msg_has("cuDriverGetVersion");
  int v = -3;
  cr_assert_neq(gcl_driver_version(&v), GCL_OK);
  cr_assert_eq(v, -3);
}

Test(faults, missing_required_entry_point_is_too_old) {
  fakecuda_hide("cuLaunchKernelEx", 1);
  cr_assert_eq(gcl_driver_init(), GCL_ERROR_DRIVER_TOO_OLD);
  assert_msg_has("cuLaunchKernelEx");
}

Test(faults, missing_param_info_needs_a_signature) {
  fakecuda_hide("cuFuncGetParamInfo", 1);
  cr_assert_eq(gcl_driver_init(), GCL_OK, "cuFuncGetParamInfo is optional: %s", gcl_last_error());
  world w = {0};
  cr_assert_eq(gcl_context_create(0, &w.ctx), GCL_OK);
  cr_assert_eq(gcl_module_load_data(w.ctx, fake_ptx, sizeof fake_ptx, &w.mod), GCL_OK);
  gcl_kernel *k = (gcl_kernel *)0x1;
  cr_assert_eq(gcl_module_find_kernel(w.mod, "k", NULL, &k), GCL_ERROR_DRIVER_TOO_OLD);
  assert_msg_has("signature");
  cr_assert_eq(k, (gcl_kernel *)0x1);
  cr_assert_eq(gcl_module_find_kernel(w.mod, "k", FAKE_K_SIGNATURE, &k), GCL_OK, "%s", gcl_last_error());
  size_t off = 0;
  cr_assert_eq(gcl_layout_param(gcl_kernel_layout(k), 2, &off, NULL, NULL), GCL_OK);
  cr_assert_eq(off, 248);
  world_destroy(&w);
  assert_nothing_live();
}

/* --- one entry point failing at a time --------------------------------------------------------- */

Test(faults, context_retain_out_of_memory) {
  fakecuda_fail_once("cuDevicePrimaryCtxRetain", 2, 0);
  gcl_context *ctx = (gcl_context *)0x1;
  cr_assert_eq(gcl_context_create(0, &ctx), GCL_ERROR_OUT_OF_MEMORY);
  assert_msg_has("CUDA_ERROR_OUT_OF_MEMORY");
  assert_msg_has("cuDevicePrimaryCtxRetain");
  cr_assert_eq(ctx, (gcl_context *)0x1);
  assert_nothing_live();
  cr_assert_eq(gcl_context_create(0, &ctx), GCL_OK, "a later call works: %s", gcl_last_error());
  cr_assert_eq(fakecuda_live("retain"), 1);
  gcl_context_destroy(ctx);
  assert_nothing_live();
}

Test(faults, context_attribute_failure_takes_nothing) {
  cr_assert_eq(gcl_driver_init(), GCL_OK);
  fakecuda_fail_once("cuDeviceGetAttribute", 999, 0);
  gcl_context *ctx = (gcl_context *)0x1;
  cr_assert_eq(gcl_context_create(0, &ctx), GCL_ERROR_DRIVER);
  assert_msg_has("CUDA_ERROR_UNKNOWN");
  cr_assert_eq(ctx, (gcl_context *)0x1);
  assert_nothing_live();
}

Test(faults, module_load_out_of_memory) {
  gcl_context *ctx = NULL;
  cr_assert_eq(gcl_context_create(0, &ctx), GCL_OK);
  fakecuda_fail_once("cuLibraryLoadData", 2, 0);
  gcl_module *mod = (gcl_module *)0x1;
  cr_assert_eq(gcl_module_load_data(ctx, fake_ptx, sizeof fake_ptx, &mod), GCL_ERROR_OUT_OF_MEMORY);
  assert_msg_has("CUDA_ERROR_OUT_OF_MEMORY");
  assert_msg_has("cuLibraryLoadData");
  cr_assert_eq(mod, (gcl_module *)0x1);
  cr_assert_eq(fakecuda_live("library"), 0);
  cr_assert_eq(gcl_module_load_data(ctx, fake_ptx, sizeof fake_ptx, &mod), GCL_OK, "%s", gcl_last_error());
  fakecuda_library lib;
  cr_assert_eq(fakecuda_last_library(&lib), 0);
  cr_assert_eq(lib.format, 3, "the PTX text reached the driver");
  cr_assert(memcmp(lib.head, fake_ptx, 16) == 0);
  gcl_module_destroy(mod);
  gcl_context_destroy(ctx);
  assert_nothing_live();
}

Test(faults, module_load_invalid_image_is_bad_image) {
  gcl_context *ctx = NULL;
  cr_assert_eq(gcl_context_create(0, &ctx), GCL_OK);
  fakecuda_fail_once("cuLibraryLoadData", 218, 0);
  gcl_module *mod = (gcl_module *)0x1;
  cr_assert_eq(gcl_module_load_data(ctx, fake_ptx, sizeof fake_ptx, &mod), GCL_ERROR_BAD_IMAGE);
  assert_msg_has("CUDA_ERROR_INVALID_PTX");
  cr_assert_eq(mod, (gcl_module *)0x1);
  gcl_context_destroy(ctx);
  assert_nothing_live();
}

/* Kernel look-up failing at each driver call it makes, one by one. */
Test(faults, kernel_get_each_call_failing) {
  static const struct { const char *entry; int error, after; gcl_status want; const char *name; } cases[] = {
      {"cuLibraryGetKernel", 500, 0, GCL_ERROR_NOT_FOUND, "'k'"},
      {"cuLibraryGetKernel", 999, 0, GCL_ERROR_DRIVER, "CUDA_ERROR_UNKNOWN"},
      {"cuKernelGetFunction", 201, 0, GCL_ERROR_DRIVER, "CUDA_ERROR_INVALID_CONTEXT"},
      {"cuFuncGetParamInfo", 999, 0, GCL_ERROR_DRIVER, "CUDA_ERROR_UNKNOWN"},
      {"cuFuncGetParamInfo", 2, 2, GCL_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY"},
      {"cuFuncGetParamInfo", 999, 4, GCL_ERROR_DRIVER, "CUDA_ERROR_UNKNOWN"},
      {"cuFuncGetAttribute", 999, 1, GCL_ERROR_DRIVER, "CUDA_ERROR_UNKNOWN"},
      {"cuDeviceGetAttribute", 999, 0, GCL_ERROR_DRIVER, "CUDA_ERROR_UNKNOWN"},
  };
  world w = {0};
  cr_assert_eq(gcl_context_create(0, &w.ctx), GCL_OK);
  cr_assert_eq(gcl_module_load_data(w.ctx, fake_ptx, sizeof fake_ptx, &w.mod), GCL_OK);
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    fakecuda_fail_once(cases[i].entry, cases[i].error, cases[i].after);
    gcl_kernel *k = (gcl_kernel *)0x1;
    gcl_status s = gcl_module_find_kernel(w.mod, "k", i % 2 ? FAKE_K_SIGNATURE : NULL, &k);
    cr_assert_eq(s, cases[i].want, "case %zu (%s): got %s: %s", i, cases[i].entry,
                 gcl_status_name(s), gcl_last_error());
    assert_msg_has(cases[i].name);
    cr_assert_eq(k, (gcl_kernel *)0x1, "case %zu: output written on failure", i);
    fakecuda_fail(cases[i].entry, 0, 0);
  }
  cr_assert_eq(gcl_module_find_kernel(w.mod, "k", NULL, &w.kernel), GCL_OK, "%s", gcl_last_error());
  world_destroy(&w);
  assert_nothing_live();
}

Test(faults, declared_signature_mismatch_names_both_offsets) {
  world w = {0};
  cr_assert_eq(gcl_context_create(0, &w.ctx), GCL_OK);
  cr_assert_eq(gcl_module_load_data(w.ctx, fake_ptx, sizeof fake_ptx, &w.mod), GCL_OK);
  gcl_kernel *k = (gcl_kernel *)0x1;
  /* align(64) moves m to offset 48 on sm_90; the driver says 112 */
  cr_assert_eq(gcl_module_find_kernel(w.mod, "k", "tensormap align(64) m, i8 c, i32* out", &k),
               GCL_ERROR_SIGNATURE_MISMATCH);
  assert_msg_has("112");
  assert_msg_has("'m'");
  cr_assert_eq(k, (gcl_kernel *)0x1);
  cr_assert_eq(gcl_module_find_kernel(w.mod, "k", "tensormap m, i8 c", &k), GCL_ERROR_SIGNATURE_MISMATCH);
  cr_assert_eq(gcl_module_find_kernel(w.mod, "nope", NULL, &k), GCL_ERROR_NOT_FOUND);
  assert_msg_has("nope");
  world_destroy(&w);
  assert_nothing_live();
}

Test(faults, memory_failures) {
  gcl_context *ctx = NULL;
  cr_assert_eq(gcl_context_create(0, &ctx), GCL_OK);
  uint64_t a = 0xabc;
  fakecuda_fail_once("cuMemAlloc", 2, 0);
  cr_assert_eq(gcl_mem_alloc(ctx, 4096, &a), GCL_ERROR_OUT_OF_MEMORY);
  assert_msg_has("CUDA_ERROR_OUT_OF_MEMORY");
  cr_assert_eq(a, 0xabc);
  cr_assert_eq(gcl_mem_alloc(ctx, 4096, &a), GCL_OK);
  unsigned char host[64];
  memset(host, 0x5a, sizeof host);
  fakecuda_fail_once("cuMemcpyHtoD", 999, 0);
  cr_assert_eq(gcl_mem_upload(ctx, a, host, sizeof host), GCL_ERROR_DRIVER);
  assert_msg_has("cuMemcpyHtoD");
  cr_assert_eq(gcl_mem_upload(ctx, a, host, sizeof host), GCL_OK);
  unsigned char back[64];
  memset(back, 0, sizeof back);
  fakecuda_fail_once("cuMemcpyDtoH", 999, 0);
  cr_assert_eq(gcl_mem_download(ctx, back, a, sizeof back), GCL_ERROR_DRIVER);
  cr_assert_eq(back[0], 0, "a failed download writes nothing");
  cr_assert_eq(gcl_mem_download(ctx, back, a, sizeof back), GCL_OK);
  cr_assert(memcmp(back, host, sizeof host) == 0);
  fakecuda_fail_once("cuMemsetD8", 999, 0);
  cr_assert_eq(gcl_mem_fill_u8(ctx, a, 1, 64), GCL_ERROR_DRIVER);
  cr_assert_eq(gcl_mem_free(ctx, a + 1), GCL_ERROR_DRIVER, "freeing a non-allocation fails");
  assert_msg_has("CUDA_ERROR_INVALID_VALUE");
  cr_assert_eq(gcl_mem_free(ctx, a), GCL_OK);
  gcl_context_destroy(ctx);
  assert_nothing_live();
}

Test(faults, tensormap_encode_failure_changes_nothing) {
  world w = {0};
  cr_assert_eq(world_build(&w), GCL_OK, "%s", gcl_last_error());
  const void *data;
  size_t size;
  cr_assert_eq(gcl_args_buffer(w.args, &data, &size), GCL_OK);
  unsigned char before[256];
  memcpy(before, data, size);
  gcl_tensormap_options o = fake_tmap_options(), other = o;
  other.box[1] = 4; /* a description the map was not encoded from: an encode, not a re-point */
  fakecuda_fail_once("cuTensorMapEncodeTiled", 1, 0);
  cr_assert_eq(gcl_args_set_tensormaps(w.args, w.ctx, TMAP_FIELD(w.args, 0, 0), 1, (const DLTensor *const[]){&w.tensor.t}, &other, 1, 0), GCL_ERROR_DRIVER);
  assert_msg_has("CUDA_ERROR_INVALID_VALUE");
  cr_assert_eq(gcl_args_buffer(w.args, &data, &size), GCL_OK);
  cr_assert(memcmp(before, data, size) == 0, "a failed encode must leave the args' bytes alone");
  unsigned char map[128] __attribute__((aligned(64)));
  memset(map, 0xEE, sizeof map);
  fakecuda_fail_once("cuTensorMapEncodeTiled", 999, 0);
  cr_assert_eq(gcl_tensormap_encode(w.ctx, &w.tensor.t, &o, map), GCL_ERROR_DRIVER);
  assert_msg_has("CUDA_ERROR_UNKNOWN");
  for (size_t i = 0; i < sizeof map; i++) cr_assert_eq(map[i], 0xEE, "map byte %zu written", i);
  cr_assert_eq(gcl_tensormap_encode(w.ctx, &w.tensor.t, &o, map), GCL_OK, "%s", gcl_last_error());
  cr_assert(memcmp(map, (const unsigned char *)data + 112, 128) == 0,
            "the descriptor in the args equals one encoded alone");
  world_destroy(&w);
  assert_nothing_live();
}

/* --- launches -------------------------------------------------------------------------------- */

static void check_recorded_launch(gcl_launch_mode mode) {
  world w = {0};
  world_mode = mode;
  cr_assert_eq(world_build(&w), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_kernel_launch_mode(w.kernel), mode);
  const void *data;
  size_t size;
  cr_assert_eq(gcl_args_buffer(w.args, &data, &size), GCL_OK);
  cr_assert_eq(size, 256);
  fakecuda_launch *rec = calloc(1, sizeof *rec);
  cr_assert_eq(fakecuda_launch_count(), 1);
  cr_assert_eq(fakecuda_last_launch(rec), 0);
  cr_assert_str_eq(rec->kernel, "k");
  cr_assert_eq(rec->param_bytes, 256);
  cr_assert(memcmp(rec->params, data, size) == 0, "the driver got other bytes than the args hold");
  uint64_t addr, ptr;
  memcpy(&addr, rec->params + 112, 8); /* the fake writes the global address first */
  memcpy(&ptr, rec->params + 248, 8);
  cr_assert_eq(addr, w.buf);
  cr_assert_eq(ptr, w.buf);
  cr_assert_eq(rec->params[240], 7);
  cr_assert_eq(rec->grid[0], 2);
  cr_assert_eq(rec->grid[1], 1);
  cr_assert_eq(rec->block[0], 128);
  cr_assert_eq(rec->block[2], 1);
  cr_assert_eq(rec->cluster[0], 0);
  free(rec);
  world_destroy(&w);
  assert_nothing_live();
}

Test(faults, launch_records_packed_bytes_kernel_params) {
  check_recorded_launch(GCL_LAUNCH_KERNEL_PARAMS);
  fakecuda_launch *rec = calloc(1, sizeof *rec);
  cr_assert_eq(fakecuda_last_launch(rec), 0);
  cr_assert_eq(rec->via_extra, 0);
  free(rec);
}

Test(faults, launch_records_packed_bytes_extra_buffer) {
  setenv("GCL_LAUNCH_PARAMS", "extra", 1); /* no longer read: the setter alone decides */
  check_recorded_launch(GCL_LAUNCH_EXTRA_BUFFER);
  fakecuda_launch *rec = calloc(1, sizeof *rec);
  cr_assert_eq(fakecuda_last_launch(rec), 0);
  cr_assert_eq(rec->via_extra, 1);
  free(rec);
}

Test(faults, launch_config_reaches_the_driver) {
  world w = {0};
  cr_assert_eq(world_build(&w), GCL_OK, "%s", gcl_last_error());
  gcl_launch_config c = {.grid = {4, 2, 1}, .block = {64, 2, 1}, .cluster = {2, 1, 1},
                         .shared_bytes = 100000, .cooperative = true,
                         .programmatic_dependent_launch = true, .priority = -1};
  cr_assert_eq(gcl_launch(w.kernel, &c, w.args), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(fakecuda_calls("cuFuncSetAttribute"), 1, "opt-in to 100000 bytes of shared memory");
  cr_assert_eq(gcl_launch(w.kernel, &c, w.args), GCL_OK);
  cr_assert_eq(fakecuda_calls("cuFuncSetAttribute"), 1, "the opt-in happens once");
  fakecuda_launch *rec = calloc(1, sizeof *rec);
  cr_assert_eq(fakecuda_last_launch(rec), 0);
  cr_assert_eq(rec->shared_bytes, 100000);
  cr_assert_eq(rec->cluster[0], 2);
  cr_assert_eq(rec->cluster[1], 1);
  cr_assert_eq(rec->cooperative, 1);
  cr_assert_eq(rec->programmatic, 1);
  cr_assert_eq(rec->priority, -1);
  free(rec);
  world_destroy(&w);
}

Test(faults, launch_error_then_later_launch_works) {
  world w = {0};
  cr_assert_eq(world_build(&w), GCL_OK, "%s", gcl_last_error());
  fakecuda_fail_once("cuLaunchKernelEx", 701, 0);
  cr_assert_eq(gcl_launch(w.kernel, &launch2x128, w.args), GCL_ERROR_INVALID_CONFIG);
  assert_msg_has("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES");
  assert_msg_has("'k'");
  fakecuda_fail_once("cuLaunchKernelEx", 999, 0);
  cr_assert_eq(gcl_launch(w.kernel, &launch2x128, w.args), GCL_ERROR_DRIVER);
  assert_msg_has("CUDA_ERROR_UNKNOWN");
  cr_assert_eq(fakecuda_launch_count(), 1, "only the first launch of world_build got through");
  cr_assert_eq(gcl_launch(w.kernel, &launch2x128, w.args), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(fakecuda_launch_count(), 2);
  world_destroy(&w);
  assert_nothing_live();
}

/* A sticky error (ILLEGAL_ADDRESS on synchronize) is a kernel fault: GCL_ERROR_KERNEL_FAULT
 * naming the CUresult, and every later call says the same without reaching the driver;
 * everything still gets released. */
Test(faults, lost_context_on_synchronize) {
  world w = {0};
  cr_assert_eq(world_build(&w), GCL_OK, "%s", gcl_last_error());
  fakecuda_fail_once("cuCtxSynchronize", 700, 0);
  cr_assert_eq(gcl_context_synchronize(w.ctx), GCL_ERROR_KERNEL_FAULT);
  assert_msg_has("cuCtxSynchronize(device 0): CUDA_ERROR_ILLEGAL_ADDRESS");
  assert_msg_has("the process's CUDA state is lost");
  cr_assert_eq(gcl_last_cuda_error(), 700);
  cr_assert_eq(fakecuda_lost(), 700);
  char first[2048];
  snprintf(first, sizeof first, "%s", gcl_last_error());
  long calls = fakecuda_calls("*");
  cr_assert_eq(gcl_launch(w.kernel, &launch2x128, w.args), GCL_ERROR_KERNEL_FAULT);
  cr_assert_str_eq(gcl_last_error(), first, "later calls repeat the first fault's message");
  uint64_t a = 0x77;
  cr_assert_eq(gcl_mem_alloc(w.ctx, 64, &a), GCL_ERROR_KERNEL_FAULT);
  cr_assert_eq(a, 0x77);
  gcl_module *mod = (gcl_module *)0x1;
  cr_assert_eq(gcl_module_load_data(w.ctx, fake_ptx, sizeof fake_ptx, &mod), GCL_ERROR_KERNEL_FAULT);
  cr_assert_eq(mod, (gcl_module *)0x1);
  gcl_context *ctx2 = (gcl_context *)0x2;
  cr_assert_eq(gcl_context_create(0, &ctx2), GCL_ERROR_KERNEL_FAULT, "even a new context");
  cr_assert_eq(ctx2, (gcl_context *)0x2);
  cr_assert_eq(gcl_last_cuda_error(), 700);
  cr_assert_eq(fakecuda_calls("*"), calls, "no call reached the driver after the fault");
  world_destroy(&w);
  assert_nothing_live();
}

Test(faults, lost_context_on_launch) {
  world w = {0};
  cr_assert_eq(world_build(&w), GCL_OK, "%s", gcl_last_error());
  fakecuda_fail_once("cuLaunchKernelEx", 719, 0);
  cr_assert_eq(gcl_launch(w.kernel, &launch2x128, w.args), GCL_ERROR_KERNEL_FAULT);
  assert_msg_has("CUDA_ERROR_LAUNCH_FAILED");
  cr_assert_eq(gcl_context_synchronize(w.ctx), GCL_ERROR_KERNEL_FAULT);
  assert_msg_has("CUDA_ERROR_LAUNCH_FAILED");
  world_destroy(&w);
  assert_nothing_live();
}

/* Every driver call of a whole session failing in turn (the n-th call and all after it), for two
 * errors: each time a clean status naming the error, nothing left behind once destroyed, and a
 * clean session afterwards. */
static void sweep(int error, gcl_status want, const char *name) {
  cr_assert_eq(gcl_driver_init(), GCL_OK);
  int n = 0;
  for (;; n++) {
    cr_assert_lt(n, 400, "the session never completed");
    fakecuda_fail("*", error, n);
    world w = {0};
    long launches = fakecuda_launch_count();
    gcl_status s = world_build(&w);
    fakecuda_fail("*", 0, 0);
    if (s == GCL_OK) {
      world_destroy(&w);
      break;
    }
    cr_assert_eq(s, want, "after %d calls: %s: %s", n, gcl_status_name(s), gcl_last_error());
    assert_msg_has(name);
    cr_assert_leq(fakecuda_launch_count(), launches + 1);
    world_destroy(&w);
    assert_nothing_live();
  }
  cr_assert_gt(n, 10, "a session makes more than 10 driver calls");
  world w = {0};
  cr_assert_eq(world_build(&w), GCL_OK, "%s", gcl_last_error());
  world_destroy(&w);
  assert_nothing_live();
}

Test(faults, sweep_out_of_memory) { sweep(2, GCL_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY"); }
Test(faults, sweep_unknown_error) { sweep(999, GCL_ERROR_DRIVER, "CUDA_ERROR_UNKNOWN"); }

/* --- NVRTC compile, then the (fake) driver load --------------------------------------------- */

static const char k_source[] =
    "extern \"C\" __global__ void k(int *p) { if (p) *p = 1; }\n";

Test(faults, compiled_module_load_failure_frees_the_log) {
  gcl_context *ctx = NULL;
  cr_assert_eq(gcl_context_create(0, &ctx), GCL_OK);
  if (gcl_nvrtc_init() != GCL_OK) GCL_SKIP_NO_NVRTC("no NVRTC: %s", gcl_last_error());
  gcl_module *mod = (gcl_module *)0x1;
  fakecuda_fail_once("cuLibraryLoadData", 2, 0);
  cr_assert_eq(gcl_module_compile(ctx, k_source, "k.cu", NULL, 0, &mod), GCL_ERROR_OUT_OF_MEMORY);
  assert_msg_has("CUDA_ERROR_OUT_OF_MEMORY");
  cr_assert_eq(mod, (gcl_module *)0x1);
  cr_assert_eq(gcl_module_compile(ctx, k_source, "k.cu", NULL, 0, &mod), GCL_OK, "%s", gcl_last_error());
  fakecuda_library lib;
  cr_assert_eq(fakecuda_last_library(&lib), 0);
  cr_assert_eq(lib.format, 1, "NVRTC's cubin for the context's sm_90 reached the driver");
  gcl_module_destroy(mod);
  gcl_context_destroy(ctx);
  assert_nothing_live();
}

Test(faults, launch_on_a_bad_stream_is_named) {
  world w = {0};
  cr_assert_eq(world_build(&w), GCL_OK, "%s", gcl_last_error());
  uint32_t not_a_stream = 0xdead;
  gcl_launch_config c = launch2x128;
  c.stream = &not_a_stream;
  cr_assert_eq(gcl_launch(w.kernel, &c, w.args), GCL_ERROR_DRIVER);
  assert_msg_has("CUDA_ERROR_INVALID_HANDLE");
  cr_assert_eq(fakecuda_launch_count(), 1);
  world_destroy(&w);
  assert_nothing_live();
}

/* One call of the session failing once, at every position: a clean status naming the error (or
 * the failure was absorbed, e.g. a failed cuCtxGetCurrent before cuCtxSetCurrent), nothing left
 * behind, and the very next session works. */
Test(faults, sweep_single_transient_failure) {
  cr_assert_eq(gcl_driver_init(), GCL_OK);
  world w = {0};
  long before = fakecuda_calls("*");
  cr_assert_eq(world_build(&w), GCL_OK, "%s", gcl_last_error());
  long session = fakecuda_calls("*") - before;
  world_destroy(&w);
  cr_assert_gt(session, 10, "a session makes more than 10 driver calls");
  int failed = 0;
  for (long n = 0; n < session; n++) {
    fakecuda_fail_once("*", 999, (int)n);
    gcl_status s = world_build(&w);
    fakecuda_fail("*", 0, 0); /* a failing release could only leak: not this test's subject */
    world_destroy(&w);
    if (s != GCL_OK) {
      failed++;
      cr_assert_eq(s, GCL_ERROR_DRIVER, "call %ld: %s: %s", n, gcl_status_name(s), gcl_last_error());
      assert_msg_has("CUDA_ERROR_UNKNOWN");
    }
    assert_nothing_live();
    cr_assert_eq(world_build(&w), GCL_OK, "after a transient failure at call %ld: %s", n, gcl_last_error());
    world_destroy(&w);
    assert_nothing_live();
  }
  cr_assert_gt(failed, session / 2, "most single failures must surface: %d of %ld", failed, session);
}

/* FAKECUDA_FAIL injects faults into programs that cannot call the fake: the CLI. */
Test(faults, cli_info_reports_an_injected_stub_failure) {
  char build[1024], cmd[4096];
  snprintf(build, sizeof build, "%s", FAKECUDA_PATH);
  for (int up = 0; up < 3; up++) *strrchr(build, '/') = 0; /* build/tests/fakecuda/libfakecuda.so */
  snprintf(cmd, sizeof cmd, "GCL_LIBCUDA='%s' FAKECUDA_FAIL=cuInit:34 '%s/tools/gclaunch' info 2>&1",
           FAKECUDA_PATH, build);
  FILE *p = popen(cmd, "r");
  cr_assert(p != NULL);
  char out[8192];
  size_t n = fread(out, 1, sizeof out - 1, p);
  out[n] = 0;
  pclose(p);
  if (strstr(out, "not found") && !strstr(out, "gclaunch")) GCL_SKIP("no CLI: %.2000s", out);
  cr_assert(strstr(out, "CUDA_ERROR_STUB_LIBRARY"), "%s", out);
  cr_assert(strstr(out, "libfakecuda.so"), "%s", out);
}

Test(faults, launch_mode_defaults_to_kernel_params_and_is_checked) {
  setenv("GCL_LAUNCH_PARAMS", "extra", 1); /* the environment is not read */
  world w = {0};
  cr_assert_eq(world_build(&w), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_kernel_launch_mode(w.kernel), GCL_LAUNCH_KERNEL_PARAMS);
  cr_assert_eq(gcl_kernel_set_launch_mode(w.kernel, (gcl_launch_mode)2), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("gcl_kernel_set_launch_mode: mode 2");
  cr_assert_eq(gcl_kernel_launch_mode(w.kernel), GCL_LAUNCH_KERNEL_PARAMS, "a failed call changed it");
  cr_assert_eq(gcl_kernel_set_launch_mode(NULL, GCL_LAUNCH_EXTRA_BUFFER), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("gcl_kernel_set_launch_mode: kernel is NULL");
  world_destroy(&w);
  assert_nothing_live();
}

/* Args of another layout object: accepted when every offset and size equals the kernel's
 * (compared one by one: no digest can prove two layouts equal), refused naming the parameter
 * when one differs -- also a difference a 64-bit digest of the layouts could hide. */
Test(faults, launch_compares_another_layouts_offsets_and_sizes) {
  world w = {0};
  cr_assert_eq(world_build(&w), GCL_OK, "%s", gcl_last_error());
  static const char *const sigs[] = {FAKE_K_SIGNATURE, "grid_constant tensormap m, i8 c, u32 out"};
  for (int i = 0; i < 2; i++) {
    gcl_signature *sig;
    gcl_layout *l;
    gcl_args *a;
    cr_assert_eq(gcl_signature_parse(sigs[i], &sig), GCL_OK);
    cr_assert_eq(gcl_layout_create(sig, 90, &l), GCL_OK, "%s", gcl_last_error());
    cr_assert_eq(gcl_args_create(l, &a), GCL_OK);
    const void *data;
    size_t size;
    cr_assert_eq(gcl_args_buffer(w.args, &data, &size), GCL_OK);
    unsigned char raw[128];
    memcpy(raw, (const unsigned char *)data + 112, sizeof raw);
    int8_t c = 7;
    cr_assert_eq(gcl_args_set(a, 0, raw, sizeof raw), GCL_OK);
    cr_assert_eq(gcl_args_set(a, 1, &c, 1), GCL_OK);
    cr_assert_eq(i == 0 ? gcl_args_set_ptr(a, 2, w.buf) : gcl_args_set_u32(a, 2, 1), GCL_OK);
    long before = fakecuda_launch_count();
    gcl_status s = gcl_launch(w.kernel, &launch2x128, a);
    if (i == 0) {
      cr_assert_eq(s, GCL_OK, "an equal layout object: %s", gcl_last_error());
      cr_assert_eq(fakecuda_launch_count(), before + 1);
    } else {
      cr_assert_eq(s, GCL_ERROR_INVALID_ARGUMENT);
      assert_msg_has("parameter 2 'out' has offset 244 size 4, kernel 'k' has offset 248 size 8");
      cr_assert_eq(fakecuda_launch_count(), before, "a refused launch reached the driver");
    }
    gcl_args_destroy(a);
    gcl_layout_destroy(l);
    gcl_signature_destroy(sig);
  }
  world_destroy(&w);
  assert_nothing_live();
}
