/* Fatbin reader: the container nvcc -fatbin writes (found by reading nvcc 13's output):
 *   header  u32 magic 0xba55ed50, u16 version 1, u16 header bytes (16), u64 bytes of entries
 *   entry   u16 kind (1 PTX, 2 ELF cubin), u16 ?, u32 header bytes, u64 payload bytes,
 *           u32 compressed bytes, u32 ?, u16 ?, u16 ?, u32 arch (90), u32 name offset,
 *           u32 name bytes, u64 flags (0x8000: zstd-compressed payload), u64 0, u64 plain bytes
 * Containers may follow each other. PTX entries of nvcc 13 are zstd-compressed by default; they
 * are decoded with the system's libzstd, opened at run time, so the library links nothing new. */
#include "image_internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FATBIN_MAGIC 0xba55ed50u
#define ENTRY_MIN 64u
#define FLAG_ZSTD 0x8000u
#define FLAG_LZ4 0x2000u
#define MAX_ENTRIES 1024u
#define MAX_PLAIN (256u << 20) /* refuse to inflate a hostile size claim past 256 MiB */

typedef struct fat_entry {
  unsigned kind, arch;
  uint64_t flags, packed, plain;
  gcl__bytes payload;
} fat_entry;

bool gcl__is_fatbin(gcl__bytes data) {
  return data.n >= 4 && gcl__le32(data.p) == FATBIN_MAGIC;
}

static gcl_status read_entry(gcl__bytes body, size_t at, size_t n, fat_entry *e, size_t *next) {
  if (!gcl__bytes_has(body, at, ENTRY_MIN))
    return gcl__fail(GCL_ERROR_BAD_IMAGE, "fatbin: entry %zu header is truncated", n);
  const uint8_t *h = body.p + at;
  uint32_t hsize = gcl__le32(h + 4);
  uint64_t psize = gcl__le64(h + 8);
  if (hsize < ENTRY_MIN || !gcl__bytes_has(body, at + hsize, psize))
    return gcl__fail(GCL_ERROR_BAD_IMAGE,
                     "fatbin truncated: entry %zu (header %u bytes, payload %llu bytes) runs past the end",
                     n, hsize, (unsigned long long)psize);
  fat_entry r = {.kind = gcl__le16(h), .arch = gcl__le32(h + 28), .flags = gcl__le64(h + 40),
                 .packed = gcl__le32(h + 16), .plain = gcl__le64(h + 56),
                 .payload = gcl__bytes_sub(body, at + hsize, psize)};
  *e = r;
  *next = at + hsize + psize;
  return GCL_OK;
}

/* Lists the entries of every container in d. */
static gcl_status list_entries(gcl__bytes d, fat_entry *out, size_t *count) {
  size_t at = 0, n = 0;
  while (at + 16 <= d.n && gcl__le32(d.p + at) == FATBIN_MAGIC) {
    uint16_t hs = gcl__le16(d.p + at + 6);
    uint64_t fs = gcl__le64(d.p + at + 8);
    if (hs < 16 || !gcl__bytes_has(d, at + hs, fs))
      return gcl__fail(GCL_ERROR_BAD_IMAGE,
                       "fatbin truncated: container at byte %zu (header %u, %llu bytes of entries) runs "
                       "past the end of the %zu-byte image",
                       at, hs, (unsigned long long)fs, d.n);
    gcl__bytes body = gcl__bytes_sub(d, at + hs, fs);
    for (size_t e = 0; e < body.n; n++) {
      if (n == MAX_ENTRIES)
        return gcl__fail(GCL_ERROR_BAD_IMAGE, "fatbin: more than %u entries", MAX_ENTRIES);
      gcl_status s = read_entry(body, e, n, &out[n], &e);
      if (s != GCL_OK) return s;
    }
    at += hs + fs;
  }
  if (at < 16)
    return gcl__fail(GCL_ERROR_BAD_IMAGE, "fatbin truncated: %zu bytes is shorter than the 16-byte header",
                     d.n);
  *count = n;
  return GCL_OK;
}

/* Best entry for sm: the exact cubin, else the highest cubin <= sm of the same major, else the
 * highest PTX <= sm (the driver would JIT it). sm 0: the highest cubin, else the highest PTX. */
static long choose(const fat_entry *e, size_t n, int sm) {
  long best = -1;
  for (size_t i = 0; i < n; i++) {
    if (e[i].kind != 2) continue;
    bool fits = sm == 0 || ((int)e[i].arch <= sm && (int)e[i].arch / 10 == sm / 10);
    if (fits && (best < 0 || e[i].arch > e[best].arch)) best = (long)i;
  }
  if (best >= 0) return best;
  for (size_t i = 0; i < n; i++) {
    if (e[i].kind != 1 || (sm != 0 && (int)e[i].arch > sm)) continue;
    if (best < 0 || e[i].arch > e[best].arch) best = (long)i;
  }
  return best;
}

static gcl_status no_entry(const fat_entry *e, size_t n, int sm) {
  gcl__fail(GCL_ERROR_NOT_FOUND, "fatbin: no entry usable on sm_%d; it holds:", sm);
  for (size_t i = 0; i < n && i < 32; i++) {
    char item[48];
    snprintf(item, sizeof item, " %s_%u", e[i].kind == 2 ? "sm" : e[i].kind == 1 ? "compute" : "?",
             e[i].arch);
    gcl__fail_append(item);
  }
  if (n == 0) gcl__fail_append(" no entries");
  return GCL_ERROR_NOT_FOUND;
}

typedef size_t (*zstd_decompress_fn)(void *, size_t, const void *, size_t);
typedef unsigned (*zstd_is_error_fn)(size_t);
typedef const char *(*zstd_error_name_fn)(size_t);
static struct {
  zstd_decompress_fn decompress;
  zstd_is_error_fn is_error;
  zstd_error_name_fn error_name;
} zstd;
static pthread_once_t zstd_once = PTHREAD_ONCE_INIT;

static void zstd_open(void) {
  void *h = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) return;
  zstd.is_error = (zstd_is_error_fn)dlsym(h, "ZSTD_isError");
  zstd.error_name = (zstd_error_name_fn)dlsym(h, "ZSTD_getErrorName");
  zstd.decompress = (zstd_decompress_fn)dlsym(h, "ZSTD_decompress");
  if (!zstd.is_error || !zstd.error_name) zstd.decompress = NULL;
}

/* Inflates a zstd-compressed entry into *plain (malloc'd, NUL-terminated). */
static gcl_status inflate(const fat_entry *e, size_t n, uint8_t **plain, size_t *size) {
  pthread_once(&zstd_once, zstd_open);
  if (!zstd.decompress)
    return gcl__fail(GCL_ERROR_BAD_IMAGE, "fatbin: entry %zu is compressed (zstd) and "
                     "libzstd.so.1 could not be opened to decode it", n);
  if (e->packed > e->payload.n || e->plain == 0 || e->plain > MAX_PLAIN)
    return gcl__fail(GCL_ERROR_BAD_IMAGE, "fatbin: entry %zu: compressed size %llu or plain size "
                     "%llu is impossible", n, (unsigned long long)e->packed,
                     (unsigned long long)e->plain);
  uint8_t *buf = gcl__malloc((size_t)e->plain + 1);
  if (!buf) return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "fatbin: entry %zu: out of memory", n);
  size_t got = zstd.decompress(buf, (size_t)e->plain, e->payload.p, (size_t)e->packed);
  if (zstd.is_error(got) || got != e->plain) {
    gcl__free(buf);
    return gcl__fail(GCL_ERROR_BAD_IMAGE, "fatbin: entry %zu: zstd data does not decode to %llu "
                     "bytes (%s)", n, (unsigned long long)e->plain,
                     zstd.is_error(got) ? zstd.error_name(got) : "size differs");
  }
  buf[got] = 0;
  *plain = buf;
  *size = got;
  return GCL_OK;
}

static gcl_status read_chosen(gcl_image *img, const fat_entry *e, size_t n, int sm) {
  if (e->flags & FLAG_LZ4)
    return gcl__fail(GCL_ERROR_BAD_IMAGE, "fatbin: entry %zu is compressed (LZ4, flags 0x%llx), "
                     "which gclaunch does not decode", n, (unsigned long long)e->flags);
  uint8_t *plain = NULL;
  gcl__bytes body = e->payload;
  if (e->flags & FLAG_ZSTD) {
    gcl_status s = inflate(e, n, &plain, &body.n);
    if (s != GCL_OK) return s;
    body.p = plain;
  }
  gcl_status s = e->kind == 2 ? gcl__cubin_read(img, body)
                              : gcl__ptx_read(img, body, sm ? sm : (int)e->arch);
  gcl__free(plain);
  return s;
}

gcl_status gcl__fatbin_check(gcl__bytes data) {
  fat_entry *entries = gcl__malloc(MAX_ENTRIES * sizeof *entries);
  if (!entries) return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "fatbin: out of memory");
  size_t n = 0;
  gcl_status s = list_entries(data, entries, &n);
  gcl__free(entries);
  return s;
}

gcl_status gcl__fatbin_read(gcl_image *img, gcl__bytes data, int sm) {
  fat_entry *entries = gcl__malloc(MAX_ENTRIES * sizeof *entries);
  if (!entries) return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "fatbin: out of memory");
  size_t n = 0;
  gcl_status s = list_entries(data, entries, &n);
  if (s == GCL_OK) {
    long pick = choose(entries, n, sm);
    s = pick < 0 ? no_entry(entries, n, sm) : read_chosen(img, &entries[pick], (size_t)pick, sm);
  }
  gcl__free(entries);
  if (s == GCL_OK) img->format = GCL_IMAGE_FATBIN;
  return s;
}
