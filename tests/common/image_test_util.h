/* Helpers shared by the image reader tests: read build outputs, parse them, compile with NVRTC. */
#ifndef GCL_IMAGE_TEST_UTIL_H
#define GCL_IMAGE_TEST_UTIL_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suite.h"
#include "driver.h"

/* NVRTC 13 keeps some allocations until exit (seen after failed compiles): not ours to free.
 * LeakSanitizer reads this hook when the test is built with -fsanitize=address; one definition
 * per test binary (each includes this header from one file). */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) { return "leak:libnvrtc.so\n"; }

/* The whole file, NUL-terminated (not counted in *n); NULL if it cannot be read. */
static inline unsigned char *itu_read_file(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, used = 0, got;
  unsigned char *buf = malloc(cap + 1);
  while (buf && (got = fread(buf + used, 1, cap - used, f)) > 0)
    if ((used += got) == cap) buf = realloc(buf, (cap *= 2) + 1);
  fclose(f);
  if (buf) buf[used] = 0;
  *n = used;
  return buf;
}

static inline unsigned char *itu_read_kernel_file(const char *name, size_t *n) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", GCL_KERNEL_DIR, name);
  unsigned char *data = itu_read_file(path, n);
  cr_assert_not_null(data, "cannot read %s (built by kernels/meson.build)", path);
  return data;
}

static inline gcl_image *itu_parse_kernel_file(const char *name, int sm) {
  size_t n;
  unsigned char *data = itu_read_kernel_file(name, &n);
  gcl_image *img = NULL;
  gcl_status s = gcl_image_parse(data, n, sm, &img);
  cr_assert_eq(s, GCL_OK, "%s (sm %d): %s: %s", name, sm, gcl_status_name(s), gcl_last_error());
  free(data);
  return img;
}

/* Skips the calling test when NVRTC cannot be loaded (CI machines without the toolkit). */
static inline void itu_require_nvrtc(void) {
  if (gcl__nvrtc_load() != GCL_OK) GCL_SKIP_NO_NVRTC("NVRTC not available: %s", gcl_last_error());
}

/* The real architectures NVRTC builds (nvrtcGetSupportedArchs: 75, 80, ... 121 for 13.0), in its
 * order, into archs[0..cap); returns how many. The differential tests run on every one. */
static inline size_t itu_nvrtc_archs(int *archs, size_t cap) {
  int n = 0;
  cr_assert_eq(gcl__nvrtc.nvrtcGetNumSupportedArchs(&n), NVRTC_SUCCESS);
  cr_assert(n > 0 && (size_t)n <= cap, "NVRTC lists %d architectures (room for %zu)", n, cap);
  cr_assert_eq(gcl__nvrtc.nvrtcGetSupportedArchs(archs), NVRTC_SUCCESS);
  return (size_t)n;
}

/* Compiles src for sm_NN with NVRTC. On success *cubin (malloc'd) holds the cubin and *ptx (may be
 * NULL) the PTX; on failure *log (malloc'd) holds the compiler log. Returns the NVRTC result. */
static inline nvrtcResult itu_nvrtc_compile(const char *src, int sm, unsigned char **cubin,
                                            size_t *cubin_n, char **ptx, char **log) {
  nvrtcProgram prog;
  char arch[32];
  snprintf(arch, sizeof arch, "-arch=sm_%d", sm);
  const char *opts[] = {arch, "-std=c++17"};
  nvrtcResult r = gcl__nvrtc.nvrtcCreateProgram(&prog, src, "gen.cu", 0, NULL, NULL);
  if (r != NVRTC_SUCCESS) return r;
  r = gcl__nvrtc.nvrtcCompileProgram(prog, 2, opts);
  size_t n = 0;
  *log = NULL;
  if (r != NVRTC_SUCCESS) {
    gcl__nvrtc.nvrtcGetProgramLogSize(prog, &n);
    *log = malloc(n + 1);
    gcl__nvrtc.nvrtcGetProgramLog(prog, *log);
  } else {
    gcl__nvrtc.nvrtcGetCUBINSize(prog, cubin_n);
    *cubin = malloc(*cubin_n);
    gcl__nvrtc.nvrtcGetCUBIN(prog, (char *)*cubin);
    if (ptx) {
      gcl__nvrtc.nvrtcGetPTXSize(prog, &n);
      *ptx = malloc(n);
      gcl__nvrtc.nvrtcGetPTX(prog, *ptx);
    }
  }
  gcl__nvrtc.nvrtcDestroyProgram(&prog);
  return r;
}

#endif
