/* Module files on the CPU for run and inspect (climodule.h). */
#include "climodule.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef GCL_HAVE_LIBIBERTY
#include <libiberty/demangle.h>
#endif

void cli_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "gclaunch %s: ", cmd);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

int cli_parse_arch(const char *s) {
  if (!strncmp(s, "sm_", 3)) s += 3;
  else if (!strncmp(s, "compute_", 8)) s += 8;
  char *end;
  long v = strtol(s, &end, 10);
  if (end == s || (*end && strcmp(end, "a") && strcmp(end, "f")) || v < 10 || v > 255) return 0;
  return (int)v;
}

/* The library's one file reader (NUL-terminated; free with gcl_file_free). */
unsigned char *cli_read_file(const char *cmd, const char *what, const char *path, size_t *size) {
  void *data = NULL;
  *size = 0;
  if (gcl_file_read(path, &data, size) != GCL_OK) cli_error(cmd, "%s: %s", what, gcl_last_error());
  return data;
}

char *cli_read_text(const char *cmd, const char *what, const char *path, size_t max, size_t *size) {
  struct stat sb; /* judged before it is read: a FIFO is refused by gcl_file_read, never waited on */
  if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && (unsigned long long)sb.st_size > max) {
    cli_error(cmd, "%s @%s: %llu bytes, more than the %zu read", what, path,
              (unsigned long long)sb.st_size, max);
    return NULL;
  }
  void *data = NULL;
  if (gcl_file_read(path, &data, size) != GCL_OK) {
    cli_error(cmd, "%s @%s: %s", what, path, gcl_last_error());
    return NULL;
  }
  if (strlen(data) != *size) {
    cli_error(cmd, "%s @%s: a NUL byte at offset %zu", what, path, strlen(data));
    gcl_file_free(data);
    return NULL;
  }
  return data;
}

bool cli_is_source(const char *path) {
  size_t n = strlen(path);
  return n >= 3 && !strcmp(path + n - 3, ".cu");
}

/* --- CUDA source without a GPU: NVRTC through the library (gcl_nvrtc_compile) ------------------ */

/* source compiled for sm_SM into a cubin by the library (free with gcl_file_free); NULL after a
 * message (the compiler log included). */
static unsigned char *compile(const char *cmd, const char *path, const char *source, int sm,
                              size_t *size) {
  void *cubin = NULL;
  if (gcl_nvrtc_compile(source, path, NULL, 0, sm, &cubin, size) != GCL_OK) {
    cli_error(cmd, "%s: %s", path, gcl_last_error());
    return NULL;
  }
  return cubin;
}

bool cli_module_read(const char *cmd, const char *path, int sm, gcl_image **img) {
  size_t size = 0;
  void *read = NULL; /* judged by its first bytes: only what its format spans is read */
  if (gcl_image_file_read(path, &read, &size) != GCL_OK)
    cli_error(cmd, "MODULE: %s", gcl_last_error());
  unsigned char *data = read, *cubin = NULL;
  if (data && cli_is_source(path)) {
    cubin = compile(cmd, path, (const char *)data, sm ? sm : 90, &size);
    gcl_file_free(data);
    if (!cubin) return false;
  }
  if (!data) return false;
  gcl_status s = gcl_image_parse(cubin ? cubin : data, size, sm, img);
  gcl_file_free(cubin ? cubin : data);
  if (s != GCL_OK) cli_error(cmd, "%s: %s: %s", path, gcl_status_name(s), gcl_last_error());
  return s == GCL_OK;
}
