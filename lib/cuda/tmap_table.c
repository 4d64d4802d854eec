/* gcl_tensormap_table: K tensor maps in device memory, for megakernels with more descriptors than
 * fit in the 32,764-byte parameter (240 maps). A host mirror (128 bytes a map, 128-byte aligned)
 * is written through the same plan as the args' maps (lib/core/tmap_plan.h: checks, cache,
 * all-or-nothing), a bitmap remembers which maps changed since the last upload, and
 * gcl_tensormap_table_upload copies only those, one cuMemcpyHtoDAsync per run of consecutive
 * changed maps, on the caller's stream. The kernel reads map i at address + 128 i after the
 * acquire fence of include/gclaunch/tmap_table.cuh.
 *
 * The mirror is pageable memory on purpose: cuMemcpyHtoDAsync from pageable memory returns only
 * after the bytes were staged, so the mirror may be changed again as soon as the upload returned
 * (pinned memory would be read later by the DMA engine). */
#include "cuda_internal.h"
#include "tmap_plan.h"

#include <string.h>

struct gcl_tensormap_table {
  gcl_context *ctx;           /* borrowed */
  size_t k;
  uint64_t device;            /* k * 128 bytes of device memory (cuMemAlloc: 256-byte aligned) */
  unsigned char *host;        /* the mirror, 128-byte aligned in host_block */
  void *host_block;
  gcl__tmap_entry *entries;   /* the cache: one per map */
  uint64_t *dirty;            /* one bit per map: changed since the last upload */
  size_t dirty_count;
  gcl__tmap_space space;      /* plans of up to space.cap maps; grows to the largest batch */
  void *space_block;
};

static const char *const who_text = "gcl_tensormap_table";

gcl_status gcl_tensormap_table_create(gcl_context *ctx, size_t k, gcl_tensormap_table **out) {
  static const char fn[] = "gcl_tensormap_table_create";
  if (!ctx || !out)
    return gcl__fail_null(fn, 2, "ctx", (const void *)ctx, "out", (const void *)out);
  *out = NULL;
  if (k == 0 || k > SIZE_MAX / 1024u)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: k = %zu: expected 1 ... %zu maps", fn, k,
                     SIZE_MAX / 1024u);
  if (gcl__faulted()) return gcl__fault_check();
  /* More maps than the device's memory holds: refused before any host memory is asked for (a
   * host copy of k maps would be as large, and an allocator may abort on such a size). */
  gcl_device_info info;
  gcl_status q = gcl_device_query(ctx->device, &info);
  if (q != GCL_OK) return q;
  if (k > info.total_memory / GCL_TENSORMAP_BYTES)
    return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "%s: k = %zu maps (%zu bytes): device %d has %zu "
                     "bytes of memory in all", fn, k, k * GCL_TENSORMAP_BYTES, ctx->device,
                     (size_t)info.total_memory);
  gcl_tensormap_table *t = gcl__calloc(1, sizeof *t);
  if (!t) return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "%s: no memory for the table", fn);
  t->ctx = ctx;
  t->k = k;
  size_t bytes = k * GCL_TENSORMAP_BYTES;
  t->host_block = gcl__calloc(1, bytes + GCL_TENSORMAP_BYTES);
  if (t->host_block)
    t->host = (unsigned char *)t->host_block +
              (GCL_TENSORMAP_BYTES - (uintptr_t)t->host_block % GCL_TENSORMAP_BYTES) %
                  GCL_TENSORMAP_BYTES;
  t->entries = gcl__calloc(k, sizeof *t->entries);
  t->dirty = gcl__calloc((k + 63) / 64, sizeof *t->dirty);
  if (!t->host || !t->entries || !t->dirty) {
    gcl_tensormap_table_destroy(t);
    return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "%s: no host memory for %zu maps (%zu bytes)", fn,
                     k, bytes);
  }
  gcl_status s = gcl_mem_alloc(ctx, bytes, &t->device);
  if (s == GCL_OK) s = gcl_mem_fill_u8(ctx, t->device, 0, bytes); /* unset maps read as zeros */
  if (s != GCL_OK) {
    gcl_tensormap_table_destroy(t);
    return s;
  }
  *out = t;
  return GCL_OK;
}

void gcl_tensormap_table_destroy(gcl_tensormap_table *t) {
  if (!t) return;
  if (t->device) gcl_mem_free(t->ctx, t->device); /* after a fault the driver keeps it anyway */
  gcl__free(t->host_block);
  gcl__free(t->entries);
  gcl__free(t->dirty);
  gcl__free(t->space_block);
  gcl__free(t);
}

size_t gcl_tensormap_table_count(const gcl_tensormap_table *t) { return t ? t->k : 0; }

uint64_t gcl_tensormap_table_address(const gcl_tensormap_table *t) { return t ? t->device : 0; }

size_t gcl_tensormap_table_dirty(const gcl_tensormap_table *t) { return t ? t->dirty_count : 0; }

const void *gcl_tensormap_table_map(const gcl_tensormap_table *t, size_t i) {
  return t && i < t->k ? t->host + i * GCL_TENSORMAP_BYTES : NULL;
}

/* Room for plans of n maps: the space grows (once) to the largest batch seen. */
static gcl_status reserve(gcl_tensormap_table *t, size_t n, const char *fn) {
  if (n <= t->space.cap) return GCL_OK;
  size_t out = 0, descs = n * GCL_TENSORMAP_BYTES, addresses = descs + n * sizeof(gcl_tensormap_desc),
         ops = addresses + n * sizeof(uint64_t);
  unsigned char *block = gcl__calloc(1, ops + n * sizeof(uint32_t) + 64);
  if (!block)
    return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "%s: no memory to plan %zu maps", fn, n);
  unsigned char *base = block + (64 - (uintptr_t)block % 64) % 64;
  gcl__free(t->space_block);
  t->space_block = block;
  t->space = (gcl__tmap_space){.cap = n, .out = base + out,
                               .descs = (gcl_tensormap_desc *)(void *)(base + descs),
                               .addresses = (uint64_t *)(void *)(base + addresses),
                               .ops = (uint32_t *)(void *)(base + ops)};
  return GCL_OK;
}

/* The run of maps first ... first + n - 1, after the checks common to set and repoint. */
static gcl_status table_run(gcl_tensormap_table *t, size_t first, size_t n, const char *fn,
                            gcl__tmap_run *run) {
  if (!t) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: table is NULL", fn);
  if (first >= t->k || n > t->k - first)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: first = %zu, n = %zu: the table has %zu "
                     "maps (entries 0 ... %zu)", fn, first, n, t->k, t->k - 1);
  gcl_status s = reserve(t, n, fn);
  if (s != GCL_OK) return s;
  *run = (gcl__tmap_run){.map = t->host + first * GCL_TENSORMAP_BYTES,
                         .entry = t->entries + first,
                         .who = {.text = who_text, .indexed = true,
                                 .rel = first * GCL_TENSORMAP_BYTES}};
  return GCL_OK;
}

/* After a commit: the maps of plan that changed are dirty. */
static void mark_dirty(gcl_tensormap_table *t, size_t first, const gcl__tmap_plan *plan) {
  for (size_t i = 0; i < plan->n; i++) {
    if (plan->space->ops[i] == GCL__TMAP_SKIP) continue;
    size_t m = first + i;
    uint64_t bit = 1ull << (m % 64);
    if (!(t->dirty[m / 64] & bit)) t->dirty[m / 64] |= bit, t->dirty_count++;
  }
}

/* what into entries first ... first + n - 1 (table_run checked and filled run): admit,
 * execute, commit (tmap_plan.h), then the changed entries become dirty. */
static gcl_status table_write(gcl_tensormap_table *t, size_t first, size_t n,
                              const gcl__tmap_what *what, const gcl__tmap_run *run) {
  const gcl__tmap_device dev = {.device = t->ctx->device, .sm = t->ctx->sm};
  gcl__tmap_plan plan;
  plan.run = run;
  gcl_status s;
  if ((s = gcl__tmap_plan_make(&plan, &t->space, dev, n, what)) ||
      (s = gcl__tmap_execute(t->ctx, &plan)))
    return s;
  gcl__tmap_plan_commit(&plan, what);
  mark_dirty(t, first, &plan);
  return GCL_OK;
}

gcl_status gcl__tmap_table_write(gcl_tensormap_table *t, gcl_context *ctx, size_t first, size_t n,
                                 const gcl__tmap_what *what, const char *fn) {
  gcl__tmap_run run;
  gcl_status s = table_run(t, first, n, fn, &run);
  if (s != GCL_OK) return s;
  if (ctx && ctx != t->ctx)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: ctx is not the table's context (device %d; "
                     "the table's is on device %d): pass NULL or the table's", fn, ctx->device,
                     t->ctx->device);
  return table_write(t, first, n, what, &run);
}

gcl_status gcl_tensormap_table_slots(gcl_tensormap_table *t, size_t first, size_t n,
                                     gcl_tensormap_slots *out) {
  static const char fn[] = "gcl_tensormap_table_slots";
  if (!t || !out)
    return gcl__fail_null(fn, 2, "t", (const void *)t, "out", (const void *)out);
  if (n == 0) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: n = 0: expected 1 or more maps", fn);
  if (first >= t->k || n > t->k - first)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: first = %zu, n = %zu: the table has %zu "
                     "maps (entries 0 ... %zu)", fn, first, n, t->k, t->k - 1);
  memset(out, 0, sizeof *out);
  out->table = t, out->index = first, out->n = n;
  return GCL_OK;
}

static gcl_status table_set(gcl_tensormap_table *t, size_t first, size_t n,
                            const DLTensor *const *tensors, bool with_flags,
                            const uint64_t *dlflags, const gcl_tensormap_options *options,
                            size_t options_count, unsigned flags, const char *fn) {
  if (t && n == 0) return GCL_OK;
  gcl__tmap_run run;
  gcl__tmap_what what;
  gcl_status s;
  if ((s = table_run(t, first, n, fn, &run)) ||
      (s = gcl__tmap_what_tensors(&what, n, tensors, with_flags, dlflags, options, options_count,
                                  flags, fn)))
    return s;
  return table_write(t, first, n, &what, &run);
}

gcl_status gcl_tensormap_table_set(gcl_tensormap_table *t, size_t first, size_t n,
                                   const DLTensor *const *tensors,
                                   const gcl_tensormap_options *options, size_t options_count,
                                   unsigned flags) {
  return table_set(t, first, n, tensors, false, NULL, options, options_count, flags,
                   "gcl_tensormap_table_set");
}

gcl_status gcl_tensormap_table_set_flags(gcl_tensormap_table *t, size_t first, size_t n,
                                         const DLTensor *const *tensors,
                                         const uint64_t *dlpack_flags,
                                         const gcl_tensormap_options *options,
                                         size_t options_count, unsigned flags) {
  return table_set(t, first, n, tensors, true, dlpack_flags, options, options_count, flags,
                   "gcl_tensormap_table_set_flags");
}

gcl_status gcl_tensormap_table_repoint(gcl_tensormap_table *t, size_t first, size_t n,
                                       const uint64_t *addresses) {
  static const char fn[] = "gcl_tensormap_table_repoint";
  if (t && n == 0) return GCL_OK;
  gcl__tmap_run run;
  gcl__tmap_what what;
  gcl_status s;
  if ((s = table_run(t, first, n, fn, &run)) ||
      (s = gcl__tmap_what_addresses(&what, n, addresses, fn)))
    return s;
  return table_write(t, first, n, &what, &run);
}

/* Clears the dirty bits of maps [a, b). */
static void clean(gcl_tensormap_table *t, size_t a, size_t b) {
  for (size_t m = a; m < b; m++) t->dirty[m / 64] &= ~(1ull << (m % 64));
  t->dirty_count -= b - a;
}

gcl_status gcl_tensormap_table_upload(gcl_tensormap_table *t, gcl_stream *s) {
  if (!t) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_tensormap_table_upload: table is NULL");
  size_t words = (t->k + 63) / 64, m = 0;
  while (t->dirty_count) {
    /* the next dirty map at or after m, then the end of its run */
    size_t w = m / 64;
    uint64_t bits = w < words ? t->dirty[w] & (~0ull << (m % 64)) : 0;
    while (!bits && ++w < words) bits = t->dirty[w];
    if (w >= words) break; /* not reached: dirty_count counts the bits */
    size_t a = w * 64 + (size_t)__builtin_ctzll(bits), b = a + 1;
    while (b < t->k && (t->dirty[b / 64] >> (b % 64) & 1u)) b++;
    gcl_status st = gcl_mem_upload_async(t->ctx, t->device + a * GCL_TENSORMAP_BYTES,
                                         t->host + a * GCL_TENSORMAP_BYTES,
                                         (b - a) * GCL_TENSORMAP_BYTES, s);
    if (st != GCL_OK) return st; /* runs uploaded so far are clean, the rest stay dirty */
    clean(t, a, b);
    m = b;
  }
  return GCL_OK;
}
