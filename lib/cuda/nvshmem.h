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

/* The symmetric heap as NVSHMEM 3.x configures it from its environment at start (pe_heap.c).
 * NVSHMEM 3.4.5 does not return NULL when its heap cannot grow: it prints
 * "allocate_physical_memory_to_heap failed", faults in its own barrier and exits the process
 * (status 255). So every size is admitted here before nvshmem_align sees it. */
typedef struct gcl__pe_heap {
  bool dynamic;        /* a CUDA VMM heap growing on demand (NVSHMEM_DISABLE_CUDA_VMM false) */
  size_t limit;        /* NVSHMEM_MAX_MEMORY_PER_GPU (dynamic) or NVSHMEM_SYMMETRIC_SIZE (static) */
  size_t granularity;  /* NVSHMEM_CUMEM_GRANULARITY: the heap grows by multiples of it */
  size_t live;         /* bytes of live allocations, each rounded to GCL_SYMMETRIC_ALIGN */
  size_t mapped;       /* device memory NVSHMEM grew the heap by for them (an estimate from below) */
} gcl__pe_heap;

/* Reads NVSHMEM's variables (their defaults when unset or unreadable) into a fresh heap. */
void gcl__pe_heap_start(gcl__pe_heap *h);
/* GCL_OK when bytes may go to nvshmem_align: GCL_ERROR_INVALID_ARGUMENT for 0 or a size that
 * overflows when rounded; GCL_ERROR_OUT_OF_MEMORY beyond the heap's limit or, when the heap must
 * grow, beyond the device's free memory (cuMemGetInfo in the current context: the caller bound
 * the PE's), the numbers named. Changes nothing. */
gcl_status gcl__pe_heap_admit(const gcl__pe_heap *h, size_t bytes);
/* Books an allocation of bytes that succeeded, or a free. */
void gcl__pe_heap_took(gcl__pe_heap *h, size_t bytes);
void gcl__pe_heap_gave(gcl__pe_heap *h, size_t bytes);

/* Opens the host library once (nvshmem.c); GCL_ERROR_NO_NVSHMEM naming what was tried, the
 * missing entry point, or the version found and the one needed. */
gcl_status gcl__nvshmem_load(void);

#endif
