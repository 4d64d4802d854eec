/* The one table of architectures (arch.h). A row per architecture nvcc 13.0 builds
 * (`nvcc --list-gpu-arch`, and NVRTC's nvrtcGetSupportedArchs: tests/unit/test_arch.c checks the
 * table against NVRTC's list), and nothing else: the layout engine refuses any other number
 * rather than guess its parameter base.
 *  - param_base: where ptxas starts the parameter area in constant bank 0 (docs/facts.md
 *    "Parameter bases"), measured from nvcc 13.0 cubins of every architecture. sm_75-89 move it
 *    to 0x1a80 when the area passes 4352 bytes (layout.c).
 *  - sass_wait_known: the SASS form of griddepcontrol.wait was found by diffing nvcc cubins with
 *    and without the wait on these (docs/launchsafety.md); elsewhere a kernel's wait is unknown.
 *  - shared_optin: the CUDA C++ Programming Guide's "Technical Specifications per Compute
 *    Capability" (maximum shared memory per block, opt-in); 0 where this table does not know it
 *    (gclaunch run then leaves the check to the driver). */
#include "arch.h"

#include <stdio.h>
#include <string.h>

#include "internal.h"

static const gcl__arch archs[] = {
    {75, 0x160, false, 65536},   {80, 0x160, false, 166912},  {86, 0x160, false, 101376},
    {87, 0x160, false, 166912},  {88, 0x160, false, 0},       {89, 0x160, false, 101376},
    {90, 0x210, true, 232448},   {100, 0x380, true, 232448},  {103, 0x380, true, 232448},
    {110, 0x380, true, 0},       {120, 0x380, true, 101376},  {121, 0x380, true, 101376},
};

const gcl__arch *gcl__arch_find(int sm) {
  for (size_t i = 0; i < sizeof archs / sizeof *archs; i++)
    if (archs[i].sm == sm) return &archs[i];
  return NULL;
}

const gcl__arch *gcl__arch_all(size_t *count) {
  *count = sizeof archs / sizeof *archs;
  return archs;
}

const char *gcl__arch_list(char *buf, size_t size) {
  size_t at = 0;
  if (size) buf[0] = '\0';
  for (size_t i = 0; i < sizeof archs / sizeof *archs && at < size; i++) {
    int n = snprintf(buf + at, size - at, "%s%d", i ? ", " : "", archs[i].sm);
    if (n < 0) break;
    at += (size_t)n;
  }
  return buf;
}

/* --- the public view (core.h) ---------------------------------------------------------------- */

gcl_status gcl_arch_query(int sm, gcl_arch_info *info) {
  if (!info) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "info: expected a gcl_arch_info, got NULL");
  const gcl__arch *a = gcl__arch_find(sm);
  if (!a) {
    char known[128];
    return gcl__fail(GCL_ERROR_NOT_FOUND, "sm %d: not an architecture gclaunch knows (%s)", sm,
                     gcl__arch_list(known, sizeof known));
  }
  memset(info, 0, sizeof *info);
  info->sm = a->sm, info->param_base = a->param_base, info->sass_wait_known = a->sass_wait_known;
  info->shared_optin_bytes = (size_t)a->shared_optin;
  return GCL_OK;
}

size_t gcl_arch_list(int *sms, size_t cap) {
  size_t n = sizeof archs / sizeof *archs;
  for (size_t i = 0; sms && i < n && i < cap; i++) sms[i] = archs[i].sm;
  return n;
}
