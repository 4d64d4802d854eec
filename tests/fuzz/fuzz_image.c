/* libFuzzer target: the module image readers (gcl_image_parse). Built three times: FUZZ_FORMAT 1
 * forces the ELF magic (cubin reader), 2 the fatbin magic, 3 leaves the text as it is (PTX
 * reader), so that mutations do not leave the reader under test. A parse must succeed or fail
 * cleanly, and every accessor of a parsed image must answer within bounds. Oracles, each a second
 * reading that must agree (a mismatch aborts with a message; libFuzzer keeps the input):
 *   cubin  the same bytes wrapped here in a fatbin container (one uncompressed ELF entry) read
 *          through the fatbin reader: the same status, the same kernels;
 *   PTX    likewise as a PTX entry for the architecture asked for (80 or 100);
 *   fatbin this file's own walk of the container (the layout nvcc 13's fatbinary writes,
 *          lib/core/fatbin.c) finds the entry the documented rule picks -- the exact cubin, else
 *          the highest cubin of the same major below, else the highest PTX below -- and that
 *          entry's payload read alone gives the same kernels as the container (uncompressed
 *          entries; a compressed one is only walked).
 * tests/unit/test_fatbin_oracle.c checks the readers against fatbinary's and nvcc's own output. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gclaunch/gclaunch.h"

#ifndef FUZZ_FORMAT
#define FUZZ_FORMAT 1
#endif

#define CHECK(cond)                                                                               \
  do {                                                                                            \
    if (!(cond)) __builtin_trap();                                                                \
  } while (0)
#define ORACLE(cond, ...)                                                                         \
  do {                                                                                            \
    if (!(cond)) {                                                                                \
      fprintf(stderr, "fuzz_image oracle (format %d): ", FUZZ_FORMAT);                          \
      fprintf(stderr, __VA_ARGS__);                                                               \
      fprintf(stderr, "\n");                                                                      \
      abort();                                                                                    \
    }                                                                                             \
  } while (0)

static void walk(const gcl_image *img) {
  size_t n = gcl_image_kernel_count(img);
  CHECK(gcl_image_format(img) >= GCL_IMAGE_CUBIN && gcl_image_format(img) <= GCL_IMAGE_ELF);
  CHECK(gcl_format_name(gcl_image_format(img)) != NULL);
  for (size_t k = 0; k < n; k++) {
    gcl_image_kernel_info info;
    CHECK(gcl_image_kernel(img, k, &info) == GCL_OK);
    CHECK(info.name != NULL);
    size_t found = (size_t)-1;
    CHECK(gcl_image_find_kernel(img, info.name, &found) == GCL_OK);
    CHECK(found <= k);
    for (size_t p = 0; p < info.param_count; p++) {
      size_t off, size, align;
      CHECK(gcl_image_param(img, k, p, &off, &size, &align) == GCL_OK);
      gcl_param_kind kind = GCL_PARAM_STRUCT;
      gcl_scalar scalar = GCL_SCALAR_VOID;
      gcl_status ts = gcl_image_param_type(img, k, p, &kind, &scalar);
      CHECK(ts == GCL_OK || ts == GCL_ERROR_NOT_FOUND); /* typed (PTX) or not (cubin records) */
      CHECK(ts != GCL_OK || kind == GCL_PARAM_SCALAR || kind == GCL_PARAM_POINTER ||
            kind == GCL_PARAM_BYTES);
      CHECK(kind != GCL_PARAM_SCALAR || gcl_scalar_size(scalar) > 0);
      (void)strlen(info.name);
    }
    size_t off;
    size_t sz, al;
    CHECK(gcl_image_param(img, k, info.param_count, &off, &sz, &al) != GCL_OK);
    CHECK(gcl_image_param_type(img, k, info.param_count, NULL, NULL) ==
          GCL_ERROR_INVALID_ARGUMENT);
  }
  gcl_image_kernel_info info;
  CHECK(gcl_image_kernel(img, n, &info) != GCL_OK);
}

/* a and b list the same kernels: names, parameter offsets, sizes, alignments and kinds. */
/* Whether the two images say the same of kernel k's parameter p (gcl_image_param_type's status,
 * kind and scalar). */
static int same_param_type(const gcl_image *a, const gcl_image *b, size_t k, size_t p) {
  gcl_param_kind ka = GCL_PARAM_STRUCT, kb = GCL_PARAM_STRUCT;
  gcl_scalar sa = GCL_SCALAR_VOID, sb = GCL_SCALAR_VOID;
  gcl_status s1 = gcl_image_param_type(a, k, p, &ka, &sa), s2 = gcl_image_param_type(b, k, p, &kb, &sb);
  return s1 == s2 && ka == kb && sa == sb;
}

static void same_kernels(const gcl_image *a, const gcl_image *b, const char *what) {
  size_t n = gcl_image_kernel_count(a);
  ORACLE(n == gcl_image_kernel_count(b), "%s: %zu kernels, the second reading %zu", what, n,
         gcl_image_kernel_count(b));
  ORACLE(gcl_image_sm(a) == gcl_image_sm(b), "%s: sm_%d, the second reading sm_%d", what,
         gcl_image_sm(a), gcl_image_sm(b));
  for (size_t k = 0; k < n; k++) {
    gcl_image_kernel_info x, y;
    CHECK(gcl_image_kernel(a, k, &x) == GCL_OK && gcl_image_kernel(b, k, &y) == GCL_OK);
    ORACLE(!strcmp(x.name, y.name), "%s: kernel %zu is '%.64s', the second reading '%.64s'", what, k,
           x.name, y.name);
    ORACLE(x.param_count == y.param_count && x.param_bytes == y.param_bytes,
           "%s: kernel '%.64s': %zu parameters in %zu bytes, the second reading %zu in %zu", what,
           x.name, x.param_count, x.param_bytes, y.param_count, y.param_bytes);
    for (size_t p = 0; p < x.param_count; p++) {
      size_t o1, s1, a1, o2, s2, a2;
      CHECK(gcl_image_param(a, k, p, &o1, &s1, &a1) == GCL_OK);
      CHECK(gcl_image_param(b, k, p, &o2, &s2, &a2) == GCL_OK);
      ORACLE(o1 == o2 && s1 == s2 && a1 == a2 &&
             same_param_type(a, b, k, p),
             "%s: kernel '%.64s' parameter %zu: offset %zu size %zu align %zu, the second reading "
             "%zu %zu %zu", what, x.name, p, o1, s1, a1, o2, s2, a2);
    }
  }
}

static inline void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8); }
static inline void put32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static inline void put64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static inline uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t get32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static inline uint64_t get64(const uint8_t *p) { return get32(p) | (uint64_t)get32(p + 4) << 32; }

#if FUZZ_FORMAT == 1 || FUZZ_FORMAT == 3
/* payload as the only entry (kind 2 ELF, 1 PTX; uncompressed) of a fatbin container. */
static uint8_t *wrap(const uint8_t *payload, size_t size, unsigned kind, unsigned arch, size_t *out) {
  size_t n = 16 + 64 + size;
  uint8_t *f = calloc(n, 1);
  if (!f) return NULL;
  put32(f, 0xba55ed50u), put16(f + 4, 1), put16(f + 6, 16), put64(f + 8, 64 + size);
  uint8_t *e = f + 16;
  put16(e, (uint16_t)kind), put16(e + 2, 0x0101), put32(e + 4, 64), put64(e + 8, size);
  put32(e + 28, arch);
  memcpy(e + 64, payload, size);
  *out = n;
  return f;
}
#endif

/* The entry the rule picks in the first container of f (its own walk); -1 none, -2 not walkable
 * (the reader must then have refused, or there are more containers). */
#if FUZZ_FORMAT == 2
typedef struct entry {
  unsigned kind, arch;
  uint64_t flags;
  const uint8_t *payload;
  size_t size;
} entry;

static int walk_container(const uint8_t *f, size_t n, int sm, entry *picked) {
  if (n < 16) return -2;
  size_t hs = get16(f + 6);
  uint64_t fs = get64(f + 8);
  if (hs < 16 || hs > n || fs > n - hs) return -2;
  size_t end = hs + (size_t)fs;
  /* more containers follow (a host ELF's section): another rule for sm 0; not compared here */
  size_t next = (end + 7) & ~(size_t)7;
  while (next + 16 <= n && get32(f + next) != 0xba55ed50u && get64(f + next) == 0) next += 8;
  if (next + 16 <= n && get32(f + next) == 0xba55ed50u) return -2;
  entry list[64];
  size_t count = 0;
  for (size_t at = hs; at < end;) {
    if (end - at < 64) return -2;
    const uint8_t *h = f + at;
    uint32_t ehs = get32(h + 4);
    uint64_t ps = get64(h + 8);
    if (ehs < 64 || ehs > end - at || ps > end - at - ehs) return -2;
    if (count == 64) return -2;
    list[count++] = (entry){get16(h), get32(h + 28), get64(h + 40), h + ehs, (size_t)ps};
    at += ehs + (size_t)ps;
  }
  long best = -1;
  for (size_t i = 0; i < count; i++) {
    if (list[i].kind != 2) continue;
    int arch = (int)list[i].arch;
    int fits = sm == 0 || (arch <= sm && arch / 10 == sm / 10);
    if (fits && (best < 0 || list[i].arch > list[best].arch)) best = (long)i;
  }
  if (best < 0)
    for (size_t i = 0; i < count; i++) {
      if (list[i].kind != 1 || (sm != 0 && (int)list[i].arch > sm)) continue;
      if (best < 0 || list[i].arch > list[best].arch) best = (long)i;
    }
  if (best < 0) return -1;
  *picked = list[best];
  return 0;
}
#endif

static gcl_status parse_into(const uint8_t *data, size_t size, int sm, gcl_image **img) {
  *img = NULL;
  gcl_status s = gcl_image_parse(data, size, sm, img);
  if (s == GCL_OK) walk(*img);
  else CHECK(*img == NULL);
  return s;
}

static void parse(const uint8_t *data, size_t size, int sm) {
  gcl_image *img = NULL;
  gcl_status s = parse_into(data, size, sm, &img);
#if FUZZ_FORMAT == 1 || FUZZ_FORMAT == 3
  /* The same bytes as the only entry of a fatbin: the fatbin reader must read them the same.
   * Read alone, the bytes first pass the format checks (a host ELF's machine, a cubin's program
   * headers, PTX's leading .version) that an entry does not get: a refusal there is no claim. */
  char why[256];
  snprintf(why, sizeof why, "%s", s == GCL_OK ? "" : gcl_last_error());
#if FUZZ_FORMAT == 1
  unsigned kind = 2, arch = size >= 52 ? data[49] : 0; /* e_flags >> 8: the SM */
  int wsm = 0;                                         /* sm 0: the highest cubin, this one */
  int claim = s == GCL_OK && gcl_image_format(img) == GCL_IMAGE_CUBIN;
#else
  /* An entry for the architecture asked for. sm 0 is no claim: alone, PTX is then laid out for
   * its own .target, an entry for the entry's architecture. */
  unsigned kind = 1, arch = (unsigned)sm;
  int wsm = sm;
  /* PTX alone: not taken for an ELF or a fatbin, and past the detector */
  int other_magic = size >= 4 && (!memcmp(data, "\x7f" "ELF", 4) || get32(data) == 0xba55ed50u);
  int claim = sm != 0 && !other_magic && (s == GCL_OK || strncmp(why, "not a cubin", 11) != 0);
#endif
  size_t wn = 0;
  uint8_t *w = claim ? wrap(data, size, kind, arch, &wn) : NULL;
  if (w) {
    gcl_image *other = NULL;
    gcl_status s2 = parse_into(w, wn, wsm, &other);
    ORACLE(s == s2, "read alone: %s (%s); as a fatbin entry: %s (%s)", gcl_status_name(s), why,
           gcl_status_name(s2), s2 == GCL_OK ? "" : gcl_last_error());
    if (s == GCL_OK) same_kernels(img, other, "the bytes as a fatbin entry against them alone");
    gcl_image_destroy(other);
    free(w);
  }
#elif FUZZ_FORMAT == 2
  entry e;
  int r = walk_container(data, size, sm, &e);
  if (s == GCL_OK) {
    ORACLE(r != -1, "the reader read a container in which the rule finds no entry for sm_%d", sm);
    if (r == 0 && !(e.flags & 0xa000u) && (e.kind == 1 || e.kind == 2)) {
      int esm = e.kind == 1 ? (sm ? sm : (int)e.arch) : 0;
      uint8_t *copy = malloc(e.size + 1);
      CHECK(copy != NULL);
      memcpy(copy, e.payload, e.size);
      gcl_image *alone = NULL;
      /* Read alone, the payload first passes the format checks an entry does not get (see
       * above): only a payload read alone is compared. */
      if (parse_into(copy, e.size, esm, &alone) == GCL_OK) {
        if (gcl_image_format(alone) == (e.kind == 2 ? GCL_IMAGE_CUBIN : GCL_IMAGE_PTX))
          same_kernels(img, alone, "the container against its picked entry read alone");
        gcl_image_destroy(alone);
      }
      free(copy);
    }
  } else if (s == GCL_ERROR_NOT_FOUND) {
    ORACLE(r != 0, "the reader found no entry for sm_%d, the rule picks %s_%u", sm,
           e.kind == 2 ? "sm" : "compute", e.arch);
  }
#endif
  gcl_image_destroy(img);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* A copy of exactly size bytes, so that ASan sees any read past the end. */
  uint8_t *copy = malloc(size ? size : 1);
  if (!copy) return 0;
  memcpy(copy, data, size);
#if FUZZ_FORMAT == 1
  static const uint8_t magic[4] = {0x7f, 'E', 'L', 'F'};
#elif FUZZ_FORMAT == 2
  static const uint8_t magic[4] = {0x50, 0xed, 0x55, 0xba};
#endif
#if FUZZ_FORMAT == 1 || FUZZ_FORMAT == 2
  memcpy(copy, magic, size < 4 ? size : 4);
#endif
  parse(copy, size, 0);
  parse(copy, size, size % 2 ? 80 : 100);
  free(copy);
  return 0;
}
