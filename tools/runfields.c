/* gclaunch run: field arguments, `--arg PATH=SPEC` (PATH a field path such as "g.loads[3]" or
 * "g.n", the grammar in gclaunch/core.h). A field spec sets one member of a by-value aggregate -- a scalar,
 * a buffer into a pointer member, a tensor map (or every map of an array of them), hex bytes --
 * instead of a whole parameter. The parameters that field specs set take no positional --arg;
 * every other parameter takes one, in order. Resolved against the signature's layout on the CPU
 * (bad paths, kinds and counts refused before any GPU), set again into the real args on it. */
#include "run.h"

#include <stdlib.h>
#include <string.h>

static bool is_field(const runarg *a) { return a->path[0] != 0; }

static gcl_status field_of(const gcl_args *args, const runarg *a, gcl_field *f) {
  gcl_status s = gcl_layout_field(gcl_args_layout(args), a->path, f);
  if (s != GCL_OK) run_error("%s %d '%s': %s", a->option, a->position, a->spec, gcl_last_error());
  return s;
}

/* Marks the parameters field specs set (targets[p]); false after a message. */
static bool find_targets(const run_state *st, const gcl_layout *layout, bool *targets) {
  for (size_t i = 0; i < st->nargs; i++) {
    const runarg *a = &st->args[i];
    gcl_field f;
    if (!is_field(a)) continue;
    if (gcl_layout_field(layout, a->path, &f) != GCL_OK) {
      run_error("%s %d '%s': %s", a->option, a->position, a->spec, gcl_last_error());
      return false;
    }
    targets[f.param] = true;
  }
  return true;
}

/* Rebuilds st->args as: one entry per parameter (the next positional --arg, or a placeholder for
 * a parameter that field specs set), then the --buffer specs and the field specs. */
static bool rebuild(run_state *st, const bool *targets, size_t count) {
  runarg *args = calloc(count + st->nargs - st->nparams + 1, sizeof *args);
  run_buffer *buffers = calloc(count + st->nargs - st->nparams + 1, sizeof *buffers);
  if (!args || !buffers) return free(args), free(buffers), run_error("out of memory"), false;
  size_t next = 0, n = 0;
  for (size_t p = 0; p < count; p++) {
    if (targets[p])
      args[n++] = (runarg){.option = "--arg", .spec = "(set by field specs)",
                               .kind = RUNARG_FIELDS};
    else
      args[n++] = st->args[next++];
  }
  for (size_t i = st->nparams; i < st->nargs; i++) args[n++] = st->args[i];
  free(st->args);
  free(st->buffers);
  st->args = args, st->buffers = buffers;
  st->nargs = n, st->nparams = count;
  return true;
}

int run_place_fields(run_state *st, const gcl_layout *layout) {
  size_t count = gcl_layout_count(layout), fields = 0, placed = 0;
  for (size_t i = 0; i < st->nargs; i++) fields += is_field(&st->args[i]);
  if (!fields) return -1;
  bool *targets = calloc(count + 1, sizeof *targets);
  if (!targets) return run_error("out of memory"), 2;
  int rc = find_targets(st, layout, targets) ? -1 : 2;
  for (size_t p = 0; p < count; p++) placed += targets[p];
  if (rc < 0 && count - placed != st->nparams) {
    run_error("the kernel has %zu parameters: %zu set by field specs (PATH=...), so %zu "
              "positional --arg are needed, %zu given", count, placed, count - placed, st->nparams);
    rc = 2;
  }
  if (rc < 0 && !rebuild(st, targets, count)) rc = 2;
  free(targets);
  return rc;
}

/* A scalar spec must be of the field's scalar type (untyped bytes take any of their size). */
static bool scalar_fits(const runarg *a, const gcl_field *f) {
  if (f->info.kind == GCL_PARAM_BYTES) return f->size == a->size;
  if (f->info.kind == GCL_PARAM_SCALAR && f->info.scalar == a->type) return true;
  run_error("%s %d '%s': field '%s' is %s, the argument is %s", a->option, a->position, a->spec,
            a->path, f->info.kind == GCL_PARAM_SCALAR ? runarg_type_name(f->info.scalar)
                                                      : "not a scalar",
            runarg_type_name(a->type));
  return false;
}

/* Maps a tmap spec fills: 1 for a tensormap field, N for a tensormap[N] one, 0 (message) if the
 * field holds no maps or the list length fits neither. */
static size_t tmap_maps(const runarg *a, const gcl_field *f) {
  size_t n = f->info.kind == GCL_PARAM_TENSORMAP ? 1
             : f->info.kind == GCL_PARAM_ARRAY && f->info.elem_kind == GCL_PARAM_TENSORMAP ? f->info.count
             : 0;
  if (!n) run_error("%s %d '%s': field '%s' holds no tensor map", a->option, a->position, a->spec, a->path);
  else if (a->tmap_count != 1 && a->tmap_count != n)
    run_error("%s %d '%s': field '%s' holds %zu tensor maps, %zu buffers listed (list one for "
              "all, or %zu)", a->option, a->position, a->spec, a->path, n, a->tmap_count, n), n = 0;
  return n;
}

/* Map e of field f (f itself, or element e of an array of maps). */
static gcl_status map_field(const gcl_args *args, const runarg *a, const gcl_field *f, size_t e,
                            gcl_field *out) {
  if (f->info.kind == GCL_PARAM_TENSORMAP) return *out = *f, GCL_OK;
  char path[RUNARG_PATH_MAX + 24];
  snprintf(path, sizeof path, "%s[%zu]", a->path, e);
  return gcl_layout_field(gcl_args_layout(args), path, out);
}

/* Encodes the maps of a tmap field spec over the listed buffers (allocated at st->buffers'
 * bases); without ctx (the CPU check) writes zero bytes there instead, so that completeness is
 * checked too (check_names already checked every box). */
static gcl_status set_tmaps(const run_state *st, gcl_args *args, const runarg *a,
                            const gcl_field *f, gcl_context *ctx) {
  size_t n = tmap_maps(a, f);
  if (!n) return GCL_ERROR_INVALID_ARGUMENT;
  static const unsigned char zeros[GCL_TENSORMAP_BYTES];
  gcl_status s = GCL_OK;
  for (size_t e = 0; s == GCL_OK && e < n; e++) {
    gcl_field m;
    char name[RUNARG_NAME_MAX];
    runarg_tmap_buffer(a, a->tmap_count == 1 ? 0 : e, name);
    long b = run_find_buffer(st, name);
    if ((s = map_field(args, a, f, e, &m)) != GCL_OK) break;
    if (!ctx) {
      s = gcl_args_set_field(args, &m, zeros, sizeof zeros);
      continue;
    }
    gcl_tensormap_options o;
    int64_t strides[RUNARG_MAX_RANK];
    DLTensor t;
    run_tensor(&st->args[b], st->buffers[b].base, st->device, strides, &t);
    if (!run_tmap_options(a, &st->args[b], &o)) return GCL_ERROR_INVALID_ARGUMENT;
    const DLTensor *tp = &t;
    s = gcl_args_set_tensormaps(args, ctx, &m, 1, &tp, &o, 1, 0);
  }
  if (s != GCL_OK) run_error("%s %d '%s': %s", a->option, a->position, a->spec, gcl_last_error());
  return s;
}

/* A buffer into a pointer field (its DLPack view, every check of a pointer parameter), or its
 * view's address into untyped 8 bytes. */
static gcl_status set_buffer(const run_state *st, gcl_args *args, const runarg *a,
                             const gcl_field *f, uint64_t base) {
  gcl_status s;
  if (f->info.kind != GCL_PARAM_POINTER) {
    uint64_t address = base + a->offset * a->size;
    s = gcl_args_set_field(args, f, &address, sizeof address);
  } else {
    int64_t strides[RUNARG_MAX_RANK];
    DLTensor t;
    run_tensor(a, base, st->device, strides, &t);
    s = gcl_args_set_field_dltensor(args, f, &t);
  }
  if (s != GCL_OK) run_error("%s %d '%s': %s", a->option, a->position, a->spec, gcl_last_error());
  return s;
}

gcl_status run_set_field(const run_state *st, gcl_args *args, size_t i, uint64_t base,
                         gcl_context *ctx) {
  const runarg *a = &st->args[i];
  gcl_field f;
  gcl_status s = field_of(args, a, &f);
  if (s != GCL_OK) return s;
  switch (a->kind) {
  case RUNARG_SCALAR:
    if (!scalar_fits(a, &f)) return GCL_ERROR_TYPE_MISMATCH;
    s = gcl_args_set_field(args, &f, a->value, a->size);
    break;
  case RUNARG_HEX: s = gcl_args_set_field(args, &f, a->bytes, a->size); break;
  case RUNARG_BUFFER: return set_buffer(st, args, a, &f, base);
  case RUNARG_TMAP: return set_tmaps(st, args, a, &f, ctx);
  default: return GCL_OK;
  }
  if (s != GCL_OK) run_error("%s %d '%s': %s", a->option, a->position, a->spec, gcl_last_error());
  return s;
}

gcl_status run_set_fields(const run_state *st, gcl_args *args, uint64_t cpu_base, gcl_context *ctx) {
  gcl_status s = GCL_OK;
  for (size_t i = st->nparams; s == GCL_OK && i < st->nargs; i++)
    if (is_field(&st->args[i]))
      s = run_set_field(st, args, i, ctx ? st->buffers[i].base : cpu_base, ctx);
  return s;
}
