/* libFuzzer target: the module image readers (gcl_image_parse). Built three times: FUZZ_FORMAT 1
 * forces the ELF magic (cubin reader), 2 the fatbin magic, 3 leaves the text as it is (PTX
 * reader), so that mutations do not leave the reader under test. A parse must succeed or fail
 * cleanly, and every accessor of a parsed image must answer within bounds. */
#include <stdint.h>
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

static void parse(const uint8_t *data, size_t size, int sm) {
  gcl_image *img = NULL;
  if (gcl_image_parse(data, size, sm, &img) == GCL_OK) {
    walk(img);
    gcl_image_destroy(img);
  } else {
    CHECK(img == NULL);
  }
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
