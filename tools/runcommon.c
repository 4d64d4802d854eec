/* gclaunch run: what run.c (options, CPU checks), runcheck.c (the module), runfields.c (field
 * specs) and runexec.c (the device side) share -- messages, JSON strings, buffer arguments by
 * name, a buffer as a DLPack tensor and bound into args, a tmap spec's options. A leaf of the
 * tools' file graph: it calls no other file of tools/ (tests/cli/file_graph.sh), so the run
 * files call down into it and never back into run.c. */
#include "run.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void run_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("gclaunch run: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

void run_json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++)
    if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
    else if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", *s);
    else fputc(*s, f);
  fputc('"', f);
}

long run_find_buffer(const run_state *st, const char *name) {
  for (size_t i = 0; i < st->nargs; i++)
    if (st->args[i].kind == RUNARG_BUFFER && !strcmp(st->args[i].name, name)) return (long)i;
  return -1;
}

void run_tensor(const runarg *a, uint64_t base, int device, int64_t *strides, DLTensor *t) {
  static const uint8_t codes[] = {
      [GCL_SCALAR_BOOL] = 6 /* kDLBool: not in DLPack 0.6 headers */, [GCL_SCALAR_I8] = kDLInt,    [GCL_SCALAR_U8] = kDLUInt,
      [GCL_SCALAR_I16] = kDLInt,   [GCL_SCALAR_U16] = kDLUInt,  [GCL_SCALAR_I32] = kDLInt,
      [GCL_SCALAR_U32] = kDLUInt,  [GCL_SCALAR_I64] = kDLInt,   [GCL_SCALAR_U64] = kDLUInt,
      [GCL_SCALAR_F16] = kDLFloat, [GCL_SCALAR_BF16] = kDLBfloat, [GCL_SCALAR_F32] = kDLFloat,
      [GCL_SCALAR_F64] = kDLFloat};
  int64_t stride = 1;
  for (size_t d = a->rank; d-- > 0; stride *= (int64_t)a->shape[d]) strides[d] = stride;
  memset(t, 0, sizeof *t);
  t->data = (void *)(uintptr_t)base;
  t->device = (DLDevice){kDLCUDA, device};
  t->ndim = (int32_t)a->rank;
  t->dtype = (DLDataType){codes[a->type], (uint8_t)(8 * a->size), 1};
  t->shape = (int64_t *)a->shape; /* uint64 counts below 2^32: the same bits */
  t->strides = strides;
  t->byte_offset = a->offset * a->size;
}

bool run_tmap_options(const runarg *tmap, const runarg *buf, gcl_tensormap_options *o) {
  if (!tmap->im2col_pixels && tmap->box_rank != buf->rank) {
    fprintf(stderr, "gclaunch run: %s %d '%s': box has %zu sizes, buffer '%s' has rank %zu\n",
            tmap->option, tmap->position, tmap->spec, tmap->box_rank, buf->name, buf->rank);
    return false;
  }
  memset(o, 0, sizeof *o);
  for (size_t i = 0; i < tmap->box_rank; i++) o->box[i] = tmap->box[tmap->box_rank - 1 - i];
  o->swizzle = tmap->swizzle;
  o->oob_fill = tmap->oob_fill;
  o->store = tmap->store;
  o->im2col.pixels = tmap->im2col_pixels;
  o->im2col.channels = tmap->im2col_channels;
  memcpy(o->im2col.lower, tmap->im2col_lower, sizeof o->im2col.lower);
  memcpy(o->im2col.upper, tmap->im2col_upper, sizeof o->im2col.upper);
  return true;
}

gcl_status run_bind_buffer(gcl_args *args, size_t i, const runarg *a, uint64_t base,
                           int device) {
  gcl_field f;
  gcl_status s = gcl_layout_param_field(gcl_args_layout(args), i, &f);
  if (s != GCL_OK) return s;
  const gcl_param_info p = f.info;
  if (p.kind != GCL_PARAM_POINTER) { /* untyped 8 bytes (no signature): the view's address */
    uint64_t address = base + a->offset * a->size;
    return gcl_args_set(args, i, &address, sizeof address);
  }
  int64_t strides[RUNARG_MAX_RANK];
  DLTensor t;
  run_tensor(a, base, device, strides, &t);
  return gcl_args_set_dltensor(args, i, &t);
}
