/* libFuzzer target: the module file reader (gcl_image_file_read, gcl_file_read) over the file
 * size and file type dimensions (issue 50). Input: byte 0 the file type, byte 1 the size, byte 2
 * the format, the rest the file's first bytes:
 *   type   0-3 a regular file, 4 a FIFO (no writer), 5 a directory, 6 a symlink to a regular
 *          file, 7 a symlink to a FIFO, 8 /dev/null (a character device), 9 a missing path;
 *   size   0: the bytes alone; n > 0: the file extended with zeros (sparse) by 2^(n % 33) bytes,
 *          up to 4 GiB, so that a reader that reads whole files is slow and large (libFuzzer's
 *          -rss_limit_mb and -timeout report it);
 *   format 0 as given, 1 the ELF magic forced, 2 the fatbin magic forced. With a forced magic
 *          the tail is at most 2^28 bytes: a cubin's or fatbin's own headers may claim (and the
 *          reader then reads, as it must) up to the whole file, and a fuzzed header claiming
 *          3.3 GB of a 4 GiB sparse file is a legitimate read past libFuzzer's malloc limit, not a
 *          finding (found by CI's 60 s run). Tails past 256 MiB stay for format 0, where text
 *          past GCL_IMAGE_TEXT_MAX must be refused without a read.
 * Oracles: nothing blocks (a FIFO opened for reading without O_NONBLOCK waits for a writer: the
 * -timeout reports it); what is not a regular file is refused with GCL_ERROR_IO naming it; a
 * regular file read succeeds with a prefix of the file, no larger than the file; and the image
 * read from that prefix parses exactly as the whole file in memory does (the same status, the
 * same kernels), where the whole file is small enough to hold (a zero tail of at most 1 MiB).
 * Where the reader refuses an image as truncated, parsing the whole file fails too (a cubin or
 * fatbin; a host ELF's parse does not look at every section). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gclaunch/gclaunch.h"

#define CHECK(cond)                                                                               \
  do {                                                                                            \
    if (!(cond)) {                                                                                \
      fprintf(stderr, "fuzz_file: %s (line %d): %s\n", #cond, __LINE__, gcl_last_error());       \
      abort();                                                                                    \
    }                                                                                             \
  } while (0)

static char dir[64];

static void make_dir(void) {
  if (dir[0]) return;
  snprintf(dir, sizeof dir, "/tmp/gcl-fuzz-file.%d", (int)getpid());
  CHECK(mkdir(dir, 0700) == 0 || errno == EEXIST);
}

/* The file at *path: the bytes (with the format's magic) and the zero tail; false when it could
 * not be made here (no fault of the reader). */
static bool write_file(const char *path, const uint8_t *p, size_t n, uint64_t tail) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) return false;
  bool ok = n == 0 || write(fd, p, n) == (ssize_t)n;
  if (ok && tail) ok = ftruncate(fd, (off_t)(n + tail)) == 0;
  close(fd);
  return ok;
}

/* Whole-file parse and prefix parse agree (status, kernel count and names). */
static void same_parse(const uint8_t *whole, size_t whole_n, const void *read, size_t read_n) {
  gcl_image *a = NULL, *b = NULL;
  gcl_status sa = gcl_image_parse(whole, whole_n, 0, &a);
  gcl_status sb = gcl_image_parse(read, read_n, 0, &b);
  CHECK(sa == sb);
  if (sa == GCL_OK) {
    CHECK(gcl_image_kernel_count(a) == gcl_image_kernel_count(b));
    for (size_t k = 0; k < gcl_image_kernel_count(a); k++) {
      gcl_image_kernel_info ia, ib;
      CHECK(gcl_image_kernel(a, k, &ia) == GCL_OK && gcl_image_kernel(b, k, &ib) == GCL_OK);
      CHECK(strcmp(ia.name, ib.name) == 0 && ia.param_count == ib.param_count);
    }
  }
  gcl_image_destroy(a);
  gcl_image_destroy(b);
}

static void regular(const char *path, const uint8_t *p, size_t n, uint64_t tail) {
  void *data = NULL;
  size_t size = 0;
  gcl_status s = gcl_image_file_read(path, &data, &size);
  bool small = tail <= (1u << 20);
  uint8_t *whole = small ? calloc(1, n + tail + 1) : NULL;
  if (whole && n) memcpy(whole, p, n);
  if (s == GCL_OK) {
    CHECK(size <= n + tail);
    CHECK(memcmp(data, p, size < n ? size : n) == 0);                   /* a prefix: the bytes */
    for (size_t i = n; i < size; i++) CHECK(((uint8_t *)data)[i] == 0); /* and the zero tail */
    CHECK(((char *)data)[size] == 0);                                    /* NUL-terminated */
    if (whole) same_parse(whole, n + tail, data, size);
    gcl_file_free(data);
  } else {
    CHECK(s == GCL_ERROR_BAD_IMAGE || s == GCL_ERROR_OUT_OF_MEMORY);
    CHECK(strstr(gcl_last_error(), path) != NULL);
    unsigned machine = n >= 20 && p[0] == 0x7f ? (unsigned)(p[18] | p[19] << 8) : 0;
    gcl_image *img = NULL;
    if (whole && s == GCL_ERROR_BAD_IMAGE && (machine == 0 || machine == 190))
      CHECK(gcl_image_parse(whole, n + tail, 0, &img) != GCL_OK);
    gcl_image_destroy(img);
  }
  free(whole);
}

/* A FIFO, a directory, a device, a missing path: refused at once, naming the path. */
static void refused(const char *path, bool missing) {
  void *data = (void *)1;
  size_t size = 7;
  CHECK(gcl_image_file_read(path, &data, &size) == GCL_ERROR_IO);
  CHECK(strstr(gcl_last_error(), missing ? "No such file" : "not a regular file") != NULL);
  CHECK(data == (void *)1 && size == 7); /* outputs untouched */
  CHECK(gcl_file_read(path, &data, &size) == GCL_ERROR_IO);
  CHECK(data == (void *)1 && size == 7);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 3) return 0;
  make_dir();
  unsigned type = data[0] % 10, format = data[2] % 3;
  uint64_t tail = data[1] ? (uint64_t)1 << (data[1] % 33) : 0;
  if (format != 0 && tail > ((uint64_t)1 << 28)) tail = (uint64_t)1 << 28;
  size_t n = size - 3;
  uint8_t *p = malloc(n ? n : 1);
  CHECK(p != NULL);
  if (n) memcpy(p, data + 3, n);
  if (format == 1 && n >= 4) memcpy(p, "\x7f" "ELF", 4);
  if (format == 2 && n >= 4) memcpy(p, "\x50\xed\x55\xba", 4);
  char file[96], link[96];
  snprintf(file, sizeof file, "%s/m.cubin", dir);
  snprintf(link, sizeof link, "%s/l.cubin", dir);
  unlink(file), rmdir(file), unlink(link);
  if (type <= 3 || type == 6) {
    if (write_file(file, p, n, tail)) {
      if (type == 6 && symlink(file, link) == 0) regular(link, p, n, tail);
      else if (type != 6) regular(file, p, n, tail);
    }
  } else if (type == 4 || type == 7) {
    if (mkfifo(file, 0600) == 0) {
      if (type == 7 && symlink(file, link) == 0) refused(link, false);
      else if (type == 4) refused(file, false);
    }
  } else if (type == 5) {
    if (mkdir(file, 0700) == 0) refused(file, false);
  } else if (type == 8) {
    refused("/dev/null", false);
  } else {
    refused(file, true);
  }
  unlink(link), unlink(file), rmdir(file);
  free(p);
  return 0;
}
