/* The architectures gclaunch knows: one table (arch.c) for the layout engine (parameter bases),
 * the cubin reader (which SASS encodings of griddepcontrol.wait are known) and, through the
 * public view gcl_arch_query / gcl_arch_list (core.h), the gclaunch tool (shared memory per
 * block). */
#ifndef GCL_CORE_ARCH_H
#define GCL_CORE_ARCH_H

#include <stdbool.h>
#include <stddef.h>

typedef struct gcl__arch {
  int sm;                  /* compute capability x 10: 90 for sm_90 */
  unsigned param_base;     /* constant bank 0 offset of the parameter area (small area) */
  bool sass_wait_known;    /* griddepcontrol.wait's SASS encoding verified (cubin.c) */
  long shared_optin;       /* maximum shared memory per block, opt-in, bytes; 0: not known */
} gcl__arch;

/* The row of architecture sm, NULL when it is not known. */
const gcl__arch *gcl__arch_find(int sm);
/* The known architectures in increasing order: *count rows. */
const gcl__arch *gcl__arch_all(size_t *count);
/* "75, 80, ..., 121" into buf (cut to size, NUL-terminated); returns buf. */
const char *gcl__arch_list(char *buf, size_t size);

#endif
