/* The symmetric heap's limits, read from NVSHMEM's own variables as NVSHMEM 3.x reads them at
 * start (src/host/env/env_defs.h), and the admission of every symmetric allocation against them
 * and against the device's free memory. NVSHMEM 3.4.5 ends the process when its heap cannot grow
 * (measured: 100 GiB, 1 TiB or 2^63 - 1 bytes on an 80 GB H100 print
 * "allocate_physical_memory_to_heap failed", fault in NVSHMEM's barrier and exit with 255), so a
 * size is refused here, with the numbers, before nvshmem_align is called.
 *
 * The model: a CUDA VMM heap (the default on x86) reserves NVSHMEM_MAX_MEMORY_PER_GPU (128 GiB)
 * of addresses and maps device memory into it on demand, NVSHMEM_CUMEM_GRANULARITY (512 MiB) at a
 * time, never giving it back before finalize; an allocation that does not fit the memory mapped
 * so far maps round_up(size + alignment, granularity) more. A static heap
 * (NVSHMEM_DISABLE_CUDA_VMM=1) is NVSHMEM_SYMMETRIC_SIZE (1 GiB) allocated at start. */
#include "nvshmem.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define GIB ((size_t)1 << 30)

/* NVSHMEM's size syntax: a number and an optional scale k, m, g or t (powers of 1024). */
static size_t env_size(const char *name, size_t fallback) {
  const char *v = getenv(name);
  if (!v || !*v) return fallback;
  char *end = NULL;
  double x = strtod(v, &end);
  if (end == v || !(x >= 0)) return fallback;
  switch (tolower((unsigned char)*end)) {
  case 'k': x *= 1024.0, end++; break;
  case 'm': x *= 1024.0 * 1024.0, end++; break;
  case 'g': x *= 1024.0 * 1024.0 * 1024.0, end++; break;
  case 't': x *= 1024.0 * 1024.0 * 1024.0 * 1024.0, end++; break;
  default: break;
  }
  if (*end || x >= 18446744073709551615.0) return fallback;
  size_t n = (size_t)x;
  return (double)n < x ? n + 1 : n; /* NVSHMEM rounds up */
}

/* NVSHMEM's booleans: 1, y, yes, t, true (any case) and their opposites. */
static bool env_bool(const char *name, bool fallback) {
  const char *v = getenv(name);
  if (!v || !*v) return fallback;
  int c = tolower((unsigned char)v[0]);
  return c == '1' || c == 'y' || c == 't' ? true : c == '0' || c == 'n' || c == 'f' ? false : fallback;
}

void gcl__pe_heap_start(gcl__pe_heap *h) {
  *h = (gcl__pe_heap){0};
  h->dynamic = !env_bool("NVSHMEM_DISABLE_CUDA_VMM", false);
  h->limit = h->dynamic ? env_size("NVSHMEM_MAX_MEMORY_PER_GPU", 128 * GIB)
                        : env_size("NVSHMEM_SYMMETRIC_SIZE", GIB);
  h->granularity = env_size("NVSHMEM_CUMEM_GRANULARITY", GIB / 2);
  if (h->granularity == 0) h->granularity = GIB / 2;
}

static size_t round_up(size_t x, size_t to) { return (x + to - 1) / to * to; }

static double gib(size_t x) { return (double)x / (double)GIB; }

/* The device memory a dynamic heap must map for rounded more bytes (0: it fits what is mapped). */
static size_t growth(const gcl__pe_heap *h, size_t rounded) {
  if (!h->dynamic || (h->live <= h->mapped && rounded <= h->mapped - h->live)) return 0;
  return round_up(rounded + GCL_SYMMETRIC_ALIGN, h->granularity);
}

static gcl_status check_free(size_t grow, size_t bytes) {
  size_t free_b = 0, total = 0;
  CUresult rc = gcl__cu.cuMemGetInfo(&free_b, &total);
  if (rc != CUDA_SUCCESS) return gcl__cu_fail(rc, "gcl_symmetric_alloc: cuMemGetInfo");
  if (grow <= free_b) return GCL_OK;
  return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "gcl_symmetric_alloc: bytes %zu (%.2f GiB) would grow "
                   "NVSHMEM's heap by %zu bytes (%.2f GiB, a multiple of NVSHMEM_CUMEM_GRANULARITY), "
                   "the device has %zu bytes (%.2f GiB) free of %zu (%.2f GiB); nothing was "
                   "allocated (NVSHMEM would end the process)", bytes, gib(bytes), grow, gib(grow),
                   free_b, gib(free_b), total, gib(total));
}

gcl_status gcl__pe_heap_admit(const gcl__pe_heap *h, size_t bytes) {
  if (bytes == 0)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_symmetric_alloc: bytes is 0, expected at least 1");
  if (bytes > SIZE_MAX - 2 * GCL_SYMMETRIC_ALIGN - h->granularity)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_symmetric_alloc: bytes %zu overflows when "
                     "rounded up to the heap's granularity (%zu)", bytes, h->granularity);
  size_t rounded = round_up(bytes, GCL_SYMMETRIC_ALIGN);
  const char *var = h->dynamic ? "NVSHMEM_MAX_MEMORY_PER_GPU" : "NVSHMEM_SYMMETRIC_SIZE";
  /* A dynamic heap's address range starts with NVSHMEM's internal heap: one grain is kept for it. */
  size_t kept = h->dynamic && h->limit > h->granularity ? h->granularity : 0, room = h->limit - kept;
  if (h->live > room || rounded + GCL_SYMMETRIC_ALIGN > room - h->live) {
    char less[96] = "";
    if (kept) snprintf(less, sizeof less, ", less one %zu-byte grain kept for NVSHMEM's internal heap", kept);
    return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "gcl_symmetric_alloc: bytes %zu (%.2f GiB) do not "
                     "fit the symmetric heap: %s is %zu bytes (%.2f GiB%s), %zu (%.2f GiB) are in "
                     "use; nothing was allocated (NVSHMEM would end the process)", bytes, gib(bytes),
                     var, h->limit, gib(h->limit), less, h->live, gib(h->live));
  }
  size_t grow = growth(h, rounded);
  return grow ? check_free(grow, bytes) : GCL_OK;
}

void gcl__pe_heap_took(gcl__pe_heap *h, size_t bytes) {
  size_t rounded = round_up(bytes, GCL_SYMMETRIC_ALIGN);
  h->mapped += growth(h, rounded);
  h->live += rounded;
}

void gcl__pe_heap_gave(gcl__pe_heap *h, size_t bytes) {
  size_t rounded = round_up(bytes, GCL_SYMMETRIC_ALIGN);
  h->live = rounded < h->live ? h->live - rounded : 0;
}
