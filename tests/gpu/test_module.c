/* Modules and kernels on a device: every image format (cubin, fatbin, PTX built by nvcc into
 * GCL_KERNEL_DIR, and CUDA source through NVRTC), the driver's parameter layout against the
 * layout engine, and declared signatures right and wrong. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "echo_kernels.h"

#define CHECK(call) cr_assert_eq((call), GCL_OK, "%s: %s", #call, gcl_last_error())
#define HAS(text) cr_assert(strstr(gcl_last_error(), (text)), "expected '%s' in: %s", (text), gcl_last_error())

static gcl_context *ctx;

static void setup(void) {
  CHECK(gcl_context_create(0, &ctx));
}
static void teardown(void) {
  gcl_context_destroy(ctx);
}

static void kernel_path(char *buf, size_t cap, const char *file) {
  snprintf(buf, cap, "%s/%s", GCL_KERNEL_DIR, file);
}

/* echo.sm_<ctx sm>.cubin, or NULL (skip) when the build has no cubin for this device. */
static gcl_module *load_echo(const char *kind) {
  char file[256], path[1024];
  if (strcmp(kind, "cubin") == 0) snprintf(file, sizeof file, "echo.sm_%d.cubin", gcl_context_sm(ctx));
  else if (strcmp(kind, "ptx") == 0) snprintf(file, sizeof file, "echo.compute_90.ptx");
  else snprintf(file, sizeof file, "echo.fatbin");
  kernel_path(path, sizeof path, file);
  FILE *f = fopen(path, "rb");
  if (!f) cr_skip_test("no %s (built for another architecture)", path);
  fclose(f);
  gcl_module *m = NULL;
  CHECK(gcl_module_load_file(ctx, path, &m));
  return m;
}

/* The echo kernels and their correct signatures. */

static void assert_same_layout(const gcl_layout *a, const gcl_layout *b, const char *what) {
  cr_assert_eq(gcl_layout_count(a), gcl_layout_count(b), "%s: count %zu vs %zu", what,
               gcl_layout_count(a), gcl_layout_count(b));
  for (size_t i = 0; i < gcl_layout_count(a); i++) {
    size_t oa, sa, ob, sb;
    CHECK(gcl_layout_param(a, i, &oa, &sa, NULL));
    CHECK(gcl_layout_param(b, i, &ob, &sb, NULL));
    cr_assert(oa == ob && sa == sb, "%s: parameter %zu at %zu/%zu vs %zu/%zu", what, i, oa, sa, ob, sb);
  }
  cr_assert_eq(gcl_layout_size(a), gcl_layout_size(b), "%s: size %zu vs %zu", what,
               gcl_layout_size(a), gcl_layout_size(b));
}

static void check_all_formats_agree(const char *kind) {
  gcl_module *m = load_echo(kind);
  gcl_module *ref = load_echo("fatbin");
  for (size_t i = 0; i < ECHO_COUNT; i++) {
    gcl_kernel *k = NULL, *kr = NULL;
    CHECK(gcl_module_find_kernel(m, echo_kernels[i].name, NULL, &k));
    CHECK(gcl_module_find_kernel(ref, echo_kernels[i].name, NULL, &kr));
    assert_same_layout(gcl_kernel_layout(k), gcl_kernel_layout(kr), echo_kernels[i].name);
  }
  gcl_module_destroy(m);
  gcl_module_destroy(ref);
}

TestSuite(module, .init = setup, .fini = teardown);

Test(module, cubin_loads_and_matches_fatbin) { check_all_formats_agree("cubin"); }
Test(module, ptx_jit_loads_and_matches_fatbin) { check_all_formats_agree("ptx"); }

Test(module, load_data_from_memory) {
  char path[1024];
  kernel_path(path, sizeof path, "echo.fatbin");
  void *data = NULL;
  size_t size = 0;
  CHECK(gcl__read_file(path, &data, &size));
  gcl_module *m = NULL;
  CHECK(gcl_module_load_data(ctx, data, size, &m));
  free(data); /* the driver keeps what it needs */
  gcl_kernel *k = NULL;
  CHECK(gcl_module_find_kernel(m, "echo_tm_ptr", NULL, &k));
  cr_assert_eq(gcl_layout_count(gcl_kernel_layout(k)), 3);
  gcl_module_destroy(m);
}

Test(module, missing_file_and_bad_image) {
  gcl_module *m = (gcl_module *)0x1;
  cr_assert_eq(gcl_module_load_file(ctx, "/nonexistent/echo.cubin", &m), GCL_ERROR_IO);
  HAS("/nonexistent/echo.cubin");
  cr_assert_eq(gcl_module_load_data(ctx, "not a module at all", 19, &m), GCL_ERROR_BAD_IMAGE);
  cr_assert_eq(m, (gcl_module *)0x1);
}

Test(module, bad_ptx_fails_with_the_jit_log) {
  const char *ptx = ".version 8.0\n.target sm_90\n.address_size 64\n"
                    ".visible .entry bad()\n{\n  bogus.instruction.here;\n  ret;\n}\n";
  gcl_module *m = NULL;
  gcl_status s = gcl_module_load_data(ctx, ptx, strlen(ptx), &m);
  cr_log_info("load: %s: %s", gcl_status_name(s), s ? gcl_last_error() : "");
  if (s == GCL_OK) { /* lazy loading: the JIT runs when the kernel is first resolved */
    gcl_kernel *k = NULL;
    s = gcl_module_find_kernel(m, "bad", NULL, &k);
    cr_log_info("kernel_get: %s: %s", gcl_status_name(s), gcl_last_error());
    gcl_module_destroy(m);
  }
  cr_assert_neq(s, GCL_OK, "malformed PTX must not load");
  cr_assert(strstr(gcl_last_error(), "CUDA_ERROR"), "%s", gcl_last_error());
}

Test(module, unknown_kernel_is_not_found) {
  gcl_module *m = load_echo("fatbin");
  gcl_kernel *k = (gcl_kernel *)0x1;
  cr_assert_eq(gcl_module_find_kernel(m, "no_such_kernel", NULL, &k), GCL_ERROR_NOT_FOUND);
  HAS("no_such_kernel");
  cr_assert_eq(k, (gcl_kernel *)0x1);
  gcl_module_destroy(m);
}

/* A kernel got with a signature describes its parameters as the signature does (kind, size,
 * alignment, name), not as the raw bytes the driver reports. A parameter declared bytes(N) stays
 * bytes, so the kinds are compared with the signature's rather than with "not bytes". */
static void assert_typed_as_signature(const gcl_layout *typed, const gcl_signature *sig,
                                      const char *what) {
  cr_assert_eq(gcl_layout_count(typed), gcl_signature_count(sig), "%s: parameter count", what);
  for (size_t p = 0; p < gcl_signature_count(sig); p++) {
    gcl_param_info want;
    gcl_field f;
    CHECK(gcl_layout_param_field(typed, p, &f));
    const gcl_param_info got = f.info;
    CHECK(gcl_signature_param(sig, p, &want));
    cr_assert(got.kind == want.kind && got.size == want.size && got.align == want.align,
              "%s: parameter %zu: kind %d size %zu align %zu, the signature says %d/%zu/%zu", what,
              p, (int)got.kind, got.size, got.align, (int)want.kind, want.size, want.align);
    if (want.name)
      cr_assert(got.name && !strcmp(got.name, want.name), "%s: parameter %zu is named '%s', not "
                "'%s'", what, p, got.name ? got.name : "(null)", want.name);
  }
}

/* The layout engine's offsets for each signature equal the driver's for the same kernel. */
Test(module, layout_engine_equals_driver) {
  gcl_module *m = load_echo("fatbin");
  for (size_t i = 0; i < ECHO_COUNT; i++) {
    gcl_kernel *raw = NULL, *typed = NULL;
    CHECK(gcl_module_find_kernel(m, echo_kernels[i].name, NULL, &raw));
    gcl_signature *sig = NULL;
    gcl_layout *engine = NULL;
    CHECK(gcl_signature_parse(echo_kernels[i].sig, &sig));
    CHECK(gcl_layout_create(sig, gcl_context_sm(ctx), &engine));
    assert_same_layout(engine, gcl_kernel_layout(raw), echo_kernels[i].name);
    CHECK(gcl_module_find_kernel(m, echo_kernels[i].name, echo_kernels[i].sig, &typed));
    assert_same_layout(gcl_kernel_layout(typed), gcl_kernel_layout(raw), echo_kernels[i].name);
    assert_typed_as_signature(gcl_kernel_layout(typed), sig, echo_kernels[i].name);
    gcl_layout_destroy(engine);
    gcl_signature_destroy(sig);
  }
  gcl_module_destroy(m);
}

Test(module, wrong_size_is_refused_naming_the_parameter) {
  gcl_module *m = load_echo("fatbin");
  gcl_kernel *k = (gcl_kernel *)0x1;
  cr_assert_eq(gcl_module_find_kernel(m, "echo_tm_ptr", "tensormap m, i32 c, u8* out", &k),
               GCL_ERROR_SIGNATURE_MISMATCH);
  HAS("echo_tm_ptr");
  HAS("parameter 1 'c'");
  HAS("size 4");
  HAS("size 1");
  cr_assert_eq(k, (gcl_kernel *)0x1);
  cr_assert_eq(gcl_module_find_kernel(m, "echo_tm_ptr", "tensormap m, i8 c", &k), GCL_ERROR_SIGNATURE_MISMATCH);
  HAS("declares 2 parameters, the kernel has 3");
  cr_assert_eq(gcl_module_find_kernel(m, "echo_tm_ptr", "tensormap m, i8 c,", &k), GCL_ERROR_PARSE);
  gcl_module_destroy(m);
}

/* A kernel built with a 64-aligned tensor map (CUDA 12 headers) declared with the CUDA 13 type:
 * refused wherever the two alignments give different offsets (sm_90: 48 vs 112). */
Test(module, tensormap_alignment_mismatch) {
  gcl_module *m = load_echo("fatbin");
  gcl_signature *s128 = NULL;
  gcl_layout *l128 = NULL;
  CHECK(gcl_signature_parse("tensormap m, i8 c, u8* out", &s128));
  CHECK(gcl_layout_create(s128, gcl_context_sm(ctx), &l128));
  gcl_kernel *raw = NULL, *k = NULL;
  CHECK(gcl_module_find_kernel(m, "echo_tm64_ptr", NULL, &raw));
  size_t declared, actual;
  CHECK(gcl_layout_param(l128, 0, &declared, NULL, NULL));
  CHECK(gcl_layout_param(gcl_kernel_layout(raw), 0, &actual, NULL, NULL));
  gcl_status s = gcl_module_find_kernel(m, "echo_tm64_ptr", "tensormap m, i8 c, u8* out", &k);
  if (declared == actual) {
    cr_assert_eq(s, GCL_OK, "same offsets on sm_%d: %s", gcl_context_sm(ctx), gcl_last_error());
  } else {
    char want[128];
    cr_assert_eq(s, GCL_ERROR_SIGNATURE_MISMATCH);
    HAS("parameter 0 'm'");
    snprintf(want, sizeof want, "declared offset %zu size 128, kernel has offset %zu size 128", declared, actual);
    HAS(want);
    HAS("align(64)");
  }
  CHECK(gcl_module_find_kernel(m, "echo_tm64_ptr", "tensormap align(64) m, i8 c, u8* out", &k));
  gcl_layout_destroy(l128);
  gcl_signature_destroy(s128);
  gcl_module_destroy(m);
}

Test(module, attributes) {
  char path[1024];
  kernel_path(path, sizeof path, "launchcfg.fatbin");
  gcl_module *m = NULL;
  gcl_kernel *k = NULL;
  CHECK(gcl_module_load_file(ctx, path, &m));
  CHECK(gcl_module_find_kernel(m, "cfg_bounded", "u32* out", &k));
  int threads = 0, regs = -1, stat = -1, dyn = -1, local = -1;
  CHECK(gcl_kernel_attribute(k, GCL_KERNEL_MAX_THREADS_PER_BLOCK, &threads));
  CHECK(gcl_kernel_attribute(k, GCL_KERNEL_REGISTERS, &regs));
  CHECK(gcl_kernel_attribute(k, GCL_KERNEL_STATIC_SHARED_BYTES, &stat));
  CHECK(gcl_kernel_attribute(k, GCL_KERNEL_MAX_DYNAMIC_SHARED_BYTES, &dyn));
  CHECK(gcl_kernel_attribute(k, GCL_KERNEL_LOCAL_BYTES, &local));
  cr_assert(threads > 0 && threads <= 128, "__launch_bounds__(128): %d", threads);
  cr_assert(regs > 0 && stat == 0 && dyn > 0 && local >= 0, "%d %d %d %d", regs, stat, dyn, local);
  cr_assert_eq(gcl_kernel_attribute(k, (gcl_kernel_attr)99, &threads), GCL_ERROR_INVALID_ARGUMENT);
  gcl_module_destroy(m);
}

static const char *saxpy_src =
    "extern \"C\" __global__ void saxpy(float a, const float *x, float *y, unsigned long long n) {\n"
    "  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";

Test(module, nvrtc_source_compiles_and_matches_nvcc) {
  gcl_module *m = NULL, *nv = NULL;
  const char *opts[] = {"-std=c++17"};
  CHECK(gcl_module_compile(ctx, saxpy_src, "saxpy.cu", opts, 1, &m));
  cr_assert_not_null(gcl_module_log(m));
  gcl_kernel *k = NULL, *kn = NULL;
  CHECK(gcl_module_find_kernel(m, "saxpy", "f32 a, const f32* x, f32* y, u64 n", &k));
  char path[1024];
  kernel_path(path, sizeof path, "smoke.fatbin");
  CHECK(gcl_module_load_file(ctx, path, &nv));
  CHECK(gcl_module_find_kernel(nv, "saxpy", NULL, &kn));
  assert_same_layout(gcl_kernel_layout(k), gcl_kernel_layout(kn), "saxpy NVRTC vs nvcc");
  gcl_module_destroy(m);
  gcl_module_destroy(nv);
}

Test(module, nvrtc_virtual_arch_goes_through_the_jit) {
  char arch[64];
  snprintf(arch, sizeof arch, "-arch=compute_%d", gcl_context_sm(ctx));
  const char *opts[] = {arch};
  gcl_module *m = NULL;
  CHECK(gcl_module_compile(ctx, saxpy_src, "saxpy.cu", opts, 1, &m));
  gcl_kernel *k = NULL;
  CHECK(gcl_module_find_kernel(m, "saxpy", "f32 a, const f32* x, f32* y, u64 n", &k));
  gcl_module_destroy(m);
}

Test(module, nvrtc_syntax_error_names_the_line) {
  const char *src = "extern \"C\" __global__ void k(int *p) {\n"
                    "  p[0] = 1;\n"
                    "  p[1] = = 2;\n"
                    "}\n";
  gcl_module *m = (gcl_module *)0x1;
  cr_assert_eq(gcl_module_compile(ctx, src, "broken.cu", NULL, 0, &m), GCL_ERROR_COMPILE);
  HAS("broken.cu(3)");
  cr_assert_eq(m, (gcl_module *)0x1);
}
