/* One NVSHMEM PE on one GPU (tests/gpu/test_nvshmem.sh builds the kernel on the runner from the
 * NVSHMEM wheel and runs this with GCL_NVSHMEM_CUBIN, GCL_NVSHMEM_PATH, NVSHMEM_DISABLE_NVLS=1
 * and NVSHMEM_REMOTE_TRANSPORT=none): start a single PE, read the module as NVSHMEM's, refuse
 * its unattached launch, attach, put to itself under a cooperative launch, and gather tiles of
 * its own symmetric buffer through peer tensor maps picked by run-time index. Each test is its
 * own process (Criterion), so each starts and stops its own PE. */
#include "gpu_main.c"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call) cr_assert_eq((call), GCL_OK, "%s: %s", #call, gcl_last_error())

typedef struct pe_rig {
  gcl_context *ctx;
  gcl_module *mod;
} pe_rig;

static void start(pe_rig *r) {
  memset(r, 0, sizeof *r);
  const char *cubin = getenv("GCL_NVSHMEM_CUBIN");
  cr_assert(cubin && *cubin, "GCL_NVSHMEM_CUBIN is not set: run tests/gpu/test_nvshmem.sh");
  CHECK(gcl_context_create(0, &r->ctx));
  CHECK(gcl_pe_start(r->ctx, NULL, 0, 1));
  CHECK(gcl_module_load_file(r->ctx, cubin, &r->mod));
}

static void stop(pe_rig *r) {
  gcl_module_destroy(r->mod); /* detaches first */
  CHECK(gcl_pe_stop());
  gcl_context_destroy(r->ctx);
}

Test(nvshmem_gpu, the_loader_found_the_host_library_the_module_was_linked_against) {
  int h[3], d[3];
  CHECK(gcl_nvshmem_version(&h[0], &h[1], &h[2]));
  cr_log_info("NVSHMEM host library %s, version %d.%d.%d", gcl_nvshmem_path(), h[0], h[1], h[2]);
  void *data;
  size_t size;
  gcl_image *img = NULL;
  CHECK(gcl_file_read(getenv("GCL_NVSHMEM_CUBIN"), &data, &size));
  CHECK(gcl_image_parse(data, size, 0, &img));
  cr_assert_eq(gcl_image_uses_nvshmem(img), 1, "a device-linked cubin defines nvshmemi_device_state_d");
  CHECK(gcl_image_nvshmem_version(img, &d[0], &d[1], &d[2]));
  cr_assert(d[0] == h[0] && d[1] == h[1] && d[2] == h[2], "device library %d.%d.%d, host %d.%d.%d",
            d[0], d[1], d[2], h[0], h[1], h[2]);
  gcl_image_destroy(img);
  gcl_file_free(data);
}

Test(nvshmem_gpu, a_kernel_puts_to_itself_under_a_cooperative_launch_once_attached) {
  pe_rig r;
  start(&r);
  cr_assert_eq(gcl_module_uses_nvshmem(r.mod), 1);
  int pe = -1, n = -1;
  CHECK(gcl_pe_id(&pe));
  CHECK(gcl_pe_count(&n));
  cr_assert(pe == 0 && n == 1);
  gcl_kernel *k = NULL;
  CHECK(gcl_module_find_kernel(r.mod, "put_ring", "i32* dst, i32* info, i32 shift", &k));
  unsigned grid = 0;
  CHECK(gcl_kernel_max_cooperative_grid(k, 128, 0, &grid));
  grid = grid < 8 ? grid : 8;
  size_t count = (size_t)grid * 128;
  uint64_t dst = 0, info = 0;
  CHECK(gcl_symmetric_alloc(count * sizeof(int), &dst));
  CHECK(gcl_mem_alloc(r.ctx, 2 * sizeof(int), &info));
  CHECK(gcl_mem_fill_u8(r.ctx, info, 0xff, 2 * sizeof(int)));
  gcl_args *a = NULL;
  CHECK(gcl_args_create(gcl_kernel_layout(k), &a));
  CHECK(gcl_args_set_ptr(a, 0, dst));
  CHECK(gcl_args_set_ptr(a, 1, info));
  CHECK(gcl_args_set_i32(a, 2, 0));
  gcl_launch_config c = {.grid = {grid}, .block = {128}, .cooperative = true};
  cr_assert_eq(gcl_launch(k, &c, a), GCL_ERROR_NOT_ATTACHED, "%s", gcl_last_error());
  cr_assert(strstr(gcl_last_error(), "put_ring") != NULL, "%s", gcl_last_error());
  CHECK(gcl_context_synchronize(r.ctx)); /* the refusal never reached the device */
  CHECK(gcl_module_attach(r.mod));
  CHECK(gcl_launch(k, &c, a));
  CHECK(gcl_context_synchronize(r.ctx));
  int *got = calloc(count, sizeof *got), pe_info[2];
  CHECK(gcl_mem_download(r.ctx, got, dst, count * sizeof(int)));
  CHECK(gcl_mem_download(r.ctx, pe_info, info, sizeof pe_info));
  for (size_t i = 0; i < count; i++) cr_assert_eq(got[i], (int)(3 * i + 1), "element %zu", i);
  cr_assert(pe_info[0] == 0 && pe_info[1] == 1, "the kernel saw PE %d of %d", pe_info[0], pe_info[1]);
  CHECK(gcl_pe_barrier(NULL));
  CHECK(gcl_context_synchronize(r.ctx));
  cr_assert_eq(gcl_pe_stop(), GCL_ERROR_NVSHMEM, "stop while attached");
  free(got);
  gcl_args_destroy(a);
  CHECK(gcl_symmetric_free(dst));
  CHECK(gcl_mem_free(r.ctx, info));
  stop(&r);
}

/* kernels/tma_gather.cu: "grid_constant tensormap[16] maps, const i32* work, f32* out"; block b
 * loads one 16 x 16 f32 box at (column, row) from maps[work[3b]]. */
Test(nvshmem_gpu, peer_maps_over_its_own_symmetric_buffer_gather_by_run_time_index) {
  pe_rig r;
  start(&r);
  enum { ROWS = 64, COLS = 64, BLOCKS = 4 };
  uint64_t buf = 0, work = 0, out = 0, self = 0;
  CHECK(gcl_symmetric_alloc(ROWS * COLS * sizeof(float), &buf));
  CHECK(gcl_symmetric_peer_address(buf, 0, &self));
  cr_assert_eq(self, buf, "a PE's own copy is its address");
  float *host = malloc(ROWS * COLS * sizeof(float));
  for (int i = 0; i < ROWS * COLS; i++) host[i] = (float)i;
  CHECK(gcl_mem_upload(r.ctx, buf, host, ROWS * COLS * sizeof(float)));
  gcl_module *g = NULL;
  gcl_kernel *k = NULL;
  CHECK(gcl_module_load_file(r.ctx, GCL_KERNEL("tma_gather.sm_90.cubin"), &g));
  CHECK(gcl_module_find_kernel(g, "tma_gather", "grid_constant tensormap[16] maps, const i32* work, f32* out", &k));
  gcl_args *a = NULL;
  CHECK(gcl_args_create(gcl_kernel_layout(k), &a));
  int64_t shape[2] = {ROWS, COLS};
  DLTensor t = {.data = (void *)(uintptr_t)buf, .device = {kDLCUDA, 0}, .ndim = 2,
                .dtype = {kDLFloat, 32, 1}, .shape = shape};
  gcl_tensormap_options o;
  memset(&o, 0, sizeof o);
  o.box[0] = 16, o.box[1] = 16;
  int pes[16] = {0}; /* one PE: every element is this PE's copy */
  gcl_field first;
  CHECK(gcl_layout_field(gcl_kernel_layout(k), "maps[0]", &first));
  CHECK(gcl_args_set_peer_tensormaps(a, &first, &t, pes, 16, &o, 0));
  const int w[3 * BLOCKS] = {5, 16, 8, 0, 0, 0, 15, 48, 48, 9, 32, 16};
  CHECK(gcl_mem_alloc(r.ctx, sizeof w, &work));
  CHECK(gcl_mem_alloc(r.ctx, BLOCKS * 256 * sizeof(float), &out));
  CHECK(gcl_mem_upload(r.ctx, work, w, sizeof w));
  CHECK(gcl_args_set_ptr(a, 1, work));
  CHECK(gcl_args_set_ptr(a, 2, out));
  gcl_launch_config c = {.grid = {BLOCKS}, .block = {128}};
  CHECK(gcl_launch(k, &c, a));
  CHECK(gcl_context_synchronize(r.ctx));
  float got[BLOCKS * 256];
  CHECK(gcl_mem_download(r.ctx, got, out, sizeof got));
  for (int b = 0; b < BLOCKS; b++)
    for (int y = 0; y < 16; y++)
      for (int x = 0; x < 16; x++)
        cr_assert_eq(got[256 * b + 16 * y + x], host[(w[3 * b + 2] + y) * COLS + w[3 * b + 1] + x],
                     "block %d (map %d) tile element (%d, %d)", b, w[3 * b], y, x);
  gcl_args_destroy(a);
  gcl_module_destroy(g);
  free(host);
  CHECK(gcl_mem_free(r.ctx, work));
  CHECK(gcl_mem_free(r.ctx, out));
  CHECK(gcl_symmetric_free(buf));
  stop(&r);
}

/* NVSHMEM 3.4.5 ends the process (exit 255, "allocate_physical_memory_to_heap failed") for these
 * sizes on an 80 GB card: each must be a named refusal, and the PE must go on working. */
Test(nvshmem_gpu, one_TiB_and_2_63_minus_1_are_refused_and_then_1_MiB_works) {
  pe_rig r;
  start(&r);
  const size_t sizes[2] = {(size_t)1 << 40, ((size_t)1 << 63) - 1};
  uint64_t buf = 0xdead;
  for (int i = 0; i < 2; i++) {
    cr_assert_eq(gcl_symmetric_alloc(sizes[i], &buf), GCL_ERROR_OUT_OF_MEMORY, "%zu: %s", sizes[i],
                 gcl_last_error());
    cr_log_info("gcl_symmetric_alloc(%zu) refused: %s", sizes[i], gcl_last_error());
  }
  cr_assert_eq(buf, 0xdead, "untouched on failure");
  CHECK(gcl_symmetric_alloc((size_t)1 << 20, &buf));
  CHECK(gcl_mem_fill_u8(r.ctx, buf, 0x5a, (size_t)1 << 20));
  unsigned char *host = malloc((size_t)1 << 20);
  CHECK(gcl_mem_download(r.ctx, host, buf, (size_t)1 << 20));
  for (size_t i = 0; i < ((size_t)1 << 20); i++) cr_assert_eq(host[i], 0x5a, "byte %zu", i);
  free(host);
  CHECK(gcl_pe_barrier(NULL));
  CHECK(gcl_context_synchronize(r.ctx));
  CHECK(gcl_symmetric_free(buf));
  stop(&r);
}
