/* The kernel table of a gcl_image: the one thing the readers (cubin.c, ptx.c, ...) and image.c
 * all write. A leaf: it calls no other file of the image readers. */
#include "image_internal.h"

#include <string.h>

gcl_status gcl__image_add_kernel(gcl_image *img, const char *name, size_t name_len,
                                 size_t param_count, gcl__image_kernel **out) {
  if (img->count == img->cap) {
    size_t cap = img->cap ? 2 * img->cap : 8;
    gcl__image_kernel *k = gcl__realloc(img->kernels, cap * sizeof *k);
    if (!k) return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "image: out of memory for %zu kernels", cap);
    img->kernels = k;
    img->cap = cap;
  }
  gcl__image_kernel k = {.info = {.param_count = param_count, .registers = -1,
                                  .shared_bytes = -1},
                         .waits = -1};
  k.name = gcl__malloc(name_len + 1);
  k.params = param_count ? gcl__calloc(param_count, sizeof *k.params) : NULL;
  if (!k.name || (param_count && !k.params)) {
    gcl__free(k.name);
    gcl__free(k.params);
    return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "image: out of memory for kernel '%.*s'",
                     (int)(name_len > 200 ? 200 : name_len), name);
  }
  memcpy(k.name, name, name_len);
  k.name[name_len] = '\0';
  k.info.name = k.name;
  img->kernels[img->count] = k;
  *out = &img->kernels[img->count++];
  return GCL_OK;
}

/* Frees the kernels (not img itself). */
void gcl__image_clear(gcl_image *img) {
  for (size_t k = 0; k < img->count; k++) {
    gcl__free(img->kernels[k].name);
    gcl__free(img->kernels[k].params);
  }
  gcl__free(img->kernels);
  img->kernels = NULL;
  img->count = img->cap = 0;
  img->nvshmem = false;
  for (int i = 0; i < 3; i++) img->nvshmem_version[i] = -1;
}
