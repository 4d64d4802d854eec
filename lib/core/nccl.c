/* NCCL's device communicator (ncclDevComm, what ncclDevCommCreate fills) checked against the NCCL
 * headers a kernel was built with, before it rides to the kernel by value as bytes(N). The rule is
 * NCCL's own, as its headers and users state it:
 *   - the device API exists from NCCL 2.28;
 *   - up to 2.30 the struct has no version field and ncclDevCommCreate fills it in the runtime
 *     library's layout: "Prior to NCCL 2.31, NCCL compile-time and runtime versions must be the
 *     same" (DeepEP's and TurboMind's checks; deepseek-ai/DeepEP#687 is what happens otherwise);
 *   - from 2.31 the struct starts with NCCL's "structure versioning metadata", a magic word
 *     (NCCL_API_MAGIC, 0xcafebeef) and the NCCL_VERSION_CODE of the layout it was filled in
 *     (the requirements' version, or the runtime's with useRuntimeVersion): that must be the
 *     kernel's headers' version.
 * Version codes are NCCL_VERSION_CODE's: 22809 for 2.28.9, 23100 for 2.31.0. CPU only. */
#include "internal.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define NCCL_DEVICE_API_FIRST 22800 /* 2.28.0 */
#define NCCL_VERSIONED_FIRST 23100  /* 2.31.0: ncclDevComm starts with magic and version */
#define NCCL_API_MAGIC 0xcafebeefu

/* "2.28.9" from 22809 (NCCL_VERSION: X * 10000 + Y * 100 + Z past 2.8, X * 1000 + Y * 100 + Z before). */
static const char *version_text(int code, char *buf, size_t cap) {
  if (code >= 20900) snprintf(buf, cap, "%d.%d.%d", code / 10000, code / 100 % 100, code % 100);
  else snprintf(buf, cap, "%d.%d.%d", code / 1000, code / 100 % 10, code % 100);
  return buf;
}

static gcl_status versioned(const unsigned char *comm, size_t bytes, int built) {
  uint32_t magic, version;
  char b[24], v[24];
  if (bytes < 8)
    return gcl__fail(GCL_ERROR_TYPE_MISMATCH, "gcl_nccl_devcomm_check: %zu bytes cannot hold the "
                     "magic and version an NCCL %s ncclDevComm starts with", bytes,
                     version_text(built, b, sizeof b));
  memcpy(&magic, comm, 4);
  memcpy(&version, comm + 4, 4);
  if (magic != NCCL_API_MAGIC)
    return gcl__fail(GCL_ERROR_TYPE_MISMATCH, "gcl_nccl_devcomm_check: magic 0x%08x, expected 0x%08x: "
                     "not an ncclDevComm filled by ncclDevCommCreate of NCCL 2.31 or later (the "
                     "kernel was built with NCCL %s's headers)", magic, NCCL_API_MAGIC,
                     version_text(built, b, sizeof b));
  if ((int)version != built)
    return gcl__fail(GCL_ERROR_TYPE_MISMATCH, "gcl_nccl_devcomm_check: the communicator is in NCCL "
                     "%s's layout (version %u), the kernel was built with NCCL %s's headers (%d): "
                     "create it with the requirements' version of the kernel's headers",
                     version_text((int)version, v, sizeof v), version, version_text(built, b, sizeof b),
                     built);
  return GCL_OK;
}

gcl_status gcl_nccl_devcomm_check(const void *comm, size_t bytes, int built_version,
                                  int runtime_version) {
  char b[24], r[24];
  if (!comm || bytes == 0)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_nccl_devcomm_check: %s", !comm ? "comm is NULL"
                     : "bytes is 0, expected sizeof(ncclDevComm)");
  if (built_version < NCCL_DEVICE_API_FIRST || runtime_version < NCCL_DEVICE_API_FIRST)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_nccl_devcomm_check: built_version %d, "
                     "runtime_version %d: NCCL's device API starts at 2.28.0 (22800; pass "
                     "NCCL_VERSION_CODE and ncclGetVersion's value)", built_version, runtime_version);
  if (built_version >= NCCL_VERSIONED_FIRST) return versioned(comm, bytes, built_version);
  if (runtime_version == built_version) return GCL_OK;
  return gcl__fail(GCL_ERROR_TYPE_MISMATCH, "gcl_nccl_devcomm_check: the kernel was built with NCCL "
                   "%s's headers, the communicator comes from the NCCL %s library: before 2.31 "
                   "ncclDevComm carries no version and is filled in the runtime's layout, so the "
                   "two must be the same NCCL (rebuild the kernel with the runtime's headers)",
                   version_text(built_version, b, sizeof b), version_text(runtime_version, r, sizeof r));
}
