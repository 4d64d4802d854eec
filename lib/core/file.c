/* The one file reader of the library (modules, and the tools through gcl_file_read): the whole
 * file into one allocation of its exact size, with messages naming the path and the errno text. */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* The size of the regular file f, or a GCL_ERROR_IO naming path. */
static gcl_status file_size(FILE *f, const char *path, size_t *size) {
  char err[256];
  struct stat st;
  if (fstat(fileno(f), &st) != 0)
    return gcl__fail(GCL_ERROR_IO, "cannot stat '%s': %s", path, strerror_r(errno, err, sizeof err));
  if (!S_ISREG(st.st_mode))
    return gcl__fail(GCL_ERROR_IO, "cannot read '%s': not a regular file", path);
  if ((unsigned long long)st.st_size >= SIZE_MAX)
    return gcl__fail(GCL_ERROR_IO, "cannot read '%s': %lld bytes is too large", path,
                     (long long)st.st_size);
  *size = (size_t)st.st_size;
  return GCL_OK;
}

gcl_status gcl__read_file(const char *path, void **data, size_t *size) {
  char err[256];
  FILE *f = fopen(path, "rb");
  if (!f) return gcl__fail(GCL_ERROR_IO, "cannot read '%s': %s", path, strerror_r(errno, err, sizeof err));
  size_t n = 0;
  gcl_status s = file_size(f, path, &n);
  char *buf = s == GCL_OK ? gcl__malloc(n + 1) : NULL;
  if (s == GCL_OK && !buf)
    s = gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "reading '%s': cannot allocate %zu bytes", path, n + 1);
  size_t got = buf ? fread(buf, 1, n, f) : 0;
  int e = buf && ferror(f) ? errno : 0;
  fclose(f);
  if (s == GCL_OK && got != n)
    s = gcl__fail(GCL_ERROR_IO, "reading '%s': got %zu of %zu bytes%s%s", path, got, n,
                  e ? ": " : "", e ? strerror_r(e, err, sizeof err) : "");
  if (s != GCL_OK) {
    gcl__free(buf);
    return s;
  }
  buf[n] = 0;
  *data = buf;
  *size = n;
  return GCL_OK;
}

gcl_status gcl_file_read(const char *path, void **data, size_t *size) {
  if (!path || !data || !size)
    return gcl__fail_null("gcl_file_read", 3, "path", (const void *)path, "data",
                          (const void *)data, "size", (const void *)size);
  return gcl__read_file(path, data, size);
}

void gcl_file_free(void *data) { gcl__free(data); }
