/* Malformed-input corpus for the image readers: every truncation of a real cubin, fatbin and PTX,
 * and seeded random bit flips. Each input must give a status (an error, or success with a sane
 * image) and never a crash; run under ASan/UBSan (build-asan) to catch stray reads. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/image_test_util.h"
#include "../common/test_rng.h"

static const char *const corpus[] = {
    "params.sm_90.cubin", "params.fatbin", "params.compute_90.ptx", "params.multi.fatbin",
    "smoke.sm_90.cubin",
};

/* Parses a private heap copy of exactly n bytes, so ASan sees any read past the end. */
static gcl_status parse_exact(const unsigned char *data, size_t n, int sm) {
  unsigned char *copy = malloc(n ? n : 1);
  memcpy(copy, data, n);
  gcl_image *img = NULL;
  gcl_status s = gcl_image_parse(copy, n, sm, &img);
  free(copy);
  if (s == GCL_OK) {
    cr_assert_not_null(img);
    for (size_t k = 0; k < gcl_image_kernel_count(img); k++) { /* touch everything */
      gcl_image_kernel_info info;
      cr_assert_eq(gcl_image_kernel(img, k, &info), GCL_OK);
      cr_assert_not_null(info.name);
      for (size_t p = 0; p < info.param_count; p++) {
        size_t off, size;
        cr_assert_eq(gcl_image_param(img, k, p, &off, &size, NULL), GCL_OK);
        cr_assert_leq(off + size, info.param_bytes, "kernel %zu param %zu ends past the area", k, p);
      }
    }
  } else {
    cr_assert_null(img);
    cr_assert_gt(strlen(gcl_last_error()), 0, "an error without words (%s)", gcl_status_name(s));
  }
  gcl_image_destroy(img);
  return s;
}

Test(malformed, every_truncation) {
  for (size_t c = 0; c < sizeof corpus / sizeof *corpus; c++) {
    size_t n, failed = 0;
    unsigned char *data = itu_read_kernel_file(corpus[c], &n);
    cr_assert_eq(parse_exact(data, n, 90), GCL_OK, "%s whole: %s", corpus[c], gcl_last_error());
    for (size_t len = 0; len < n; len++) {
      gcl_status s = parse_exact(data, len, 90);
      failed += s != GCL_OK;
      if (s != GCL_OK)
        cr_assert(s == GCL_ERROR_BAD_IMAGE || s == GCL_ERROR_NOT_FOUND,
                  "%s cut at %zu: %s", corpus[c], len, gcl_status_name(s));
    }
    /* Binary containers say their own size: every cut must be noticed. */
    if (strstr(corpus[c], "fatbin"))
      cr_assert_eq(failed, n, "%s: %zu of %zu truncations parsed", corpus[c], n - failed, n);
    cr_log_info("%s: %zu truncations, %zu rejected", corpus[c], n, failed);
    free(data);
  }
}

static uint64_t next_random(uint64_t *state) { return test_rng_next(state); }

static void flip_bits(uint64_t seed, int flips_per_input, int inputs) {
  for (size_t c = 0; c < sizeof corpus / sizeof *corpus; c++) {
    size_t n;
    unsigned char *data = itu_read_kernel_file(corpus[c], &n);
    unsigned char *work = malloc(n);
    uint64_t state = seed ^ (uint64_t)c;
    for (int i = 0; i < inputs; i++) {
      memcpy(work, data, n);
      for (int f = 0; f < flips_per_input; f++) {
        uint64_t r = next_random(&state);
        work[(r >> 3) % n] ^= (unsigned char)(1u << (r & 7));
      }
      gcl_status s = parse_exact(work, n, (int)(next_random(&state) % 3) * 10 + 80);
      cr_assert(s == GCL_OK || s == GCL_ERROR_BAD_IMAGE || s == GCL_ERROR_NOT_FOUND ||
                    s == GCL_ERROR_LAYOUT_TOO_LARGE || s == GCL_ERROR_PARSE,
                "%s seed %llu input %d: %s: %s", corpus[c], (unsigned long long)seed, i,
                gcl_status_name(s), gcl_last_error());
    }
    free(work);
    free(data);
  }
}

Test(malformed, seeded_bit_flips) {
  uint64_t fresh = (uint64_t)time(NULL);
  cr_log_info("bit flip seeds: 1 and %llu", (unsigned long long)fresh);
  flip_bits(1, 1, 1500);
  flip_bits(1, 8, 500);
  flip_bits(fresh, 1, 1500);
  flip_bits(fresh, 8, 500);
}

/* Header fields pointed far away: offsets and sizes near 2^64 must not wrap. */
Test(malformed, huge_offsets_in_headers) {
  size_t n;
  unsigned char *cubin = itu_read_kernel_file("params.sm_90.cubin", &n);
  static const size_t fields[] = {40, 58, 60, 62}; /* e_shoff, e_shentsize, e_shnum, e_shstrndx */
  for (size_t f = 0; f < sizeof fields / sizeof *fields; f++) {
    unsigned char *w = malloc(n);
    memcpy(w, cubin, n);
    memset(w + fields[f], 0xff, fields[f] == 40 ? 8 : 2);
    cr_assert_eq(parse_exact(w, n, 0), GCL_ERROR_BAD_IMAGE, "field at %zu", fields[f]);
    free(w);
  }
  unsigned char *fat = itu_read_kernel_file("params.fatbin", &n);
  memset(fat + 8, 0xff, 8); /* container size */
  cr_assert_eq(parse_exact(fat, n, 90), GCL_ERROR_BAD_IMAGE);
  free(fat);
  free(cubin);
}
