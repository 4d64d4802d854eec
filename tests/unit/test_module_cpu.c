/* Modules, kernels and launch without a driver: NULL arguments, image format detection from the
 * content, file errors, and NVRTC compilation (NVRTC needs no GPU), whose log must carry the
 * compiler's line numbers. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/suite.h"
#include "internal.h"

/* Declared in lib/cuda/cuda_internal.h, which needs cuda.h (not on unit tests' include path). */
gcl_status gcl__image_format(const void *data, size_t size, gcl_format *format);
gcl_status gcl__read_file(const char *path, void **data, size_t *size);
gcl_status gcl__nvrtc_compile(const char *source, const char *name, const char *const *options,
                              size_t option_count, int sm, void **image, size_t *size, char **log);

#define HAS(text) cr_assert(strstr(gcl_last_error(), (text)), "expected '%s' in: %s", (text), gcl_last_error())

static void *kernel_file(const char *name, size_t *size) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", GCL_KERNEL_DIR, name);
  void *data = NULL;
  cr_assert_eq(gcl__read_file(path, &data, size), GCL_OK, "%s", gcl_last_error());
  return data;
}

Test(module_cpu, null_arguments_are_rejected) {
  gcl_module *m = (gcl_module *)0x1;
  gcl_context *ctx = (gcl_context *)0x2; /* never dereferenced: an earlier argument fails first */
  cr_assert_eq(gcl_module_load_data(NULL, "x", 1, &m), GCL_ERROR_INVALID_ARGUMENT);
  HAS("ctx");
  cr_assert_eq(gcl_module_load_data(ctx, "x", 1, NULL), GCL_ERROR_INVALID_ARGUMENT);
  HAS("out");
  cr_assert_eq(gcl_module_load_data(ctx, NULL, 1, &m), GCL_ERROR_INVALID_ARGUMENT);
  HAS("data");
  cr_assert_eq(gcl_module_load_file(ctx, NULL, &m), GCL_ERROR_INVALID_ARGUMENT);
  HAS("path");
  cr_assert_eq(gcl_module_load_file(NULL, "/x", &m), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl_module_compile(NULL, "", NULL, NULL, 0, &m), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl_module_compile(ctx, NULL, NULL, NULL, 0, &m), GCL_ERROR_INVALID_ARGUMENT);
  HAS("source");
  cr_assert_eq(gcl_module_compile(ctx, "", NULL, NULL, 2, &m), GCL_ERROR_INVALID_ARGUMENT);
  HAS("option_count 2");
  cr_assert_eq(m, (gcl_module *)0x1, "a failed call must not write its output");
  gcl_kernel *k = (gcl_kernel *)0x3;
  cr_assert_eq(gcl_module_find_kernel(NULL, "k", NULL, &k), GCL_ERROR_INVALID_ARGUMENT);
  HAS("mod");
  cr_assert_eq(gcl_module_find_kernel((gcl_module *)0x4, NULL, NULL, &k), GCL_ERROR_INVALID_ARGUMENT);
  HAS("name");
  cr_assert_eq(gcl_module_find_kernel((gcl_module *)0x4, "", NULL, &k), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl_module_find_kernel((gcl_module *)0x4, "k", NULL, NULL), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(k, (gcl_kernel *)0x3);
  int v = 7;
  cr_assert_eq(gcl_kernel_attribute(NULL, GCL_KERNEL_REGISTERS, &v), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(v, 7);
  cr_assert_null(gcl_kernel_layout(NULL));
  cr_assert_str_eq(gcl_module_log(NULL), "");
  gcl_module_destroy(NULL);
}

Test(module_cpu, launch_null_arguments) {
  gcl_launch_config cfg = {.grid = {1, 1, 1}, .block = {1, 1, 1}};
  cr_assert_eq(gcl_launch(NULL, &cfg, (const gcl_args *)0x1), GCL_ERROR_INVALID_ARGUMENT);
  HAS("kernel");
  cr_assert_eq(gcl_launch((gcl_kernel *)0x1, NULL, (const gcl_args *)0x1), GCL_ERROR_INVALID_ARGUMENT);
  HAS("config");
  cr_assert_eq(gcl_launch((gcl_kernel *)0x1, &cfg, NULL), GCL_ERROR_INVALID_ARGUMENT);
  HAS("args");
  cr_assert_eq(gcl_graph_set_args(NULL, 0, (gcl_kernel *)1, (const gcl_args *)1),
               GCL_ERROR_INVALID_ARGUMENT);
  HAS("g: expected a graph, got NULL");
}

Test(module_cpu, no_driver_is_reported_by_load) {
  setenv("GCL_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  size_t size = 0;
  void *cubin = kernel_file("echo.sm_90.cubin", &size);
  gcl_module *m = (gcl_module *)0x1;
  /* A context cannot exist without a driver, but the load must not touch it before loading. */
  gcl_context *ctx = (gcl_context *)0x2;
  cr_assert_eq(gcl_module_load_data(ctx, cubin, size, &m), GCL_ERROR_NO_DRIVER, "%s", gcl_last_error());
  HAS("/nonexistent/libcuda.so.1");
  cr_assert_eq(m, (gcl_module *)0x1);
  free(cubin);
}

Test(module_cpu, formats_from_content) {
  const char *files[] = {"echo.sm_90.cubin", "echo.fatbin", "echo.compute_90.ptx"};
  gcl_format want[] = {GCL_IMAGE_CUBIN, GCL_IMAGE_FATBIN, GCL_IMAGE_PTX};
  for (int i = 0; i < 3; i++) {
    size_t size = 0;
    void *data = kernel_file(files[i], &size);
    gcl_format f = 0;
    cr_assert_eq(gcl__image_format(data, size, &f), GCL_OK, "%s: %s", files[i], gcl_last_error());
    cr_assert_eq(f, want[i], "%s: format %d, want %d", files[i], f, want[i]);
    free(data);
  }
  const char *ptx = "/* generated */\n  // by hand\n\t.version 8.0\n.target sm_90\n";
  gcl_format f = 0;
  cr_assert_eq(gcl__image_format(ptx, strlen(ptx), &f), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(f, GCL_IMAGE_PTX);
}

Test(module_cpu, bad_images_are_refused) {
  gcl_format f = 0;
  cr_assert_eq(gcl__image_format("hello world", 11, &f), GCL_ERROR_BAD_IMAGE);
  HAS("68 65 6c 6c"); /* the first bytes are shown */
  cr_assert_eq(gcl__image_format("abc", 3, &f), GCL_ERROR_BAD_IMAGE);
  cr_assert_eq(gcl__image_format("// only a comment\n", 18, &f), GCL_ERROR_BAD_IMAGE);
  cr_assert_eq(f, 0, "a failed call must not write its output");
  const char *names[] = {"echo.sm_90.cubin", "echo.fatbin"};
  for (int i = 0; i < 2; i++) {
    size_t size = 0;
    unsigned char *data = kernel_file(names[i], &size);
    /* Any cut inside the headers or the tables they point at is caught before the driver. */
    size_t cuts[] = {4, 15, 16, 40, 63, 64, 200, size / 2, size - 1};
    for (size_t c = 0; c < sizeof cuts / sizeof *cuts; c++) {
      if (cuts[c] >= size) continue;
      gcl_status s = gcl__image_format(data, cuts[c], &f);
      cr_assert_eq(s, GCL_ERROR_BAD_IMAGE, "%s cut to %zu bytes: %s", names[i], cuts[c],
                   gcl_status_name(s));
      cr_assert(strstr(gcl_last_error(), "truncated") || strstr(gcl_last_error(), "64-bit"),
                "%s", gcl_last_error());
    }
    free(data);
  }
}

Test(module_cpu, read_file_names_path_and_errno) {
  void *data = (void *)0x1;
  size_t size = 5;
  cr_assert_eq(gcl__read_file("/nonexistent/dir/k.cubin", &data, &size), GCL_ERROR_IO);
  HAS("/nonexistent/dir/k.cubin");
  HAS("No such file");
  cr_assert_eq(data, (void *)0x1);
  cr_assert_eq(size, 5);
  cr_assert_eq(gcl__read_file("/tmp", &data, &size), GCL_ERROR_IO);
  HAS("not a regular file");
  cr_assert_eq(data, (void *)0x1);
}

static const char *saxpy_src =
    "extern \"C\" __global__ void saxpy(float a, const float *x, float *y, unsigned long long n) {\n"
    "  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";

static void require_nvrtc(void) {
  if (gcl_nvrtc_init() != GCL_OK) GCL_SKIP_NO_NVRTC("no NVRTC: %s", gcl_last_error());
}

Test(module_cpu, nvrtc_compiles_a_cubin_for_the_given_sm) {
  require_nvrtc();
  void *image = NULL;
  size_t size = 0;
  char *log = NULL;
  cr_assert_eq(gcl__nvrtc_compile(saxpy_src, "saxpy.cu", NULL, 0, 90, &image, &size, &log), GCL_OK,
               "%s", gcl_last_error());
  cr_assert_not_null(log, "the log exists (maybe empty) on success");
  gcl_format f = 0;
  cr_assert_eq(gcl__image_format(image, size, &f), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(f, GCL_IMAGE_CUBIN);
  cr_assert_eq(((unsigned char *)image)[0x31], 90, "e_flags SM byte: want sm_90"); /* (e_flags >> 8) & 0xff */
  free(image);
  free(log);
}

Test(module_cpu, nvrtc_virtual_arch_gives_ptx) {
  require_nvrtc();
  const char *opts[] = {"-arch=compute_90", "-default-device"};
  void *image = NULL;
  size_t size = 0;
  char *log = NULL;
  cr_assert_eq(gcl__nvrtc_compile(saxpy_src, NULL, opts, 2, 80, &image, &size, &log), GCL_OK,
               "%s", gcl_last_error());
  gcl_format f = 0;
  cr_assert_eq(gcl__image_format(image, size, &f), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(f, GCL_IMAGE_PTX);
  cr_assert(strstr(image, ".target sm_90"), "the user's -arch wins over sm 80");
  cr_assert_eq(strlen(image), size);
  free(image);
  free(log);
}

Test(module_cpu, nvrtc_syntax_error_names_the_line) {
  require_nvrtc();
  const char *src = "extern \"C\" __global__ void k(int *p) {\n"
                    "  p[0] = 1;\n"
                    "  p[1] = = 2;\n"
                    "}\n";
  void *image = (void *)0x1;
  size_t size = 3;
  char *log = NULL;
  cr_assert_eq(gcl__nvrtc_compile(src, "broken.cu", NULL, 0, 90, &image, &size, &log),
               GCL_ERROR_COMPILE);
  HAS("broken.cu(3)");
  HAS("-arch=sm_90");
  cr_assert_eq(image, (void *)0x1);
  cr_assert_not_null(log);
  cr_assert(strstr(log, "broken.cu(3)"), "log: %s", log);
  free(log);
}

Test(module_cpu, nvrtc_finds_cccl_headers) {
  require_nvrtc();
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/include/cccl/cuda/std/cstdint", gcl_test_cuda_root());
  FILE *probe = fopen(dir, "r");
  if (!probe) GCL_SKIP_NO_NVRTC("no CCCL headers at %s (the toolkit next to NVRTC)", dir);
  fclose(probe);
  const char *src = "#include <cuda/std/cstdint>\n"
                    "extern \"C\" __global__ void k(cuda::std::uint32_t *p) { p[0] = 1; }\n";
  void *image = NULL;
  size_t size = 0;
  char *log = NULL;
  cr_assert_eq(gcl__nvrtc_compile(src, "cccl.cu", NULL, 0, 90, &image, &size, &log), GCL_OK, "%s",
               gcl_last_error());
  free(image);
  free(log);
}

Test(module_cpu, nvrtc_null_option_is_named) {
  const char *opts[] = {"-std=c++17", NULL};
  void *image = NULL;
  size_t size = 0;
  char *log = NULL;
  cr_assert_eq(gcl__nvrtc_compile(saxpy_src, NULL, opts, 2, 90, &image, &size, &log),
               GCL_ERROR_INVALID_ARGUMENT);
  HAS("options[1]");
}

/* NVRTC 13 crashed when programs were compiled from several threads at once (seen while
 * building the differential test), so gclaunch compiles one program at a time: compiles from
 * 4 threads, each of its own source and architecture, must all succeed with the right cubin. */
typedef struct compile_job {
  int sm;
  char src[256];
  gcl_status status;
  int got_sm;
} compile_job;

static void *compile_thread(void *arg) {
  compile_job *j = arg;
  for (int r = 0; r < 3 && j->status == GCL_OK; r++) {
    void *image = NULL;
    size_t size = 0;
    char *log = NULL;
    j->status = gcl__nvrtc_compile(j->src, "threaded.cu", NULL, 0, j->sm, &image, &size, &log);
    if (j->status == GCL_OK) j->got_sm = ((unsigned char *)image)[0x31];
    free(image);
    free(log);
  }
  return NULL;
}

Test(module_cpu, nvrtc_compiles_from_several_threads) {
  require_nvrtc();
  static const int sms[] = {80, 90, 100, 120};
  compile_job jobs[4];
  pthread_t th[4];
  for (int i = 0; i < 4; i++) {
    jobs[i] = (compile_job){.sm = sms[i], .status = GCL_OK};
    snprintf(jobs[i].src, sizeof jobs[i].src,
             "extern \"C\" __global__ void k%d(float *p, int n) {\n"
             "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
             "  if (i < n) p[i] = p[i] * %d.0f + 1.0f;\n}\n", i, i + 2);
    cr_assert_eq(pthread_create(&th[i], NULL, compile_thread, &jobs[i]), 0);
  }
  for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < 4; i++) {
    cr_assert_eq(jobs[i].status, GCL_OK, "thread %d (sm_%d): %s", i, jobs[i].sm,
                 gcl_status_name(jobs[i].status));
    cr_assert_eq(jobs[i].got_sm, jobs[i].sm, "thread %d: cubin for sm_%d", i, jobs[i].got_sm);
  }
}

/* One PTX rule for gclaunch inspect (gcl_image_parse) and the module loader (gcl__image_format,
 * what gcl_module_load_data checks before the driver): .version first after whitespace and
 * comments. Every text is accepted by both or refused by both. */
Test(module_cpu, ptx_acceptance_is_the_same_for_inspect_and_load) {
  static const struct { const char *text; bool ptx; } cases[] = {
      {".version 8.0\n.target sm_90\n.address_size 64\n", true},
      {"// header\n/* block\n comment */\n\t.version 8.0\n.target sm_90\n", true},
      {".target sm_90\n.version 8.0\n", false},            /* .version must come first */
      {"int x; // .version 8.0\n", false},                  /* CUDA source mentioning it */
      {"/* .version 8.0 */\n", false},                      /* only inside a comment */
      {"/* never closed .version 8.0", false},
      {"\n\n  .versio", false},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const char *t = cases[i].text;
    gcl_format f = 0;
    gcl_status load = gcl__image_format(t, strlen(t), &f);
    gcl_image *img = NULL;
    gcl_status inspect = gcl_image_parse(t, strlen(t), 90, &img);
    bool inspect_says_not_ptx = inspect == GCL_ERROR_BAD_IMAGE && strstr(gcl_last_error(), "not a cubin");
    gcl_image_destroy(img);
    cr_expect_eq(load == GCL_OK, cases[i].ptx, "case %zu: loader %s", i, gcl_status_name(load));
    cr_expect_eq(!inspect_says_not_ptx, cases[i].ptx, "case %zu: inspect %s", i,
                 gcl_status_name(inspect));
  }
}

/* gcl_nvrtc_compile: CUDA source to a cubin on the CPU; its layout is what the image reader sees;
 * compile errors carry the log; NULLs are named. */
Test(module_cpu, nvrtc_compile_without_a_driver) {
  if (gcl_nvrtc_init() != GCL_OK) GCL_SKIP_NO_NVRTC("no NVRTC: %s", gcl_last_error());
  const char *src = "struct alignas(128) TM { unsigned long long o[16]; };\n"
                    "struct G { TM maps[2]; int *out; unsigned n; };\n"
                    "extern \"C\" __global__ void k(const __grid_constant__ G g) { g.out[0] = g.n; }\n";
  void *image = NULL;
  size_t size = 0;
  cr_assert_eq(gcl_nvrtc_compile(src, "k.cu", NULL, 0, 90, &image, &size), GCL_OK, "%s", gcl_last_error());
  gcl_image *img = NULL;
  cr_assert_eq(gcl_image_parse(image, size, 0, &img), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_image_sm(img), 90);
  size_t k = 0, off = 0, sz = 0;
  cr_assert_eq(gcl_image_find_kernel(img, "k", &k), GCL_OK);
  cr_assert_eq(gcl_image_param(img, k, 0, &off, &sz, NULL), GCL_OK);
  cr_assert_eq(off, 112);
  cr_assert_eq(sz, 384);
  gcl_image_destroy(img);
  gcl_file_free(image);
  image = (void *)0x1;
  cr_assert_eq(gcl_nvrtc_compile("this is not C++", "bad.cu", NULL, 0, 90, &image, &size), GCL_ERROR_COMPILE);
  cr_assert(strstr(gcl_last_error(), "bad.cu"), "%s", gcl_last_error());
  cr_assert_eq(image, (void *)0x1);
  cr_assert_eq(gcl_nvrtc_compile(NULL, "x", NULL, 0, 90, &image, &size), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_str_eq(gcl_last_error(), "gcl_nvrtc_compile: source is NULL");
}
