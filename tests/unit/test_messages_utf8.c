/* Messages are valid UTF-8 whatever the input (issue 38): random bytes into every parser that
 * writes a message (signatures, field paths, images: PTX, cubin, fatbin, host ELF), and the
 * cases that once broke it (a lead byte quoted alone, a path cut mid-character). The seed is
 * printed; GCL_SEED=N replays one. The PTX reader refuses a non-ASCII .entry name by name. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdint.h>
#include <stdio.h>

#include "../common/test_rng.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gclaunch/gclaunch.h"

/* The one oracle: RFC 3629 well-formedness (no overlongs, surrogates or code points past
 * U+10FFFF), written out here independently of the library's own check. */
static bool valid_utf8(const char *s) {
  const unsigned char *u = (const unsigned char *)s;
  while (*u) {
    unsigned c = *u;
    int n = c < 0x80 ? 0 : (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2 : (c & 0xF8) == 0xF0 ? 3 : -1;
    if (n < 0) return false;
    uint32_t cp = n == 0 ? c : n == 1 ? c & 0x1F : n == 2 ? c & 0x0F : c & 0x07;
    for (int i = 1; i <= n; i++) {
      if ((u[i] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (u[i] & 0x3F);
    }
    static const uint32_t min[4] = {0, 0x80, 0x800, 0x10000};
    if (cp < min[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    u += n + 1;
  }
  return true;
}

static uint64_t next_random(uint64_t *s) { return test_rng_next(s); }

static uint64_t seed_of(void) {
  const char *e = getenv("GCL_SEED");
  uint64_t seed = e ? strtoull(e, NULL, 10) : (uint64_t)time(NULL);
  cr_log_info("messages_utf8 seed %llu (GCL_SEED=%llu replays it)", (unsigned long long)seed,
              (unsigned long long)seed);
  return seed ? seed : 1;
}

/* n random bytes, biased towards UTF-8 lead and continuation bytes and the grammar's ASCII. */
static void fill(uint64_t *s, char *buf, size_t n) {
  static const char ascii[] = "u32 i8 f16 struct{ } [ ] ( ) * , . align 4 tensormap bytes x _";
  for (size_t i = 0; i < n; i++) {
    uint64_t r = next_random(s);
    switch (r % 4) {
    case 0: buf[i] = ascii[(r >> 8) % (sizeof ascii - 1)]; break;
    case 1: buf[i] = (char)(0x80 + (r >> 8) % 0x40); break; /* continuation */
    case 2: buf[i] = (char)(0xC0 + (r >> 8) % 0x40); break; /* lead (valid or not) */
    default: buf[i] = (char)(1 + (r >> 8) % 255); break;
    }
  }
  buf[n] = '\0';
}

#define CHECK(what, input_len)                                                                  \
  cr_assert(valid_utf8(gcl_last_error()), "%s: seed %llu case %d (%zu bytes): message not UTF-8", \
            what, (unsigned long long)seed, i, (size_t)(input_len))

Test(messages_utf8, random_bytes_into_every_parser) {
  uint64_t seed = seed_of(), s = seed;
  gcl_signature *base_sig = NULL;
  gcl_layout *base = NULL;
  cr_assert_eq(gcl_signature_parse("struct{u32 a, struct{ptr p}[4] q} g, tensormap[2] m", &base_sig), GCL_OK);
  cr_assert_eq(gcl_layout_create(base_sig, 90, &base), GCL_OK);
  static const char *const prefixes[] = {"", ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry ",
                                         ".version 8.0\n.entry k(.param .u64 ", "\x7f" "ELF"};
  char buf[600], img[700];
  for (int i = 0; i < 20000; i++) {
    size_t n = next_random(&s) % 300;
    fill(&s, buf, n);
    gcl_signature *sig = NULL;
    if (gcl_signature_parse(buf, &sig) != GCL_OK) CHECK("signature", n);
    gcl_signature_destroy(sig);
    gcl_field f;
    if (gcl_layout_field(base, buf, &f) != GCL_OK) CHECK("path", n);
    const char *pre = prefixes[i % 4];
    size_t pn = strlen(pre);
    memcpy(img, pre, pn);
    memcpy(img + pn, buf, n + 1);
    gcl_image *im = NULL;
    if (gcl_image_parse(img, pn + n + (i & 1), 0, &im) != GCL_OK) CHECK("image", pn + n);
    gcl_image_destroy(im);
  }
  gcl_layout_destroy(base);
  gcl_signature_destroy(base_sig);
}

Test(messages_utf8, the_cases_that_broke_it) {
  uint64_t seed = 0;
  int i = 0;
  gcl_signature *sig = NULL;
  cr_assert_eq(gcl_signature_parse("\xc3\xa9", &sig), GCL_ERROR_PARSE);
  CHECK("signature", 2);
  cr_assert(strstr(gcl_last_error(), "'\xc3\xa9'"), "the whole character is quoted: %s", gcl_last_error());
  cr_assert_eq(gcl_signature_parse("u32 \xff", &sig), GCL_ERROR_PARSE);
  CHECK("signature", 5);
  cr_assert(strstr(gcl_last_error(), "\\xFF"), "a byte that is no text is escaped: %s", gcl_last_error());
  cr_assert_eq(gcl_signature_parse("u8 x", &sig), GCL_OK);
  gcl_layout *lay = NULL;
  cr_assert_eq(gcl_layout_create(sig, 90, &lay), GCL_OK);
  char path[256];
  memset(path, 'a', 199);
  strcpy(path + 199, "\xc3\xa9");
  gcl_field f;
  cr_assert_neq(gcl_layout_field(lay, path, &f), GCL_OK);
  CHECK("path", strlen(path));
  cr_assert_null(strstr(gcl_last_error(), "\\xC3"), "cut on a character boundary: %s", gcl_last_error());
  cr_assert_neq(gcl_layout_field(lay, "x\xc3\xa9", &f), GCL_OK);
  CHECK("path", 4);
  gcl_layout_destroy(lay);
  gcl_signature_destroy(sig);
}

/* ptxas: "Unexpected non-ASCII character"; gclaunch once read kernel 'k' with no parameters. */
Test(messages_utf8, ptx_entry_names_are_ascii_identifiers) {
  static const char *const bad[] = {
      ".version 8.0\n.target sm_90\n.visible .entry k\xc3\xa9(.param .u64 p){ret;}",
      ".version 8.0\n.target sm_90\n.visible .entry \xc3\xa9k(.param .u64 p){ret;}",
      ".version 8.0\n.target sm_90\n.visible .entry k(.param .u64 p\xc3\xa9){ret;}",
      ".version 8.0\n.target sm_90\n.visible .entry k(.param .u64 \xc3\xa9){ret;}",
      ".version 8.0\n.target sm_90\n.visible .entry k.x(.param .u64 p){ret;}",
      ".version 8.0\n.target sm_90\n.visible .entry k(.param .u64 p-q){ret;}",
      ".version 8.0\n.target sm_90\n.visible .entry %(.param .u64 p){ret;}",
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    gcl_image *im = NULL;
    cr_assert_eq(gcl_image_parse(bad[i], strlen(bad[i]), 0, &im), GCL_ERROR_BAD_IMAGE, "case %zu read", i);
    cr_assert_null(im);
    cr_assert(valid_utf8(gcl_last_error()), "case %zu", i);
    if (i < 4) /* the non-ASCII ones are named as such */
      cr_assert(strstr(gcl_last_error(), "non-ASCII"), "case %zu: %s", i, gcl_last_error());
  }
  static const char *const good[] = {
      ".version 8.0\n.target sm_90\n.visible .entry _Z1kPf$1(.param .u64 _Z1kPf_param_0){ret;}",
      ".version 8.0\n.target sm_90\n.visible .entry %k(.param .align 16 .b8 %p[32], .param .u32 $n){ret;}",
  };
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
    gcl_image *im = NULL;
    cr_assert_eq(gcl_image_parse(good[i], strlen(good[i]), 0, &im), GCL_OK, "case %zu: %s", i, gcl_last_error());
    gcl_image_kernel_info k;
    cr_assert_eq(gcl_image_kernel(im, 0, &k), GCL_OK);
    cr_assert_gt(k.param_count, 0);
    gcl_image_destroy(im);
  }
}
