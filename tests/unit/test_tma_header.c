/* The kernel-side headers through NVRTC on the CPU (no GPU): gcl_nvrtc_compile, with no option
 * and no include path, compiles kernels/tma_tile.cu (docs/tensormaps.md's kernel: maps from a
 * grid-constant struct, a TMA load and a store through <gclaunch/tma.cuh>) and a table kernel
 * through <gclaunch/tmap_table.cuh>. Oracles: the cubin's own parameter record against
 * the layout engine's `tensormap` (the header's gcl_tmap must be laid out as the host packs it),
 * and the PTX NVRTC writes (the load, the store, the fences are there). tests/gpu/test_tma_header.c
 * runs the kernel. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/image_test_util.h"

static void *compile(const char *src, const char *arch_option, int sm, size_t *n) {
  void *image = NULL;
  const char *opts[] = {arch_option};
  gcl_status s = gcl_nvrtc_compile(src, "tma_test.cu", opts, arch_option ? 1 : 0, sm, &image, n);
  if (s == GCL_ERROR_NO_NVRTC) GCL_SKIP_NO_NVRTC("NVRTC not available: %s", gcl_last_error());
  cr_assert_eq(s, GCL_OK, "%s: %s", gcl_status_name(s), gcl_last_error());
  return image;
}

static char *tma_tile_source(void) {
  size_t n;
  char *src = (char *)itu_read_file(GCL_SOURCE("kernels/tma_tile.cu"), &n);
  cr_assert_not_null(src, "cannot read %s", GCL_SOURCE("kernels/tma_tile.cu"));
  return src;
}

Test(tma_header, nvrtc_lays_out_the_headers_map_struct_as_the_host_packs_tensormap) {
  char *src = tma_tile_source();
  static const int sms[] = {90, 100, 120};
  for (size_t i = 0; i < sizeof sms / sizeof *sms; i++) {
    size_t n;
    void *cubin = compile(src, NULL, sms[i], &n);
    gcl_image *img;
    cr_assert_eq(gcl_image_parse(cubin, n, 0, &img), GCL_OK, "%s", gcl_last_error());
    size_t k, off, size, align;
    cr_assert_eq(gcl_image_find_kernel(img, "tma_tile_add1", &k), GCL_OK);
    cr_assert_eq(gcl_image_param(img, k, 0, &off, &size, &align), GCL_OK);
    gcl_signature *sig;
    gcl_layout *l;
    cr_assert_eq(gcl_signature_parse("grid_constant struct{tensormap[2] maps, u32 tiles_x} p", &sig), GCL_OK);
    cr_assert_eq(gcl_layout_create(sig, sms[i], &l), GCL_OK, "%s", gcl_last_error());
    size_t loff, lsize, lalign;
    cr_assert_eq(gcl_layout_param(l, 0, &loff, &lsize, &lalign), GCL_OK);
    cr_expect_eq(off, loff, "sm_%d: cubin offset %zu, layout %zu", sms[i], off, loff);
    cr_expect_eq(size, lsize, "sm_%d: cubin size %zu, layout %zu", sms[i], size, lsize);
    gcl_layout_destroy(l);
    gcl_signature_destroy(sig);
    gcl_image_destroy(img);
    gcl_file_free(cubin);
  }
  free(src);
}

Test(tma_header, nvrtc_writes_the_load_the_store_and_the_fences) {
  char *src = tma_tile_source();
  size_t n;
  char *ptx = compile(src, "-arch=compute_90", 90, &n);
  static const char *want[] = {
      "mbarrier.init.shared::cta.b64", "fence.mbarrier_init.release.cluster",
      "mbarrier.arrive.expect_tx.shared::cta.b64",
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
      "mbarrier.try_wait.parity.shared::cta.b64", "fence.proxy.async.shared::cta",
      "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group", "cp.async.bulk.commit_group",
      "cp.async.bulk.wait_group 0", "prefetch.tensormap"};
  for (size_t i = 0; i < sizeof want / sizeof *want; i++)
    cr_expect_not_null(strstr(ptx, want[i]), "no '%s' in the PTX", want[i]);
  gcl_file_free(ptx);
  free(src);
}

Test(tma_header, the_table_header_and_every_helper_compile_through_nvrtc) {
  static const char src[] =
      "#include <gclaunch/tmap_table.cuh>\n"
      "extern \"C\" __global__ void t(const gcl_tmap *table, const __grid_constant__ gcl_tmap tmpl,\n"
      "    const unsigned long long *addrs, gcl_tmap *slots, float *out) {\n"
      "  __shared__ alignas(128) float a[8][32];\n"
      "  __shared__ alignas(128) float b[4][8][32];\n"
      "  __shared__ alignas(8) unsigned long long bar;\n"
      "  __shared__ gcl_tmap staged;\n"
      "  gcl_tmap_table_acquire_all(table, 4);\n"
      "  if (threadIdx.x == 0) {\n"
      "    gcl_mbar_init(&bar, 1); gcl_fence_mbar_init();\n"
      "    staged = tmpl; gcl_tmap_make(&staged, addrs[0], &slots[blockIdx.x]);\n"
      "    gcl_mbar_expect_tx(&bar, sizeof a + sizeof b + 128);\n"
      "    gcl_tma_load_1d(a, gcl_tmap_table_acquire(table, 1), 0, &bar);\n"
      "    gcl_tma_load_2d(a, &slots[blockIdx.x], 0, 0, &bar);\n"
      "    gcl_tma_load_3d(b, &tmpl, 0, 0, 0, &bar);\n"
      "  }\n"
      "  gcl_mbar_wait(&bar, 0);\n"
      "  out[threadIdx.x] = a[0][threadIdx.x % 32] + b[1][0][threadIdx.x % 32];\n"
      "}\n";
  size_t n;
  void *cubin = compile(src, "-arch=sm_90a", 90, &n);  /* tensormap.replace: arch-specific */
  cr_expect_gt(n, 0);
  gcl_file_free(cubin);
  /* Before sm_90 only the type is there: a kernel that merely passes maps compiles. */
  static const char old[] = "#include <gclaunch/tma.cuh>\n"
                            "extern \"C\" __global__ void o(const __grid_constant__ gcl_tmap m, int *out)"
                            " { out[0] = (int)sizeof m + (int)alignof(gcl_tmap); }\n";
  cubin = compile(old, NULL, 80, &n);
  gcl_file_free(cubin);
  /* The 0.3 name of the table header still resolves (forwarding) through NVRTC. */
  static const char renamed[] = "#include <gclaunch/gclaunch_tmap_table.cuh>\n"
                                "extern \"C\" __global__ void r(const gcl_tmap *table, int *out)"
                                " { out[0] = (int)(gcl_tmap_table_acquire(table, 1) - table); }\n";
  cubin = compile(renamed, NULL, 90, &n);
  cr_expect_gt(n, 0);
  gcl_file_free(cubin);
}

/* Every rank 1 ... 5 has a load and a store (issue 55: rank 4-5 were missing, and the only store
 * was 2-D): the same text through NVRTC, each PTX form there once. */
Test(tma_header, every_rank_has_a_load_and_a_store) {
  static const char src[] =
      "#include <gclaunch/tma.cuh>\n"
      "struct P { gcl_tmap m[5]; };\n"
      "extern \"C\" __global__ void all_ranks(const __grid_constant__ P p, int c) {\n"
      "  __shared__ alignas(128) float tile[1024];\n"
      "  __shared__ alignas(8) unsigned long long bar;\n"
      "  if (threadIdx.x == 0) { gcl_mbar_init(&bar, 1); gcl_fence_mbar_init(); }\n"
      "  __syncthreads();\n"
      "  if (threadIdx.x == 0) {\n"
      "    gcl_mbar_expect_tx(&bar, 5 * 64);\n"
      "    gcl_tma_load_1d(tile, &p.m[0], c, &bar);\n"
      "    gcl_tma_load_2d(tile + 128, &p.m[1], c, 1, &bar);\n"
      "    gcl_tma_load_3d(tile + 256, &p.m[2], c, 1, 2, &bar);\n"
      "    gcl_tma_load_4d(tile + 384, &p.m[3], c, 1, 2, 3, &bar);\n"
      "    gcl_tma_load_5d(tile + 512, &p.m[4], c, 1, 2, 3, 4, &bar);\n"
      "  }\n"
      "  gcl_mbar_wait(&bar, 0);\n"
      "  gcl_fence_proxy_async();\n"
      "  __syncthreads();\n"
      "  if (threadIdx.x == 0) {\n"
      "    gcl_tma_store_1d(&p.m[0], c, tile);\n"
      "    gcl_tma_store_2d(&p.m[1], c, 1, tile + 128);\n"
      "    gcl_tma_store_3d(&p.m[2], c, 1, 2, tile + 256);\n"
      "    gcl_tma_store_4d(&p.m[3], c, 1, 2, 3, tile + 384);\n"
      "    gcl_tma_store_5d(&p.m[4], c, 1, 2, 3, 4, tile + 512);\n"
      "    gcl_tma_store_commit(); gcl_tma_store_wait();\n"
      "  }\n"
      "}\n";
  size_t n;
  char *ptx = compile(src, "-arch=compute_90", 90, &n);
  for (int rank = 1; rank <= 5; rank++) {
    char load[128], store[128];
    snprintf(load, sizeof load, "cp.async.bulk.tensor.%dd.shared::cluster.global.tile.mbarrier::"
             "complete_tx::bytes", rank);
    snprintf(store, sizeof store, "cp.async.bulk.tensor.%dd.global.shared::cta.tile.bulk_group", rank);
    cr_expect_not_null(strstr(ptx, load), "no rank-%d load in the PTX", rank);
    cr_expect_not_null(strstr(ptx, store), "no rank-%d store in the PTX", rank);
  }
  gcl_file_free(ptx);
  void *cubin = compile(src, NULL, 90, &n); /* and ptxas takes every form */
  cr_expect_gt(n, 0);
  gcl_file_free(cubin);
}
