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

typedef struct parts { size_t unset, ptrs, owners, tmaps, snaps, bits, scratch, scratch_entries, data, total; } parts;

/* The single allocation: header, unset counts, pointers, owner slots, tensor-map cache entries,
 * bitmap, the batch scratch (128 bytes + an entry per element of the largest tensormap[N]), then
 * the aligned buffer. */
static parts plan(const gcl_layout *l) {
  size_t n = gcl_layout_count(l), bit_bytes, widest, maps = gcl__layout_tmap_count(l, &widest);
  gcl__layout_bits(l, &bit_bytes);
  parts p;
  p.unset = round_up(sizeof(gcl_args), 16);
  p.ptrs = p.unset + n * sizeof(size_t);
  p.owners = p.ptrs + n * sizeof(void *);
  p.tmaps = round_up(p.owners + gcl__layout_owner_count(l) * sizeof(owner_slot), 16);
  p.snaps = p.tmaps + maps * sizeof(gcl__tmap_entry);
  p.bits = p.snaps + maps * sizeof(gcl__tmap_snap);
  p.scratch = round_up(p.bits + bit_bytes, BUFFER_ALIGN);
  p.scratch_entries = p.scratch + widest * GCL_TENSORMAP_BYTES;
  p.data = round_up(p.scratch_entries + widest * sizeof(gcl__tmap_entry), BUFFER_ALIGN);
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
  a->fingerprint = gcl__layout_fingerprint(layout);
  a->tmaps = (gcl__tmap_entry *)(void *)(base + p->tmaps);
  a->snaps = (gcl__tmap_snap *)(void *)(base + p->snaps);
  a->lparams = a->count ? gcl__layout_lparam(layout, 0) : NULL;
  a->scratch = base + p->scratch;
  a->scratch_entries = (gcl__tmap_entry *)(void *)(base + p->scratch_entries);
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
  c->device_id = args->device_id;
  c->unset = args->unset;
  memcpy(c->unset_bytes, args->unset_bytes, args->count * sizeof *args->unset_bytes);
  memcpy(c->bits, args->bits, args->bit_bytes);
  memcpy(c->data, args->data, args->size); /* owners stay the original's: borrowed here */
  size_t widest;
  size_t maps = gcl__layout_tmap_count(args->layout, &widest);
  memcpy(c->tmaps, args->tmaps, maps * sizeof *c->tmaps);
  memcpy(c->snaps, args->snaps, maps * sizeof *c->snaps);
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
  gcl__free(args->block);
}

const gcl_layout *gcl_args_layout(const gcl_args *args) { return args ? args->layout : NULL; }

/* --- set-tracking ------------------------------------------------------------------------ */

/* Marks bytes [rel, rel + n) of parameter pi set. Cost: a step per 64 bytes in the middle, per
 * byte at the ends; nothing once the parameter is complete. */
static void mark(gcl_args *a, size_t pi, size_t rel, size_t n) {
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

/* Bytes written by a raw setter are no map gclaunch encoded: forget the maps they cover, so a
 * refresh or address replacement re-encodes (or refuses) instead of patching foreign bytes. */
static void forget_tmaps(gcl_args *a, const gcl__lparam *p, size_t rel, size_t n) {
  if (!p->tmap_count) return;
  size_t first = rel / GCL_TENSORMAP_BYTES, end = (rel + n + GCL_TENSORMAP_BYTES - 1) / GCL_TENSORMAP_BYTES;
  if (end > p->tmap_count) end = p->tmap_count;
  if (first >= end) return;
  memset(a->tmaps + p->tmap_at + first, 0, (end - first) * sizeof *a->tmaps);
  for (size_t i = first; i < end; i++) a->snaps[p->tmap_at + i].ndim = 0;
}

/* Copies n bytes of value to byte rel of parameter pi, releases the owner slots
 * [owner, owner + owners) inside it, marks its bytes set: every setter ends here. */
static void write_at(gcl_args *a, size_t pi, size_t rel, const void *value, size_t n,
                     size_t owner, size_t owners) {
  const gcl__lparam *p = gcl__layout_lparam(a->layout, pi);
  memcpy(a->data + p->offset + rel, value, n);
  forget_tmaps(a, p, rel, n);
  release_owners(a, owner, owners);
  mark(a, pi, rel, n);
}

static void write_field(gcl_args *a, const gcl_field *f, const void *value, size_t n) {
  write_at(a, f->param, f->priv_rel, value, n, f->priv_owner, f->priv_owners);
}

/* --- checks and messages ----------------------------------------------------------------- */

/* "parameter 2 'src' ('const f32* align(16)')" or "parameter 0 'g' field 'g.n' ('u32')". */
static const char *label(const gcl_field *f, char *buf, size_t cap) {
  char who[512], type[160];
  const gcl__type *t = f->priv_type;
  if (t) gcl__type_name(t, type, sizeof type);
  else snprintf(type, sizeof type, "bytes(%zu)", f->size);
  snprintf(buf, cap, "%s ('%s')", gcl__field_label(f, who, sizeof who), type);
  return buf;
}

static gcl_status check_args(const gcl_args *a, const char *fn) {
  return a ? GCL_OK : gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: args is NULL", fn);
}

/* The whole-parameter field of index, after checking args and index. */
static gcl_status param_field(const gcl_args *a, size_t index, const char *fn, const gcl_field **f) {
  gcl_status st = check_args(a, fn);
  if (st) return st;
  if (index >= a->count)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: index %zu out of range: the kernel has %zu "
                     "parameters", fn, index, a->count);
  *f = &gcl__layout_lparam(a->layout, index)->field;
  return GCL_OK;
}

static gcl_status check_field(const gcl_args *a, const gcl_field *f, const char *fn) {
  gcl_status st = check_args(a, fn);
  if (st) return st;
  if (!f) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: field is NULL", fn);
  if (f->priv_layout != (const void *)a->layout || f->param >= a->count)
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

gcl_status gcl_args_set(gcl_args *args, size_t index, const void *value, size_t size) {
  const gcl_field *f = NULL;
  gcl_status st = param_field(args, index, "gcl_args_set", &f);
  if (!st) st = check_value(f, value, size, "gcl_args_set");
  if (st) return st;
  write_field(args, f, value, size);
  return GCL_OK;
}

/* Element `element` of array parameter index as a field. */
static gcl_status element_field(const gcl_args *a, size_t index, size_t element, gcl_field *out) {
  const gcl__lparam *p = gcl__layout_lparam(a->layout, index);
  char l[768];
  if (!p->type || p->type->kind != GCL_PARAM_ARRAY)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s is not an array: set element %zu",
                     label(&p->field, l, sizeof l), element);
  if (element >= p->type->count)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: element %zu out of range, the array has %zu",
                     label(&p->field, l, sizeof l), element, p->type->count);
  const gcl__type *e = p->type->elem;
  gcl__field_make(a->layout, p, e, element * e->size, p->owner_at + element * e->ptr_leaves,
                  p->info.name, out);
  return GCL_OK;
}

gcl_status gcl_args_set_element(gcl_args *args, size_t index, size_t element, const void *value,
                                size_t size) {
  const gcl_field *pf = NULL;
  gcl_status st = param_field(args, index, "gcl_args_set_element", &pf);
  if (st) return st;
  const gcl__type *t = gcl__layout_lparam(args->layout, index)->type;
  bool fast = t && t->kind == GCL_PARAM_ARRAY && element < t->count && value && size == t->elem->size;
  if (fast) { /* the common case without building the element's field */
    const gcl__type *e = t->elem;
    write_at(args, index, element * e->size, value, size, pf->priv_owner + element * e->ptr_leaves,
             e->ptr_leaves);
    return GCL_OK;
  }
  gcl_field f;
  st = element_field(args, index, element, &f);
  if (!st && value && size != f.size) {
    char l[768];
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: element value is %zu bytes, an element is %zu bytes",
                     label(pf, l, sizeof l), size, f.size);
  }
  if (!st) st = check_value(&f, value, size, "gcl_args_set_element");
  if (st) return st;
  write_field(args, &f, value, size);
  return GCL_OK;
}

gcl_status gcl_args_set_by_name(gcl_args *args, const char *name, const void *value, size_t size) {
  size_t index;
  if (!args || !name)
    return gcl__fail_null("gcl_args_set_by_name", 2, "args", (const void *)args, "name", (const void *)name);
  gcl_status st = gcl_layout_find(args->layout, name, &index);
  return st ? st : gcl_args_set(args, index, value, size);
}

/* --- typed scalars ------------------------------------------------------------------------- */

/* The bytes a value of field f carries: the N of bytes(N) align(k), not the size the alignment
 * pads it to (padding never reaches the kernel as data); a raw parameter's whole size. */
static size_t value_bytes(const gcl_field *f) {
  const gcl__type *t = f->priv_type;
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
  write_field(a, f, v, size);
  return GCL_OK;
}

/* f32 -> IEEE half / bfloat16 bits, rounded to nearest even; NaN stays NaN. */
static uint16_t f32_to_bf16(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

static uint16_t f32_to_f16(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  uint32_t sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);               /* NaN */
  if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);              /* overflow: inf */
  if (a < 0x38800000u) {                                                 /* subnormal or 0 */
    if (a < 0x33000000u) return (uint16_t)sign;                          /* below half the min */
    uint32_t e = a >> 23, m = (a & 0x7fffffu) | 0x800000u, shift = 126 - e;
    uint32_t r = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1);
    r += rem > half || (rem == half && (r & 1u));
    return (uint16_t)(sign | r);
  }
  a += 0xfffu + ((a >> 13) & 1u); /* round to nearest even at bit 13 */
  return (uint16_t)(sign | ((a - 0x38000000u) >> 13));
}

#define GCL_TYPED(suffix, ctype, want, conv)                                                      \
  gcl_status gcl_args_set_field_##suffix(gcl_args *args, const gcl_field *field, ctype value) {   \
    gcl_status st = check_field(args, field, "gcl_args_set_field_" #suffix);                      \
    if (st) return st;                                                                            \
    conv;                                                                                         \
    return set_typed(args, field, want, &v, sizeof v);                                            \
  }                                                                                               \
  gcl_status gcl_args_set_##suffix(gcl_args *args, size_t index, ctype value) {                   \
    if (args && index < args->count) { /* a scalar parameter of this type: a store, inline */     \
      const gcl__lparam *p = &args->lparams[index];                                               \
      if (p->info.kind == GCL_PARAM_SCALAR && p->info.scalar == want) {                          \
        conv;                                                                                     \
        memcpy(args->data + p->offset, &v, sizeof v);                                             \
        if (args->unset_bytes[index]) mark(args, index, 0, sizeof v);                             \
        return GCL_OK;                                                                            \
      }                                                                                           \
    }                                                                                             \
    const gcl_field *f = NULL;                                                                    \
    gcl_status st = param_field(args, index, "gcl_args_set_" #suffix, &f);                        \
    if (st) return st;                                                                            \
    conv;                                                                                         \
    return set_typed(args, f, want, &v, sizeof v);                                                \
  }

GCL_TYPED(bool, bool, GCL_SCALAR_BOOL, uint8_t v = value ? 1 : 0)
GCL_TYPED(i8, int8_t, GCL_SCALAR_I8, int8_t v = value)
GCL_TYPED(u8, uint8_t, GCL_SCALAR_U8, uint8_t v = value)
GCL_TYPED(i16, int16_t, GCL_SCALAR_I16, int16_t v = value)
GCL_TYPED(u16, uint16_t, GCL_SCALAR_U16, uint16_t v = value)
GCL_TYPED(i32, int32_t, GCL_SCALAR_I32, int32_t v = value)
GCL_TYPED(u32, uint32_t, GCL_SCALAR_U32, uint32_t v = value)
GCL_TYPED(i64, int64_t, GCL_SCALAR_I64, int64_t v = value)
GCL_TYPED(u64, uint64_t, GCL_SCALAR_U64, uint64_t v = value)
GCL_TYPED(f16, uint16_t, GCL_SCALAR_F16, uint16_t v = value)
GCL_TYPED(bf16, uint16_t, GCL_SCALAR_BF16, uint16_t v = value)
GCL_TYPED(f16_from_f32, float, GCL_SCALAR_F16, uint16_t v = f32_to_f16(value))
GCL_TYPED(bf16_from_f32, float, GCL_SCALAR_BF16, uint16_t v = f32_to_bf16(value))
GCL_TYPED(f32, float, GCL_SCALAR_F32, float v = value)
GCL_TYPED(f64, double, GCL_SCALAR_F64, double v = value)

/* --- pointers -------------------------------------------------------------------------------- */

/* A pointer field, or an untyped 8-byte one (a raw driver layout): described as a pointer.
 * Untyped fields take any tensor: void*, const (read-only tensors allowed), no alignment. */
static bool pointer_info(const gcl_field *f, gcl_param_info *info) {
  if (f->info.kind == GCL_PARAM_POINTER) return *info = f->info, true;
  if (f->info.kind != GCL_PARAM_BYTES || f->size != 8 || f->priv_owners != 1) return false;
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
  write_field(args, field, &address, sizeof address);
  args->owners[field->priv_owner].release = release;
  args->owners[field->priv_owner].owner = owner;
}

gcl_status gcl__args_pointer_param(const gcl_args *args, size_t index, gcl_param_info *info,
                                   int *device_id, const char *fn) {
  const gcl_field *f = NULL;
  gcl_status st = param_field(args, index, fn, &f);
  return st ? st : gcl__args_pointer_field(args, f, fn, info, device_id);
}

void gcl__args_store_pointer(gcl_args *args, size_t index, uint64_t address,
                             gcl__release_fn release, void *owner) {
  gcl__args_store_field_pointer(args, &gcl__layout_lparam(args->layout, index)->field, address,
                                release, owner);
}

const gcl_field *gcl__args_param_field(const gcl_args *args, size_t index) {
  return &gcl__layout_lparam(args->layout, index)->field;
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

gcl_status gcl_args_set_ptr(gcl_args *args, size_t index, uint64_t address) {
  const gcl_field *f = NULL;
  gcl_status st = param_field(args, index, "gcl_args_set_ptr", &f);
  return st ? st : set_ptr(args, f, address, "gcl_args_set_ptr");
}

/* --- libffi ---------------------------------------------------------------------------------- */

gcl_status gcl_args_set_ffi(gcl_args *args, size_t index, const struct _ffi_type *type,
                            const void *value) {
  const gcl_field *f = NULL;
  gcl_status st = param_field(args, index, "gcl_args_set_ffi", &f);
  if (!st && !type) st = gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_args_set_ffi: type is NULL");
  if (!st && !value) st = gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_args_set_ffi: value is NULL");
  if (st) return st;
  const gcl__type *t = f->priv_type;
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

gcl_status gcl_args_set_device(gcl_args *args, int device_id) {
  gcl_status st = check_args(args, "gcl_args_set_device");
  if (st) return st;
  if (device_id < -1)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_args_set_device: device_id %d: expected -1 "
                     "(any device) or a device ordinal", device_id);
  args->device_id = device_id;
  return GCL_OK;
}

bool gcl_args_is_set(const gcl_args *args, size_t index) {
  return args && index < args->count && !args->unset_bytes[index];
}

bool gcl_args_field_is_set(const gcl_args *args, const gcl_field *field) {
  if (!args || !field || field->priv_layout != (const void *)args->layout || field->param >= args->count)
    return false;
  return range_set(args, field->param, field->priv_rel, field->size);
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

gcl_status gcl_args_buffer(const gcl_args *args, const void **data, size_t *size) {
  if (!args || !data || !size)
    return gcl__fail_null("gcl_args_buffer", 3, "args", (const void *)args, "data", (const void *)data, "size", (const void *)size);
  if (args->unset) return unset_error(args);
  *data = args->data;
  *size = args->size;
  return GCL_OK;
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

/* --- tensor-map slots (lib/cuda/tensormap.c encodes; these find and mark the bytes) ---------- */

static gcl_status tmap_slot_error(const gcl_args *a, size_t index, size_t element, size_t n) {
  const gcl__lparam *p = gcl__layout_lparam(a->layout, index);
  char l[160];
  gcl__param_label(l, sizeof l, index, p->info.name);
  bool array = p->info.kind == GCL_PARAM_ARRAY;
  if (array && p->tmap_count)
    return n == 1 ? gcl__fail(GCL_ERROR_INVALID_ARGUMENT,
                              "%s: element %zu is out of range (tensormap[%zu])", l, element,
                              p->info.count)
                  : gcl__fail(GCL_ERROR_INVALID_ARGUMENT,
                              "%s: elements %zu ... %zu (n = %zu) are out of range (tensormap[%zu])",
                              l, element, element + n - 1, n, p->info.count);
  if (!p->tmap_count || array)
    return gcl__fail(GCL_ERROR_TYPE_MISMATCH,
                     "%s: expected a tensormap or tensormap[N] parameter, got one of %zu bytes "
                     "(a map inside a struct is set by field: gcl_args_set_field_tensormap)", l,
                     p->info.size);
  if (element != 0)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT,
                     "%s: element %zu of a single tensormap: expected element 0", l, element);
  return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: n = %zu maps for a single tensormap: expected 1",
                   l, n);
}

gcl_status gcl__args_tmap_slot(gcl_args *args, size_t index, size_t element, size_t n,
                               gcl__tmap_who *who, unsigned char **map, gcl__tmap_entry **entry) {
  if (index >= args->count)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "index %zu out of range: the kernel has %zu "
                     "parameters", index, args->count);
  const gcl__lparam *p = gcl__layout_lparam(args->layout, index);
  if (!p->tmap_count || element >= p->tmap_count || n > p->tmap_count - element)
    return tmap_slot_error(args, index, element, n);
  *who = (gcl__tmap_who){.index = index, .name = p->info.name, .element = element,
                         .is_element = p->info.kind == GCL_PARAM_ARRAY};
  *map = args->data + p->offset + element * GCL_TENSORMAP_BYTES;
  *entry = args->tmaps + p->tmap_at + element;
  return GCL_OK;
}

void gcl__args_tmap_mark(gcl_args *args, size_t index, size_t element, size_t n) {
  mark(args, index, element * GCL_TENSORMAP_BYTES, n * GCL_TENSORMAP_BYTES); /* maps own nothing */
}

void gcl__args_tmap_unsnap(gcl_args *args, size_t index, size_t element, size_t n) {
  gcl__tmap_snap *snap = args->snaps + args->lparams[index].tmap_at + element;
  for (size_t i = 0; i < n; i++) snap[i].ndim = 0;
}
