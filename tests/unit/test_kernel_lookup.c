/* Kernel lookup against libfakecuda.so (issue 25): the parameter count comes from the module's
 * own records, the driver is asked only for the indices below it, and a lookup makes no failing
 * driver call -- compute-sanitizer reports every failing call as an API error in the user's
 * program. The fake refuses cuFuncGetParamInfo past a kernel's last parameter, as the driver does,
 * and counts refused calls (fakecuda_failed_calls). */
#include "fakecuda_test.h"

#include <stdio.h>

/* PTX whose .entry list the module reader gives the count from: k is FAKE_K_SIGNATURE's kernel
 * (3 parameters, fake_declare_k), two is declared with 2 parameters below. */
static const char ptx_k[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry k(.param .align 128 .b8 k_m[128], .param .u8 k_c, .param .u64 k_out)\n{\n ret;\n}\n"
    ".visible .entry two(.param .u32 a, .param .u64 b, .param .u32 c)\n{\n ret;\n}\n";

typedef struct world {
  gcl_context *ctx;
  gcl_module *mod;
} world;

static void open_world(world *w, const char *image, size_t size) {
  fake_use();
  cr_assert_eq(gcl_context_create(0, &w->ctx), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_module_load_data(w->ctx, image, size, &w->mod), GCL_OK, "%s", gcl_last_error());
}

static void close_world(world *w) {
  gcl_module_destroy(w->mod);
  gcl_context_destroy(w->ctx);
  assert_nothing_live();
}

/* What a user sees: the layout of k, with and without a signature, and not one failing call. */
Test(kernel_lookup, count_from_ptx_records_makes_no_failing_call) {
  world w;
  open_world(&w, ptx_k, sizeof ptx_k);
  long before = fakecuda_calls("cuFuncGetParamInfo");
  gcl_kernel *raw = NULL, *typed = NULL;
  cr_assert_eq(gcl_module_find_kernel(w.mod, "k", NULL, &raw), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_module_find_kernel(w.mod, "k", FAKE_K_SIGNATURE, &typed), GCL_OK, "%s", gcl_last_error());
  const gcl_layout *l = gcl_kernel_layout(raw);
  cr_assert_eq(gcl_layout_count(l), 3);
  size_t off = 0, size = 0;
  cr_assert_eq(gcl_layout_param(l, 2, &off, &size, NULL), GCL_OK);
  cr_expect_eq(off, 248);
  cr_expect_eq(size, 8);
  cr_expect_eq(gcl_layout_size(l), 256);
  cr_expect_eq(fakecuda_failed_calls("*"), 0, "the lookups made %ld failing driver calls (%ld of "
               "cuFuncGetParamInfo)", fakecuda_failed_calls("*"),
               fakecuda_failed_calls("cuFuncGetParamInfo"));
  cr_expect_eq(fakecuda_calls("cuFuncGetParamInfo") - before, 6, "3 parameters confirmed per lookup");
  close_world(&w);
}

/* The same from a real cubin (kernels/params.cu, nvcc's EIATTR_KPARAM_INFO): k_one is k. */
Test(kernel_lookup, count_from_cubin_records_makes_no_failing_call) {
  char path[1024];
  snprintf(path, sizeof path, "%s/params.sm_90.cubin", GCL_KERNEL_DIR);
  fake_use();
  const size_t off[] = {112, 240, 248}, size[] = {128, 1, 8};
  cr_assert_eq(fakecuda_set_params("k_one", 3, off, size), 0);
  world w;
  cr_assert_eq(gcl_context_create(0, &w.ctx), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_module_load_file(w.ctx, path, &w.mod), GCL_OK, "%s", gcl_last_error());
  gcl_kernel *k = NULL;
  cr_assert_eq(gcl_module_find_kernel(w.mod, "k_one", "grid_constant tensormap m, i8 c, i32* out", &k),
               GCL_OK, "%s", gcl_last_error());
  cr_expect_eq(gcl_layout_count(gcl_kernel_layout(k)), 3);
  cr_expect_eq(fakecuda_failed_calls("*"), 0);
  cr_expect_eq(fakecuda_calls("cuFuncGetParamInfo"), 3);
  close_world(&w);
}

/* Records and driver disagree: the records list 3 parameters of `two`, the driver has 2. The
 * lookup fails with GCL_ERROR_BAD_IMAGE naming both, after asking for indices 0, 1, 2 only. */
Test(kernel_lookup, driver_refusing_a_listed_parameter_is_bad_image) {
  world w;
  open_world(&w, ptx_k, sizeof ptx_k);
  const size_t off[] = {0, 8}, size[] = {4, 8};
  cr_assert_eq(fakecuda_set_params("two", 2, off, size), 0);
  gcl_kernel *k = NULL;
  cr_assert_eq(gcl_module_find_kernel(w.mod, "two", NULL, &k), GCL_ERROR_BAD_IMAGE);
  assert_msg_has("kernel 'two'");
  assert_msg_has("list 3 parameters");
  assert_msg_has("no parameter 2");
  cr_expect_eq(gcl_last_cuda_error(), 1 /* CUDA_ERROR_INVALID_VALUE */);
  cr_expect_eq(fakecuda_calls("cuFuncGetParamInfo"), 3, "indices 0, 1, 2 and nothing past");
  cr_expect_eq(fakecuda_failed_calls("cuFuncGetParamInfo"), 1);
  close_world(&w);
}

/* An image whose records say nothing of the kernel (here PTX without that .entry): the lookup
 * falls back to probing the driver, the one case with a failing call (documented in kernel.c). */
Test(kernel_lookup, kernel_missing_from_records_falls_back_to_probing) {
  world w;
  open_world(&w, fake_ptx, sizeof fake_ptx);
  gcl_kernel *k = NULL;
  cr_assert_eq(gcl_module_find_kernel(w.mod, "k", FAKE_K_SIGNATURE, &k), GCL_OK, "%s", gcl_last_error());
  cr_expect_eq(gcl_layout_count(gcl_kernel_layout(k)), 3);
  cr_expect_eq(fakecuda_failed_calls("cuFuncGetParamInfo"), 1, "one call past the last");
  close_world(&w);
}

/* Reading the records is no failure of the load: an image they cannot be read from leaves this
 * thread's last error as it was. */
Test(kernel_lookup, unreadable_records_leave_the_last_error) {
  fake_use();
  gcl_context *ctx = NULL;
  cr_assert_eq(gcl_context_create(0, &ctx), GCL_OK);
  gcl_signature *sig = NULL;
  cr_assert_eq(gcl_signature_parse("u8 x,", &sig), GCL_ERROR_PARSE);
  char before[512];
  snprintf(before, sizeof before, "%s", gcl_last_error());
  /* A .entry with a parameter type the PTX reader refuses: the module still loads. */
  static const char odd[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                            ".visible .entry k(.param .b8 x[0])\n{\n ret;\n}\n";
  gcl_module *m = NULL;
  cr_assert_eq(gcl_module_load_data(ctx, odd, sizeof odd, &m), GCL_OK, "%s", gcl_last_error());
  cr_expect_str_eq(gcl_last_error(), before);
  gcl_module_destroy(m);
  gcl_context_destroy(ctx);
}
