/* The image of kernels/NAME.cu for this device: NAME.sm_NN.cubin, else NAME.fatbin (the build
 * directory's kernels). Fails the calling Criterion test when neither can be read. The caller
 * frees the image. */
#ifndef GCL_TEST_KERNEL_IMAGE_H
#define GCL_TEST_KERNEL_IMAGE_H

#include <criterion/criterion.h>
#include <stdio.h>

#include "cuda_internal.h"

static inline void *kernel_image(const char *name, int sm, size_t *size) {
  char path[1024];
  void *image = NULL;
  snprintf(path, sizeof path, "%s/%s.sm_%d.cubin", GCL_KERNEL_DIR, name, sm);
  if (gcl__read_file(path, &image, size) != GCL_OK) {
    snprintf(path, sizeof path, "%s/%s.fatbin", GCL_KERNEL_DIR, name);
    gcl__read_file(path, &image, size);
  }
  cr_assert_not_null(image, "cannot read %s: %s", path, gcl_last_error());
  return image;
}

#endif
