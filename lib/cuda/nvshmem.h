/* NVSHMEM's host library, opened at run time (never linked; no NVSHMEM header needed): the
 * entry points gclaunch calls and the host structs it passes, mirrored from NVSHMEM 3.x
 * (device_host/nvshmem_types.h, bootstrap_device_host/nvshmem_uniqueid.h) with their sizes
 * checked. Internal. */
#ifndef GCL_NVSHMEM_H
#define GCL_NVSHMEM_H

#include "cuda_internal.h"

/* nvshmemx_uniqueid_t: a version word and 124 opaque bytes. */
typedef struct gcl__nvshmem_uid {
  int version;
  char internal[124];
} gcl__nvshmem_uid;

/* nvshmemx_uniqueid_args_t */
typedef struct gcl__nvshmem_uid_args {
  int version;
  gcl__nvshmem_uid *id;
  int myrank;
  int nranks;
} gcl__nvshmem_uid_args;

/* nvshmemx_init_args_t (V2: cuda_device_id is honoured only with the V2 version word) */
typedef struct gcl__nvshmem_init_args {
  int version;
  gcl__nvshmem_uid_args uid_args;
  int cuda_device_id;
  char content[92];
} gcl__nvshmem_init_args;

/* nvshmemx_init_attr_t */
typedef struct gcl__nvshmem_init_attr {
  int version;
  void *mpi_comm;
  gcl__nvshmem_init_args args;
} gcl__nvshmem_init_attr;

_Static_assert(sizeof(gcl__nvshmem_uid) == 128, "nvshmemx_uniqueid_t is 128 bytes");
_Static_assert(sizeof(gcl__nvshmem_uid_args) == 24, "nvshmemx_uniqueid_args_t is 24 bytes");
_Static_assert(sizeof(gcl__nvshmem_init_args) == 128, "nvshmemx_init_args_t is 128 bytes");
_Static_assert(sizeof(gcl__nvshmem_init_attr) == 144, "nvshmemx_init_attr_t is 144 bytes");

/* Version words: (generation << 16) + the struct's size, as NVSHMEM's initializers write them. */
#define GCL__NVSHMEM_UID_VERSION ((1 << 16) + (int)sizeof(gcl__nvshmem_uid))
#define GCL__NVSHMEM_UID_ARGS_VERSION ((1 << 16) + (int)sizeof(gcl__nvshmem_uid_args))
#define GCL__NVSHMEM_INIT_ARGS_V2 ((2 << 16) + (int)sizeof(gcl__nvshmem_init_args))
#define GCL__NVSHMEM_INIT_ATTR_V2 ((2 << 16) + (int)sizeof(gcl__nvshmem_init_attr))
#define GCL__NVSHMEMX_INIT_WITH_UNIQUEID (1u << 3)

/* The oldest host library gclaunch accepts: nvshmemx_culibrary_init came in 3.3.9. */
#define GCL__NVSHMEM_MIN_MAJOR 3
#define GCL__NVSHMEM_MIN_MINOR 3
#define GCL__NVSHMEM_MIN_PATCH 9

#define GCL_NVSHMEM_ENTRY_POINTS(X)                                                               \
  X(nvshmemx_vendor_get_version_info, void, (int *, int *, int *))                                \
  X(nvshmemx_get_uniqueid, int, (gcl__nvshmem_uid *))                                             \
  X(nvshmemx_set_attr_uniqueid_args, int, (int, int, const gcl__nvshmem_uid *,                    \
                                           gcl__nvshmem_init_attr *))                             \
  X(nvshmemx_hostlib_init_attr, int, (unsigned, gcl__nvshmem_init_attr *))                        \
  X(nvshmemx_hostlib_finalize, void, (void))                                                      \
  X(nvshmem_my_pe, int, (void))                                                                   \
  X(nvshmem_n_pes, int, (void))                                                                   \
  X(nvshmem_align, void *, (size_t, size_t))                                                      \
  X(nvshmem_free, void, (void *))                                                                 \
  X(nvshmem_ptr, void *, (const void *, int))                                                     \
  X(nvshmemx_barrier_all_on_stream, void, (CUstream))                                             \
  X(nvshmemx_culibrary_init, int, (CUlibrary))                                                    \
  X(nvshmemx_culibrary_finalize, int, (CUlibrary))

typedef struct gcl__nvshmem_api {
#define GCL_X_FIELD(name, ret, params) ret(*name) params;
  GCL_NVSHMEM_ENTRY_POINTS(GCL_X_FIELD)
#undef GCL_X_FIELD
  int version[3]; /* major, minor, patch of the host library */
} gcl__nvshmem_api;

extern gcl__nvshmem_api gcl__nvshmem;

/* Opens the host library once (nvshmem.c); GCL_ERROR_NO_NVSHMEM naming what was tried, the
 * missing entry point, or the version found and the one needed. */
gcl_status gcl__nvshmem_load(void);

#endif
