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

/* A growing list of entries: a host library's section holds thousands (cuSPARSE: over 1,000). */
typedef struct entry_list {
  fat_entry *e;
  size_t n, cap;
} entry_list;

static gcl_status push_entry(entry_list *l, gcl__bytes body, size_t *at) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 16;
    fat_entry *grown = gcl__realloc(l->e, cap * sizeof *grown);
    if (!grown) return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "fatbin: out of memory for %zu entries", cap);
    l->e = grown;
    l->cap = cap;
  }
  gcl_status s = read_entry(body, *at, l->n, &l->e[l->n], at);
  if (s == GCL_OK) l->n++;
  return s;
}

/* The container at byte at of d: its entries into l, *next past it (padded to 8). */
static gcl_status list_container(gcl__bytes d, size_t at, entry_list *l, size_t *next) {
  if (!gcl__bytes_has(d, at, 16))
    return gcl__fail(GCL_ERROR_BAD_IMAGE, "fatbin truncated: %zu bytes is shorter than the 16-byte header",
                     d.n - at);
  uint16_t hs = gcl__le16(d.p + at + 6);
  uint64_t fs = gcl__le64(d.p + at + 8);
  if (hs < 16 || !gcl__bytes_has(d, at + hs, fs))
    return gcl__fail(GCL_ERROR_BAD_IMAGE,
                     "fatbin truncated: container at byte %zu (header %u, %llu bytes of entries) runs "
                     "past the end of the %zu-byte image",
                     at, hs, (unsigned long long)fs, d.n);
  gcl__bytes body = gcl__bytes_sub(d, at + hs, fs);
  for (size_t e = 0; e < body.n;) {
    gcl_status s = push_entry(l, body, &e);
    if (s != GCL_OK) return s;
  }
  uint64_t end = at + hs + fs;
  *next = (size_t)(end + 7 <= d.n ? (end + 7) & ~(uint64_t)7 : d.n);
  return GCL_OK;
}

/* Offset of the container after the one ending at at, skipping zero padding; d.n if none. */
static size_t next_container(gcl__bytes d, size_t at) {
  while (at + 16 <= d.n && gcl__le32(d.p + at) != FATBIN_MAGIC && gcl__le64(d.p + at) == 0) at += 8;
  return at + 16 <= d.n && gcl__le32(d.p + at) == FATBIN_MAGIC ? at : d.n;
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

/* Every container of data is whole and its entries readable (what the module loader needs to
 * know before handing the image to the driver). */
gcl_status gcl__fatbin_check(gcl__bytes data) {
  gcl_status s = GCL_OK;
  for (size_t at = 0; s == GCL_OK && at < data.n; at = next_container(data, at)) {
    entry_list l = {NULL, 0, 0};
    size_t next = data.n;
    s = list_container(data, at, &l, &next);
    gcl__free(l.e);
    at = next;
  }
  return s;
}

/* The highest cubin architecture of all containers (sm 0 with several containers: one
 * architecture for all, so that the image's offsets are for one sm). 0 if there is no cubin. */
static int highest_cubin(gcl__bytes d) {
  int best = 0;
  for (size_t at = 0; at < d.n; at = next_container(d, at)) {
    entry_list l = {NULL, 0, 0};
    size_t next = d.n;
    gcl_status s = list_container(d, at, &l, &next);
    for (size_t i = 0; s == GCL_OK && i < l.n; i++)
      if (l.e[i].kind == 2 && (int)l.e[i].arch > best) best = (int)l.e[i].arch;
    gcl__free(l.e);
    if (s != GCL_OK) return 0; /* reported by the reading pass */
    at = next;
  }
  return best;
}

/* Reads the chosen entry of the container at *at and moves *at past it; *used false when it has
 * none for sm (an error only when it is the only container). */
static gcl_status read_container(gcl_image *img, gcl__bytes d, size_t *at, int sm, bool only,
                                 bool *used) {
  entry_list l = {NULL, 0, 0};
  size_t next = d.n;
  gcl_status s = list_container(d, *at, &l, &next);
  *used = false;
  if (s == GCL_OK) {
    long pick = choose(l.e, l.n, sm);
    if (pick >= 0) s = read_chosen(img, &l.e[pick], (size_t)pick, sm), *used = s == GCL_OK;
    else if (only) s = no_entry(l.e, l.n, sm);
  }
  gcl__free(l.e);
  *at = next;
  return s;
}

gcl_status gcl__fatbin_read(gcl_image *img, gcl__bytes data, int sm) {
  entry_list first = {NULL, 0, 0};
  size_t after = data.n;
  gcl_status s = list_container(data, 0, &first, &after); /* the first one must be whole */
  gcl__free(first.e);
  if (s != GCL_OK) return s;
  bool several = next_container(data, after) < data.n; /* a host ELF's .nv_fatbin: one per TU */
  if (several && sm == 0) sm = highest_cubin(data);
  size_t used = 0, containers = 0;
  for (size_t at = 0; s == GCL_OK && at < data.n; at = next_container(data, at), containers++) {
    bool u;
    s = read_container(img, data, &at, sm, !several, &u);
    used += u;
  }
  if (s == GCL_OK && used == 0 && several)
    s = gcl__fail(GCL_ERROR_NOT_FOUND, "fatbin: none of the %zu containers has an entry usable "
                  "on sm_%d", containers, sm);
  if (s == GCL_OK) img->format = GCL_IMAGE_FATBIN;
  return s;
}
