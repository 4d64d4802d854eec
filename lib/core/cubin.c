/* Cubin reader: kernel entries from the ELF symbol table and their parameter records from the
 * .nv.info sections (docs/facts.md "Cubin records"). Records come in no fixed order: the parameters
 * are sorted by ordinal. Every record is bounds-checked; a hostile file gives GCL_ERROR_BAD_IMAGE. */
#include "arch.h"
#include "image_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  EIATTR_MAX_THREADS = 0x05, EIATTR_PARAM_CBANK = 0x0a, EIATTR_REQNTID = 0x10,
  EIATTR_KPARAM_INFO = 0x17, EIATTR_CBANK_PARAM_SIZE = 0x19, EIATTR_REGCOUNT = 0x2f,
  EIATTR_KPARAM_INFO_V2 = 0x45
};

typedef struct nvinfo_rec {
  uint8_t format, attr;
  uint16_t value;     /* format 2 and 3 */
  gcl__bytes payload; /* format 4 */
} nvinfo_rec;

/* Reads the record at *pos of section `where` and advances *pos. */
static gcl_status nvinfo_next(gcl__bytes sec, size_t *pos, nvinfo_rec *r, const char *where) {
  size_t at = *pos;
  if (!gcl__bytes_has(sec, at, 4))
    return gcl__fail(GCL_ERROR_BAD_IMAGE, "cubin: %s: record at byte %zu is truncated", where, at);
  nvinfo_rec rec = {.format = sec.p[at], .attr = sec.p[at + 1]};
  size_t len = 4;
  if (rec.format == 2) rec.value = sec.p[at + 2];
  else if (rec.format == 3) rec.value = gcl__le16(sec.p + at + 2);
  else if (rec.format == 4) {
    uint16_t n = gcl__le16(sec.p + at + 2);
    if (!gcl__bytes_has(sec, at + 4, n))
      return gcl__fail(GCL_ERROR_BAD_IMAGE,
                       "cubin: %s: attribute 0x%02x at byte %zu says %u bytes, past the end",
                       where, rec.attr, at, n);
    rec.payload = gcl__bytes_sub(sec, at + 4, n);
    len += n;
  } else if (rec.format != 1)
    return gcl__fail(GCL_ERROR_BAD_IMAGE, "cubin: %s: record at byte %zu has unknown format %u",
                     where, at, rec.format);
  *r = rec;
  *pos = at + len;
  return GCL_OK;
}

/* One KPARAM_INFO or _V2 record into k->params (ordinal checked, duplicates refused). */
static gcl_status add_kparam(gcl__image_kernel *k, const nvinfo_rec *r, const char *where) {
  if (r->format != 4 || r->payload.n < 12) /* both versions carry 12 bytes */
    return gcl__fail(GCL_ERROR_BAD_IMAGE, "cubin: %s: parameter record of %zu bytes, expected 12",
                     where, r->payload.n);
  const uint8_t *p = r->payload.p;
  size_t ordinal = gcl__le16(p + 4), offset = gcl__le16(p + 6), size;
  if (r->attr == EIATTR_KPARAM_INFO) size = gcl__le32(p + 8) >> 18;
  else size = gcl__le16(p + 8);
  if (ordinal >= k->info.param_count)
    return gcl__fail(GCL_ERROR_BAD_IMAGE, "cubin: %s: parameter ordinal %zu >= %zu parameters",
                     where, ordinal, k->info.param_count);
  gcl__image_param *q = &k->params[ordinal];
  if (q->size != 0)
    return gcl__fail(GCL_ERROR_BAD_IMAGE, "cubin: %s: parameter %zu is described twice", where,
                     ordinal);
  if (size == 0)
    return gcl__fail(GCL_ERROR_BAD_IMAGE, "cubin: %s: parameter %zu has size 0", where, ordinal);
  q->offset = offset;
  q->size = size;
  return GCL_OK;
}

/* Counts the parameter records so the parameter array can be sized before it is filled. */
static gcl_status count_kparams(gcl__bytes sec, const char *where, size_t *count) {
  size_t pos = 0, n = 0;
  while (pos < sec.n) {
    nvinfo_rec r = {0};
    gcl_status s = nvinfo_next(sec, &pos, &r, where);
    if (s != GCL_OK) return s;
    if (r.attr == EIATTR_KPARAM_INFO || r.attr == EIATTR_KPARAM_INFO_V2) n++;
  }
  *count = n;
  return GCL_OK;
}

static void read_xyz(const nvinfo_rec *r, int *xyz) {
  for (int i = 0; i < 3; i++) {
    uint32_t v = gcl__le32(r->payload.p + 4 * i);
    xyz[i] = v > 0x7fffffff ? 0x7fffffff : (int)v;
  }
}

static gcl_status apply_record(gcl__image_kernel *k, const nvinfo_rec *r, const char *where) {
  switch (r->attr) {
  case EIATTR_KPARAM_INFO:
  case EIATTR_KPARAM_INFO_V2: return add_kparam(k, r, where);
  case EIATTR_CBANK_PARAM_SIZE: k->info.param_bytes = r->value; break;
  case EIATTR_PARAM_CBANK: /* u32 symbol, u16 base, u16 size: the size when 0x19 is missing */
    if (r->format == 4 && r->payload.n >= 8 && k->info.param_bytes == 0)
      k->info.param_bytes = gcl__le16(r->payload.p + 6);
    break;
  case EIATTR_MAX_THREADS:
  case EIATTR_REQNTID: {
    if (r->format != 4 || r->payload.n < 12)
      return gcl__fail(GCL_ERROR_BAD_IMAGE, "cubin: %s: attribute 0x%02x has %zu bytes, need 12",
                       where, r->attr, r->payload.n);
    int xyz[3];
    read_xyz(r, xyz);
    if (r->attr == EIATTR_REQNTID) memcpy(k->info.reqntid, xyz, sizeof xyz);
    else {
      /* Each factor < 2^31: two fit in 64 bits; stop before the third could overflow. */
      long long t = (long long)xyz[0] * (xyz[1] ? xyz[1] : 1);
      if (t <= 0x7fffffff) t *= xyz[2] ? xyz[2] : 1;
      k->info.max_threads = t > 0x7fffffff ? 0 : (int)t; /* nonsense is "does not say" */
    }
    break;
  }
  default: break;
  }
  return GCL_OK;
}

/* Reads the .nv.info.<kernel> section `sec` into k. */
static gcl_status read_kernel_info(gcl_image *img, size_t ki, gcl__bytes sec, const char *where) {
  size_t count, pos = 0;
  gcl_status s = count_kparams(sec, where, &count);
  if (s != GCL_OK) return s;
  gcl__image_kernel *k = &img->kernels[ki];
  k->params = gcl__calloc(count ? count : 1, sizeof *k->params);
  if (!k->params) return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "cubin: %s: out of memory", where);
  k->info.param_count = count;
  bool have_total = false;
  while (pos < sec.n && s == GCL_OK) {
    nvinfo_rec r = {0};
    s = nvinfo_next(sec, &pos, &r, where);
    if (s != GCL_OK) break;
    s = apply_record(k, &r, where);
    have_total = have_total || r.attr == EIATTR_CBANK_PARAM_SIZE;
  }
  if (s != GCL_OK) return s;
  size_t end = 0;
  for (size_t p = 0; p < count; p++) {
    if (k->params[p].size == 0)
      return gcl__fail(GCL_ERROR_BAD_IMAGE, "cubin: %s: parameter %zu has no record", where, p);
    if (k->params[p].offset + k->params[p].size > end) end = k->params[p].offset + k->params[p].size;
  }
  if (!have_total) k->info.param_bytes = end;
  if (k->info.param_bytes < end)
    return gcl__fail(GCL_ERROR_BAD_IMAGE,
                     "cubin: %s: parameter area of %zu bytes ends before the last parameter (%zu)",
                     where, k->info.param_bytes, end);
  return GCL_OK;
}

/* Attributes of the global .nv.info keyed by symbol index (registers), for the kernels from
 * first on (those of this cubin: an image may gather the cubins of several fatbin containers). */
static gcl_status read_global_info(gcl_image *img, size_t first, gcl__bytes sec) {
  size_t pos = 0;
  while (pos < sec.n) {
    nvinfo_rec r = {0};
    gcl_status s = nvinfo_next(sec, &pos, &r, ".nv.info");
    if (s != GCL_OK) return s;
    if (r.attr != EIATTR_REGCOUNT || r.format != 4 || r.payload.n < 8) continue;
    uint32_t sym = gcl__le32(r.payload.p), regs = gcl__le32(r.payload.p + 4);
    size_t lo = first, hi = img->count; /* kernels were added in symbol order: binary search */
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (img->kernels[mid].symbol < sym) lo = mid + 1;
      else hi = mid;
    }
    if (lo < img->count && img->kernels[lo].symbol == sym)
      img->kernels[lo].info.registers = regs > 65535 ? -1 : (int)regs;
  }
  return GCL_OK;
}

/* True if sym is a kernel entry: a function marked as CUDA entry in a `.text.<name>` section. */
static bool is_entry(const gcl__elf *elf, const gcl__elf_symbol *sym) {
  if ((sym->info & 0xf) != GCL__STT_FUNC || !(sym->other & GCL__STO_CUDA_ENTRY)) return false;
  gcl__elf_section text;
  if (sym->shndx == 0 || gcl__elf_section_get(elf, sym->shndx, &text) != GCL_OK) return false;
  return strncmp(text.name, ".text.", 6) == 0 && strcmp(text.name + 6, sym->name) == 0;
}

/* NVSHMEM's device state and library version: defined (not undefined) data symbols of a cubin
 * device-linked with libnvshmem_device. The version is three little-endian int32 in the
 * symbol's section when that section holds data. */
static void note_nvshmem(gcl_image *img, const gcl__elf *elf, const gcl__elf_symbol *sym) {
  if (sym->shndx == 0) return;
  if (strcmp(sym->name, "nvshmemi_device_state_d") == 0) img->nvshmem = true;
  if (strcmp(sym->name, "nvshmemi_device_lib_version_d") != 0 || sym->size < 12) return;
  gcl__elf_section sec;
  if (gcl__elf_section_get(elf, sym->shndx, &sec) != GCL_OK || sec.type == GCL__SHT_NOBITS ||
      sym->value > sec.body.n || sec.body.n - sym->value < 12)
    return;
  for (int i = 0; i < 3; i++)
    img->nvshmem_version[i] = (int)gcl__le32(sec.body.p + sym->value + 4 * (size_t)i);
}

static gcl_status collect_kernels(gcl_image *img, const gcl__elf *elf) {
  size_t si;
  gcl__elf_section symtab, strtab;
  if (!gcl__elf_section_find(elf, ".symtab", &si)) return GCL_OK; /* no symbols, no kernels */
  gcl_status s = gcl__elf_section_get(elf, si, &symtab);
  if (s == GCL_OK) s = gcl__elf_section_get(elf, symtab.link, &strtab);
  if (s != GCL_OK) return s;
  for (size_t i = 0; i < symtab.size / 24; i++) {
    gcl__elf_symbol sym;
    gcl__image_kernel *k;
    if ((s = gcl__elf_symbol_get(&symtab, strtab.body, i, &sym)) != GCL_OK) return s;
    note_nvshmem(img, elf, &sym);
    if (!is_entry(elf, &sym)) continue;
    s = gcl__image_add_kernel(img, sym.name, strlen(sym.name), 0, &k);
    if (s != GCL_OK) return s;
    k->symbol = (uint32_t)i;
    k->text_section = sym.shndx;
  }
  return GCL_OK;
}

/* Per-kernel sections, found in one pass (a hostile file may hold many kernels and sections):
 * `.nv.info.<k>` and `.nv.shared.<k>` name their kernel's .text section in sh_info. */
typedef struct kernel_sections {
  uint32_t *info;   /* by .text section index: its .nv.info section, 0 if none */
  uint64_t *shared; /* by .text section index: static shared bytes */
} kernel_sections;

static gcl_status index_sections(const gcl__elf *elf, kernel_sections *ks) {
  ks->info = gcl__calloc(elf->shnum, sizeof *ks->info);
  ks->shared = gcl__calloc(elf->shnum, sizeof *ks->shared);
  if (!ks->info || !ks->shared) return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "cubin: out of memory");
  for (size_t si = 1; si < elf->shnum; si++) {
    gcl__elf_section sec;
    gcl_status s = gcl__elf_section_get(elf, si, &sec);
    if (s != GCL_OK) return s;
    if (sec.info == 0 || sec.info >= elf->shnum) continue;
    if (sec.type == GCL__SHT_NV_INFO && !ks->info[sec.info]) ks->info[sec.info] = (uint32_t)si;
    if (strncmp(sec.name, ".nv.shared.", 11) == 0) ks->shared[sec.info] = sec.size;
  }
  return GCL_OK;
}

/* Reads kernel ki's .nv.info records and its static shared memory. */
static gcl_status read_kernel_sections(gcl_image *img, const gcl__elf *elf,
                                       const kernel_sections *ks, size_t ki) {
  gcl__image_kernel *k = &img->kernels[ki];
  uint64_t shared = ks->shared[k->text_section]; /* no .nv.shared.<k>: none */
  k->info.shared_bytes = shared > 0x7fffffff ? -1 : (long)shared;
  if (ks->info[k->text_section] == 0) { /* no records: no parameters */
    k->params = gcl__calloc(1, sizeof *k->params);
    return k->params ? GCL_OK : gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "cubin: out of memory");
  }
  gcl__elf_section sec;
  gcl_status s = gcl__elf_section_get(elf, ks->info[k->text_section], &sec);
  if (s != GCL_OK) return s;
  char where[256];
  snprintf(where, sizeof where, ".nv.info.%.200s", k->name);
  return read_kernel_info(img, ki, sec.body, where);
}

/* Whether a kernel waits on its prerequisite grid (griddepcontrol.wait, which
 * cudaGridDependencySynchronize compiles to): read from its SASS. The instruction was found by
 * compiling kernels with and without the wait (nvcc -cubin, CUDA 13.0) and diffing .text: it is
 * the one 128-bit instruction whose low word is 0x?82e (the nibble ? is the guard predicate)
 * and whose high word has no bits below bit 40 (only scheduling control above), the same on
 * architectures whose row in arch.c says sass_wait_known (sm_90 and later); no .nv.info record or
 * section flag differs. Other architectures: unknown (-1). Before sm_90 there is no
 * griddepcontrol: no kernel waits. */
static bool sass_known(int sm) {
  const gcl__arch *a = gcl__arch_find(sm);
  return a && a->sass_wait_known;
}

static bool text_waits(gcl__bytes text) {
  for (size_t i = 0; i + 16 <= text.n; i += 16) {
    uint64_t lo = gcl__le64(text.p + i), hi = gcl__le64(text.p + i + 8);
    if ((lo & ~(uint64_t)0xf000) == 0x82e && (hi & 0xffffffffffull) == 0) return true;
  }
  return false;
}

/* Sets waits of kernels first ... img->count: 1 when its own .text holds the wait; else 0,
 * unless another function's .text (a device function it may call) holds one: then -1. */
static gcl_status read_waits(gcl_image *img, const gcl__elf *elf, size_t first) {
  int sm = (int)((elf->flags >> 8) & 0xff);
  if (sm < 90 || !sass_known(sm)) {
    for (size_t k = first; k < img->count; k++) img->kernels[k].waits = sm < 90 ? 0 : -1;
    return GCL_OK;
  }
  bool elsewhere = false;
  for (size_t si = 1; si < elf->shnum; si++) {
    gcl__elf_section sec;
    gcl_status s = gcl__elf_section_get(elf, si, &sec);
    if (s != GCL_OK) return s;
    if (strncmp(sec.name, ".text.", 6) != 0 || !text_waits(sec.body)) continue;
    bool kernel = false;
    for (size_t k = first; k < img->count; k++)
      if (img->kernels[k].text_section == si) kernel = true, img->kernels[k].waits = 1;
    elsewhere = elsewhere || !kernel;
  }
  for (size_t k = first; k < img->count; k++)
    if (img->kernels[k].waits != 1) img->kernels[k].waits = elsewhere ? -1 : 0;
  return GCL_OK;
}

gcl_status gcl__cubin_read(gcl_image *img, gcl__bytes data) {
  gcl__elf elf;
  kernel_sections ks = {NULL, NULL};
  size_t first = img->count; /* kernels of earlier cubins (fatbin containers) stay as they are */
  gcl_status s = gcl__elf_open(&elf, data);
  if (s == GCL_OK) s = collect_kernels(img, &elf);
  if (s == GCL_OK) s = index_sections(&elf, &ks);
  if (s == GCL_OK) s = read_waits(img, &elf, first);
  for (size_t k = first; s == GCL_OK && k < img->count; k++)
    s = read_kernel_sections(img, &elf, &ks, k);
  gcl__free(ks.info);
  gcl__free(ks.shared);
  size_t gi;
  gcl__elf_section global;
  if (s == GCL_OK && gcl__elf_section_find(&elf, ".nv.info", &gi)) {
    s = gcl__elf_section_get(&elf, gi, &global);
    if (s == GCL_OK) s = read_global_info(img, first, global.body);
  }
  if (s != GCL_OK) return s;
  img->format = GCL_IMAGE_CUBIN;
  img->sm = (int)((elf.flags >> 8) & 0xff);
  return GCL_OK;
}
