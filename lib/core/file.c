/* The one file reader of the library (modules, and the tools through gcl_file_read and
 * gcl_image_file_read), with messages naming the path and the errno text.
 *
 * Nothing here blocks on a file that is not a regular one: the file is opened with O_NONBLOCK
 * (a FIFO without a writer opens at once that way, where a plain open waits for one) and judged
 * by fstat before anything is read. A module image is judged by its header before any large
 * read: only the bytes its format says it holds are read (gcl_image_file_read). */
#include "image_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ELF_HEADER 64u
#define ELF_SECTION 64u

static const char *type_name(mode_t m) {
  return S_ISFIFO(m) ? "a FIFO" : S_ISDIR(m) ? "a directory" : S_ISCHR(m) ? "a character device"
         : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

static gcl_status io_fail(const char *what, const char *path, int e) {
  char err[256];
  return gcl__fail(GCL_ERROR_IO, "cannot %s '%s': %s", what, path, strerror_r(e, err, sizeof err));
}

/* Opens path for reading without ever blocking: a regular file only (*fd, *size), else a
 * GCL_ERROR_IO naming what the file is. */
static gcl_status open_regular(const char *path, int *fd, uint64_t *size) {
  int f = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (f < 0) return io_fail("read", path, errno);
  struct stat st;
  gcl_status s = GCL_OK;
  if (fstat(f, &st) != 0) s = io_fail("stat", path, errno);
  else if (!S_ISREG(st.st_mode))
    s = gcl__fail(GCL_ERROR_IO, "cannot read '%s': %s, not a regular file", path,
                  type_name(st.st_mode));
  else if ((unsigned long long)st.st_size >= SIZE_MAX)
    s = gcl__fail(GCL_ERROR_IO, "cannot read '%s': %lld bytes is too large", path,
                  (long long)st.st_size);
  else if (fcntl(f, F_SETFL, fcntl(f, F_GETFL) & ~O_NONBLOCK) != 0)
    s = io_fail("read", path, errno);
  if (s != GCL_OK) {
    close(f);
    return s;
  }
  *fd = f;
  *size = (uint64_t)st.st_size;
  return GCL_OK;
}

/* Exactly n bytes at off into buf; a short read is a GCL_ERROR_IO. */
static gcl_status read_at(int fd, const char *path, void *buf, size_t n, uint64_t off) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return io_fail("read", path, errno);
    if (r == 0)
      return gcl__fail(GCL_ERROR_IO, "reading '%s': got %zu of %zu bytes at offset %llu", path,
                       got, n, (unsigned long long)off);
    got += (size_t)r;
  }
  return GCL_OK;
}

/* The first n bytes of the file into a new NUL-terminated block. */
static gcl_status read_prefix(int fd, const char *path, size_t n, void **data, size_t *size) {
  char *buf = gcl__malloc(n + 1);
  if (!buf)
    return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "reading '%s': cannot allocate %zu bytes", path,
                     n + 1);
  gcl_status s = read_at(fd, path, buf, n, 0);
  if (s != GCL_OK) {
    gcl__free(buf);
    return s;
  }
  buf[n] = 0;
  *data = buf;
  *size = n;
  return GCL_OK;
}

gcl_status gcl__read_file(const char *path, void **data, size_t *size) {
  int fd;
  uint64_t n;
  gcl_status s = open_regular(path, &fd, &n);
  if (s != GCL_OK) return s;
  s = read_prefix(fd, path, (size_t)n, data, size);
  close(fd);
  return s;
}

static gcl_status past_end(const char *path, const char *what, uint64_t end, uint64_t file) {
  return gcl__fail(GCL_ERROR_BAD_IMAGE, "'%s' is truncated: its %s ends at byte %llu, the file "
                   "has %llu bytes", path, what, (unsigned long long)end, (unsigned long long)file);
}

/* The bytes an ELF64 image spans by its own headers: the header, the program header table,
 * the section table and every section body (SHT_NOBITS has none). Reads the section table
 * only. Anything the header does not describe well enough (another class, no section table)
 * is left to the image reader's message: *need is then the header alone. */
static gcl_status elf_extent(int fd, const char *path, const uint8_t *h, uint64_t file,
                             uint64_t *need) {
  *need = ELF_HEADER;
  if (h[4] != 2 || h[5] != 1) return GCL_OK;
  uint64_t shoff = gcl__le64(h + 40), phoff = gcl__le64(h + 32);
  uint64_t shnum = gcl__le16(h + 60), phnum = gcl__le16(h + 56);
  if (shnum == 0 || gcl__le16(h + 58) != ELF_SECTION) return GCL_OK;
  uint64_t phend = phnum ? phoff + (uint64_t)gcl__le16(h + 54) * phnum : 0;
  if (phnum && (phoff > file || phend > file))
    return past_end(path, "program header table", phend, file);
  if (shoff > file || shnum * ELF_SECTION > file - shoff)
    return past_end(path, "section table", shoff + shnum * ELF_SECTION, file);
  uint8_t *t = gcl__malloc((size_t)(shnum * ELF_SECTION));
  if (!t) return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "reading '%s': out of memory", path);
  gcl_status s = read_at(fd, path, t, (size_t)(shnum * ELF_SECTION), shoff);
  uint64_t end = shoff + shnum * ELF_SECTION;
  end = end > phend ? end : phend;
  for (uint64_t i = 0; s == GCL_OK && i < shnum; i++) {
    const uint8_t *e = t + i * ELF_SECTION;
    uint64_t off = gcl__le64(e + 24), sz = gcl__le64(e + 32);
    if (gcl__le32(e + 4) == GCL__SHT_NOBITS) continue; /* an empty body counts its offset */
    if (off > file || sz > file - off) {
      char what[48];
      snprintf(what, sizeof what, "section %llu", (unsigned long long)i);
      s = past_end(path, what, off + sz, file);
    } else if (off + sz > end)
      end = off + sz;
  }
  gcl__free(t);
  if (s == GCL_OK) *need = end;
  return s;
}

/* The bytes a fatbin spans: its containers one after another (each padded to 8 bytes, zero
 * words between them skipped as the reader skips them, up to FATBIN_GAP bytes of them), up to
 * the first place that does not start another. Reads their 16-byte headers only. */
#define FATBIN_GAP 65536u
static gcl_status fatbin_extent(int fd, const char *path, uint64_t file, uint64_t *need) {
  uint64_t at = 0, end = 0, gap = 0;
  uint8_t h[16];
  while (at <= file && file - at >= sizeof h) {
    gcl_status s = read_at(fd, path, h, sizeof h, at);
    if (s != GCL_OK) return s;
    if (end && gcl__le32(h) != 0xba55ed50u && gcl__le64(h) == 0 && (gap += 8) <= FATBIN_GAP) {
      at += 8; /* padding between containers */
      continue;
    }
    if (gcl__le32(h) != 0xba55ed50u) break;
    gap = 0;
    uint64_t hs = gcl__le16(h + 6), fs = gcl__le64(h + 8);
    if (fs > file || hs + fs > file - at) {
      char what[64];
      snprintf(what, sizeof what, "fatbin container at byte %llu", (unsigned long long)at);
      return past_end(path, what, at + hs + fs, file);
    }
    end = at + hs + fs;
    at = (end + 7) & ~(uint64_t)7;
    if (hs < 16) break; /* the image reader names it */
  }
  *need = end > 16 ? end : (file < 16 ? file : 16);
  return GCL_OK;
}

/* How many bytes of the file the image needs, judged from its first bytes. */
static gcl_status image_extent(int fd, const char *path, uint64_t file, uint64_t *need) {
  uint8_t h[ELF_HEADER] = {0};
  size_t n = file < sizeof h ? (size_t)file : sizeof h;
  gcl_status s = read_at(fd, path, h, n, 0);
  if (s != GCL_OK) return s;
  if (n >= 4 && memcmp(h, "\x7f" "ELF", 4) == 0)
    s = n == ELF_HEADER ? elf_extent(fd, path, h, file, need) : (*need = n, GCL_OK);
  else if (n >= 4 && gcl__le32(h) == 0xba55ed50u)
    s = fatbin_extent(fd, path, file, need);
  else if (file > GCL_IMAGE_TEXT_MAX)
    s = gcl__fail(GCL_ERROR_BAD_IMAGE, "'%s' is %llu bytes: not a cubin or fatbin (by its first "
                  "bytes), and text (PTX, CUDA source) is read up to %llu bytes", path,
                  (unsigned long long)file, (unsigned long long)GCL_IMAGE_TEXT_MAX);
  else
    *need = file;
  if (s == GCL_OK && *need > file) *need = file;
  return s;
}

gcl_status gcl__read_image_file(const char *path, void **data, size_t *size) {
  int fd;
  uint64_t file, need = 0;
  gcl_status s = open_regular(path, &fd, &file);
  if (s != GCL_OK) return s;
  s = image_extent(fd, path, file, &need);
  if (s == GCL_OK) s = read_prefix(fd, path, (size_t)need, data, size);
  close(fd);
  return s;
}

gcl_status gcl_file_read(const char *path, void **data, size_t *size) {
  if (!path || !data || !size)
    return gcl__fail_null("gcl_file_read", 3, "path", (const void *)path, "data",
                          (const void *)data, "size", (const void *)size);
  return gcl__read_file(path, data, size);
}

gcl_status gcl_image_file_read(const char *path, void **data, size_t *size) {
  if (!path || !data || !size)
    return gcl__fail_null("gcl_image_file_read", 3, "path", (const void *)path, "data",
                          (const void *)data, "size", (const void *)size);
  return gcl__read_image_file(path, data, size);
}

void gcl_file_free(void *data) { gcl__free(data); }
