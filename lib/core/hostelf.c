/* Host ELF files (executables, shared libraries such as libcurand.so, relocatable objects): nvcc
 * puts each translation unit's device code in one fatbin container, and the linker concatenates
 * them in `.nv_fatbin` (`__nv_relfatbin` for relocatable device code). Every container is read;
 * the kernels of all of them make up the image, in section and container order. */
#include "image_internal.h"

static const char *const fatbin_sections[] = {".nv_fatbin", "__nv_relfatbin"};

gcl_status gcl__host_elf_read(gcl_image *img, gcl__bytes data, int sm) {
  gcl__elf elf;
  gcl_status s = gcl__elf_open_any(&elf, data);
  size_t found = 0;
  for (size_t i = 0; s == GCL_OK && i < sizeof fatbin_sections / sizeof *fatbin_sections; i++) {
    size_t si;
    gcl__elf_section sec;
    if (!gcl__elf_section_find(&elf, fatbin_sections[i], &si)) continue;
    s = gcl__elf_section_get(&elf, si, &sec);
    if (s != GCL_OK || sec.body.n == 0) continue;
    if (!gcl__is_fatbin(sec.body))
      return gcl__fail(GCL_ERROR_BAD_IMAGE, "ELF: section %s does not start with a fatbin "
                       "container (magic 0xba55ed50)", fatbin_sections[i]);
    s = gcl__fatbin_read(img, sec.body, sm);
    if (s == GCL_OK && sm == 0) sm = img->sm; /* one architecture for every section */
    found++;
  }
  if (s == GCL_OK && found == 0)
    s = gcl__fail(GCL_ERROR_BAD_IMAGE, "ELF machine %u file has no .nv_fatbin or __nv_relfatbin "
                  "section: it holds no CUDA device code", gcl__elf_machine(data));
  if (s == GCL_OK) img->format = GCL_IMAGE_ELF;
  return s;
}
