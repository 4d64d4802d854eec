/* The image readers against the toolkit's own output (issue 38), the oracles the fuzz targets
 * (tests/fuzz/fuzz_image.c) cannot carry:
 *   - fatbin containers that the toolkit's `fatbinary --create` wrote at build time from cubins
 *     and PTX that nvcc built of kernels/params.cu and smoke.cu (tests/meson.build: oracle_*;
 *     default compression -- PTX zstd --, none, everything compressed). For every architecture
 *     asked for, the container must read as the entry the documented rule picks (the exact cubin,
 *     else the highest cubin of the same major below it, else the highest PTX below it; sm 0: the
 *     highest cubin, else the highest PTX) read alone from the file fatbinary was given -- the same
 *     kernels, parameter offsets, sizes, alignments -- and where no entry fits, the refusal must
 *     list exactly the entries fatbinary was given, in order (same entries);
 *   - nvcc's cubins of params.cu for sm_80, 90, 100 and 120, whose kernels are known: every
 *     kernel's parameter offsets, sizes and total from the cubin reader must equal the layout
 *     engine's for the kernel's signature on that architecture. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gclaunch/gclaunch.h"

/* One entry of a container: what fatbinary was given (tests/meson.build, the same list). */
typedef struct oentry {
  int ptx;          /* 1: kind=ptx, 0: kind=elf */
  int arch;
  const char *file; /* BUILD/tests/oracle_<file> */
} oentry;
typedef struct ocontainer {
  const char *file;
  size_t n;
  oentry e[4];
} ocontainer;

#define PARAMS_ENTRIES                                                                            \
  4, {{0, 80, "params.sm_80.cubin"}, {0, 90, "params.sm_90.cubin"},                               \
      {1, 90, "params.compute_90.ptx"}, {0, 100, "params.sm_100.cubin"}}
static const ocontainer containers[] = {
    {"mixed.fatbin", PARAMS_ENTRIES},
    {"plain.fatbin", PARAMS_ENTRIES},
    {"all.fatbin", PARAMS_ENTRIES},
    {"ptx.fatbin", 2, {{1, 80, "params.compute_80.ptx"}, {1, 90, "params.compute_90.ptx"}}},
    {"two.fatbin", 3, {{0, 90, "smoke.sm_90.cubin"}, {1, 80, "params.compute_80.ptx"},
                       {0, 120, "params.sm_120.cubin"}}},
};
static const int sms[] = {0, 75, 80, 86, 89, 90, 100, 103, 120, 121};

/* BUILD/tests/oracle_<name>, read whole; skips the test when it was not built (no fatbinary). */
static unsigned char *read_oracle(const char *name, size_t *n) {
  char file[256];
  snprintf(file, sizeof file, "oracle_%s", name);
  const char *path = gcl_test_beside(file);
  if (!path) cr_skip_test("%s was not built next to this program (no fatbinary in the toolkit?)", file);
  FILE *f = fopen(path, "rb");
  cr_assert_not_null(f, "cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *data = malloc((size_t)size + 1);
  cr_assert_not_null(data);
  cr_assert_eq(fread(data, 1, (size_t)size, f), (size_t)size);
  fclose(f);
  *n = (size_t)size;
  return data;
}

/* The entry the rule picks for sm; -1 when none fits. Written from the rule's words, not from
 * lib/core/fatbin.c. */
static int pick(const ocontainer *c, int sm) {
  int best = -1;
  for (size_t i = 0; i < c->n; i++) {
    const oentry *e = &c->e[i];
    if (e->ptx) continue;
    if (sm != 0 && (e->arch > sm || e->arch / 10 != sm / 10)) continue;
    if (best < 0 || e->arch > c->e[best].arch) best = (int)i;
  }
  if (best >= 0) return best;
  for (size_t i = 0; i < c->n; i++) {
    const oentry *e = &c->e[i];
    if (!e->ptx || (sm != 0 && e->arch > sm)) continue;
    if (best < 0 || e->arch > c->e[best].arch) best = (int)i;
  }
  return best;
}

/* Whether the two images say the same of kernel k's parameter p (gcl_image_param_type's status,
 * kind and scalar). */
static int same_param_type(const gcl_image *a, const gcl_image *b, size_t k, size_t p) {
  gcl_param_kind ka = GCL_PARAM_STRUCT, kb = GCL_PARAM_STRUCT;
  gcl_scalar sa = GCL_SCALAR_VOID, sb = GCL_SCALAR_VOID;
  gcl_status s1 = gcl_image_param_type(a, k, p, &ka, &sa), s2 = gcl_image_param_type(b, k, p, &kb, &sb);
  return s1 == s2 && ka == kb && sa == sb;
}

static gcl_image *parse_or_fail(const unsigned char *data, size_t n, int sm, const char *what) {
  gcl_image *img = NULL;
  gcl_status s = gcl_image_parse(data, n, sm, &img);
  cr_assert_eq(s, GCL_OK, "%s (sm %d): %s: %s", what, sm, gcl_status_name(s), gcl_last_error());
  return img;
}

/* Same kernels, in order: names, parameter offsets, sizes, alignments, kinds; same sm. */
static void assert_same_kernels(const gcl_image *a, const gcl_image *b, const char *what) {
  cr_assert_eq(gcl_image_sm(a), gcl_image_sm(b), "%s: sm_%d, the entry alone sm_%d", what,
               gcl_image_sm(a), gcl_image_sm(b));
  size_t n = gcl_image_kernel_count(a);
  cr_assert_eq(n, gcl_image_kernel_count(b), "%s: %zu kernels, the entry alone %zu", what, n,
               gcl_image_kernel_count(b));
  cr_assert_gt(n, 0, "%s: no kernels", what);
  for (size_t k = 0; k < n; k++) {
    gcl_image_kernel_info x, y;
    cr_assert_eq(gcl_image_kernel(a, k, &x), GCL_OK);
    cr_assert_eq(gcl_image_kernel(b, k, &y), GCL_OK);
    cr_assert_str_eq(x.name, y.name, "%s: kernel %zu", what, k);
    cr_assert_eq(x.param_count, y.param_count, "%s: %s", what, x.name);
    cr_assert_eq(x.param_bytes, y.param_bytes, "%s: %s", what, x.name);
    for (size_t p = 0; p < x.param_count; p++) {
      size_t o1, s1, a1, o2, s2, a2;
      cr_assert_eq(gcl_image_param(a, k, p, &o1, &s1, &a1), GCL_OK);
      cr_assert_eq(gcl_image_param(b, k, p, &o2, &s2, &a2), GCL_OK);
      cr_assert(o1 == o2 && s1 == s2 && a1 == a2,
                "%s: %s parameter %zu: offset %zu size %zu align %zu, the entry alone %zu %zu %zu",
                what, x.name, p, o1, s1, a1, o2, s2, a2);
      cr_assert(same_param_type(a, b, k, p), "%s: %s parameter %zu: the types differ", what,
                x.name, p);
    }
  }
}

Test(fatbin_oracle, fatbinary_containers_read_as_their_picked_entry) {
  size_t compared = 0, refused = 0;
  for (size_t c = 0; c < sizeof containers / sizeof *containers; c++) {
    const ocontainer *oc = &containers[c];
    size_t n;
    unsigned char *fat = read_oracle(oc->file, &n);
    for (size_t i = 0; i < sizeof sms / sizeof *sms; i++) {
      int sm = sms[i], want = pick(oc, sm);
      char what[128];
      snprintf(what, sizeof what, "oracle_%s for sm %d", oc->file, sm);
      if (want < 0) {
        /* Same entries: the refusal lists what fatbinary was given, in its order. */
        gcl_image *img = NULL;
        cr_assert_eq(gcl_image_parse(fat, n, sm, &img), GCL_ERROR_NOT_FOUND, "%s: %s", what,
                     gcl_last_error());
        cr_assert_null(img);
        char list[256] = "it holds:";
        for (size_t e = 0; e < oc->n; e++)
          snprintf(list + strlen(list), sizeof list - strlen(list), " %s_%d",
                   oc->e[e].ptx ? "compute" : "sm", oc->e[e].arch);
        const char *msg = gcl_last_error();
        const char *at = strstr(msg, list);
        cr_assert(at && at[strlen(list)] == 0, "%s: the message should end in \"%s\": %s", what, list,
                  msg);
        refused++;
        continue;
      }
      const oentry *e = &oc->e[want];
      size_t en;
      unsigned char *alone = read_oracle(e->file, &en);
      gcl_image *a = parse_or_fail(fat, n, sm, what);
      cr_assert_eq(gcl_image_format(a), GCL_IMAGE_FATBIN, "%s", what);
      /* PTX is laid out for the architecture asked for (for sm 0: the entry's). */
      gcl_image *b = parse_or_fail(alone, en, e->ptx ? (sm ? sm : e->arch) : 0, e->file);
      char whatc[192];
      snprintf(whatc, sizeof whatc, "%s (picked %s)", what, e->file);
      assert_same_kernels(a, b, whatc);
      gcl_image_destroy(a);
      gcl_image_destroy(b);
      free(alone);
      compared++;
    }
    free(fat);
  }
  cr_assert_geq(refused, 5, "every container is refused at least for sm 75");
  cr_assert_gt(compared, 30);
}

/* params.cu's kernels, as gclaunch signatures (kernels/params.cu declares them). */
static const struct {
  const char *name, *sig;
} known[] = {
    {"k_one", "grid_constant tensormap m, i8 c, i32* out"},
    {"k_maps", "grid_constant struct{tensormap[16] m} maps, i32 idx, f32* out"},
    {"k_map64", "grid_constant struct{u64[16] o} align(64) m, i32* out"},
    {"k_structs", "struct{i8 c, f64 d, i16 s} a, struct{struct{i8 c, f64 d, i16 s} p, i32[3] i} b, "
                  "u16 h, f64* out"},
    {"k_big", "grid_constant struct{u8[8000] b} big, i32 n, u8* out"},
    {"k_none", ""},
};

Test(fatbin_oracle, nvcc_cubins_of_known_kernels_match_the_layout_engine) {
  static const int archs[] = {80, 90, 100, 120};
  for (size_t a = 0; a < sizeof archs / sizeof *archs; a++) {
    char file[64];
    snprintf(file, sizeof file, "params.sm_%d.cubin", archs[a]);
    size_t n;
    unsigned char *data = read_oracle(file, &n);
    gcl_image *img = parse_or_fail(data, n, 0, file);
    cr_assert_eq(gcl_image_sm(img), archs[a], "%s: sm_%d", file, gcl_image_sm(img));
    cr_assert_eq(gcl_image_kernel_count(img), sizeof known / sizeof *known, "%s", file);
    for (size_t k = 0; k < sizeof known / sizeof *known; k++) {
      size_t idx;
      cr_assert_eq(gcl_image_find_kernel(img, known[k].name, &idx), GCL_OK, "%s: %s", file,
                   known[k].name);
      gcl_image_kernel_info info;
      cr_assert_eq(gcl_image_kernel(img, idx, &info), GCL_OK);
      gcl_signature *sig = NULL;
      gcl_layout *lay = NULL;
      cr_assert_eq(gcl_signature_parse(known[k].sig, &sig), GCL_OK, "%s: %s", known[k].sig,
                   gcl_last_error());
      cr_assert_eq(gcl_layout_create(sig, archs[a], &lay), GCL_OK, "%s", gcl_last_error());
      cr_assert_eq(info.param_count, gcl_layout_count(lay), "%s %s", file, known[k].name);
      cr_assert_eq(info.param_bytes, gcl_layout_size(lay), "%s %s: cubin %zu bytes, engine %zu",
                   file, known[k].name, info.param_bytes, gcl_layout_size(lay));
      for (size_t p = 0; p < info.param_count; p++) {
        size_t co, cs, lo, ls;
        cr_assert_eq(gcl_image_param(img, idx, p, &co, &cs, NULL), GCL_OK);
        cr_assert_eq(gcl_layout_param(lay, p, &lo, &ls, NULL), GCL_OK);
        cr_assert(co == lo && cs == ls, "%s %s parameter %zu: cubin offset %zu size %zu, engine %zu %zu",
                  file, known[k].name, p, co, cs, lo, ls);
      }
      gcl_layout_destroy(lay);
      gcl_signature_destroy(sig);
    }
    gcl_image_destroy(img);
    free(data);
  }
}
