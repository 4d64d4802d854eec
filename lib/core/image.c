/* gcl_image: what a cubin, fatbin or PTX image says about its kernels, read on the CPU. The
 * format comes from the content; the readers (cubin.c, fatbin.c, ptx.c) fill the kernel table
 * (image_kernels.c, which they call instead of this file: no file cycle). */
#include "image_internal.h"

#include <stdlib.h>
#include <string.h>

/* PTX: whitespace and comments, then the .version directive (the PTX ISA makes it the first).
 * The one rule for gcl_image_parse, gclaunch inspect and the module loader. */
static bool looks_like_ptx(gcl__bytes d) {
  size_t i = 0;
  while (i < d.n) {
    if (d.p[i] == ' ' || d.p[i] == '\t' || d.p[i] == '\r' || d.p[i] == '\n') {
      i++;
    } else if (i + 1 < d.n && d.p[i] == '/' && d.p[i + 1] == '/') {
      while (i < d.n && d.p[i] != '\n') i++;
    } else if (i + 1 < d.n && d.p[i] == '/' && d.p[i + 1] == '*') {
      for (i += 2; i + 1 < d.n && !(d.p[i] == '*' && d.p[i + 1] == '/'); i++) {}
      i += 2;
    } else {
      break;
    }
  }
  return i < d.n && d.n - i >= 8 && memcmp(d.p + i, ".version", 8) == 0;
}

/* A cubin's program header table and every section body lie inside it (the driver reads them). */
static gcl_status check_cubin(gcl__bytes d) {
  gcl__elf elf;
  gcl_status s = gcl__elf_open(&elf, d);
  if (s != GCL_OK) return s; /* the header is 64 bytes long from here on */
  uint64_t phoff = gcl__le64(d.p + 32), phentsize = gcl__le16(d.p + 54), phnum = gcl__le16(d.p + 56);
  if (phnum && !gcl__bytes_has(d, phoff, phnum * phentsize))
    return gcl__fail(GCL_ERROR_BAD_IMAGE,
                     "cubin truncated: program header table (offset %llu, %llu entries of %llu "
                     "bytes) lies past the end (%zu bytes)", (unsigned long long)phoff,
                     (unsigned long long)phnum, (unsigned long long)phentsize, d.n);
  gcl__elf_section sec;
  for (size_t i = 0; s == GCL_OK && i < elf.shnum; i++) s = gcl__elf_section_get(&elf, i, &sec);
  return s;
}

/* The format from the content; only what the formats' headers promise is checked (the ELF
 * header and section table, the fatbin containers and entries), not the kernels. */
gcl_status gcl__image_format(const void *data, size_t size, gcl_format *format) {
  gcl__bytes d = {data, data ? size : 0};
  gcl_status s = GCL_OK;
  gcl_format f;
  if (gcl__is_elf(d)) {
    f = GCL_IMAGE_CUBIN;
    s = check_cubin(d);
  } else if (gcl__is_fatbin(d)) {
    f = GCL_IMAGE_FATBIN;
    s = gcl__fatbin_check(d);
  } else if (looks_like_ptx(d)) {
    f = GCL_IMAGE_PTX;
  } else {
    unsigned char head[4] = {0};
    if (d.n) memcpy(head, d.p, d.n < 4 ? d.n : 4);
    return gcl__fail(GCL_ERROR_BAD_IMAGE,
                     "not a cubin (ELF), fatbin (magic 0xba55ed50) or PTX (.version first, after "
                     "comments): %zu bytes starting %02x %02x %02x %02x",
                     d.n, head[0], head[1], head[2], head[3]);
  }
  if (s == GCL_OK) *format = f;
  return s;
}

static gcl_status read_any(gcl_image *img, gcl__bytes d, int sm) {
  if (gcl__is_elf(d) && gcl__elf_machine(d) != 0 && gcl__elf_machine(d) != 190)
    return gcl__host_elf_read(img, d, sm); /* a host program or library: its fatbin sections */
  gcl_format f;
  gcl_status s = gcl__image_format(d.p, d.n, &f);
  if (s != GCL_OK) return s;
  if (f == GCL_IMAGE_CUBIN) return gcl__cubin_read(img, d);
  if (f == GCL_IMAGE_FATBIN) return gcl__fatbin_read(img, d, sm);
  return gcl__ptx_read(img, d, sm);
}

gcl_status gcl_image_parse(const void *data, size_t size, int sm, gcl_image **out) {
  if (!data || !out)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_image_parse: %s is NULL",
                     !data ? "data" : "out");
  if (sm < 0 || sm > 255)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_image_parse: sm %d is not 0 or an "
                     "architecture number such as 90", sm);
  gcl_image *img = gcl__calloc(1, sizeof *img);
  if (!img) return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "gcl_image_parse: out of memory");
  gcl__bytes d = {data, size};
  gcl__image_clear(img); /* no kernels, not NVSHMEM, its version unknown */
  gcl_status s = read_any(img, d, sm);
  if (s != GCL_OK) {
    gcl_image_destroy(img);
    return s;
  }
  *out = img;
  return GCL_OK;
}

void gcl_image_destroy(gcl_image *img) {
  if (!img) return;
  gcl__image_clear(img);
  gcl__free(img);
}

gcl_format gcl_image_format(const gcl_image *img) {
  return img ? img->format : (gcl_format)0;
}

const char *gcl_format_name(gcl_format f) {
  switch (f) {
  case GCL_IMAGE_CUBIN: return "cubin";
  case GCL_IMAGE_FATBIN: return "fatbin";
  case GCL_IMAGE_PTX: return "ptx";
  case GCL_IMAGE_ELF: return "elf";
  }
  return "unknown";
}

int gcl_image_sm(const gcl_image *img) { return img ? img->sm : 0; }

int gcl_image_uses_nvshmem(const gcl_image *img) { return img && img->nvshmem ? 1 : 0; }

gcl_status gcl_image_nvshmem_version(const gcl_image *img, int *major, int *minor, int *patch) {
  if (!img || !major || !minor || !patch)
    return gcl__fail_null("gcl_image_nvshmem_version", 4, "img", (const void *)img, "major",
                          (const void *)major, "minor", (const void *)minor, "patch",
                          (const void *)patch);
  if (!img->nvshmem)
    return gcl__fail(GCL_ERROR_NOT_FOUND, "gcl_image_nvshmem_version: the image does not use "
                     "NVSHMEM (no nvshmemi_device_state_d)");
  if (img->nvshmem_version[0] < 0)
    return gcl__fail(GCL_ERROR_NOT_FOUND, "gcl_image_nvshmem_version: the image uses NVSHMEM but "
                     "its nvshmemi_device_lib_version_d holds no readable bytes");
  *major = img->nvshmem_version[0];
  *minor = img->nvshmem_version[1];
  *patch = img->nvshmem_version[2];
  return GCL_OK;
}

size_t gcl_image_kernel_count(const gcl_image *img) { return img ? img->count : 0; }

static gcl_status check_kernel(const gcl_image *img, size_t k, const char *fn) {
  if (!img) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: img is NULL", fn);
  if (k >= img->count)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: kernel %zu out of range (%zu kernels)", fn,
                     k, img->count);
  return GCL_OK;
}

/* check_kernel, then parameter p of kernel k: *ker on success. */
static gcl_status check_param(const gcl_image *img, size_t k, size_t p, const char *fn,
                              const gcl__image_kernel **ker) {
  gcl_status s = check_kernel(img, k, fn);
  if (s != GCL_OK) return s;
  *ker = &img->kernels[k];
  if (p >= (*ker)->info.param_count)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: parameter %zu out of range: kernel '%s' has %zu",
                     fn, p, (*ker)->name, (*ker)->info.param_count);
  return GCL_OK;
}

gcl_status gcl_image_kernel(const gcl_image *img, size_t k, gcl_image_kernel_info *info) {
  gcl_status s = check_kernel(img, k, "gcl_image_kernel");
  if (s != GCL_OK) return s;
  if (!info) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_image_kernel: info is NULL");
  *info = img->kernels[k].info;
  return GCL_OK;
}

gcl_status gcl_image_param(const gcl_image *img, size_t k, size_t p, size_t *offset,
                           size_t *size, size_t *align) {
  const gcl__image_kernel *ker;
  gcl_status s = check_param(img, k, p, "gcl_image_param", &ker);
  if (s != GCL_OK) return s;
  if (offset) *offset = ker->params[p].offset;
  if (size) *size = ker->params[p].size;
  if (align) *align = ker->params[p].align;
  return GCL_OK;
}

/* The PTX reader keeps each parameter's type as signature text (it places the parameters with
 * it): "u32", "ptr" or "bytes(N) align(A)". */
gcl_status gcl_image_param_type(const gcl_image *img, size_t k, size_t p, gcl_param_kind *kind,
                                gcl_scalar *scalar) {
  const gcl__image_kernel *ker;
  gcl_status s = check_param(img, k, p, "gcl_image_param_type", &ker);
  if (s != GCL_OK) return s;
  const char *text = ker->params[p].kind;
  gcl_param_kind pk = GCL_PARAM_SCALAR;
  gcl_scalar sc = GCL_SCALAR_VOID;
  if (!*text)
    return gcl__fail(GCL_ERROR_NOT_FOUND, "gcl_image_param_type: kernel '%s' parameter %zu: the "
                     "%s image gives no parameter types", ker->name, p,
                     gcl_format_name(img->format));
  if (strcmp(text, "ptr") == 0) pk = GCL_PARAM_POINTER;
  else if (strncmp(text, "bytes", 5) == 0) pk = GCL_PARAM_BYTES;
  else
    for (sc = GCL_SCALAR_BOOL; sc < GCL_SCALAR_F64 && strcmp(text, gcl_scalar_name(sc)); sc++) {}
  if (kind) *kind = pk;
  if (scalar) *scalar = sc;
  return GCL_OK;
}

gcl_status gcl_image_find_kernel(const gcl_image *img, const char *name, size_t *index) {
  if (!img || !name || !index)
    return gcl__fail_null("gcl_image_find_kernel", 3, "img", (const void *)img, "name",
                          (const void *)name, "index", (const void *)index);
  for (size_t k = 0; k < img->count; k++)
    if (strcmp(img->kernels[k].name, name) == 0) {
      *index = k;
      return GCL_OK;
    }
  return gcl__fail(GCL_ERROR_NOT_FOUND, "no kernel '%s' in the image (%zu kernels)", name,
                   img->count);
}

int gcl_image_kernel_waits(const gcl_image *img, size_t k) {
  if (!img || k >= img->count) return -1;
  return img->kernels[k].waits;
}
