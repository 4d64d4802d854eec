/* The one table of architectures (lib/core/arch.c), against its oracles: NVRTC's own list of the
 * architectures it builds, the parameter offsets of the cubins it writes for each (where the base
 * puts a first 128-aligned parameter), and griddepcontrol.wait read from their SASS; and what its
 * three users do with it (layout engine, cubin reader, the tool's shared-memory check through
 * tests/cli). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "arch.h"
#include "../common/image_test_util.h"
#include "internal.h"

Test(arch, the_table_is_sorted_and_every_row_is_known_to_the_layout_engine) {
  size_t n;
  const gcl__arch *a = gcl__arch_all(&n);
  cr_assert_gt(n, 0);
  for (size_t i = 0; i < n; i++) {
    if (i) cr_expect_gt(a[i].sm, a[i - 1].sm, "row %zu: sm_%d after sm_%d", i, a[i].sm, a[i - 1].sm);
    cr_expect(a[i].param_base == 0x160 || a[i].param_base == 0x210 || a[i].param_base == 0x380,
              "sm_%d: base 0x%x", a[i].sm, a[i].param_base);
    cr_expect(gcl__sm_known(a[i].sm));
    cr_expect_eq(gcl__arch_find(a[i].sm), &a[i]);
    cr_expect_eq(gcl__param_base(a[i].sm, 0), a[i].param_base, "sm_%d", a[i].sm);
  }
  cr_expect_null(gcl__arch_find(95));
  cr_expect_null(gcl__arch_find(70));
}

Test(arch, an_unknown_architecture_is_refused_naming_the_table) {
  size_t n;
  const gcl__arch *a = gcl__arch_all(&n);
  char want[256] = "unknown architecture sm_95 (known: ";
  for (size_t i = 0; i < n; i++)
    snprintf(want + strlen(want), sizeof want - strlen(want), "%s%d", i ? ", " : "", a[i].sm);
  strcat(want, ")");
  gcl_signature *sig;
  gcl_layout *l = NULL;
  cr_assert_eq(gcl_signature_parse("u32 n", &sig), GCL_OK);
  cr_expect_eq(gcl_layout_create(sig, 95, &l), GCL_ERROR_INVALID_ARGUMENT);
  cr_expect_null(l);
  cr_expect_str_eq(gcl_last_error(), want);
  gcl_signature_destroy(sig);
  char small[8];
  cr_expect_str_eq(gcl__arch_list(small, sizeof small), "75, 80,"); /* cut as snprintf cuts */
}

/* The public view (gcl_arch_query, gcl_arch_list: the tool's and the bench's way in) gives every
 * row as the table has it, and refuses an unknown architecture naming the known ones. */
Test(arch, the_public_query_is_the_table) {
  size_t n;
  const gcl__arch *a = gcl__arch_all(&n);
  cr_assert_eq(gcl_arch_list(NULL, 0), n);
  int sms[64];
  cr_assert_leq(n, 64);
  cr_assert_eq(gcl_arch_list(sms, 2), n);
  cr_assert_eq(gcl_arch_list(sms, 64), n);
  for (size_t i = 0; i < n; i++) {
    gcl_arch_info info;
    memset(&info, 0xff, sizeof info);
    cr_assert_eq(sms[i], a[i].sm);
    cr_assert_eq(gcl_arch_query(a[i].sm, &info), GCL_OK, "%s", gcl_last_error());
    cr_expect_eq(info.sm, a[i].sm);
    cr_expect_eq(info.param_base, a[i].param_base);
    cr_expect_eq(info.sass_wait_known, a[i].sass_wait_known);
    cr_expect_eq((long)info.shared_optin_bytes, a[i].shared_optin);
    for (int r = 0; r < 4; r++) cr_expect_eq(info.reserved[r], 0, "reserved[%d] not zeroed", r);
  }
  gcl_arch_info info;
  cr_assert_eq(gcl_arch_query(95, &info), GCL_ERROR_NOT_FOUND);
  cr_expect(strstr(gcl_last_error(), "sm 95") && strstr(gcl_last_error(), "75, 80"), "%s",
            gcl_last_error());
  cr_assert_eq(gcl_arch_query(90, NULL), GCL_ERROR_INVALID_ARGUMENT);
}

Test(arch, the_table_is_the_list_nvrtc_builds) {
  itu_require_nvrtc();
  int nv[64];
  size_t m = itu_nvrtc_archs(nv, 64), n;
  const gcl__arch *a = gcl__arch_all(&n);
  cr_expect_eq(m, n, "NVRTC builds %zu architectures, the table has %zu", m, n);
  for (size_t i = 0; i < m && i < n; i++) cr_expect_eq(nv[i], a[i].sm, "entry %zu", i);
}

/* Compiles src for sm with NVRTC and parses the cubin. */
static gcl_image *compile(const char *src, int sm) {
  unsigned char *cubin = NULL;
  size_t cubin_n = 0;
  char *log = NULL;
  nvrtcResult r = itu_nvrtc_compile(src, sm, &cubin, &cubin_n, NULL, &log);
  cr_assert_eq(r, NVRTC_SUCCESS, "sm_%d: %s", sm, log ? log : "");
  gcl_image *img = NULL;
  cr_assert_eq(gcl_image_parse(cubin, cubin_n, 0, &img), GCL_OK, "sm_%d: %s", sm, gcl_last_error());
  free(cubin);
  return img;
}

Test(arch, each_rows_base_places_a_first_128_aligned_parameter_where_nvrtcs_cubin_does) {
  itu_require_nvrtc();
  static const char src[] = "struct alignas(128) M { char b[128]; };\n"
                            "extern \"C\" __global__ void k(const __grid_constant__ M m) {}\n";
  size_t n;
  const gcl__arch *a = gcl__arch_all(&n);
  for (size_t i = 0; i < n; i++) {
    gcl_image *img = compile(src, a[i].sm);
    size_t off, size, align;
    cr_assert_eq(gcl_image_param(img, 0, 0, &off, &size, &align), GCL_OK);
    cr_expect_eq(off, (128 - a[i].param_base % 128) % 128, "sm_%d: base 0x%x, cubin offset %zu",
                 a[i].sm, a[i].param_base, off);
    gcl_image_destroy(img);
  }
}

Test(arch, rows_with_a_known_wait_encoding_read_the_wait_from_nvrtcs_sass) {
  itu_require_nvrtc();
  static const char src[] =
      "extern \"C\" __global__ void w(int *p) {\n"
      "#if __CUDA_ARCH__ >= 900\n  asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");\n#endif\n"
      "  *p = 1; }\n"
      "extern \"C\" __global__ void nw(int *p) { *p = 2; }\n";
  size_t n;
  const gcl__arch *a = gcl__arch_all(&n);
  for (size_t i = 0; i < n; i++) {
    gcl_image *img = compile(src, a[i].sm);
    size_t w, nw;
    cr_assert_eq(gcl_image_find_kernel(img, "w", &w), GCL_OK);
    cr_assert_eq(gcl_image_find_kernel(img, "nw", &nw), GCL_OK);
    int want_w = a[i].sm < 90 ? 0 : a[i].sass_wait_known ? 1 : -1;
    int want_nw = a[i].sm < 90 ? 0 : a[i].sass_wait_known ? 0 : -1;
    cr_expect_eq(gcl_image_kernel_waits(img, w), want_w, "sm_%d: w", a[i].sm);
    cr_expect_eq(gcl_image_kernel_waits(img, nw), want_nw, "sm_%d: nw", a[i].sm);
    gcl_image_destroy(img);
  }
}
