/* Argument buffers: the packed parameter buffer of one layout, filled by setters.
 *
 * gcl_args_create makes one allocation holding everything: per-parameter counts of unset leaf
 * bytes, the kernelParams pointer array, the owner slots of pointer leaves (taken DLPack
 * tensors), the set-tracking bitmap (one bit per parameter byte, padding preset from the
 * layout) and the 128-byte-aligned buffer. Every setter writes through a field (a whole
 * parameter is a field too): check, copy, mark the field's bits, release owners inside it.
 * Setters never allocate; a failed setter changes nothing. */
#include "args_internal.h"
#include "layout_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUFFER_ALIGN 128 /* the largest by-value alignment a kernel commonly has (tensormap) */

typedef gcl__owner_slot owner_slot;

static size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

/* --- creation ---------------------------------------------------------------------------- */

typedef struct parts { size_t unset, ptrs, owners, tmaps, bits, scratch, scratch_addresses, plan_descs, plan_ops, data, total; } parts;

/* The single allocation: header, unset counts, pointers, owner slots, tensor-map cache slots,
 * bitmap, the batch's plan space (tmap_plan.h: 128 bytes of scratch, an address, the driver's
 * arguments and a step per map of the parameter with the most), then the aligned buffer. */
static parts plan(const gcl_layout *l) {
  size_t n = gcl_layout_count(l), bit_bytes, widest, maps = gcl__layout_tmap_count(l, &widest);
  gcl__layout_bits(l, &bit_bytes);
  parts p;
  p.unset = round_up(sizeof(gcl_args), 16);
  p.ptrs = p.unset + n * sizeof(size_t);
  p.owners = p.ptrs + n * sizeof(void *);
  p.tmaps = round_up(p.owners + gcl__layout_owner_count(l) * sizeof(owner_slot), 16);
  p.bits = p.tmaps + maps * sizeof(gcl__tmap_entry);
  p.scratch = round_up(p.bits + bit_bytes, BUFFER_ALIGN);
  p.scratch_addresses = p.scratch + widest * GCL_TENSORMAP_BYTES;
  p.plan_descs = round_up(p.scratch_addresses + widest * sizeof(uint64_t), 16);
  p.plan_ops = p.plan_descs + widest * sizeof(gcl_tensormap_desc);
  p.data = round_up(p.plan_ops + widest * sizeof(uint32_t), BUFFER_ALIGN);
  p.total = p.data + gcl_layout_size(l) + BUFFER_ALIGN; /* slack to align the block itself */
  return p;
}

static void init_args(gcl_args *a, const gcl_layout *layout, const parts *p) {
  unsigned char *base = (unsigned char *)a;
  const unsigned char *bits = gcl__layout_bits(layout, &a->bit_bytes);
  a->layout = layout;
  a->count = gcl_layout_count(layout);
  a->size = gcl_layout_size(layout);
  a->owner_count = gcl__layout_owner_count(layout);
  a->device_id = -1;
  a->tmaps = (gcl__tmap_entry *)(void *)(base + p->tmaps);
  a->lparams = a->count ? gcl__layout_lparam(layout, 0) : NULL;
  size_t widest;
  gcl__layout_tmap_count(layout, &widest);
  a->tspace = (gcl__tmap_space){.cap = widest, .ops = (uint32_t *)(void *)(base + p->plan_ops),
                                .addresses = (uint64_t *)(void *)(base + p->scratch_addresses),
                                .descs = (gcl_tensormap_desc *)(void *)(base + p->plan_descs),
                                .out = base + p->scratch};
  a->unset_bytes = (size_t *)(void *)(base + p->unset);
  a->ptrs = (void **)(void *)(base + p->ptrs);
  a->owners = (owner_slot *)(void *)(base + p->owners);
  a->bits = base + p->bits;
  a->data = base + p->data;
  memcpy(a->bits, bits, a->bit_bytes);
  for (size_t i = 0; i < a->count; i++) {
    const gcl__lparam *lp = gcl__layout_lparam(layout, i);
    a->ptrs[i] = a->data + lp->offset;
    a->unset_bytes[i] = lp->leaf_bytes;
    a->unset += lp->leaf_bytes != 0;
  }
}

/* One block, shifted so that the buffer lands on a BUFFER_ALIGN boundary. */
static gcl_args *alloc_args(const gcl_layout *layout, void **block_out) {
  parts p = plan(layout);
  unsigned char *block = gcl__calloc(1, p.total);
  if (!block) {
    gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "out of memory allocating %zu bytes of arguments", p.total);
    return NULL;
  }
  size_t shift = (BUFFER_ALIGN - ((uintptr_t)(block + p.data) % BUFFER_ALIGN)) % BUFFER_ALIGN;
  gcl_args *a = (gcl_args *)(void *)(block + shift);
  init_args(a, layout, &p);
  *block_out = block;
  return a;
}

gcl_status gcl_args_create(const gcl_layout *layout, gcl_args **out) {
  if (!layout || !out)
    return gcl__fail_null("gcl_args_create", 2, "layout", (const void *)layout, "out", (const void *)out);
  void *block;
  gcl_args *a = alloc_args(layout, &block);
  if (!a) return GCL_ERROR_OUT_OF_MEMORY;
  a->block = block;
  gcl__layout_retain(layout); /* a kernel's layout lives as long as args made from it */
  *out = a;
  return GCL_OK;
}

gcl_status gcl_args_clone(const gcl_args *args, gcl_args **out) {
  if (!args || !out)
    return gcl__fail_null("gcl_args_clone", 2, "args", (const void *)args, "out", (const void *)out);
  void *block;
  gcl_args *c = alloc_args(args->layout, &block);
  if (!c) return GCL_ERROR_OUT_OF_MEMORY;
  c->block = block;
  gcl__layout_retain(args->layout);
  c->device_id = args->device_id;
  c->unset = args->unset;
  memcpy(c->unset_bytes, args->unset_bytes, args->count * sizeof *args->unset_bytes);
  memcpy(c->bits, args->bits, args->bit_bytes);
  memcpy(c->data, args->data, args->size); /* owners stay the original's: borrowed here */
  size_t widest;
  size_t maps = gcl__layout_tmap_count(args->layout, &widest);
  memcpy(c->tmaps, args->tmaps, maps * sizeof *c->tmaps);
  *out = c;
  return GCL_OK;
}

/* Runs the release of owner slots [first, first + n), each exactly once. */
static void release_owners(gcl_args *a, size_t first, size_t n) {
  for (size_t i = first; i < first + n; i++) {
    gcl__release_fn fn = a->owners[i].release;
    void *o = a->owners[i].owner;
    a->owners[i].release = NULL, a->owners[i].owner = NULL;
    if (fn) fn(o);
  }
}

void gcl_args_destroy(gcl_args *args) {
  if (!args) return;
  release_owners(args, 0, args->owner_count);
  const gcl_layout *layout = args->layout;
  gcl__free(args->block);
  gcl__layout_release(layout);
}

const gcl_layout *gcl_args_layout(const gcl_args *args) { return args ? args->layout : NULL; }

/* --- set-tracking ------------------------------------------------------------------------ */

/* Marks bytes [rel, rel + n) of parameter pi set. Cost: a step per 64 bytes in the middle, per
 * byte at the ends; nothing once the parameter is complete. */
void gcl__args_mark(gcl_args *a, size_t pi, size_t rel, size_t n) {
  if (!a->unset_bytes[pi]) return;
  unsigned char *b = a->bits + gcl__layout_lparam(a->layout, pi)->bit_at;
  size_t fresh = 0, i = rel, end = rel + n;
  for (; i < end && i % 64; i++)
    if (!(b[i / 8] & (1u << (i % 8)))) b[i / 8] |= (unsigned char)(1u << (i % 8)), fresh++;
  for (; i + 64 <= end; i += 64) { /* 8 bitmap bytes at once (any alignment: memcpy) */
    uint64_t w;
    memcpy(&w, b + i / 8, sizeof w);
    fresh += 64 - (size_t)__builtin_popcountll(w);
    w = ~(uint64_t)0;
    memcpy(b + i / 8, &w, sizeof w);
  }
  for (; i < end; i++)
    if (!(b[i / 8] & (1u << (i % 8)))) b[i / 8] |= (unsigned char)(1u << (i % 8)), fresh++;
  a->unset_bytes[pi] -= fresh;
  if (!a->unset_bytes[pi]) a->unset--;
}

static bool range_set(const gcl_args *a, size_t pi, size_t rel, size_t n) {
  if (!a->unset_bytes[pi]) return true;
  const unsigned char *b = a->bits + gcl__layout_lparam(a->layout, pi)->bit_at;
  for (size_t i = rel; i < rel + n; i++)
    if (!(b[i / 8] & (1u << (i % 8)))) return false;
  return true;
}

/* Every setter ends here, after copying n bytes over field f: releases the owners inside it,
 * forgets the tensor maps inside it (raw bytes over a map are no map gclaunch encoded; the
 * tensor-map calls commit through tmap_args.c instead), marks its bytes set. */
static void written(gcl_args *a, const gcl_field *f, size_t n) {
  size_t maps = gcl__f(f, GCL__F_TMAPS), owners = gcl__f(f, GCL__F_OWNERS);
  if (maps) gcl__args_tmap_forget(a, gcl__f(f, GCL__F_TMAP), maps);
  if (owners) release_owners(a, gcl__f(f, GCL__F_OWNER), owners);
  if (a->unset_bytes[f->param]) gcl__args_mark(a, f->param, gcl__f(f, GCL__F_REL), n);
}

static void write_field(gcl_args *a, const gcl_field *f, const void *value, size_t n) {
  memcpy(a->data + f->offset, value, n);
  written(a, f, n);
}

/* A scalar or pointer of n = 1, 2, 4 or 8 bytes: fixed-size copies, no memcpy call. */
static void write_scalar(gcl_args *a, const gcl_field *f, const void *value, size_t n) {
  unsigned char *d = a->data + f->offset;
  switch (n) {
  case 1: memcpy(d, value, 1); break;
  case 2: memcpy(d, value, 2); break;
  case 4: memcpy(d, value, 4); break;
  default: memcpy(d, value, 8); break;
  }
  written(a, f, n);
}

/* --- checks and messages ----------------------------------------------------------------- */

/* "parameter 2 'src' ('const f32* align(16)')" or "parameter 0 'g' field 'g.n' ('u32')". */
static const char *label(const gcl_field *f, char *buf, size_t cap) {
  char who[512], type[160];
  const gcl__type *t = gcl__f_type(f);
  if (t) gcl__type_name(t, type, sizeof type);
  else snprintf(type, sizeof type, "bytes(%zu)", f->size);
  snprintf(buf, cap, "%s ('%s')", gcl__field_label(f, who, sizeof who), type);
  return buf;
}

static gcl_status check_args(const gcl_args *a, const char *fn) {
  return a ? GCL_OK : gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: args is NULL", fn);
}

static gcl_status check_field(const gcl_args *a, const gcl_field *f, const char *fn) {
  gcl_status st = check_args(a, fn);
  if (st) return st;
  if (!f) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: field is NULL", fn);
  if (gcl__f_layout(f) != a->layout || f->param >= a->count)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: the field was resolved in another layout "
                     "than the args' (a field belongs to the layout given to gcl_layout_field)", fn);
  return GCL_OK;
}

static gcl_status check_value(const gcl_field *f, const void *value, size_t size, const char *fn) {
  char l[768];
  if (!value) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: %s: value is NULL", fn, label(f, l, sizeof l));
  if (size != f->size)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: value is %zu bytes, the %s is %zu bytes",
                     label(f, l, sizeof l), size, gcl__field_is_whole(f) ? "parameter" : "field",
                     f->size);
  return GCL_OK;
}

/* --- raw bytes ----------------------------------------------------------------------------- */

gcl_status gcl_args_set_field(gcl_args *args, const gcl_field *field, const void *value, size_t size) {
  gcl_status st = check_field(args, field, "gcl_args_set_field");
  if (!st) st = check_value(field, value, size, "gcl_args_set_field");
  if (st) return st;
  write_field(args, field, value, size);
  return GCL_OK;
}

/* --- typed scalars ------------------------------------------------------------------------- */

/* The bytes a value of field f carries: the N of bytes(N) align(k), not the size the alignment
 * pads it to (padding never reaches the kernel as data); a raw parameter's whole size. */
static size_t value_bytes(const gcl_field *f) {
  const gcl__type *t = gcl__f_type(f);
  return t ? t->leaf_bytes : f->size;
}

/* A typed value fits a scalar field of that type, or untyped bytes of its size. */
static gcl_status set_typed(gcl_args *a, const gcl_field *f, gcl_scalar want, const void *v,
                            size_t size) {
  bool fits = f->info.kind == GCL_PARAM_SCALAR ? f->info.scalar == want
                                               : f->info.kind == GCL_PARAM_BYTES && value_bytes(f) == size;
  if (!fits) {
    char l[768];
    return gcl__fail(GCL_ERROR_TYPE_MISMATCH, "%s: expected a value of the %s's type, got %s",
                     label(f, l, sizeof l), gcl__field_is_whole(f) ? "parameter" : "field",
                     gcl__scalar_name(want));
  }
  write_scalar(a, f, v, size);
  return GCL_OK;
}

gcl_status gcl_args_set_field_scalar(gcl_args *args, const gcl_field *field, gcl_scalar type,
                                     const void *value) {
  gcl_status st = check_field(args, field, "gcl_args_set_field_scalar");
  if (st) return st;
  size_t size = gcl_scalar_size(type);
  if (!size)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_args_set_field_scalar: type %d: expected "
                     "a gcl_scalar other than GCL_SCALAR_VOID", (int)type);
  if (!value) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_args_set_field_scalar: value is NULL");
  uint8_t b;
  if (type == GCL_SCALAR_BOOL) b = *(const bool *)value ? 1 : 0, value = &b;
  return set_typed(args, field, type, value, size);
}

/* --- pointers -------------------------------------------------------------------------------- */

/* A pointer field, or an untyped 8-byte one (a raw driver layout): described as a pointer.
 * Untyped fields take any tensor: void*, const (read-only tensors allowed), no alignment. */
static bool pointer_info(const gcl_field *f, gcl_param_info *info) {
  if (f->info.kind == GCL_PARAM_POINTER) return *info = f->info, true;
  if (f->info.kind != GCL_PARAM_BYTES || f->size != 8 || gcl__f(f, GCL__F_OWNERS) != 1) return false;
  *info = f->info;
  info->kind = info->elem_kind = GCL_PARAM_POINTER;
  info->scalar = GCL_SCALAR_VOID;
  info->is_const = true;
  info->align = 8, info->pointee_align = 1;
  return true;
}

gcl_status gcl__args_pointer_field(const gcl_args *args, const gcl_field *field, const char *fn,
                                   gcl_param_info *info, int *device_id) {
  gcl_status st = check_field(args, field, fn);
  if (st) return st;
  gcl_param_info p;
  if (!pointer_info(field, &p)) {
    char l[768];
    return gcl__fail(GCL_ERROR_TYPE_MISMATCH, "%s: %s is not a pointer %s", fn,
                     label(field, l, sizeof l), gcl__field_is_whole(field) ? "parameter" : "field");
  }
  if (info) *info = p;
  if (device_id) *device_id = args->device_id;
  return GCL_OK;
}

void gcl__args_store_field_pointer(gcl_args *args, const gcl_field *field, uint64_t address,
                                   gcl__release_fn release, void *owner) {
  write_scalar(args, field, &address, sizeof address);
  args->owners[gcl__f(field, GCL__F_OWNER)].release = release;
  args->owners[gcl__f(field, GCL__F_OWNER)].owner = owner;
}

static gcl_status set_ptr(gcl_args *args, const gcl_field *f, uint64_t address, const char *fn) {
  gcl_param_info p = {0};
  gcl_status st = gcl__args_pointer_field(args, f, fn, &p, NULL);
  if (st) return st;
  if (p.pointee_align > 1 && address % p.pointee_align) {
    char l[768];
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: address 0x%llx is not %zu-byte aligned",
                     label(f, l, sizeof l), (unsigned long long)address, p.pointee_align);
  }
  gcl__args_store_field_pointer(args, f, address, NULL, NULL);
  return GCL_OK;
}

gcl_status gcl_args_set_field_ptr(gcl_args *args, const gcl_field *field, uint64_t address) {
  return set_ptr(args, field, address, "gcl_args_set_field_ptr");
}

/* --- libffi ---------------------------------------------------------------------------------- */

gcl_status gcl_args_set_field_ffi(gcl_args *args, const gcl_field *f, const struct _ffi_type *type,
                                  const void *value) {
  gcl_status st = check_field(args, f, "gcl_args_set_field_ffi");
  if (!st && !type) st = gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_args_set_field_ffi: type is NULL");
  if (!st && !value) st = gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_args_set_field_ffi: value is NULL");
  if (st) return st;
  const gcl__type *t = gcl__f_type(f);
  char why[256], l[768];
  size_t usize = 0, ualign = 0;
  bool ok = t ? gcl__type_match_ffi(t, type, why, sizeof why)
              : gcl__ffi_measure(type, &usize, &ualign) && usize == f->size;
  if (!t && !ok) /* a raw parameter takes any libffi type of its size */
    snprintf(why, sizeof why, "size %zu, expected %zu", usize, f->size);
  if (!ok)
    return gcl__fail(GCL_ERROR_TYPE_MISMATCH, "%s: the libffi type does not match: %s",
                     label(f, l, sizeof l), why);
  write_field(args, f, value, f->size);
  return GCL_OK;
}

/* --- state ----------------------------------------------------------------------------------- */

gcl_status gcl_args_restrict_device(gcl_args *args, int device_id) {
  gcl_status st = check_args(args, "gcl_args_restrict_device");
  if (st) return st;
  if (device_id < -1)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_args_restrict_device: device_id %d: expected -1 "
                     "(any device) or a device ordinal", device_id);
  args->device_id = device_id;
  return GCL_OK;
}

bool gcl_args_field_is_set(const gcl_args *args, const gcl_field *field) {
  if (!args || !field || gcl__f_layout(field) != args->layout || field->param >= args->count)
    return false;
  return range_set(args, field->param, gcl__f(field, GCL__F_REL), field->size);
}

/* The first leaf byte of parameter i that was never set. */
static size_t first_unset_byte(const gcl_args *a, size_t i) {
  const unsigned char *b = a->bits + gcl__layout_lparam(a->layout, i)->bit_at;
  size_t k = 0;
  while (b[k / 8] == 0xff) k += 8;
  while (b[k / 8] & (1u << (k % 8))) k++;
  return k;
}

static gcl_status unset_error(const gcl_args *a) {
  size_t i = 0;
  while (!a->unset_bytes[i]) i++;
  const gcl__lparam *p = gcl__layout_lparam(a->layout, i);
  char l[768], path[1024];
  label(&p->field, l, sizeof l);
  if (p->type && (p->type->kind == GCL_PARAM_STRUCT || p->type->kind == GCL_PARAM_ARRAY)) {
    gcl__leaf_path_at(a->layout, i, first_unset_byte(a, i), path, sizeof path);
    return gcl__fail(GCL_ERROR_UNSET_ARGUMENT, "%s: field '%s' was never set (%zu of its %zu leaf "
                     "bytes unset; %zu of %zu parameters unset)", l, path, a->unset_bytes[i],
                     p->leaf_bytes, a->unset, a->count);
  }
  return gcl__fail(GCL_ERROR_UNSET_ARGUMENT, "%s was never set (%zu of %zu parameters unset)", l,
                   a->unset, a->count);
}

gcl_status gcl_args_field_bytes(const gcl_args *args, const gcl_field *field, void *out, size_t size) {
  if (!args || !field || !out)
    return gcl__fail_null("gcl_args_field_bytes", 3, "args", (const void *)args, "field",
                          (const void *)field, "out", (const void *)out);
  if (gcl__f_layout(field) != args->layout || field->param >= args->count)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "field: a field of another layout");
  if (size != field->size)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "size: the field at offset %zu has %zu bytes, "
                     "got %zu", field->offset, field->size, size);
  if (!range_set(args, field->param, gcl__f(field, GCL__F_REL), field->size))
    return gcl__fail(GCL_ERROR_UNSET_ARGUMENT, "the field at offset %zu (%zu bytes, parameter "
                     "%zu) is not set (every leaf byte of it must be)", field->offset, field->size,
                     field->param);
  memcpy(out, args->data + field->offset, size);
  return GCL_OK;
}

gcl_status gcl_args_buffer(const gcl_args *args, const void **data, size_t *size) {
  if (!args || !data || !size)
    return gcl__fail_null("gcl_args_buffer", 3, "args", (const void *)args, "data", (const void *)data, "size", (const void *)size);
  if (args->unset) return unset_error(args);
  *data = args->data;
  *size = args->size;
  return GCL_OK;
}
