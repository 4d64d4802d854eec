/* libfakenvshmem.so: a CPU-only stand-in for NVSHMEM's libnvshmem_host.so.3, for tests. Not
 * installed.
 *
 * gclaunch opens it through GCL_NVSHMEM_PATH=<path> exactly as it opens the real library; tests
 * link it too (the dynamic loader then hands gclaunch's dlopen the same instance) and steer it
 * with the functions below. It checks what gclaunch passes as the real library would need it
 * (the init attributes' version words and sizes, the unique id's version, init before any other
 * call, culibrary_init once per library) and records it. Symmetric memory is host memory (like
 * libfakecuda's device memory): one block per allocation holds every PE's copy, copy p at
 * base + p * stride, so nvshmem_ptr gives real, distinct addresses.
 *
 * Environment (read at every reset and at load):
 *   FAKENVSHMEM_VERSION=3.4.5       what nvshmemx_vendor_get_version_info reports
 *   FAKENVSHMEM_UNREACHABLE=1,3     PEs whose nvshmem_ptr is NULL (not load/store reachable)
 *   FAKENVSHMEM_FAIL=name[:rc]      entry point `name` returns rc (default 7) or NULL
 *   FAKENVSHMEM_HEAP_MAX=bytes      nvshmem_align of more ends the process with 255, as the real
 *                                   library does when its heap cannot grow (default 1 GiB)
 * Not thread-safe (NVSHMEM is not either: one thread at a time). */
#ifndef FAKENVSHMEM_H
#define FAKENVSHMEM_H

#ifdef __cplusplus
extern "C" {
#endif

/* Forgets the recorded calls and re-reads the environment; an initialized PE stays. */
void fakenvshmem_reset(void);
/* 1 between a successful nvshmemx_hostlib_init_attr and nvshmemx_hostlib_finalize. */
int fakenvshmem_initialized(void);
/* The cuda_device_id, rank and count of the last init (-1 before any). */
int fakenvshmem_device(void);
int fakenvshmem_rank(void);
int fakenvshmem_count(void);
/* Libraries initialised (culibrary_init) and not finalised. */
int fakenvshmem_libraries(void);
/* Calls of entry point name since the last reset. */
int fakenvshmem_calls(const char *name);
/* Symmetric allocations live. */
int fakenvshmem_allocations(void);
/* Sets what the environment sets (version "3.4.5"; unreachable "1,3"; fail "name:rc"); NULL
 * leaves one as it is, "" clears it. */
void fakenvshmem_set(const char *version, const char *unreachable, const char *fail);

#ifdef __cplusplus
}
#endif
#endif
