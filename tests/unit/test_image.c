/* gcl_image_* on cubins, fatbins and PTX that nvcc built from kernels/params.cu (and NVRTC built
 * from the same source), checked against the compiler's own records: the cubin values below are
 * what ptxas wrote into .nv.info (k_one's are the ones cuFuncGetParamInfo returned on the H200,
 * docs/facts.md "Placement rule"), and PTX laid out by the engine must equal the cubin of the
 * same architecture. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/image_test_util.h"

typedef struct expect {
  const char *name;
  size_t count, bytes;
  size_t off[4], size[4];
} expect;

/* params.cu as ptxas lays it out on sm_90, kernels in symbol-table order. */
/* gcl_image_param_type as signature text ("u32", "ptr", "bytes(2048) align(128)"), "" when the
 * image gives no types (GCL_ERROR_NOT_FOUND) or the index is out of range. */
static const char *param_type(const gcl_image *img, size_t k, size_t p) {
  static char text[64];
  gcl_param_kind kind;
  gcl_scalar scalar;
  size_t size = 0, align = 0;
  gcl_status s = gcl_image_param_type(img, k, p, &kind, &scalar);
  if (s != GCL_OK) {
    cr_assert(s == GCL_ERROR_NOT_FOUND || s == GCL_ERROR_INVALID_ARGUMENT, "%s", gcl_status_name(s));
    return "";
  }
  cr_assert_eq(gcl_image_param(img, k, p, NULL, &size, &align), GCL_OK);
  if (kind == GCL_PARAM_POINTER) return "ptr";
  if (kind == GCL_PARAM_SCALAR) return gcl_scalar_name(scalar);
  cr_assert_eq(kind, GCL_PARAM_BYTES);
  snprintf(text, sizeof text, "bytes(%zu) align(%zu)", size, align);
  return text;
}

static const expect sm90[] = {
    {"k_none", 0, 0, {0}, {0}},
    {"k_big", 3, 8016, {0, 8000, 8008}, {8000, 4, 8}},
    {"k_structs", 4, 80, {0, 24, 64, 72}, {24, 40, 2, 8}},
    {"k_map64", 2, 184, {48, 176}, {128, 8}},
    {"k_maps", 3, 2176, {112, 2160, 2168}, {2048, 4, 8}},
    {"k_one", 3, 256, {112, 240, 248}, {128, 1, 8}},
};

static void check_kernel(const gcl_image *img, size_t k, const expect *e) {
  gcl_image_kernel_info info;
  cr_assert_eq(gcl_image_kernel(img, k, &info), GCL_OK, "%s", gcl_last_error());
  cr_assert_str_eq(info.name, e->name);
  cr_assert_eq(info.param_count, e->count, "%s: %zu params", e->name, info.param_count);
  cr_assert_eq(info.param_bytes, e->bytes, "%s: %zu bytes", e->name, info.param_bytes);
  for (size_t p = 0; p < e->count; p++) {
    size_t off = 99, size = 99;
    cr_assert_eq(gcl_image_param(img, k, p, &off, &size, NULL), GCL_OK);
    cr_assert_eq(off, e->off[p], "%s param %zu: offset %zu, want %zu", e->name, p, off, e->off[p]);
    cr_assert_eq(size, e->size[p], "%s param %zu: size %zu, want %zu", e->name, p, size,
                 e->size[p]);
  }
}

Test(image, cubin_sm90_records) {
  gcl_image *img = itu_parse_kernel_file("params.sm_90.cubin", 0);
  cr_assert_eq(gcl_image_format(img), GCL_IMAGE_CUBIN);
  cr_assert_str_eq(gcl_format_name(GCL_IMAGE_CUBIN), "cubin");
  cr_assert_eq(gcl_image_sm(img), 90);
  cr_assert_eq(gcl_image_kernel_count(img), sizeof sm90 / sizeof *sm90);
  for (size_t k = 0; k < sizeof sm90 / sizeof *sm90; k++) check_kernel(img, k, &sm90[k]);
  size_t align = 7;
  cr_assert_eq(gcl_image_param(img, 5, 0, NULL, NULL, &align), GCL_OK);
  cr_assert_eq(align, 0, "a cubin does not say a parameter's alignment");
  cr_assert_str_eq(param_type(img, 5, 0), "");
  gcl_param_kind kind = GCL_PARAM_STRUCT;
  cr_assert_eq(gcl_image_param_type(img, 5, 0, &kind, NULL), GCL_ERROR_NOT_FOUND);
  cr_assert(strstr(gcl_last_error(), "gives no parameter types"), "%s", gcl_last_error());
  cr_assert_eq(kind, GCL_PARAM_STRUCT, "a failed call leaves *kind alone");
  cr_assert_eq(gcl_image_param_type(img, 5, 99, NULL, NULL), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl_image_param_type(NULL, 0, 0, NULL, NULL), GCL_ERROR_INVALID_ARGUMENT);
  gcl_image_destroy(img);
}

Test(image, cubin_kernel_attributes) {
  gcl_image *img = itu_parse_kernel_file("params.sm_90.cubin", 0);
  gcl_image_kernel_info big, structs, none;
  cr_assert_eq(gcl_image_kernel(img, 1, &big), GCL_OK);
  cr_assert_eq(gcl_image_kernel(img, 2, &structs), GCL_OK);
  cr_assert_eq(gcl_image_kernel(img, 0, &none), GCL_OK);
  cr_assert_geq(big.shared_bytes, 1024, "k_big declares 1 KiB of static shared memory");
  cr_assert_eq(structs.shared_bytes, 0);
  cr_assert_eq(structs.max_threads, 256, "__launch_bounds__(256)");
  cr_assert_eq(big.max_threads, 0);
  cr_assert_gt(big.registers, 0);
  cr_assert_lt(big.registers, 256);
  cr_assert_eq(none.reqntid[0], 0);
  gcl_image_destroy(img);
}

Test(image, find_kernel) {
  gcl_image *img = itu_parse_kernel_file("params.sm_90.cubin", 0);
  size_t k = 99;
  cr_assert_eq(gcl_image_find_kernel(img, "k_maps", &k), GCL_OK);
  cr_assert_eq(k, 4);
  cr_assert_eq(gcl_image_find_kernel(img, "k_nope", &k), GCL_ERROR_NOT_FOUND);
  cr_assert_eq(k, 4, "a failed lookup leaves the output alone");
  cr_assert(strstr(gcl_last_error(), "k_nope"));
  gcl_image_destroy(img);
}

/* The engine's layout of the PTX must equal ptxas's cubin for the same architecture. */
static void check_ptx_equals_cubin(const gcl_image *ptx, const gcl_image *cubin) {
  cr_assert_eq(gcl_image_kernel_count(ptx), gcl_image_kernel_count(cubin));
  for (size_t k = 0; k < gcl_image_kernel_count(cubin); k++) {
    gcl_image_kernel_info c, p;
    size_t pk;
    cr_assert_eq(gcl_image_kernel(cubin, k, &c), GCL_OK);
    cr_assert_eq(gcl_image_find_kernel(ptx, c.name, &pk), GCL_OK, "%s", gcl_last_error());
    cr_assert_eq(gcl_image_kernel(ptx, pk, &p), GCL_OK);
    cr_assert_eq(p.param_count, c.param_count, "%s", c.name);
    cr_assert_eq(p.param_bytes, c.param_bytes, "%s: ptx %zu bytes, cubin %zu", c.name,
                 p.param_bytes, c.param_bytes);
    for (size_t i = 0; i < c.param_count; i++) {
      size_t co, cs, po, ps, pa;
      cr_assert_eq(gcl_image_param(cubin, k, i, &co, &cs, NULL), GCL_OK);
      cr_assert_eq(gcl_image_param(ptx, pk, i, &po, &ps, &pa), GCL_OK);
      cr_assert_eq(po, co, "%s param %zu: ptx offset %zu, cubin %zu", c.name, i, po, co);
      cr_assert_eq(ps, cs, "%s param %zu: ptx size %zu, cubin %zu", c.name, i, ps, cs);
      cr_assert_gt(pa, 0, "%s param %zu: PTX tells the alignment", c.name, i);
    }
  }
}

Test(image, ptx_laid_out_like_the_cubin) {
  gcl_image *ptx = itu_parse_kernel_file("params.compute_90.ptx", 0);
  gcl_image *cubin = itu_parse_kernel_file("params.sm_90.cubin", 0);
  cr_assert_eq(gcl_image_format(ptx), GCL_IMAGE_PTX);
  cr_assert_eq(gcl_image_sm(ptx), 90, "PTX defaults to sm_90");
  check_ptx_equals_cubin(ptx, cubin);
  size_t k;
  cr_assert_eq(gcl_image_find_kernel(ptx, "k_maps", &k), GCL_OK);
  cr_assert_str_eq(param_type(ptx, k, 0), "bytes(2048) align(128)");
  cr_assert_str_eq(param_type(ptx, k, 1), "u32");
  gcl_image_destroy(ptx);
  gcl_image_destroy(cubin);
}

Test(image, ptx_for_other_architectures) {
  gcl_image *ptx80 = itu_parse_kernel_file("params.compute_90.ptx", 80);
  gcl_image *ptx100 = itu_parse_kernel_file("params.compute_90.ptx", 100);
  size_t k, off;
  cr_assert_eq(gcl_image_sm(ptx80), 80);
  cr_assert_eq(gcl_image_find_kernel(ptx80, "k_one", &k), GCL_OK);
  cr_assert_eq(gcl_image_param(ptx80, k, 0, &off, NULL, NULL), GCL_OK);
  cr_assert_eq(off, 32, "docs/facts.md: a 128-aligned first parameter sits at 0x20 on sm_80");
  cr_assert_eq(gcl_image_param(ptx100, k, 0, &off, NULL, NULL), GCL_OK);
  cr_assert_eq(off, 0, "and at 0 on sm_100");
  gcl_image_destroy(ptx80);
  gcl_image_destroy(ptx100);
}

Test(image, fatbin_picks_the_cubin) {
  gcl_image *fat = itu_parse_kernel_file("params.fatbin", 90);
  gcl_image *cubin = itu_parse_kernel_file("params.sm_90.cubin", 0);
  cr_assert_eq(gcl_image_format(fat), GCL_IMAGE_FATBIN);
  cr_assert_eq(gcl_image_sm(fat), 90);
  for (size_t k = 0; k < sizeof sm90 / sizeof *sm90; k++) check_kernel(fat, k, &sm90[k]);
  cr_assert_str_eq(param_type(fat, 5, 0), "", "the cubin entry, not the PTX, was read");
  gcl_image_destroy(fat);
  gcl_image_destroy(cubin);
}

/* params.multi.fatbin holds sm_80 + compute_80, sm_90, sm_100 + compute_100 (nvcc 13 compresses
 * the PTX entries with zstd). */
Test(image, fatbin_entry_choice) {
  static const struct { int want, got; gcl_format inner; size_t k_one_off; } cases[] = {
      {0, 100, GCL_IMAGE_CUBIN, 0},   {80, 80, GCL_IMAGE_CUBIN, 32},
      {86, 80, GCL_IMAGE_CUBIN, 32},  {89, 80, GCL_IMAGE_CUBIN, 32},
      {90, 90, GCL_IMAGE_CUBIN, 112}, {100, 100, GCL_IMAGE_CUBIN, 0},
      {103, 100, GCL_IMAGE_CUBIN, 0}, {120, 120, GCL_IMAGE_PTX, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    gcl_image *img = itu_parse_kernel_file("params.multi.fatbin", cases[i].want);
    size_t k, off;
    cr_assert_eq(gcl_image_sm(img), cases[i].got, "sm %d picked sm_%d", cases[i].want,
                 gcl_image_sm(img));
    cr_assert_eq(gcl_image_find_kernel(img, "k_one", &k), GCL_OK);
    cr_assert_eq(gcl_image_param(img, k, 0, &off, NULL, NULL), GCL_OK);
    cr_assert_eq(off, cases[i].k_one_off, "sm %d: k_one at %zu", cases[i].want, off);
    bool from_ptx = *param_type(img, k, 0) != '\0';
    cr_assert_eq(from_ptx, cases[i].inner == GCL_IMAGE_PTX, "sm %d", cases[i].want);
    gcl_image_destroy(img);
  }
}

Test(image, fatbin_without_a_usable_entry) {
  size_t n;
  unsigned char *data = itu_read_kernel_file("params.multi.fatbin", &n);
  gcl_image *img = (gcl_image *)0x1;
  cr_assert_eq(gcl_image_parse(data, n, 75, &img), GCL_ERROR_NOT_FOUND);
  cr_assert_eq(img, (gcl_image *)0x1, "a failed parse leaves the output alone");
  cr_assert(strstr(gcl_last_error(), "sm_75"), "%s", gcl_last_error());
  cr_assert(strstr(gcl_last_error(), "sm_80"), "names what it holds: %s", gcl_last_error());
  free(data);
}

Test(image, bad_arguments) {
  gcl_image *img = NULL;
  gcl_image_kernel_info info;
  cr_assert_eq(gcl_image_parse(NULL, 10, 0, &img), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl_image_parse("x", 1, 0, NULL), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl_image_parse("x", 1, -3, &img), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl_image_parse("", 0, 0, &img), GCL_ERROR_BAD_IMAGE);
  cr_assert_eq(gcl_image_parse("hello, world", 12, 0, &img), GCL_ERROR_BAD_IMAGE);
  cr_assert(strstr(gcl_last_error(), "not a cubin"), "%s", gcl_last_error());
  cr_assert_null(img);
  img = itu_parse_kernel_file("params.sm_90.cubin", 0);
  cr_assert_eq(gcl_image_kernel(img, 6, &info), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl_image_param(img, 0, 0, NULL, NULL, NULL), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(gcl_last_error(), "k_none"), "%s", gcl_last_error());
  cr_assert_eq(gcl_image_kernel_count(NULL), 0);
  cr_assert_str_eq(param_type(img, 9, 9), "");
  gcl_image_destroy(img);
  gcl_image_destroy(NULL);
}

/* kernels/params.cu compiled by NVRTC for each architecture: the cubin's records and the engine's
 * layout of NVRTC's PTX agree (cuda.h is replaced: NVRTC has no C library headers). */
Test(image, nvrtc_cubin_and_ptx_agree, .timeout = 120) {
  itu_require_nvrtc();
  size_t n;
  char path[1024];
  snprintf(path, sizeof path, "%s/kernels/params.cu", GCL_SOURCE_DIR);
  char *src = (char *)itu_read_file(path, &n);
  cr_assert_not_null(src, "cannot read %s", path);
  char *inc = strstr(src, "#include <cuda.h>");
  cr_assert_not_null(inc);
  memcpy(inc, "//", 2);
  const char *tm = "struct alignas(128) CUtensorMap { unsigned long long o[16]; };\n";
  char *full = malloc(strlen(tm) + n + 1);
  sprintf(full, "%s%s", tm, src);
  static const int archs[] = {80, 90, 100, 120};
  for (size_t a = 0; a < sizeof archs / sizeof *archs; a++) {
    unsigned char *cubin = NULL;
    size_t cubin_n = 0;
    char *ptx = NULL, *log = NULL;
    nvrtcResult r = itu_nvrtc_compile(full, archs[a], &cubin, &cubin_n, &ptx, &log);
    cr_assert_eq(r, NVRTC_SUCCESS, "sm_%d: %s", archs[a], log);
    gcl_image *c = NULL, *p = NULL;
    cr_assert_eq(gcl_image_parse(cubin, cubin_n, 0, &c), GCL_OK, "%s", gcl_last_error());
    cr_assert_eq(gcl_image_parse(ptx, strlen(ptx), archs[a], &p), GCL_OK, "%s", gcl_last_error());
    cr_assert_eq(gcl_image_sm(c), archs[a]);
    check_ptx_equals_cubin(p, c);
    gcl_image_destroy(c);
    gcl_image_destroy(p);
    free(cubin);
    free(ptx);
  }
  free(full);
  free(src);
}

/* ptxas checks the 32764-byte limit on the PTX layout (from offset 0); on sm_90 the device area of
 * 255 tensor maps + int + pointer is 32768 bytes and nvcc builds it. The cubin reader reports what
 * the cubin holds; the layout engine refuses the PTX for sm_90, because the driver refuses to load
 * a kernel placed past the limit (H200, driver 580: CUDA_ERROR_INVALID_IMAGE). */
Test(image, limit_kernel_compiled_by_nvcc) {
  gcl_image *cubin = itu_parse_kernel_file("params_limit.sm_90.cubin", 0);
  static const expect e = {"k_maps255", 3, 32768, {112, 32752, 32760}, {32640, 4, 8}};
  check_kernel(cubin, 0, &e);
  size_t n;
  unsigned char *ptx = itu_read_kernel_file("params_limit.compute_90.ptx", &n);
  gcl_image *img = NULL;
  gcl_status s = gcl_image_parse(ptx, n, 90, &img);
  cr_expect_eq(s, GCL_ERROR_LAYOUT_TOO_LARGE, "got %s: %s", gcl_status_name(s), gcl_last_error());
  cr_expect(strstr(gcl_last_error(), "driver refuses to load it") != NULL, "%s", gcl_last_error());
  cr_expect_null(img);
  gcl_image_destroy(img);
  img = NULL;
  cr_expect_eq(gcl_image_parse(ptx, n, 100, &img), GCL_OK, "sm_100 places it in 32656 bytes: %s",
               gcl_last_error());
  gcl_image_destroy(img);
  gcl_image_destroy(cubin);
  free(ptx);
}

/* Hand-written PTX: every way a .param is spelled, comments, and the entry directives. */
Test(image, ptx_param_spellings) {
  static const char ptx[] =
      "// .entry fake( in a comment\n"
      ".version 8.8\n.target sm_90\n.address_size 64\n"
      "/* .entry also_fake() */\n"
      ".visible .entry k(\n"
      "  .param .u64 .ptr .global .align 16 k_param_0,\n"
      "  .param .align 64 .b8 k_param_1[128],\n"
      "  .param .b32 k_param_2[4],\n"
      "  .param .f64 k_param_3,\n"
      "  .param .s8 k_param_4,\n"
      "  .align 8 .param .u16 _,\n"          /* ptxas: .align before .param places it; '_' */
      "  .param .b128 k_param_6[1]\n"       /* a .b128 array before PTX ISA 8.3 (ptxas takes it) */
      ")\n.maxntid 128, 2, 1\n.minnctapersm 1 .maxnreg 0x40 .pragma \"nounroll\";\n{\n ret;\n}\n"
      ".entry empty()\n.reqntid 64, 2\n{\n ret;\n}\n";
  gcl_image *img = NULL;
  cr_assert_eq(gcl_image_parse(ptx, sizeof ptx - 1, 90, &img), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_image_kernel_count(img), 2);
  static const char *kinds[] = {"ptr", "bytes(128) align(64)", "bytes(16) align(4)", "f64", "i8",
                                "bytes(2) align(8)", "bytes(16) align(16)"};
  static const size_t offs[] = {0, 48, 176, 192, 200, 208, 224}; /* sm_90: base 0x210, 64-aligned at 0x240 */
  for (size_t p = 0; p < 7; p++) {
    size_t off;
    cr_assert_str_eq(param_type(img, 0, p), kinds[p]);
    cr_assert_eq(gcl_image_param(img, 0, p, &off, NULL, NULL), GCL_OK);
    cr_assert_eq(off, offs[p], "param %zu at %zu", p, off);
  }
  gcl_image_kernel_info k, e;
  cr_assert_eq(gcl_image_kernel(img, 0, &k), GCL_OK);
  cr_assert_eq(gcl_image_kernel(img, 1, &e), GCL_OK);
  cr_assert_eq(k.param_bytes, 240);
  cr_assert_eq(k.max_threads, 256);
  cr_assert_eq(e.reqntid[0], 64);
  cr_assert_eq(e.reqntid[1], 2);
  cr_assert_eq(e.reqntid[2], 1);
  cr_assert_str_eq(e.name, "empty");
  cr_assert_eq(e.param_count, 0);
  gcl_image_destroy(img);
}

Test(image, ptx_errors_name_the_problem) {
  static const struct { const char *text, *says; } cases[] = {
      {".version 8.8\n.entry k(.param .u32 a, .param .u32", "the module ends in the declaration"},
      {".version 8.8\n.entry k(.param .u32 a, .param .u32 b", "not closed"},
      {".version 8.8\n.entry k(.param .u32 a b)", "expected ',' or ')'"},
      {".version 8.8\n.entry k(.param .u32 .u64 a)", "expected a parameter name"},
      {".version 8.8\n.entry k(.param .u32 a, .param .u8 a)", "declared before"},
      {".version 8.8\n.entry k() {}\n.entry k() {}", "defined twice"},
      {".version 8.8\n.entry k() {}\n.entry k();", "declared after its definition"},
      {".version 8.8\n.entry k(.param .u32 a);\n.entry k(.param .s32 a) {}", "does not match its declaration"},
      {".version 8.8\n.entry k(.param .u32 a);\n.visible .entry k(.param .u32 a) {}", "does not match"},
      {".version 8.8\n.weak .entry k(.param .u32 a);\n.visible .entry k(.param .u32 a) {}", "does not match"},
      {".version 8.8\n.extern .entry k(.param .u32 a);\n.entry k(.param .u32 a) {}", "does not match"},
      {".version 8.8\n.visible .entry k(.param .u32 a);\n.entry j() {}", "declared (.visible) but not defined"},
      {".version 8.8\n.extern .entry k(.param .u32 a) {}", "an .extern .entry"},
      {".version 8.8\n.entry k(.param .u32 a) .maxntid 64;", "a declaration (ending in ';') takes no directives"},
      {".version 8.8\n.entry k(.param .u32 a) .noreturn { ret; }", "'.noreturn' after the parameter list"},
      {".version 8.8\n.entry k(.param .u32 a) .maxnctapersm 2 { ret; }", "'.maxnctapersm' after"},
      {".version 8.8\n.entry k(.param .u32 a) .maxntid 1,2,3,4 { ret; }", "',' after the parameter list"},
      {".version 8.8\n.entry k(.param .u32 a,\v.param .u32 b) { ret; }", "expected .param"},
      {".version 8.8\n.entry k() .reqntid 32 .maxntid 32 { ret; }", ".maxntid and .reqntid"},
      {".version 8.8\n.entry k() .reqnctapercluster 2 .maxclusterrank 2 { ret; }", "cannot both"},
      {".version 8.8\n.entry k() .reqntid 32 .reqnctapercluster 2 .blocksareclusters { ret; }", "needs PTX ISA 9.0"},
      {".version 9.0\n.entry k() .reqntid 32 .blocksareclusters { ret; }", "needs .reqntid and .reqnctapercluster"},
      {".version 7.7\n.entry k() .explicitcluster { ret; }", "needs PTX ISA 7.8"},
      {".version 8.8\n.target sm_80\n.entry k() .maxclusterrank 2 { ret; }", ".target sm_90"},
      {".version 8.8\n.entry k() .maxnreg 0 { ret; }", ".maxnreg expects a positive"},
      {".version 8.8\n.entry k(.param .u32 a)", "the module ends before its body"},
      {".version 8.8\n.entry k() { { ret; }\n.entry j() { ret; }", "'}' missing) before the next .entry"},
      {".version 8.8\n.entry k() { ret;", "its body is not closed (1 '}' missing) before the module ends"},
      {".version 8.8\n.visible .visible .entry k() { ret; }", "one linkage directive at most"},
      {".version 8.8\n.entry k ) { ret; }", "')' after the parameter list"},
      {".version 8.8\n.entry k(.param .b8 a[4u]) { ret; }", "array size"},
      {".version 8.8\n.entry k(.param .u32 WARP_SZ) { ret; }", "expected a parameter name"},
      {".version 8.8\n.entry WARP_SZ() { ret; }", "kernel name"},
      {".version 8.8\n.func f() { { ret; }\n.entry k() { ret; }", "an .entry inside a body or initializer (1 '}' missing"},
      {".version 8.8\n.entry k() { ret; }\n.func f() { ret;", "the module ends inside a body"},
      {".version 8.8\n.entry k(.param .u32 a) // \xc3\xa9\n{ ret; }", "line 2 holds the non-ASCII byte 0xC3"},
      {".version 8.8\n.entry 9k()", "kernel name"},
      {".version 8.8\n.entry k(.param .bf16 a)", "expected a type"},
      {".version 8.2\n.entry k(.param .b128 a)", "PTX ISA 8.3"},
      {".version 8.2\n.entry k(.align 8 .param .u8 x, .param .b128 a) { ret; }", "parameter 1: .b128 needs PTX ISA 8.3"},
      {".version 8.0\n.entry k(.param .b8 a[4353])", "4352 bytes"},
      {".version 8.8\n.entry k(.param .b8 a[0])", "array size"},
      {".version 8.8\n.entry k(.param .u32 a) .maxntid 0 { ret; }", ".maxntid expects 1 to 3 positive"},
      {".version 8.8\n.entry k(.param .u32 a) .reqntid 32, { ret; }", ".reqntid expects"},
      {".version 8.8\n.entry k(.param .align 3 .b8 a[4])", "power of two"},
      {".version 8.8\n.entry k(.param a)", "expected a type"},
      {".version 8.8\n.entry k(.param .b8 a[])", "array size"},
      {".version 8.8\n.entry", "kernel name"},
      {".version 8.8 .target sm_90 .entry k(.param .align 4 .b8 a[40000])", "32764"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    gcl_image *img = NULL;
    gcl_status s = gcl_image_parse(cases[i].text, strlen(cases[i].text), 90, &img);
    cr_assert_neq(s, GCL_OK, "case %zu parsed", i);
    cr_assert(strstr(gcl_last_error(), cases[i].says), "case %zu: %s", i, gcl_last_error());
    cr_assert_null(img);
  }
}

/* Declarations (`.entry k(...);`) are no kernels of the module, as in the cubin ptxas writes: a
 * declaration then its definition (parameter names may differ, `.ptr` does not count; without
 * linkage the definition takes the declaration's) is one kernel; an .extern declaration alone
 * names another module's kernel. */
Test(image, ptx_declarations_are_not_kernels) {
  static const char ptx[] =
      ".version 8.8\n.target sm_90\n.address_size 64\n"
      ".extern .entry other(.param .u32 x);\n"
      ".visible .entry k(.param .u64 a, .param .align 8 .b8 b[12]);\n"
      ".visible .entry k(.param .u64 a);\n" /* ... */
      ".visible .entry k(.param .u64 .ptr .global p, .param .align 8 .b8 q[12])\n{\n ret;\n}\n";
  gcl_image *img = NULL;
  /* the middle declaration has one parameter: refused, as ptxas does */
  cr_assert_neq(gcl_image_parse(ptx, sizeof ptx - 1, 90, &img), GCL_OK);
  cr_assert(strstr(gcl_last_error(), "kernel 'k': this declaration (.visible, 1 parameters) does not "
                   "match its declaration before (.visible, 2 parameters)"), "%s", gcl_last_error());
  static const char good[] =
      ".version 8.8\n.target sm_90\n.address_size 64\n"
      ".extern .entry other(.param .u32 x);\n"
      ".visible .entry k(.param .u64 a, .param .align 8 .b8 b[12]);\n"
      ".entry k(.param .u64 .ptr .global p, .param .align 8 .b8 q[12])\n{\n ret;\n}\n";
  cr_assert_eq(gcl_image_parse(good, sizeof good - 1, 90, &img), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_image_kernel_count(img), 1, "'other' is another module's, 'k' is one kernel");
  gcl_image_kernel_info k;
  cr_assert_eq(gcl_image_kernel(img, 0, &k), GCL_OK);
  cr_assert_str_eq(k.name, "k");
  cr_assert_eq(k.param_count, 2);
  cr_assert_eq(k.param_bytes, 20);
  gcl_image_destroy(img);
}

/* An entry compressed in a way gclaunch does not decode is named, not misread. The first entry of
 * params.multi.fatbin is the sm_80 cubin; its flags (at byte 16 + 40) get the LZ4 bit. */
Test(image, fatbin_lz4_entry_is_reported) {
  size_t n;
  unsigned char *data = itu_read_kernel_file("params.multi.fatbin", &n);
  cr_assert_eq(data[16], 2, "first entry is a cubin");
  cr_assert_eq(data[16 + 28], 80, "for sm_80");
  data[16 + 41] |= 0x20; /* flags |= 0x2000 */
  gcl_image *img = NULL;
  cr_assert_eq(gcl_image_parse(data, n, 80, &img), GCL_ERROR_BAD_IMAGE);
  cr_assert(strstr(gcl_last_error(), "entry 0 is compressed (LZ4"), "%s", gcl_last_error());
  cr_assert_eq(gcl_image_parse(data, n, 90, &img), GCL_OK, "other entries still read");
  gcl_image_destroy(img);
  free(data);
}

/* Containers one after another (a host library's .nv_fatbin): every container is read, its kernels
 * after the previous one's, with padding to 8 bytes between them. */
Test(image, fatbin_containers_in_sequence) {
  size_t na, nb;
  unsigned char *a = itu_read_kernel_file("smoke.fatbin", &na);
  unsigned char *b = itu_read_kernel_file("echo.fatbin", &nb);
  size_t pad = (8 - na % 8) % 8 + 8; /* the padding, and 8 zero bytes more */
  unsigned char *both = calloc(na + pad + nb, 1);
  cr_assert_not_null(both);
  memcpy(both, a, na);
  memcpy(both + na + pad, b, nb);
  gcl_image *img = NULL, *alone = NULL;
  cr_assert_eq(gcl_image_parse(both, na + pad + nb, 90, &img), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_image_parse(b, nb, 90, &alone), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_image_kernel_count(img), 1 + gcl_image_kernel_count(alone));
  gcl_image_kernel_info first, k, want;
  cr_assert_eq(gcl_image_kernel(img, 0, &first), GCL_OK);
  cr_assert_str_eq(first.name, "saxpy");
  for (size_t i = 0; i < gcl_image_kernel_count(alone); i++) {
    cr_assert_eq(gcl_image_kernel(img, i + 1, &k), GCL_OK);
    cr_assert_eq(gcl_image_kernel(alone, i, &want), GCL_OK);
    cr_assert_str_eq(k.name, want.name);
    cr_assert_eq(k.param_bytes, want.param_bytes);
    cr_assert_eq(k.registers, want.registers, "%s: registers of the second cubin", k.name);
  }
  cr_assert_eq(gcl_image_format(img), GCL_IMAGE_FATBIN);
  both[na + pad + 6] = 0xff; /* the second container's header size is now 0xff10: past the end */
  both[na + pad + 7] = 0xff;
  gcl_image *bad = NULL;
  cr_assert_eq(gcl_image_parse(both, na + pad + nb, 90, &bad), GCL_ERROR_BAD_IMAGE);
  cr_assert(strstr(gcl_last_error(), "container at byte"), "%s", gcl_last_error());
  gcl_image_destroy(alone);
  gcl_image_destroy(img);
  free(both), free(a), free(b);
}

/* A host ELF without device code says so; the format name of a host ELF is "elf". */
Test(image, host_elf_without_device_code) {
  size_t n;
  unsigned char *self = itu_read_file("/proc/self/exe", &n);
  cr_assert_not_null(self);
  gcl_image *img = NULL;
  cr_assert_eq(gcl_image_parse(self, n, 0, &img), GCL_ERROR_BAD_IMAGE);
  cr_assert(strstr(gcl_last_error(), "has no .nv_fatbin or __nv_relfatbin section"), "%s",
            gcl_last_error());
  cr_assert_str_eq(gcl_format_name(GCL_IMAGE_ELF), "elf");
  free(self);
}
