/* NCCL's device communicator against the kernel's NCCL (include/gclaunch/nccl.h): which layout
 * the bytes are in, which one the kernel reads, and a refusal naming both when they differ. CPU
 * only: the versions come from the caller (ncclGetVersion, NCCL_VERSION_CODE) and the bytes. */
#include "internal.h"
#include "layout_internal.h"
#include "types.h"

#include "gclaunch/nccl.h"

#include <stdio.h>
#include <string.h>

/* First NCCL_VERSION_CODE of each layout generation of ncclDevComm, oldest first: the device
 * structs changed at 2.28.7 (comm__types.h), at 2.29 and at 2.29.5 (NCCL 2.30.7's compatibility
 * table: v22902 covers 2.29.2-2.29.3, v22907 2.29.5-2.29.7), and 2.30.0 made it versioned. */
static const int generations[] = {22803, 22807, 22900, 22905, 23000};
#define NEWEST_KNOWN 23007 /* the newest release whose layout is known to be 2.30.0's */
#define FIRST_VERSIONED 23000

int gcl_nccl_layout_generation(int version) {
  if (version < generations[0]) return 0;
  if (version > NEWEST_KNOWN) return version;
  int g = generations[0];
  for (size_t i = 0; i < sizeof generations / sizeof *generations; i++)
    if (version >= generations[i]) g = generations[i];
  return g;
}

/* "2.28.9" for 22809 (NCCL_VERSION(X, Y, Z) = X * 10000 + Y * 100 + Z since 2.9). */
static const char *version_text(int v, char *buf, size_t cap) {
  snprintf(buf, cap, "%d.%d.%d", v / 10000, v / 100 % 100, v % 100);
  return buf;
}

static gcl_status check_version(int v, const char *which) {
  if (v >= generations[0] && v < 1000000) return GCL_OK;
  return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_args_set_nccl_devcomm: comm->%s is %d: expected "
                   "an NCCL_VERSION_CODE of a release with the device API (22803 = 2.28.3 or "
                   "later)", which, v);
}

/* The layout the bytes are in (a version whose generation is theirs), or 0 when they do not tell
 * (an unversioned communicator from a 2.30+ library, made for older headers). */
static int bytes_layout(const gcl_nccl_devcomm *c, bool *versioned) {
  uint32_t head[2] = {0, 0};
  if (c->size >= sizeof head) memcpy(head, c->bytes, sizeof head);
  *versioned = head[0] == GCL_NCCL_API_MAGIC;
  if (*versioned) return (int)head[1];
  return c->runtime_version < FIRST_VERSIONED ? c->runtime_version : 0;
}

/* The field is a bytes(N) leaf of the communicator's size. */
static gcl_status check_field(const gcl_field *f, size_t size, const char *who) {
  const gcl__type *t = gcl__f_type(f);
  size_t n = t ? t->count : f->size;
  if (f->info.kind == GCL_PARAM_BYTES && (!t || t->kind == GCL_PARAM_BYTES) && n == size)
    return GCL_OK;
  if (f->info.kind != GCL_PARAM_BYTES || (t && t->kind != GCL_PARAM_BYTES))
    return gcl__fail(GCL_ERROR_TYPE_MISMATCH, "gcl_args_set_nccl_devcomm: %s is not bytes(N): a "
                     "communicator by value is declared bytes(sizeof(ncclDevComm)) align(8)", who);
  return gcl__fail(GCL_ERROR_TYPE_MISMATCH, "gcl_args_set_nccl_devcomm: %s is bytes(%zu), the "
                   "communicator %zu bytes (sizeof(ncclDevComm) of other NCCL headers than the "
                   "kernel's)", who, n, size);
}

static gcl_status mismatch(const char *who, const gcl_nccl_devcomm *c, int layout, bool versioned) {
  char k[16], l[16], r[16];
  if (!versioned && c->kernel_version >= FIRST_VERSIONED)
    return gcl__fail(GCL_ERROR_TYPE_MISMATCH, "gcl_args_set_nccl_devcomm: %s: the kernel was built "
                     "with NCCL %s, whose communicator starts with magic 0x%08x, but these bytes "
                     "have none: made by NCCL %s (runtime_version %d) in an older layout",
                     who, version_text(c->kernel_version, k, sizeof k), GCL_NCCL_API_MAGIC,
                     version_text(c->runtime_version, r, sizeof r), c->runtime_version);
  return gcl__fail(GCL_ERROR_TYPE_MISMATCH, "gcl_args_set_nccl_devcomm: %s: the kernel was built "
                   "with NCCL %s (layout of %s), the communicator is in NCCL %s's layout (%s; "
                   "layout of %s): rebuild the kernel with the headers of the NCCL the host runs, "
                   "or run the NCCL it was built with", who,
                   version_text(c->kernel_version, k, sizeof k),
                   version_text(gcl_nccl_layout_generation(c->kernel_version), r, sizeof r),
                   version_text(layout, l, sizeof l),
                   versioned ? "its version field" : "the library that made it",
                   version_text(gcl_nccl_layout_generation(layout), (char[16]){0}, 16));
}

gcl_status gcl_args_set_nccl_devcomm(gcl_args *args, const gcl_field *field,
                                     const gcl_nccl_devcomm *comm) {
  static const char fn[] = "gcl_args_set_nccl_devcomm";
  if (!args || !field || !comm || !comm->bytes)
    return gcl__fail_null(fn, 4, "args", (const void *)args, "field", (const void *)field, "comm",
                          (const void *)comm, "comm->bytes", comm ? comm->bytes : NULL);
  gcl_status s;
  if ((s = check_version(comm->kernel_version, "kernel_version")) ||
      (s = check_version(comm->runtime_version, "runtime_version")))
    return s;
  char who[512];
  gcl__field_label(field, who, sizeof who);
  if ((s = check_field(field, comm->size, who))) return s;
  bool versioned;
  int layout = bytes_layout(comm, &versioned);
  if (versioned && layout < generations[0])
    return gcl__fail(GCL_ERROR_TYPE_MISMATCH, "%s: %s: the communicator's version field is %d, "
                     "no NCCL release with the device API", fn, who, layout);
  bool kernel_versioned = comm->kernel_version >= FIRST_VERSIONED;
  if ((!versioned && kernel_versioned) ||
      (versioned && !kernel_versioned) ||
      (layout && gcl_nccl_layout_generation(layout) !=
                     gcl_nccl_layout_generation(comm->kernel_version)))
    return mismatch(who, comm, layout ? layout : comm->runtime_version, versioned);
  return gcl_args_set_field(args, field, comm->bytes, comm->size);
}
