/* Kernels of a module image for run and inspect (climodule.h): demangled names, lookup with
 * suggestions, a declared signature against the image's records. */
#include "climodule.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef GCL_HAVE_LIBIBERTY
#include <libiberty/demangle.h>
#endif

char *cli_demangle(const char *name, bool params) {
#ifdef GCL_HAVE_LIBIBERTY
  if (strncmp(name, "_Z", 2) != 0) return NULL;
  return cplus_demangle(name, DMGL_ANSI | (params ? DMGL_PARAMS : 0));
#else
  (void)name, (void)params;
  return NULL;
#endif
}

/* Levenshtein distance of the first 96 bytes of a and b (long mangled names are cut: the
 * ranking only has to put the likely ones first). */
static size_t distance(const char *a, const char *b) {
  enum { MAXLEN = 96 };
  size_t n = strnlen(a, MAXLEN), m = strnlen(b, MAXLEN), row[MAXLEN + 1];
  for (size_t j = 0; j <= m; j++) row[j] = j;
  for (size_t i = 1; i <= n; i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= m; j++) {
      size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[m];
}

typedef struct ranked { size_t index, dist; } ranked;

static int by_distance(const void *x, const void *y) {
  const ranked *a = x, *b = y;
  if (a->dist != b->dist) return a->dist < b->dist ? -1 : 1;
  return a->index < b->index ? -1 : a->index > b->index;
}

/* The name compared and shown: the demangled one without parameters when there is one. */
static char *short_name(const gcl_image *img, size_t k) {
  gcl_image_kernel_info info;
  if (gcl_image_kernel(img, k, &info) != GCL_OK) return NULL;
  char *d = cli_demangle(info.name, false);
  return d ? d : strdup(info.name);
}

static void list_closest(const gcl_image *img, const char *name) {
  size_t n = gcl_image_kernel_count(img), shown = n < 10 ? n : 10;
  ranked *r = calloc(n + 1, sizeof *r);
  if (!r) return;
  for (size_t k = 0; k < n; k++) {
    char *s = short_name(img, k);
    r[k] = (ranked){k, s ? distance(name, s) : (size_t)-1};
    free(s);
  }
  qsort(r, n, sizeof *r, by_distance);
  fprintf(stderr, "  kernels there%s:\n", n > shown ? ", closest first" : "");
  for (size_t i = 0; i < shown; i++) {
    gcl_image_kernel_info info;
    if (gcl_image_kernel(img, r[i].index, &info) != GCL_OK) continue;
    char *d = cli_demangle(info.name, true);
    fprintf(stderr, "    %s%s%s%s\n", info.name, d ? "  (" : "", d ? d : "", d ? ")" : "");
    free(d);
  }
  if (n > shown) fprintf(stderr, "    ... and %zu more (gclaunch inspect lists them)\n", n - shown);
  free(r);
}

bool cli_kernel_find(const char *cmd, const gcl_image *img, const char *path, const char *name,
                     size_t *index) {
  if (gcl_image_find_kernel(img, name, index) == GCL_OK) return true;
  size_t n = gcl_image_kernel_count(img), found = 0;
  for (size_t k = 0; k < n && found < 2; k++) { /* "saxpy" for _Z5saxpyfPKfPfm */
    char *s = short_name(img, k);
    if (s && !strcmp(s, name) && found++ == 0) *index = k;
    free(s);
  }
  if (found == 1) return true;
  if (found > 1) cli_error(cmd, "%s: '%s' names several kernels (overloads or templates); give the "
                           "mangled name", path, name);
  else cli_error(cmd, "%s: no kernel '%s' (%zu kernel%s)", path, name, n, n == 1 ? "" : "s");
  if (n) list_closest(img, name);
  return false;
}

bool cli_signature_check(const char *cmd, const gcl_image *img, size_t k, const gcl_layout *layout,
                         const char *path) {
  gcl_image_kernel_info info;
  if (gcl_image_kernel(img, k, &info) != GCL_OK) return cli_error(cmd, "%s", gcl_last_error()), false;
  int sm = gcl_image_sm(img);
  if (gcl_layout_count(layout) != info.param_count) {
    cli_error(cmd, "--signature declares %zu parameters, kernel '%s' has %zu in '%s' (sm_%d)",
              gcl_layout_count(layout), info.name, info.param_count, path, sm);
    return false;
  }
  for (size_t p = 0; p < info.param_count; p++) {
    size_t off = 0, size = 0, doff = 0, dsize = 0;
    gcl_field d;
    if (gcl_image_param(img, k, p, &off, &size, NULL) != GCL_OK ||
        gcl_layout_param(layout, p, &doff, &dsize, NULL) != GCL_OK ||
        gcl_layout_param_field(layout, p, &d) != GCL_OK)
      return cli_error(cmd, "%s", gcl_last_error()), false;
    if (doff == off && dsize == size) continue;
    cli_error(cmd, "--signature: kernel '%s' in '%s' (sm_%d): parameter %zu '%s': declared offset "
              "%zu size %zu, kernel has offset %zu size %zu", info.name, path, sm, p,
              d.info.name ? d.info.name : "", doff, dsize, off, size);
    return false;
  }
  return true;
}
