/* Bounds-checked reading of little-endian ELF64 images (cubins). Every offset and size read from
 * the file is checked against the image before it is used: the input may be hostile. */
#include "image_internal.h"

#include <string.h>

#define ELF_HEADER_BYTES 64u
#define ELF_SECTION_BYTES 64u
#define ELF_SYMBOL_BYTES 24u
#define EM_CUDA 190u

bool gcl__bytes_has(gcl__bytes b, uint64_t off, uint64_t len) {
  return off <= b.n && len <= b.n - off;
}

gcl__bytes gcl__bytes_sub(gcl__bytes b, uint64_t off, uint64_t len) {
  gcl__bytes r = {b.p + off, (size_t)len};
  return r;
}

uint16_t gcl__le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

uint32_t gcl__le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint64_t gcl__le64(const uint8_t *p) { return gcl__le32(p) | (uint64_t)gcl__le32(p + 4) << 32; }

bool gcl__is_elf(gcl__bytes data) {
  return data.n >= 4 && memcmp(data.p, "\x7f" "ELF", 4) == 0;
}

unsigned gcl__elf_machine(gcl__bytes d) {
  return gcl__is_elf(d) && d.n >= ELF_HEADER_BYTES ? gcl__le16(d.p + 18) : 0;
}

static gcl_status elf_check_ident(gcl__bytes d, bool cuda) {
  const char *what = cuda ? "cubin" : "ELF";
  if (d.n < ELF_HEADER_BYTES)
    return gcl__fail(GCL_ERROR_BAD_IMAGE, "%s truncated: %zu bytes is shorter than an ELF64 header (64)",
                     what, d.n);
  if (d.p[4] != 2 || d.p[5] != 1)
    return gcl__fail(GCL_ERROR_BAD_IMAGE,
                     "%s: ELF class %u, data %u; expected 64-bit little-endian (2, 1)", what,
                     d.p[4], d.p[5]);
  if (cuda && gcl__le16(d.p + 18) != EM_CUDA)
    return gcl__fail(GCL_ERROR_BAD_IMAGE, "cubin: ELF machine %u is not CUDA (%u)",
                     gcl__le16(d.p + 18), EM_CUDA);
  return GCL_OK;
}

static gcl_status elf_open(gcl__elf *elf, gcl__bytes d, bool cuda) {
  gcl_status s = elf_check_ident(d, cuda);
  if (s != GCL_OK) return s;
  gcl__elf e = {.data = d, .flags = gcl__le32(d.p + 48), .shoff = gcl__le64(d.p + 40),
                .shnum = gcl__le16(d.p + 60)};
  uint16_t shentsize = gcl__le16(d.p + 58), shstrndx = gcl__le16(d.p + 62);
  if (e.shnum == 0 || shentsize != ELF_SECTION_BYTES)
    return gcl__fail(GCL_ERROR_BAD_IMAGE,
                     "cubin: %zu sections of %u bytes; expected at least one of 64 bytes",
                     e.shnum, shentsize);
  if (!gcl__bytes_has(d, e.shoff, (uint64_t)e.shnum * ELF_SECTION_BYTES))
    return gcl__fail(GCL_ERROR_BAD_IMAGE,
                     "cubin truncated: section table (offset %llu, %zu entries) lies past the "
                     "end (%zu bytes)",
                     (unsigned long long)e.shoff, e.shnum, d.n);
  if (shstrndx >= e.shnum)
    return gcl__fail(GCL_ERROR_BAD_IMAGE, "cubin: section name table index %u >= %zu sections",
                     shstrndx, e.shnum);
  const uint8_t *h = d.p + e.shoff + (uint64_t)shstrndx * ELF_SECTION_BYTES;
  uint64_t off = gcl__le64(h + 24), size = gcl__le64(h + 32);
  if (!gcl__bytes_has(d, off, size))
    return gcl__fail(GCL_ERROR_BAD_IMAGE, "cubin: section name table lies past the end");
  e.shstr = gcl__bytes_sub(d, off, size);
  *elf = e;
  return GCL_OK;
}

/* The NUL-terminated string at off in a string table. */
static gcl_status elf_string(gcl__bytes strtab, uint64_t off, const char **out) {
  if (off >= strtab.n || !memchr(strtab.p + off, 0, strtab.n - off))
    return gcl__fail(GCL_ERROR_BAD_IMAGE,
                     "cubin: string at %llu is outside its %zu-byte string table or unterminated",
                     (unsigned long long)off, strtab.n);
  *out = (const char *)strtab.p + off;
  return GCL_OK;
}

gcl_status gcl__elf_section_get(const gcl__elf *elf, size_t i, gcl__elf_section *sec) {
  if (i >= elf->shnum)
    return gcl__fail(GCL_ERROR_BAD_IMAGE, "cubin: section index %zu >= %zu sections", i,
                     elf->shnum);
  const uint8_t *h = elf->data.p + elf->shoff + (uint64_t)i * ELF_SECTION_BYTES;
  gcl__elf_section s = {.type = gcl__le32(h + 4), .flags = gcl__le64(h + 8),
                        .size = gcl__le64(h + 32), .link = gcl__le32(h + 40),
                        .info = gcl__le32(h + 44), .entsize = gcl__le64(h + 56)};
  gcl_status st = elf_string(elf->shstr, gcl__le32(h), &s.name);
  if (st != GCL_OK) return st;
  uint64_t off = gcl__le64(h + 24);
  if (s.type != GCL__SHT_NOBITS) {
    if (!gcl__bytes_has(elf->data, off, s.size))
      return gcl__fail(GCL_ERROR_BAD_IMAGE,
                       "cubin: section %zu '%s' (offset %llu, %llu bytes) lies past the end of "
                       "the %zu-byte image",
                       i, s.name, (unsigned long long)off, (unsigned long long)s.size,
                       elf->data.n);
    s.body = gcl__bytes_sub(elf->data, off, s.size);
  }
  *sec = s;
  return GCL_OK;
}

gcl_status gcl__elf_open(gcl__elf *elf, gcl__bytes d) { return elf_open(elf, d, true); }

gcl_status gcl__elf_open_any(gcl__elf *elf, gcl__bytes d) { return elf_open(elf, d, false); }

bool gcl__elf_section_find(const gcl__elf *elf, const char *name, size_t *index) {
  for (size_t i = 0; i < elf->shnum; i++) {
    const uint8_t *h = elf->data.p + elf->shoff + (uint64_t)i * ELF_SECTION_BYTES;
    const char *n = NULL;
    if (elf_string(elf->shstr, gcl__le32(h), &n) != GCL_OK) continue;
    if (strcmp(n, name) == 0) {
      *index = i;
      return true;
    }
  }
  return false;
}

gcl_status gcl__elf_symbol_get(const gcl__elf_section *symtab, gcl__bytes strtab, size_t i,
                               gcl__elf_symbol *sym) {
  if (!gcl__bytes_has(symtab->body, (uint64_t)i * ELF_SYMBOL_BYTES, ELF_SYMBOL_BYTES))
    return gcl__fail(GCL_ERROR_BAD_IMAGE, "cubin: symbol %zu lies past the symbol table", i);
  const uint8_t *p = symtab->body.p + (uint64_t)i * ELF_SYMBOL_BYTES;
  gcl__elf_symbol s = {.info = p[4], .other = p[5], .shndx = gcl__le16(p + 6),
                       .value = gcl__le64(p + 8), .size = gcl__le64(p + 16)};
  gcl_status st = elf_string(strtab, gcl__le32(p), &s.name);
  if (st != GCL_OK) return st;
  *sym = s;
  return GCL_OK;
}
