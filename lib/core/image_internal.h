/* Module image readers (cubin, fatbin, PTX): the seam between image.c and the format readers.
 * Internal to lib/core. Every reader is bounds-checked: input is untrusted bytes. */
#ifndef GCL_IMAGE_INTERNAL_H
#define GCL_IMAGE_INTERNAL_H

#include "internal.h"

#include <stdint.h>

/* A borrowed byte range. Readers never look outside [p, p + n). */
typedef struct gcl__bytes {
  const uint8_t *p;
  size_t n;
} gcl__bytes;

/* True if [off, off + len) lies inside b (no overflow). */
bool gcl__bytes_has(gcl__bytes b, uint64_t off, uint64_t len);
/* The sub-range [off, off + len); callers check gcl__bytes_has first. */
gcl__bytes gcl__bytes_sub(gcl__bytes b, uint64_t off, uint64_t len);
uint16_t gcl__le16(const uint8_t *p);
uint32_t gcl__le32(const uint8_t *p);
uint64_t gcl__le64(const uint8_t *p);

/* ---- ELF64 (elf.c) ---------------------------------------------------------------------- */

typedef struct gcl__elf {
  gcl__bytes data;
  uint32_t flags;     /* e_flags: the SM is (flags >> 8) & 0xff */
  uint64_t shoff;     /* section header table */
  size_t shnum;
  gcl__bytes shstr;   /* section name string table */
} gcl__elf;

typedef struct gcl__elf_section {
  const char *name;   /* NUL-terminated inside the image */
  uint32_t type, link, info;
  uint64_t flags, size, entsize;
  gcl__bytes body;    /* empty for SHT_NOBITS */
} gcl__elf_section;

typedef struct gcl__elf_symbol {
  const char *name;
  uint8_t info, other;
  uint16_t shndx;
  uint64_t value, size;
} gcl__elf_symbol;

#define GCL__SHT_SYMTAB 2u
#define GCL__SHT_NOBITS 8u
#define GCL__SHT_NV_INFO 0x70000000u
#define GCL__STT_FUNC 2u
#define GCL__STO_CUDA_ENTRY 0x10u

/* Checks the ELF header and section table bounds. GCL_ERROR_BAD_IMAGE saying what is wrong. */
gcl_status gcl__elf_open(gcl__elf *elf, gcl__bytes data);
/* As gcl__elf_open for an ELF of any machine (host executables, libraries, objects). */
gcl_status gcl__elf_open_any(gcl__elf *elf, gcl__bytes data);
/* e_machine of an ELF64 header (190 CUDA, 62 x86-64); 0 if data is no ELF header. */
unsigned gcl__elf_machine(gcl__bytes data);
/* Section i, with its body and name checked to lie inside the image. */
gcl_status gcl__elf_section_get(const gcl__elf *elf, size_t i, gcl__elf_section *sec);
/* Index of the first section called name; false (no message) if none. */
bool gcl__elf_section_find(const gcl__elf *elf, const char *name, size_t *index);
/* Symbol i of a symbol table section whose string table is strtab. */
gcl_status gcl__elf_symbol_get(const gcl__elf_section *symtab, gcl__bytes strtab, size_t i,
                               gcl__elf_symbol *sym);

/* ---- The image object (image.c) --------------------------------------------------------- */

typedef struct gcl__image_param {
  size_t offset, size, align; /* align 0: the image does not say */
  char kind[48];              /* "u32", "ptr", "bytes(2048) align(128)"; "" if unknown */
} gcl__image_param;

typedef struct gcl__image_kernel {
  gcl_image_kernel_info info;      /* info.name points at name */
  char *name;
  gcl__image_param *params;
  uint32_t symbol;            /* ELF symbol index (cubins) */
  uint32_t text_section;      /* ELF section of its code (cubins) */
  int waits;                  /* griddepcontrol.wait in its code: 1 yes, 0 no, -1 unknown
                                 (gcl_image_kernel_waits) */
} gcl__image_kernel;

struct gcl_image {
  gcl_format format;
  int sm;
  size_t count, cap;
  gcl__image_kernel *kernels;
  /* Device-linked with NVSHMEM: a cubin defines nvshmemi_device_state_d. nvshmem_version is the
   * 12 bytes of nvshmemi_device_lib_version_d (major, minor, patch) when its section holds data,
   * {-1, -1, -1} otherwise. */
  bool nvshmem;
  int nvshmem_version[3];
};

/* Appends a kernel called name (copied) with param_count zeroed params; *out points into img
 * until the next append. */
gcl_status gcl__image_add_kernel(gcl_image *img, const char *name, size_t name_len,
                                 size_t param_count, gcl__image_kernel **out);
/* Frees the kernels of img (not img itself) and empties its table. (image_kernels.c) */
void gcl__image_clear(gcl_image *img);

/* ---- Format readers: fill an empty image (format and sm set by the reader) ---------------- */

gcl_status gcl__cubin_read(gcl_image *img, gcl__bytes data);
/* sm: the fatbin entry to pick (0: the highest cubin, else the highest PTX). */
gcl_status gcl__fatbin_read(gcl_image *img, gcl__bytes data, int sm);
/* sm: the architecture offsets are computed for (0: 90). */
gcl_status gcl__ptx_read(gcl_image *img, gcl__bytes data, int sm);

/* Host ELF (machine not CUDA): every fatbin container of its .nv_fatbin and __nv_relfatbin
 * sections (hostelf.c). sm as for gcl__fatbin_read. */
gcl_status gcl__host_elf_read(gcl_image *img, gcl__bytes data, int sm);

bool gcl__is_elf(gcl__bytes data);
bool gcl__is_fatbin(gcl__bytes data);
/* The fatbin's containers and entry headers lie inside data (what gcl__image_format checks). */
gcl_status gcl__fatbin_check(gcl__bytes data);

#endif
