/* Argument buffers: the packed parameter buffer of one layout, filled by setters.
 *
 * gcl_args_create makes one allocation holding everything (slots, the kernelParams pointer array,
 * the element bitmaps of by-value arrays, and the 128-byte-aligned buffer); setters check, copy
 * and flip flags, never allocate. A failed setter changes nothing. */
#include "args_internal.h"
#include "types.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUFFER_ALIGN 128 /* the largest by-value alignment a kernel commonly has (tensormap) */

typedef gcl__slot slot;

static size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

static size_t bitmap_bytes(const gcl_param_info *info) {
  return info->kind == GCL_PARAM_ARRAY ? (info->count + 7) / 8 : 0;
}

/* Tensor maps a slot holds: one per element of a tensormap[N], one for a tensormap or a 128-byte
 * raw parameter (raw layouts take a whole map there). */
static size_t tmap_count(const gcl_param_info *info) {
  if (info->kind == GCL_PARAM_ARRAY) return info->elem_kind == GCL_PARAM_TENSORMAP ? info->count : 0;
  return info->kind == GCL_PARAM_TENSORMAP ||
         (info->kind == GCL_PARAM_BYTES && info->size == GCL_TENSORMAP_BYTES);
}

typedef struct block_plan {
  size_t bits_at, tmaps_at, scratch_at, scratch_entries_at, data_at, bytes;
} block_plan;

/* Bytes of the single allocation: header, slots, pointers, bitmaps, tensor-map cache entries,
 * the batch scratch (128 bytes per element of the largest tensormap[N]), the aligned buffer. */
static block_plan plan_block(const gcl_layout *l) {
  size_t n = gcl_layout_count(l), bits = 0, maps = 0, widest = 0;
  for (size_t i = 0; i < n; i++) {
    gcl_param_info info;
    gcl_layout_param_info(l, i, &info);
    bits += bitmap_bytes(&info);
    maps += tmap_count(&info);
    if (info.kind == GCL_PARAM_ARRAY && tmap_count(&info) > widest) widest = tmap_count(&info);
  }
  block_plan p;
  p.bits_at = round_up(sizeof(gcl_args), 16) + n * sizeof(slot) + n * sizeof(void *);
  p.tmaps_at = round_up(p.bits_at + bits, 16);
  p.scratch_at = round_up(p.tmaps_at + maps * sizeof(gcl__tmap_entry), BUFFER_ALIGN);
  p.scratch_entries_at = p.scratch_at + widest * GCL_TENSORMAP_BYTES;
  p.data_at = round_up(p.scratch_entries_at + widest * sizeof(gcl__tmap_entry), BUFFER_ALIGN);
  p.bytes = p.data_at + gcl_layout_size(l) + BUFFER_ALIGN; /* slack to align the block itself */
  return p;
}

static void init_slots(gcl_args *a, unsigned char *bits, gcl__tmap_entry *tmaps) {
  for (size_t i = 0; i < a->count; i++) {
    slot *s = &a->slots[i];
    gcl_layout_param_info(a->layout, i, &s->info);
    gcl_layout_param(a->layout, i, &s->offset, NULL, NULL);
    a->ptrs[i] = a->data + s->offset;
    if (s->info.kind == GCL_PARAM_ARRAY) s->bits = bits;
    bits += bitmap_bytes(&s->info);
    s->tmap_count = tmap_count(&s->info);
    s->tmaps = s->tmap_count ? tmaps : NULL;
    tmaps += s->tmap_count;
  }
}

uint64_t gcl__layout_fingerprint(const gcl_layout *layout) {
  uint64_t h = 1469598103934665603ull;
  size_t n = gcl_layout_count(layout);
  for (size_t i = 0; i <= n; i++) {
    size_t v[2] = {n, 0};
    if (i < n) gcl_layout_param(layout, i, &v[0], &v[1], NULL);
    for (int k = 0; k < 2; k++)
      for (int b = 0; b < 8; b++) h = (h ^ ((uint64_t)v[k] >> (8 * b) & 0xff)) * 1099511628211ull;
  }
  return h;
}

gcl_status gcl_args_create(const gcl_layout *layout, gcl_args **out) {
  if (!layout || !out) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_args_create: %s is NULL", layout ? "out" : "layout");
  block_plan p = plan_block(layout);
  unsigned char *block = calloc(1, p.bytes);
  if (!block) return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "out of memory allocating %zu bytes of arguments", p.bytes);
  /* block is at least 16-aligned; shift everything so data lands on a BUFFER_ALIGN boundary */
  size_t shift = (BUFFER_ALIGN - ((uintptr_t)(block + p.data_at) % BUFFER_ALIGN)) % BUFFER_ALIGN;
  gcl_args *a = (gcl_args *)(void *)(block + shift);
  a->layout = layout;
  a->count = a->unset = gcl_layout_count(layout);
  a->size = gcl_layout_size(layout);
  a->device_id = -1;
  a->fingerprint = gcl__layout_fingerprint(layout);
  a->slots = (slot *)(void *)((unsigned char *)a + round_up(sizeof(gcl_args), 16));
  a->ptrs = (void **)(void *)(a->slots + a->count);
  a->data = (unsigned char *)a + p.data_at;
  a->scratch = (unsigned char *)a + p.scratch_at;
  a->scratch_entries = (gcl__tmap_entry *)(void *)((unsigned char *)a + p.scratch_entries_at);
  a->block = block;
  init_slots(a, (unsigned char *)a + p.bits_at, (gcl__tmap_entry *)(void *)((unsigned char *)a + p.tmaps_at));
  *out = a;
  return GCL_OK;
}

/* Runs the slot's owner release, if any, exactly once. */
static void release_owner(slot *s) {
  gcl__release_fn fn = s->release;
  void *owner = s->owner;
  s->release = NULL, s->owner = NULL;
  if (fn) fn(owner);
}

void gcl_args_destroy(gcl_args *args) {
  if (!args) return;
  for (size_t i = 0; i < args->count; i++) release_owner(&args->slots[i]);
  free(args->block);
}

const gcl_layout *gcl_args_layout(const gcl_args *args) { return args ? args->layout : NULL; }

static void mark_set(gcl_args *a, slot *s) {
  if (s->set) return;
  s->set = true;
  a->unset--;
}

/* The whole parameter was written: every element of an array counts as set. */
static void mark_whole(gcl_args *a, slot *s) {
  if (s->bits) {
    memset(s->bits, 0xff, bitmap_bytes(&s->info));
    s->elems_set = s->info.count;
  }
  mark_set(a, s);
}

/* "parameter 2 'src' ('const f32* align(16)')" for messages. */
static const char *label(const gcl_args *a, size_t i, char *buf, size_t cap) {
  char who[96], type[128];
  const gcl__type *t = gcl__layout_type(a->layout, i);
  if (t) gcl__type_name(t, type, sizeof type);
  else snprintf(type, sizeof type, "bytes(%zu)", a->slots[i].info.size);
  snprintf(buf, cap, "%s ('%s')", gcl__param_label(who, sizeof who, i, a->slots[i].info.name), type);
  return buf;
}

static gcl_status check_slot(const gcl_args *a, size_t index, const void *value, const char *fn) {
  if (!a) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: args is NULL", fn);
  if (index >= a->count)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: parameter %zu out of range: the kernel has %zu",
                     fn, index, a->count);
  if (!value) {
    char l[256];
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: %s: value is NULL", fn, label(a, index, l, sizeof l));
  }
  return GCL_OK;
}

/* Bytes written by a raw setter are no map gclaunch encoded: forget the maps they cover, so a
 * refresh or address replacement re-encodes (or refuses) instead of patching foreign bytes. */
static void forget_tmaps(slot *s, size_t at, size_t size) {
  if (!s->tmaps) return;
  size_t first = at / GCL_TENSORMAP_BYTES, end = (at + size + GCL_TENSORMAP_BYTES - 1) / GCL_TENSORMAP_BYTES;
  if (end > s->tmap_count) end = s->tmap_count;
  if (first < end) memset(s->tmaps + first, 0, (end - first) * sizeof *s->tmaps);
}

/* Copies size bytes to the slot's offset + at, then releases a previous owner. */
static void store(gcl_args *a, slot *s, size_t at, const void *value, size_t size) {
  memcpy(a->data + s->offset + at, value, size);
  forget_tmaps(s, at, size);
  release_owner(s);
}

gcl_status gcl_args_set(gcl_args *args, size_t index, const void *value, size_t size) {
  gcl_status st = check_slot(args, index, value, "gcl_args_set");
  if (st) return st;
  slot *s = &args->slots[index];
  if (size != s->info.size) {
    char l[256];
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: value is %zu bytes, the parameter is %zu bytes",
                     label(args, index, l, sizeof l), size, s->info.size);
  }
  store(args, s, 0, value, size);
  mark_whole(args, s);
  return GCL_OK;
}

static gcl_status check_element(const gcl_args *a, size_t index, size_t element, size_t size) {
  const slot *s = &a->slots[index];
  char l[256];
  if (s->info.kind != GCL_PARAM_ARRAY)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s is not an array: set element %zu",
                     label(a, index, l, sizeof l), element);
  if (element >= s->info.count)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: element %zu out of range, the array has %zu",
                     label(a, index, l, sizeof l), element, s->info.count);
  if (size != s->info.elem_size)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: element value is %zu bytes, an element is %zu bytes",
                     label(a, index, l, sizeof l), size, s->info.elem_size);
  return GCL_OK;
}

gcl_status gcl_args_set_element(gcl_args *args, size_t index, size_t element, const void *value,
                                size_t size) {
  gcl_status st = check_slot(args, index, value, "gcl_args_set_element");
  if (!st) st = check_element(args, index, element, size);
  if (st) return st;
  slot *s = &args->slots[index];
  store(args, s, element * s->info.elem_size, value, size);
  unsigned char bit = (unsigned char)(1u << (element % 8));
  if (!(s->bits[element / 8] & bit)) {
    s->bits[element / 8] |= bit;
    if (++s->elems_set == s->info.count) mark_set(args, s);
  }
  return GCL_OK;
}

gcl_status gcl_args_set_by_name(gcl_args *args, const char *name, const void *value, size_t size) {
  size_t index;
  if (!args || !name) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_args_set_by_name: %s is NULL", args ? "name" : "args");
  gcl_status st = gcl_layout_find(args->layout, name, &index);
  return st ? st : gcl_args_set(args, index, value, size);
}

/* A typed value fits a scalar parameter of that type, or an untyped bytes parameter of its size. */
static gcl_status set_typed(gcl_args *a, size_t index, gcl_scalar want, const void *v, size_t size) {
  gcl_status st = check_slot(a, index, v, "gcl_args_set_typed");
  if (st) return st;
  slot *s = &a->slots[index];
  bool fits = s->info.kind == GCL_PARAM_SCALAR ? s->info.scalar == want
                                               : s->info.kind == GCL_PARAM_BYTES && s->info.size == size;
  if (!fits) {
    char l[256];
    return gcl__fail(GCL_ERROR_TYPE_MISMATCH, "%s: expected a value of the parameter's type, got %s",
                     label(a, index, l, sizeof l), gcl__scalar_name(want));
  }
  store(a, s, 0, v, size);
  mark_set(a, s);
  return GCL_OK;
}

gcl_status gcl_args_set_i32(gcl_args *args, size_t index, int32_t value) {
  return set_typed(args, index, GCL_SCALAR_I32, &value, sizeof value);
}
gcl_status gcl_args_set_u32(gcl_args *args, size_t index, uint32_t value) {
  return set_typed(args, index, GCL_SCALAR_U32, &value, sizeof value);
}
gcl_status gcl_args_set_i64(gcl_args *args, size_t index, int64_t value) {
  return set_typed(args, index, GCL_SCALAR_I64, &value, sizeof value);
}
gcl_status gcl_args_set_u64(gcl_args *args, size_t index, uint64_t value) {
  return set_typed(args, index, GCL_SCALAR_U64, &value, sizeof value);
}
gcl_status gcl_args_set_f32(gcl_args *args, size_t index, float value) {
  return set_typed(args, index, GCL_SCALAR_F32, &value, sizeof value);
}
gcl_status gcl_args_set_f64(gcl_args *args, size_t index, double value) {
  return set_typed(args, index, GCL_SCALAR_F64, &value, sizeof value);
}

/* A pointer parameter, or an untyped 8-byte one (a raw driver layout): described as a pointer.
 * Untyped slots take any tensor: void*, const (read-only tensors allowed), no alignment. */
static bool pointer_slot(const slot *s, gcl_param_info *info) {
  if (s->info.kind == GCL_PARAM_POINTER) return *info = s->info, true;
  if (s->info.kind != GCL_PARAM_BYTES || s->info.size != 8) return false;
  *info = s->info;
  info->kind = info->elem_kind = GCL_PARAM_POINTER;
  info->scalar = GCL_SCALAR_VOID;
  info->is_const = true;
  info->align = 8, info->pointee_align = 1;
  return true;
}

gcl_status gcl__args_pointer_param(const gcl_args *args, size_t index, gcl_param_info *info,
                                   int *device_id) {
  uint8_t dummy = 0;
  gcl_status st = check_slot(args, index, &dummy, "tensor");
  if (st) return st;
  gcl_param_info p;
  if (!pointer_slot(&args->slots[index], &p)) {
    char l[256];
    return gcl__fail(GCL_ERROR_TYPE_MISMATCH, "%s: expected a pointer parameter for a tensor",
                     label(args, index, l, sizeof l));
  }
  if (info) *info = p;
  if (device_id) *device_id = args->device_id;
  return GCL_OK;
}

void gcl__args_store_pointer(gcl_args *args, size_t index, uint64_t address,
                             gcl__release_fn release, void *owner) {
  slot *s = &args->slots[index];
  store(args, s, 0, &address, sizeof address);
  s->release = release, s->owner = owner;
  mark_set(args, s);
}

gcl_status gcl_args_set_ptr(gcl_args *args, size_t index, uint64_t address) {
  gcl_param_info p;
  gcl_status st = gcl__args_pointer_param(args, index, &p, NULL);
  if (st) return st;
  if (p.pointee_align > 1 && address % p.pointee_align) {
    char l[256];
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: address 0x%llx is not %zu-byte aligned",
                     label(args, index, l, sizeof l), (unsigned long long)address, p.pointee_align);
  }
  gcl__args_store_pointer(args, index, address, NULL, NULL);
  return GCL_OK;
}

gcl_status gcl_args_set_ffi(gcl_args *args, size_t index, const struct _ffi_type *type,
                            const void *value) {
  gcl_status st = check_slot(args, index, value, "gcl_args_set_ffi");
  if (!st && !type) st = gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_args_set_ffi: type is NULL");
  if (st) return st;
  slot *s = &args->slots[index];
  const gcl__type *t = gcl__layout_type(args->layout, index);
  char why[256], l[256];
  size_t usize = 0, ualign = 0;
  bool ok = t ? gcl__type_match_ffi(t, type, why, sizeof why)
              : gcl__ffi_measure(type, &usize, &ualign) && usize == s->info.size;
  if (!t && !ok) /* a raw parameter takes any libffi type of its size */
    snprintf(why, sizeof why, "size %zu, expected %zu", usize, s->info.size);
  if (!ok)
    return gcl__fail(GCL_ERROR_TYPE_MISMATCH, "%s: the libffi type does not match: %s",
                     label(args, index, l, sizeof l), why);
  store(args, s, 0, value, s->info.size);
  mark_whole(args, s);
  return GCL_OK;
}

gcl_status gcl_args_set_device(gcl_args *args, int device_id) {
  if (!args) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_args_set_device: args is NULL");
  if (device_id < -1)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_args_set_device: device_id %d: expected -1 "
                     "(any device) or a device ordinal", device_id);
  args->device_id = device_id;
  return GCL_OK;
}

bool gcl_args_is_set(const gcl_args *args, size_t index) {
  return args && index < args->count && args->slots[index].set;
}

static gcl_status unset_error(const gcl_args *a) {
  size_t i = 0;
  while (a->slots[i].set) i++;
  char l[256], more[96] = "";
  const slot *s = &a->slots[i];
  if (s->info.kind == GCL_PARAM_ARRAY && s->elems_set)
    snprintf(more, sizeof more, ", %zu of its %zu elements set", s->elems_set, s->info.count);
  return gcl__fail(GCL_ERROR_UNSET_ARGUMENT, "%s was never set%s (%zu of %zu parameters unset)",
                   label(a, i, l, sizeof l), more, a->unset, a->count);
}

gcl_status gcl_args_buffer(const gcl_args *args, const void **data, size_t *size) {
  if (!args || !data || !size)
    return gcl__fail_null("gcl_args_buffer", 3, "args", (const void *)args, "data", (const void *)data, "size", (const void *)size);
  if (args->unset) return unset_error(args);
  *data = args->data;
  *size = args->size;
  return GCL_OK;
}


/* --- tensor-map slots (lib/cuda/tensormap.c encodes; these find and mark the bytes) ---------- */

static gcl_status tmap_slot_error(const gcl_args *a, size_t index, size_t element, size_t n) {
  const slot *s = &a->slots[index];
  char l[160];
  gcl__param_label(l, sizeof l, index, s->info.name);
  if (s->info.kind == GCL_PARAM_ARRAY && s->tmaps)
    return n == 1 ? gcl__fail(GCL_ERROR_INVALID_ARGUMENT,
                              "%s: element %zu is out of range (tensormap[%zu])", l, element,
                              s->info.count)
                  : gcl__fail(GCL_ERROR_INVALID_ARGUMENT,
                              "%s: elements %zu ... %zu (n = %zu) are out of range (tensormap[%zu])",
                              l, element, element + n - 1, n, s->info.count);
  if (!s->tmaps || s->info.kind == GCL_PARAM_ARRAY)
    return gcl__fail(GCL_ERROR_TYPE_MISMATCH,
                     "%s: expected a tensormap or tensormap[N] parameter, got one of %zu bytes", l,
                     s->info.size);
  if (element != 0)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT,
                     "%s: element %zu of a single tensormap: expected element 0", l, element);
  return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: n = %zu maps for a single tensormap: expected 1",
                   l, n);
}

gcl_status gcl__args_tmap_slot(gcl_args *args, size_t index, size_t element, size_t n,
                               gcl__tmap_who *who, unsigned char **map, gcl__tmap_entry **entry) {
  if (index >= args->count)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "parameter %zu out of range: the layout has %zu",
                     index, args->count);
  slot *s = &args->slots[index];
  if (!s->tmaps || element >= s->tmap_count || n > s->tmap_count - element)
    return tmap_slot_error(args, index, element, n);
  *who = (gcl__tmap_who){.index = index, .name = s->info.name, .element = element,
                         .is_element = s->info.kind == GCL_PARAM_ARRAY};
  *map = args->data + s->offset + element * GCL_TENSORMAP_BYTES;
  *entry = s->tmaps + element;
  return GCL_OK;
}

void gcl__args_tmap_mark(gcl_args *args, size_t index, size_t element, size_t n) {
  slot *s = &args->slots[index];
  release_owner(s);
  if (!s->bits) {
    mark_set(args, s);
    return;
  }
  for (size_t e = element; e < element + n; e++) {
    unsigned char bit = (unsigned char)(1u << (e % 8));
    if (s->bits[e / 8] & bit) continue;
    s->bits[e / 8] |= bit;
    if (++s->elems_set == s->info.count) mark_set(args, s);
  }
}
