/* gcl_launch on a device: saxpy against a host reference, layout echo (every parameter's bytes
 * come back as packed), launch-config checks before the driver, shared memory opt-in, clusters,
 * cooperative/PDL/priority attributes, zero-parameter kernels, and CUDA graph capture with
 * kernel-node argument replacement. Each runs with kernelParams and with the extra buffer. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cuda_internal.h"
#include "echo_kernels.h"
#include "../common/test_rng.h"

#define CHECK(call) cr_assert_eq((call), GCL_OK, "%s: %s", #call, gcl_last_error())
#define CU(call) cr_assert_eq((call), CUDA_SUCCESS, "%s failed", #call)
#define HAS(text) cr_assert(strstr(gcl_last_error(), (text)), "expected '%s' in: %s", (text), gcl_last_error())

static gcl_context *ctx;
static unsigned long long seed; /* GCL_TEST_SEED replays */

static void setup(void) {
  CHECK(gcl_context_create(0, &ctx));
  seed_rng_for("test_launch");
  seed = rng_state;
}
static void teardown(void) { gcl_context_destroy(ctx); }

TestSuite(launch, .init = setup, .fini = teardown);

static gcl_module *load(const char *file) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", GCL_KERNEL_DIR, file);
  gcl_module *m = NULL;
  CHECK(gcl_module_load_file(ctx, path, &m));
  return m;
}

/* The kernel with parameters passed through `extra` (true) or kernelParams (false). */
static gcl_kernel *get(gcl_module *m, const char *name, const char *sig, bool extra) {
  gcl_kernel *k = NULL;
  CHECK(gcl_module_find_kernel(m, name, sig, &k));
  CHECK(gcl_kernel_set_launch_mode(k, extra ? GCL_LAUNCH_EXTRA_BUFFER : GCL_LAUNCH_KERNEL_PARAMS));
  return k;
}

static gcl_launch_config one_thread(void) {
  return (gcl_launch_config){.grid = {1, 1, 1}, .block = {1, 1, 1}};
}

static void saxpy(bool extra) {
  gcl_module *m = load("smoke.fatbin");
  gcl_kernel *k = get(m, "saxpy", "f32 a, const f32* x, f32* y, u64 n", extra);
  enum { N = 1 << 20 };
  float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *out = malloc(N * sizeof *out);
  for (int i = 0; i < N; i++) {
    x[i] = (float)rnd(1u << 24) / (float)(1u << 24) - 0.5f;
    y[i] = (float)rnd(1u << 24) / (float)(1u << 24) - 0.5f;
  }
  uint64_t dx, dy;
  CHECK(gcl_mem_alloc(ctx, N * sizeof(float), &dx));
  CHECK(gcl_mem_alloc(ctx, N * sizeof(float), &dy));
  CHECK(gcl_mem_upload(ctx, dx, x, N * sizeof(float)));
  CHECK(gcl_mem_upload(ctx, dy, y, N * sizeof(float)));
  gcl_args *args = NULL;
  CHECK(gcl_args_create(gcl_kernel_layout(k), &args));
  float a = 1.75f;
  CHECK(gcl_args_set_f32(args, 0, a));
  CHECK(gcl_args_set_ptr(args, 1, dx));
  CHECK(gcl_args_set_ptr(args, 2, dy));
  CHECK(gcl_args_set_u64(args, 3, N));
  gcl_launch_config cfg = {.grid = {(N + 255) / 256}, .block = {256}};
  CHECK(gcl_launch(k, &cfg, args));
  CHECK(gcl_context_synchronize(ctx));
  CHECK(gcl_mem_download(ctx, out, dy, N * sizeof(float)));
  for (int i = 0; i < N; i++) {
    float want = a * x[i] + y[i];
    cr_assert_float_eq(out[i], want, 1e-6f, "seed %llu element %d: got %g, want %g", seed, i, out[i], want);
  }
  CHECK(gcl_mem_free(ctx, dx));
  CHECK(gcl_mem_free(ctx, dy));
  gcl_args_destroy(args);
  gcl_module_destroy(m);
  free(x), free(y), free(out);
}

Test(launch, saxpy_kernel_params) { saxpy(false); }
Test(launch, saxpy_extra_buffer) { saxpy(true); }

/* --- layout echo ------------------------------------------------------------------------------ */


/* Random bytes for a parameter; floating-point parameters get finite values so that no
 * NaN canonicalisation can excuse a difference. */
static void random_value(const gcl_param_info *p, unsigned char *v, size_t size) {
  for (size_t i = 0; i < size; i++) v[i] = (unsigned char)rng();
  if (p->kind == GCL_PARAM_SCALAR && p->scalar == GCL_SCALAR_F32) {
    float f = (float)rnd(1u << 24) / (float)(1u << 24) * 1000.0f - 500.0f;
    memcpy(v, &f, sizeof f);
  } else if (p->kind == GCL_PARAM_SCALAR && p->scalar == GCL_SCALAR_F64) {
    double d = (double)(rng() >> 11) / (double)(1ull << 53) * 1e6 - 5e5;
    memcpy(v, &d, sizeof d);
  }
}

/* Packs random values into every parameter but the last (the output pointer), launches, and
 * compares the echoed bytes with the concatenation of the values. */
static void echo(const char *name, const char *sig, bool extra, bool raw) {
  gcl_module *m = load("echo.fatbin");
  gcl_kernel *typed = get(m, name, sig, extra);
  gcl_kernel *k = raw ? get(m, name, NULL, extra) : typed; /* raw: the driver's untyped layout */
  const gcl_layout *types = gcl_kernel_layout(typed), *l = gcl_kernel_layout(k);
  size_t n = gcl_layout_count(l), total = 0;
  gcl_args *args = NULL;
  CHECK(gcl_args_create(l, &args));
  unsigned char *want = malloc(GCL_PARAM_LIMIT), *got = malloc(GCL_PARAM_LIMIT);
  for (size_t i = 0; i + 1 < n; i++) {
    gcl_field f;
    size_t size = 0;
    CHECK(gcl_layout_param_field(types, i, &f));
    const gcl_param_info p = f.info;
    CHECK(gcl_layout_param(l, i, NULL, &size, NULL));
    random_value(&p, want + total, size);
    CHECK(gcl_args_set(args, i, want + total, size));
    total += size;
  }
  uint64_t out;
  CHECK(gcl_mem_alloc(ctx, total, &out));
  CHECK(gcl_mem_fill_u8(ctx, out, 0xcd, total)); /* poison */
  CHECK(gcl_args_set(args, n - 1, &out, sizeof out));
  gcl_launch_config cfg = one_thread();
  CHECK(gcl_launch(k, &cfg, args));
  CHECK(gcl_context_synchronize(ctx));
  CHECK(gcl_mem_download(ctx, got, out, total));
  for (size_t b = 0; b < total; b++)
    cr_assert_eq(got[b], want[b], "%s (%s, %s) seed %llu: byte %zu of %zu: got 0x%02x, want 0x%02x",
                 name, raw ? "raw" : "typed", extra ? "extra" : "kernelParams", seed, b, total,
                 got[b], want[b]);
  CHECK(gcl_mem_free(ctx, out));
  gcl_args_destroy(args);
  gcl_module_destroy(m);
  free(want), free(got);
}

Test(launch, echo_every_shape_both_ways) {
  for (size_t i = 0; i < sizeof echo_kernels / sizeof *echo_kernels; i++) {
    for (int extra = 0; extra < 2; extra++) {
      echo(echo_kernels[i].name, echo_kernels[i].sig, extra, false);
      echo(echo_kernels[i].name, echo_kernels[i].sig, extra, true);
    }
  }
}

/* --- argument checks ---------------------------------------------------------------------------- */

Test(launch, unset_and_foreign_args_are_refused) {
  gcl_module *m = load("echo.fatbin");
  gcl_kernel *k = get(m, "echo_tm_ptr", "tensormap m, i8 c, u8* out", false);
  gcl_kernel *other = get(m, "echo_struct", "struct{i32,f64,i8} s, i16 h, u8* out", false);
  gcl_args *args = NULL, *foreign = NULL;
  CHECK(gcl_args_create(gcl_kernel_layout(k), &args));
  cr_assert_eq(gcl_args_set_i32(args, 1, 0), GCL_ERROR_TYPE_MISMATCH, "parameter 1 is an i8");
  unsigned char c = 7;
  CHECK(gcl_args_set(args, 1, &c, 1));
  gcl_launch_config cfg = one_thread();
  cr_assert_eq(gcl_launch(k, &cfg, args), GCL_ERROR_UNSET_ARGUMENT);
  HAS("'m'");
  CHECK(gcl_args_create(gcl_kernel_layout(other), &foreign));
  cr_assert_eq(gcl_launch(k, &cfg, foreign), GCL_ERROR_INVALID_ARGUMENT);
  HAS("gcl_kernel_layout");
  /* An equal layout that is not the kernel's own is accepted (same offsets and sizes). */
  gcl_kernel *twin = get(m, "echo_tm_ptr", "tensormap m, i8 c, u8* out", false);
  gcl_args *twin_args = NULL;
  CHECK(gcl_args_create(gcl_kernel_layout(twin), &twin_args));
  unsigned char map[128] = {0};
  uint64_t out;
  CHECK(gcl_mem_alloc(ctx, 256, &out));
  CHECK(gcl_args_set(twin_args, 0, map, sizeof map));
  CHECK(gcl_args_set(twin_args, 1, &c, 1));
  CHECK(gcl_args_set_ptr(twin_args, 2, out));
  CHECK(gcl_launch(k, &cfg, twin_args));
  CHECK(gcl_context_synchronize(ctx));
  CHECK(gcl_mem_free(ctx, out));
  gcl_args_destroy(args), gcl_args_destroy(foreign), gcl_args_destroy(twin_args);
  gcl_module_destroy(m);
}

/* --- configs ------------------------------------------------------------------------------------ */

static gcl_args *out_args(gcl_kernel *k, uint64_t out) {
  gcl_args *args = NULL;
  CHECK(gcl_args_create(gcl_kernel_layout(k), &args));
  CHECK(gcl_args_set_ptr(args, 0, out));
  return args;
}

Test(launch, config_checked_before_the_driver) {
  gcl_module *m = load("launchcfg.fatbin");
  gcl_kernel *bounded = get(m, "cfg_bounded", "u32* out", false);
  uint64_t out;
  CHECK(gcl_mem_alloc(ctx, 1 << 20, &out));
  gcl_args *args = out_args(bounded, out);
  gcl_launch_config cfg = {.grid = {2}, .block = {256}};
  cr_assert_eq(gcl_launch(bounded, &cfg, args), GCL_ERROR_INVALID_CONFIG);
  HAS("256 threads");
  HAS("at most");
  cfg = (gcl_launch_config){.grid = {3}, .block = {32}, .cluster = {2}};
  cr_assert_eq(gcl_launch(bounded, &cfg, args), GCL_ERROR_INVALID_CONFIG);
  HAS("config.cluster[0] = 2 does not divide config.grid[0] = 3");
  cfg = (gcl_launch_config){.grid = {4, 3}, .block = {32}, .cluster = {2, 2}};
  cr_assert_eq(gcl_launch(bounded, &cfg, args), GCL_ERROR_INVALID_CONFIG);
  HAS("cluster[1]");
  cfg = (gcl_launch_config){.grid = {1}, .block = {32}, .shared_bytes = (size_t)1 << 30};
  cr_assert_eq(gcl_launch(bounded, &cfg, args), GCL_ERROR_INVALID_CONFIG);
  HAS("shared_bytes");
  cfg = (gcl_launch_config){.grid = {2}, .block = {128}}; /* 0 dims are 1 */
  CHECK(gcl_launch(bounded, &cfg, args));
  CHECK(gcl_context_synchronize(ctx));
  unsigned got[256];
  CHECK(gcl_mem_download(ctx, got, out, sizeof got));
  for (unsigned i = 0; i < 256; i++) cr_assert_eq(got[i], i % 128 + 1, "thread %u", i);
  gcl_args_destroy(args);
  CHECK(gcl_mem_free(ctx, out));
  gcl_module_destroy(m);
}

static void shared_memory(bool extra) {
  gcl_device_info info;
  CHECK(gcl_device_query(gcl_context_device(ctx), &info));
  size_t bytes = (size_t)info.max_shared_per_block_optin;
  if (bytes <= 48 * 1024) cr_skip_test("the device opts in to only %zu bytes", bytes);
  gcl_module *m = load("launchcfg.fatbin");
  gcl_kernel *k = get(m, "cfg_smem", "u32* out, u32 words", extra);
  uint64_t out;
  CHECK(gcl_mem_alloc(ctx, 4 * sizeof(unsigned), &out));
  gcl_args *args = out_args(k, out);
  size_t sizes[] = {64 * 1024, bytes, 16 * 1024}; /* opt in, raise again, and a small one */
  for (int t = 0; t < 3; t++) {
    unsigned words = (unsigned)(sizes[t] / 4);
    CHECK(gcl_args_set_u32(args, 1, words));
    gcl_launch_config cfg = {.grid = {4}, .block = {256}, .shared_bytes = sizes[t]};
    CHECK(gcl_launch(k, &cfg, args));
    CHECK(gcl_context_synchronize(ctx));
    unsigned got[4], want = 0;
    for (unsigned i = 0; i < words; i++) want += i * 2654435761u;
    CHECK(gcl_mem_download(ctx, got, out, sizeof got));
    for (int b = 0; b < 4; b++) cr_assert_eq(got[b], want, "%zu bytes, block %d", sizes[t], b);
  }
  int dyn = 0;
  CHECK(gcl_kernel_attribute(k, GCL_KERNEL_MAX_DYNAMIC_SHARED_BYTES, &dyn));
  cr_assert_eq((size_t)dyn, bytes, "the opt-in is remembered at its highest value");
  gcl_args_destroy(args);
  CHECK(gcl_mem_free(ctx, out));
  gcl_module_destroy(m);
}

Test(launch, shared_memory_over_48k) { shared_memory(false); }
Test(launch, shared_memory_over_48k_extra) { shared_memory(true); }

static void cluster(unsigned grid, unsigned size) {
  gcl_module *m = load("launchcfg.fatbin");
  gcl_kernel *k = get(m, "cfg_cluster", "u32* out", false);
  uint64_t out;
  CHECK(gcl_mem_alloc(ctx, grid * sizeof(unsigned), &out));
  CHECK(gcl_mem_fill_u8(ctx, out, 0xcd, grid * sizeof(unsigned)));
  gcl_args *args = out_args(k, out);
  gcl_launch_config cfg = {.grid = {grid}, .block = {32}, .cluster = {size}};
  CHECK(gcl_launch(k, &cfg, args));
  CHECK(gcl_context_synchronize(ctx));
  unsigned got[64];
  CHECK(gcl_mem_download(ctx, got, out, grid * sizeof(unsigned)));
  for (unsigned b = 0; b < grid; b++)
    cr_assert_eq(got[b], (b % size) | size << 16, "block %u: 0x%x", b, got[b]);
  gcl_args_destroy(args);
  CHECK(gcl_mem_free(ctx, out));
  gcl_module_destroy(m);
}

Test(launch, clusters) {
  if (gcl_context_sm(ctx) < 90) cr_skip_test("clusters need sm_90");
  cluster(8, 2);
  cluster(16, 8);
  cluster(32, 16); /* non-portable: opted in automatically */
}

Test(launch, attributes_cooperative_pdl_priority) {
  gcl_module *m = load("launchcfg.fatbin");
  gcl_kernel *k = get(m, "cfg_add", "u32* out, u32 add", false);
  uint64_t out;
  CHECK(gcl_mem_alloc(ctx, 4 * sizeof(unsigned), &out));
  CHECK(gcl_mem_fill_u8(ctx, out, 0, 4 * sizeof(unsigned)));
  gcl_args *args = out_args(k, out);
  CHECK(gcl_args_set_u32(args, 1, 3));
  CUstream stream;
  CU(gcl__cu.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  CHECK(gcl_context_synchronize(ctx)); /* the fill ran on the legacy stream */
  /* PDL first: with nothing before it on the stream, it cannot overlap a predecessor. The
   * kernel does not wait with griddepcontrol.wait, so the launch is refused by name unless
   * GCL_LAUNCH_PDL_UNCHECKED says the caller knows (docs/launchsafety.md). */
  gcl_launch_config cfg = {.grid = {4}, .block = {64}, .stream = stream,
                           .programmatic_dependent_launch = true};
  cr_expect_eq(gcl_launch(k, &cfg, args), GCL_ERROR_INVALID_CONFIG);
  cr_expect(strstr(gcl_last_error(), "never executes griddepcontrol.wait"), "%s", gcl_last_error());
  cfg.flags = GCL_LAUNCH_PDL_UNCHECKED;
  CHECK(gcl_launch(k, &cfg, args));
  cfg = (gcl_launch_config){.grid = {4}, .block = {64}, .stream = stream, .cooperative = true};
  CHECK(gcl_launch(k, &cfg, args));
  cfg = (gcl_launch_config){.grid = {4}, .block = {64}, .stream = stream, .priority = -1};
  CHECK(gcl_launch(k, &cfg, args));
  CU(gcl__cu.cuStreamSynchronize(stream));
  unsigned got[4];
  CHECK(gcl_mem_download(ctx, got, out, sizeof got));
  for (int b = 0; b < 4; b++) cr_assert_eq(got[b], 9u, "block %d", b);
  CU(gcl__cu.cuStreamDestroy(stream));
  gcl_args_destroy(args);
  CHECK(gcl_mem_free(ctx, out));
  gcl_module_destroy(m);
}

/* cfg_noparams counts its runs in the module global cfg_noparams_runs (read through the
 * driver's own cuLibraryGetGlobal, from the libcuda.so.1 gclaunch opened): one launch of one
 * thread adds exactly 1, in both launch modes. */
Test(launch, kernel_without_parameters) {
  gcl_module *m = load("launchcfg.fatbin");
  void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  cr_assert_not_null(cuda, "libcuda.so.1 is not loaded: %s", dlerror());
  CUresult (*get_global)(CUdeviceptr *, size_t *, CUlibrary, const char *) =
      (CUresult(*)(CUdeviceptr *, size_t *, CUlibrary, const char *))dlsym(cuda, "cuLibraryGetGlobal");
  cr_assert_not_null(get_global, "no cuLibraryGetGlobal in libcuda.so.1");
  CUdeviceptr runs = 0;
  size_t bytes = 0;
  CU(get_global(&runs, &bytes, (CUlibrary)gcl_module_cu_library(m), "cfg_noparams_runs"));
  cr_assert_eq(bytes, sizeof(unsigned));
  for (int extra = 0; extra < 2; extra++) {
    gcl_kernel *k = get(m, "cfg_noparams", "", extra);
    gcl_args *args = NULL;
    CHECK(gcl_args_create(gcl_kernel_layout(k), &args));
    CHECK(gcl_mem_fill_u8(ctx, (uint64_t)runs, 0, sizeof(unsigned)));
    gcl_launch_config cfg = one_thread();
    CHECK(gcl_launch(k, &cfg, args));
    CHECK(gcl_context_synchronize(ctx));
    unsigned got = 0;
    CHECK(gcl_mem_download(ctx, &got, (uint64_t)runs, sizeof got));
    cr_assert_eq(got, 1, "mode %d: the kernel ran %u times, expected once", extra, got);
    gcl_args_destroy(args);
  }
  dlclose(cuda);
  gcl_module_destroy(m);
}

/* --- graphs ------------------------------------------------------------------------------------- */

static void graph(bool extra) {
  gcl_module *m = load("launchcfg.fatbin");
  gcl_kernel *k = get(m, "cfg_add", "u32* out, u32 add", extra);
  gcl_kernel *other = get(m, "cfg_bounded", "u32* out", extra);
  uint64_t out;
  CHECK(gcl_mem_alloc(ctx, 2 * sizeof(unsigned), &out));
  CHECK(gcl_mem_fill_u8(ctx, out, 0, 2 * sizeof(unsigned)));
  gcl_args *args = out_args(k, out), *args2 = out_args(k, out);
  CHECK(gcl_args_set_u32(args, 1, 1));
  CHECK(gcl_args_set_u32(args2, 1, 5));
  CHECK(gcl_context_synchronize(ctx)); /* the fill ran on the legacy stream */
  gcl_stream *s;
  gcl_graph *g;
  CHECK(gcl_stream_create(ctx, 0, &s));
  CHECK(gcl_graph_capture_begin(s));
  gcl_launch_config cfg = {.grid = {2}, .block = {32}, .stream = gcl_stream_handle(s)};
  CHECK(gcl_launch(k, &cfg, args));
  CHECK(gcl_graph_capture_end(s, &g));
  CHECK(gcl_args_set_u32(args, 1, 100)); /* the captured values were copied */
  CHECK(gcl_graph_launch(g, s));
  CHECK(gcl_stream_synchronize(s));
  unsigned got[2];
  CHECK(gcl_mem_download(ctx, got, out, sizeof got));
  cr_assert(got[0] == 1 && got[1] == 1, "after replay 1: %u %u", got[0], got[1]);
  size_t count = 0;
  CHECK(gcl_graph_kernel_count(g, &count));
  cr_assert_eq(count, 1);
  gcl_args *other_args = out_args(other, out);
  cr_assert_eq(gcl_graph_set_args(g, 0, other, other_args), GCL_ERROR_INVALID_ARGUMENT);
  HAS("another kernel");
  CHECK(gcl_graph_set_args(g, 0, k, args2));
  gcl_args_destroy(args2); /* the driver copied the values */
  CHECK(gcl_graph_launch(g, s));
  CHECK(gcl_stream_synchronize(s));
  CHECK(gcl_mem_download(ctx, got, out, sizeof got));
  cr_assert(got[0] == 6 && got[1] == 6, "after replay 2 with add = 5: %u %u", got[0], got[1]);
  gcl_graph_destroy(g);
  gcl_stream_destroy(s);
  gcl_args_destroy(args), gcl_args_destroy(other_args);
  CHECK(gcl_mem_free(ctx, out));
  gcl_module_destroy(m);
}

Test(launch, graph_capture_and_node_args) { graph(false); }
Test(launch, graph_capture_and_node_args_extra) { graph(true); }

/* --- which context a launch runs in ---------------------------------------------------------- */

/* gcl_launch binds the kernel's context only when the driver refuses the launch without it.
 * The oracle is the driver: the same launch made raw in the same state first. On the H200
 * (driver 580) a launch on a stream of the kernel's context runs there with another context
 * current, and the caller's context then stays current; on the default stream the driver
 * refuses (201 with none, 400 with another) and the kernel's context becomes current; a stream
 * of another context fails with the driver's error and the caller's context current again. A
 * second context of the same device (cuCtxCreate, which gclaunch itself never calls) plays
 * "another context". */
typedef CUresult (*ctx_create_fn)(CUcontext *, CUctxCreateParams *, unsigned, CUdevice);
typedef CUresult (*ctx_destroy_fn)(CUcontext);
typedef CUresult (*ctx_pop_fn)(CUcontext *);

static CUcontext current(void) {
  CUcontext c = NULL;
  CU(gcl__cu.cuCtxGetCurrent(&c));
  return c;
}

/* out[0..16) as the device has it, read in ctx; the caller's context made current again. */
static void expect_sum(uint64_t out, uint32_t want, CUcontext before, const char *what) {
  uint32_t got[16];
  CHECK(gcl_context_synchronize(ctx));
  CHECK(gcl_mem_download(ctx, got, out, sizeof got));
  for (int i = 0; i < 16; i++)
    cr_assert_eq(got[i], want, "%s: block %d's word is %u, expected %u", what, i, got[i], want);
  CU(gcl__cu.cuCtxSetCurrent(before));
}

Test(launch, the_launch_runs_in_the_kernels_context_whatever_is_current) {
  void *libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  cr_assert(libcuda, "libcuda.so.1 is loaded");
  ctx_create_fn create = (ctx_create_fn)dlsym(libcuda, "cuCtxCreate_v4");
  ctx_destroy_fn destroy = (ctx_destroy_fn)dlsym(libcuda, "cuCtxDestroy_v2");
  ctx_pop_fn pop = (ctx_pop_fn)dlsym(libcuda, "cuCtxPopCurrent_v2");
  cr_assert(create && destroy && pop, "cuCtxCreate_v4, cuCtxDestroy_v2, cuCtxPopCurrent_v2 found");
  gcl_module *m = load("launchcfg.fatbin");
  gcl_kernel *k = NULL;
  CHECK(gcl_module_find_kernel(m, "cfg_add", "u32* out, u32 add", &k));
  gcl_args *args = NULL;
  CHECK(gcl_args_create(gcl_kernel_layout(k), &args));
  uint64_t out;
  CHECK(gcl_mem_alloc(ctx, 16 * 4, &out));
  CHECK(gcl_mem_fill_u8(ctx, out, 0, 16 * 4));
  CHECK(gcl_args_set_ptr(args, 0, out));
  gcl_stream *own = NULL;
  CHECK(gcl_stream_create(ctx, 0, &own));
  CHECK(gcl_context_bind(ctx));
  CUcontext mine = current(), other = NULL;
  CUdevice dev;
  CU(gcl__cu.cuDeviceGet(&dev, 0));
  CU(create(&other, NULL, 0, dev)); /* pushed onto the thread's context stack: current */
  CUstream foreign = NULL;
  CU(gcl__cu.cuStreamCreate(&foreign, CU_STREAM_NON_BLOCKING)); /* a stream of `other` */
  /* Popped again: with it left on the stack under a NULL top, the H200's driver made the
   * primary context current during a launch once (seen, driver 580). */
  CUcontext popped = NULL;
  CU(pop(&popped));
  cr_assert_eq(popped, other);
  CUcontext callers[2] = {NULL, other};
  uint32_t sum = 0;
  for (int c = 0; c < 2; c++) {
    const char *who = c ? "another context" : "no context";
    CUcontext before = callers[c];
    uint32_t add = 1 + rnd(1000);
    CHECK(gcl_args_set_u32(args, 1, add));
    gcl_launch_config cfg = {.grid = {16}, .block = {32}, .stream = gcl_stream_handle(own)};
    /* The oracle: the raw driver's own answer to this launch in this state. */
    CU(gcl__cu.cuCtxSetCurrent(before));
    CUlaunchConfig raw = {16, 1, 1, 32, 1, 1, 0, (CUstream)cfg.stream, NULL, 0};
    CUresult rc = gcl__cu.cuLaunchKernelEx(&raw, k->fn, gcl__args_param_pointers(args), NULL);
    CUcontext after_raw = current();
    cr_log_info("%s current, the kernel's stream: the driver says %s", who, gcl__cu_error_name(rc));
    if (rc == CUDA_SUCCESS) expect_sum(out, sum += add, before, "the raw launch");
    CU(gcl__cu.cuCtxSetCurrent(before));
    CHECK(gcl_launch(k, &cfg, args));
    cr_assert_eq(current(), rc == CUDA_SUCCESS ? after_raw : mine, "%s current, the kernel's "
                 "stream: %s", who, rc == CUDA_SUCCESS ? "the driver accepts the launch, and the "
                 "current context is what the driver's own launch leaves" : "the driver refused, "
                 "the kernel's context is made current");
    expect_sum(out, sum += add, before, "the kernel's stream");
    cfg.stream = NULL;
    CHECK(gcl_launch(k, &cfg, args));
    cr_assert_eq(current(), mine, "%s current, the default stream: the kernel's context is made "
                 "current", who);
    expect_sum(out, sum += add, before, "the default stream");
    cfg.stream = foreign;
    cr_assert_neq(gcl_launch(k, &cfg, args), GCL_OK, "%s current: a stream of another context "
                  "is refused", who);
    HAS("cuLaunchKernelEx(kernel 'cfg_add'");
    cr_assert_eq(current(), before, "%s current: the failed launch left it current", who);
    expect_sum(out, sum, before, "after the refused launch");
  }
  CU(gcl__cu.cuCtxSetCurrent(other));
  CU(gcl__cu.cuStreamDestroy(foreign));
  CU(destroy(other));
  CHECK(gcl_context_bind(ctx));
  gcl_stream_destroy(own);
  CHECK(gcl_mem_free(ctx, out));
  gcl_args_destroy(args);
  gcl_module_destroy(m);
}
