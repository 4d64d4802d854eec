/* The device layout engine: where each parameter sits in the kernel's parameter buffer.
 *
 * ptxas places parameters in constant bank 0 after a per-architecture base (docs/facts.md "Placement rule", checked
 * against nvcc 13.0 cubins for every architecture it builds and the H200's cuFuncGetParamInfo).
 * How it aligns depends on the base (place() below owns the rule):
 *  - base 0x160 (sm_75-89, small area) and 0x210 (sm_90): the *absolute* constant-bank address
 *    is aligned:  abs = alignup(base + offset, align); offset = abs - base;
 *  - bases that are multiples of 128 (0x380 on sm_100 and later, 0x1a80 when sm_75-89 move the
 *    area past 4352 bytes): the offset from the area's start is aligned:
 *    offset = alignup(offset, align). Up to 128 the two agree; above 128 they differ
 *    (`f64, i8, bytes(8) align(256)`: the third at 240 on sm_90, 256 on sm_100, 160 on sm_80).
 * The buffer is max(offset + size) bytes, no tail padding. */
#include "arch.h"
#include "layout_internal.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define AREA_V1_MAX 4352 /* sm_75-89 move the base when the area exceeds this */

typedef gcl__lparam lparam;

struct gcl_layout {
  int sm;
  size_t count, size;
  gcl_signature *sig; /* shared with the caller (gcl__signature_share); NULL for raw layouts */
  lparam *params;
  unsigned char *bits; /* initial set-tracking bitmap: see layout_internal.h */
  size_t bit_bytes, owners, tmaps, widest_tmaps;
  bool owned;                  /* a kernel's (gcl__layout_own): refs counts, the last frees */
  _Atomic size_t refs;
  _Atomic(const char *) orphan_of;
};

void gcl__layout_own(gcl_layout *layout) {
  layout->owned = true;
  atomic_store(&layout->refs, 1);
}

void gcl__layout_retain(const gcl_layout *layout) {
  if (layout->owned) atomic_fetch_add(&((gcl_layout *)layout)->refs, 1);
}

void gcl__layout_release(const gcl_layout *layout) {
  if (!layout || !layout->owned) return;
  if (atomic_fetch_sub(&((gcl_layout *)layout)->refs, 1) == 1) {
    gcl_layout *l = (gcl_layout *)layout;
    l->owned = false;
    gcl_layout_destroy(l);
  }
}

void gcl__layout_orphan(const gcl_layout *layout, const char *kernel_name) {
  atomic_store(&((gcl_layout *)layout)->orphan_of, kernel_name);
}

const char *gcl__layout_orphan_of(const gcl_layout *layout) {
  return atomic_load(&((gcl_layout *)layout)->orphan_of);
}

bool gcl__sm_known(int sm) { return gcl__arch_find(sm) != NULL; }

size_t gcl__param_base(int sm, size_t area_bytes) {
  const gcl__arch *a = gcl__arch_find(sm);
  if (!a) return 0;
  if (a->param_base == 0x160 && area_bytes > AREA_V1_MAX) return 0x1a80;
  return a->param_base;
}

static size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

/* The placement rule (see the top of the file), the one place it is written: from a base that
 * is a multiple of 128 (and from 0, the compiler's own 0-based layout) offsets are aligned
 * relative to the area's start, from 0x160 and 0x210 the absolute address is. Measured for
 * alignments up to 4096 on sm_75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120 and 121
 * (tests/unit/test_differential.c). Returns the area size (the last parameter's end). */
static size_t place(lparam *ps, size_t n, size_t base) {
  size_t skew = base % 128 == 0 ? 0 : base, off = 0, end = 0;
  for (size_t i = 0; i < n; i++) {
    off = align_up(skew + off, ps[i].align) - skew;
    ps[i].offset = off;
    off += ps[i].size;
    end = off;
  }
  return end;
}

static gcl_status check_sm(int sm) {
  if (gcl__sm_known(sm)) return GCL_OK;
  char known[128];
  return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "unknown architecture sm_%d (known: %s)", sm,
                   gcl__arch_list(known, sizeof known));
}

/* l's parameters (as last placed) end past the limit: name the first one that does. */
static gcl_status too_large(const gcl_layout *l, size_t need, const char *how) {
  size_t i = 0;
  while (l->params[i].offset + l->params[i].size <= GCL_PARAM_LIMIT) i++;
  char who[128];
  gcl__param_label(who, sizeof who, i, l->params[i].info.name);
  return gcl__fail(GCL_ERROR_LAYOUT_TOO_LARGE,
                   "parameters need %zu bytes on sm_%d%s, %zu bytes over the %d-byte limit (%s "
                   "ends at %zu)", need, l->sm, how, need - GCL_PARAM_LIMIT, GCL_PARAM_LIMIT, who,
                   l->params[i].offset + l->params[i].size);
}

static gcl_layout *layout_new(size_t count, int sm) {
  gcl_layout *l = gcl__calloc(1, sizeof *l);
  if (!l) return NULL;
  l->params = gcl__calloc(count ? count : 1, sizeof *l->params);
  if (!l->params) return gcl__free(l), NULL;
  l->count = count;
  l->sm = sm;
  return l;
}

/* Places l's parameters for its sm. Two limits apply, both measured:
 * - ptxas (nvcc 13.0) checks 32764 bytes against the parameters laid out from offset 0 (the PTX
 *   parameter list's own C-like layout): it rejects (i8, tensormap[255]) on sm_90 as 0x8000 bytes
 *   although its sm_90 placement needs only 32752. sm_75-89 choose their base from that layout
 *   too: 0x160 for (bytes(4096), tensormap, bytes(97)) although that placement ends at 4353,
 *   0x1a80 for (i8, tensormap, bytes(4200)), whose 0-based layout ends at 4456.
 * - The driver checks the device placement: ptxas accepts (tensormap, bytes(32600)) on sm_90
 *   (0-based 32728 bytes, placed 32840), but on the H200 (driver 580) a module holding a kernel
 *   whose sm_90 placement ends at 32768 failed to load (CUDA_ERROR_INVALID_IMAGE from
 *   cuKernelGetFunction for every kernel of it), while one ending at 32760 loaded and ran.
 * A layout is accepted only if both fit. */
static gcl_status layout_place(gcl_layout *l) {
  size_t area = place(l->params, l->count, 0);
  if (area > GCL_PARAM_LIMIT) return too_large(l, area, "");
  l->size = place(l->params, l->count, gcl__param_base(l->sm, area));
  if (l->size > GCL_PARAM_LIMIT)
    return too_large(l, l->size, " once placed for the device (the compiler accepts it, the "
                                 "driver refuses to load it)");
  return GCL_OK;
}

/* Bytes of the set-tracking bitmap and owner slots per parameter, then the initial bitmap: bits
 * of padding bytes (and past each parameter's last byte) preset, so that a parameter is
 * complete when all its bits are set. Fills each parameter's whole-parameter field. */
/* Parameter p's initial bits (nb bytes at b): padding bytes and the bits past its last byte set,
 * leaf bytes clear. Without padding (a tensormap[240], a scalar) that is zeros and a tail; with
 * padding the leaves are marked and the whole is inverted a word at a time (bench_pack's
 * "parse+layout 240 maps" spent 3/4 of its time in a byte-wise version of this). */
static void init_bits(const lparam *p, unsigned char *b, size_t nb) {
  memset(b, 0, nb);
  if (!p->type || p->type->leaf_bytes == p->size) {
    if (p->size % 8) b[nb - 1] = (unsigned char)(0xffu << (p->size % 8));
    return;
  }
  gcl__type_mark_leaves(p->type, b, 0); /* mark the leaf bytes, then invert */
  size_t k = 0;
  for (; k + 8 <= nb; k += 8) {
    uint64_t w;
    memcpy(&w, b + k, 8);
    w = ~w;
    memcpy(b + k, &w, 8);
  }
  for (; k < nb; k++) b[k] = (unsigned char)~b[k];
}

static bool layout_track(gcl_layout *l) {
  size_t at = 0, owners = 0;
  for (size_t i = 0; i < l->count; i++) {
    lparam *p = &l->params[i];
    p->bit_at = at, p->owner_at = owners;
    p->leaf_bytes = p->type ? p->type->leaf_bytes : p->size;
    p->owners = p->type ? p->type->ptr_leaves : p->size == 8; /* raw: 8 bytes may be a pointer */
    at += (p->size + 7) / 8, owners += p->owners;
    p->tmap_at = l->tmaps;
    p->tmap_count = p->type ? p->type->tmap_leaves : p->size == GCL_TENSORMAP_BYTES;
    l->tmaps += p->tmap_count;
    if (p->tmap_count > l->widest_tmaps) l->widest_tmaps = p->tmap_count;
  }
  l->bit_bytes = at, l->owners = owners;
  l->bits = gcl__malloc(at ? at : 1);
  if (!l->bits) return false;
  for (size_t i = 0; i < l->count; i++) {
    lparam *p = &l->params[i];
    unsigned char *b = l->bits + p->bit_at;
    size_t nb = (p->size + 7) / 8;
    init_bits(p, b, nb);
    gcl__field_make(l, p, p->type, (gcl__place){0, p->owner_at, p->tmap_at, 0}, p->info.name,
                    &p->field);
  }
  return true;
}

gcl_status gcl_layout_create(const gcl_signature *sig, int sm, gcl_layout **out) {
  if (!sig || !out) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_layout_create: %s is NULL", sig ? "out" : "sig");
  gcl_status s = check_sm(sm);
  if (s) return s;
  gcl_layout *l = layout_new(gcl_signature_count(sig), sm);
  if (l) l->sig = gcl__signature_share(sig);
  if (!l || !l->sig) {
    gcl_layout_destroy(l);
    return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "out of memory creating a layout");
  }
  for (size_t i = 0; i < l->count; i++) {
    gcl_signature_param(l->sig, i, &l->params[i].info);
    l->params[i].type = gcl__signature_type(l->sig, i);
    l->params[i].size = l->params[i].info.size;
    l->params[i].align = l->params[i].info.align;
  }
  s = layout_place(l);
  if (!s && !layout_track(l)) s = gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "out of memory creating a layout");
  if (s) {
    gcl_layout_destroy(l);
    return s;
  }
  *out = l;
  return GCL_OK;
}

/* A kernel the driver loaded ends within the limit (see layout_place). */
#define RAW_LIMIT GCL_PARAM_LIMIT

/* Raw parameters must each be 1+ bytes, end within RAW_LIMIT, and not overlap. */
static gcl_status check_raw_into(size_t count, const size_t *offsets, const size_t *sizes,
                                 unsigned char *used) {
  for (size_t i = 0; i < count; i++) {
    if (sizes[i] == 0 || offsets[i] > RAW_LIMIT || sizes[i] > RAW_LIMIT - offsets[i])
      return gcl__fail(sizes[i] ? GCL_ERROR_LAYOUT_TOO_LARGE : GCL_ERROR_INVALID_ARGUMENT,
                       "parameter %zu: offset %zu size %zu must be at least 1 byte and end within "
                       "%d bytes", i, offsets[i], sizes[i], RAW_LIMIT);
    for (size_t b = offsets[i]; b < offsets[i] + sizes[i]; b++) {
      if (used[b])
        return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "parameter %zu (offset %zu size %zu) overlaps "
                         "another parameter at byte %zu", i, offsets[i], sizes[i], b);
      used[b] = 1;
    }
  }
  return GCL_OK;
}

static gcl_status check_raw(size_t count, const size_t *offsets, const size_t *sizes) {
  unsigned char *used = gcl__calloc(RAW_LIMIT, 1); /* one flag per byte: overlap in O(bytes) */
  if (!used) return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "out of memory creating a layout");
  gcl_status s = check_raw_into(count, offsets, sizes, used);
  gcl__free(used);
  return s;
}

gcl_status gcl_layout_create_raw(size_t count, const size_t *offsets, const size_t *sizes, int sm,
                                 gcl_layout **out) {
  if (!out || (count && (!offsets || !sizes)))
    return gcl__fail_null("gcl_layout_create_raw", 3, "out", (const void *)out, "offsets",
                          (const void *)offsets, "sizes", (const void *)sizes);
  gcl_status s = check_sm(sm);
  if (!s) s = check_raw(count, offsets, sizes);
  if (s) return s;
  gcl_layout *l = layout_new(count, sm);
  if (!l) return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "out of memory creating a layout");
  for (size_t i = 0; i < count; i++) {
    lparam *p = &l->params[i];
    p->offset = offsets[i], p->size = sizes[i], p->align = 1; /* the driver does not say */
    p->info = (gcl_param_info){.kind = GCL_PARAM_BYTES, .elem_kind = GCL_PARAM_BYTES,
                               .size = sizes[i], .align = 1, .elem_size = sizes[i],
                               .pointee_align = 1};
    if (offsets[i] + sizes[i] > l->size) l->size = offsets[i] + sizes[i];
  }
  if (!layout_track(l)) {
    gcl_layout_destroy(l);
    return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "out of memory creating a layout");
  }
  *out = l;
  return GCL_OK;
}

void gcl_layout_destroy(gcl_layout *layout) {
  if (!layout) return;
  gcl_signature_destroy(layout->sig);
  gcl__free(layout->params);
  gcl__free(layout->bits);
  gcl__free(layout);
}

size_t gcl_layout_count(const gcl_layout *layout) { return layout ? layout->count : 0; }
int gcl_layout_sm(const gcl_layout *layout) { return layout ? layout->sm : 0; }
size_t gcl_layout_size(const gcl_layout *layout) { return layout ? layout->size : 0; }

static gcl_status check_index(const gcl_layout *l, size_t index, const char *fn) {
  if (!l) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: layout is NULL", fn);
  if (index < l->count) return GCL_OK;
  return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: index %zu out of range: the layout has %zu parameters",
                   fn, index, l->count);
}

gcl_status gcl_layout_param(const gcl_layout *layout, size_t index, size_t *offset, size_t *size,
                            size_t *align) {
  gcl_status s = check_index(layout, index, "gcl_layout_param");
  if (s) return s;
  const lparam *p = &layout->params[index];
  if (offset) *offset = p->offset;
  if (size) *size = p->size;
  if (align) *align = p->align;
  return GCL_OK;
}

/* A field of layout for parameter p (one of its params), at type t and place pl (field.c's paths
 * and the whole-parameter fields below). */
void gcl__field_make(const gcl_layout *layout, const gcl__lparam *p, const gcl__type *t,
                     gcl__place pl, const char *name, gcl_field *out) {
  memset(out, 0, sizeof *out);
  out->param = (size_t)(p - layout->params);
  out->offset = p->offset + pl.rel;
  size_t owners = p->owners, tmaps = p->tmap_count, span = tmaps;
  if (t) {
    gcl__type_describe(t, &out->info);
    out->size = t->size, out->align = t->align;
    owners = t->ptr_leaves, tmaps = t->tmap_leaves;
    bool map_array = t->kind == GCL_PARAM_ARRAY && t->elem->kind == GCL_PARAM_TENSORMAP &&
                     t->elem->size == GCL_TENSORMAP_BYTES;
    span = t->kind == GCL_PARAM_TENSORMAP ? (pl.span ? pl.span : 1) : map_array ? t->count : 0;
  } else {
    out->info = p->info;
    out->size = p->size, out->align = p->align;
  }
  out->info.name = name;
  out->info.grid_constant = p->info.grid_constant;
  out->opaque[GCL__F_LAYOUT] = (uint64_t)(uintptr_t)layout;
  out->opaque[GCL__F_TYPE] = (uint64_t)(uintptr_t)t;
  out->opaque[GCL__F_REL] = pl.rel;
  out->opaque[GCL__F_OWNER] = pl.owner, out->opaque[GCL__F_OWNERS] = owners;
  out->opaque[GCL__F_TMAP] = pl.tmap, out->opaque[GCL__F_TMAPS] = tmaps;
  out->opaque[GCL__F_SPAN] = span;
}

const gcl__lparam *gcl__layout_lparam(const gcl_layout *layout, size_t index) {
  return &layout->params[index];
}

const unsigned char *gcl__layout_bits(const gcl_layout *layout, size_t *bytes) {
  *bytes = layout->bit_bytes;
  return layout->bits;
}

size_t gcl__layout_owner_count(const gcl_layout *layout) { return layout->owners; }

size_t gcl__layout_tmap_count(const gcl_layout *layout, size_t *widest) {
  *widest = layout->widest_tmaps;
  return layout->tmaps;
}
