/* The allocator every allocation in lib/ goes through (libuv's uv_replace_allocator): a program
 * with its own heap, or a test counting blocks, installs four functions once, before any other
 * gclaunch call. The live-block count makes a late replacement an error instead of handing a
 * block of one allocator to the other's free. */
#include "internal.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct allocator {
  gcl_malloc_fn malloc_fn;
  gcl_realloc_fn realloc_fn;
  gcl_calloc_fn calloc_fn;
  gcl_free_fn free_fn;
} allocator;

/* Written only by gcl_replace_allocator, which the caller runs before any other call (and before
 * starting threads that use gclaunch), so the reads below need no synchronisation. */
static allocator current = {malloc, realloc, calloc, free};
static atomic_size_t live_blocks;

gcl_status gcl_replace_allocator(gcl_malloc_fn malloc_fn, gcl_realloc_fn realloc_fn,
                                 gcl_calloc_fn calloc_fn, gcl_free_fn free_fn) {
  int given = !!malloc_fn + !!realloc_fn + !!calloc_fn + !!free_fn;
  if (given != 0 && given != 4)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT,
                     "gcl_replace_allocator: %s is NULL: give all four functions, or none to "
                     "restore the C library's", !malloc_fn ? "malloc_fn" : !realloc_fn
                     ? "realloc_fn" : !calloc_fn ? "calloc_fn" : "free_fn");
  size_t live = atomic_load(&live_blocks);
  if (live != 0)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT,
                     "gcl_replace_allocator: %zu blocks of the current allocator are still live "
                     "(objects not destroyed): replace the allocator before any other call", live);
  allocator a = {malloc, realloc, calloc, free};
  if (given == 4) a = (allocator){malloc_fn, realloc_fn, calloc_fn, free_fn};
  current = a;
  return GCL_OK;
}

void *gcl__malloc(size_t size) {
  void *p = current.malloc_fn(size ? size : 1); /* never NULL for success, even for 0 bytes */
  if (p) atomic_fetch_add(&live_blocks, 1);
  return p;
}

void *gcl__calloc(size_t count, size_t size) {
  void *p = current.calloc_fn(count && size ? count : 1, count && size ? size : 1);
  if (p) atomic_fetch_add(&live_blocks, 1);
  return p;
}

/* Like realloc; realloc(NULL, n) allocates. A failed realloc keeps the old block. */
void *gcl__realloc(void *ptr, size_t size) {
  if (!ptr) return gcl__malloc(size);
  return current.realloc_fn(ptr, size ? size : 1);
}

void gcl__free(void *ptr) {
  if (!ptr) return;
  atomic_fetch_sub(&live_blocks, 1);
  current.free_fn(ptr);
}

char *gcl__strdup(const char *s) { return gcl__strndup(s, strlen(s)); }

char *gcl__strndup(const char *s, size_t n) {
  size_t len = strnlen(s, n);
  char *p = gcl__malloc(len + 1);
  if (!p) return NULL;
  memcpy(p, s, len);
  p[len] = '\0';
  return p;
}
