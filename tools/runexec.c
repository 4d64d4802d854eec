/* gclaunch run, device side: load, allocate and fill buffers, bind every argument, launch
 * --warmup + --repeat times, then report checksums and the median times (events and host). */
#include "run.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int fail(const char *what) {
  run_error("%s: %s", what, gcl_last_error());
  return 1;
}

static int arg_fail(const runarg *a) {
  run_error("%s %d '%s': %s", a->option, a->position, a->spec, gcl_last_error());
  return 1;
}

static int load_module(run_state *st) {
  if (gcl_context_create(st->device, &st->ctx) != GCL_OK) return fail("context");
  size_t n = strlen(st->module);
  if (n < 3 || strcmp(st->module + n - 3, ".cu")) {
    if (gcl_module_load_file(st->ctx, st->module, &st->mod) != GCL_OK) return fail(st->module);
    return 0;
  }
  void *src = NULL;
  size_t size = 0;
  if (gcl_image_file_read(st->module, &src, &size) != GCL_OK) { /* NUL-terminated source */
    run_error("MODULE: %s", gcl_last_error());
    return 2;
  }
  gcl_status s = gcl_module_compile(st->ctx, src, st->module, NULL, 0, &st->mod);
  gcl_file_free(src);
  return s == GCL_OK ? 0 : fail(st->module);
}

static int load_kernel(run_state *st) {
  int rc = load_module(st);
  if (rc) return rc;
  const char *name = st->kernel_name ? st->kernel_name : st->kernel; /* mangled, from the CPU check */
  if (gcl_module_find_kernel(st->mod, name, st->signature, &st->k) != GCL_OK) return fail(st->kernel);
  const gcl_layout *layout = gcl_kernel_layout(st->k);
  if (gcl_layout_count(layout) != st->nparams) {
    run_error("kernel '%s' has %zu parameters, %zu --arg given", st->kernel,
              gcl_layout_count(layout), st->nparams);
    return 2;
  }
  return gcl_args_create(layout, &st->packed) == GCL_OK ? 0 : fail("args");
}

/* Allocates offset + count elements, zeroes them, uploads the view's fill and binds it. */
static int setup_buffer(run_state *st, size_t i) {
  const runarg *a = &st->args[i];
  run_buffer *b = &st->buffers[i];
  size_t total = (size_t)(a->offset + a->count) * a->size, view = (size_t)a->count * a->size;
  b->view_bytes = view;
  if (!(b->host = malloc(view))) return run_error("out of host memory for %s %d", a->option, a->position), 1;
  if (a->fill == RUNARG_FILE) memcpy(b->host, b->file_data, view);
  else runarg_fill_view(a, b->host, st->seed);
  if (gcl_mem_alloc(st->ctx, total, &b->base) != GCL_OK) return arg_fail(a);
  uint64_t view_at = b->base + a->offset * a->size;
  if (gcl_mem_fill_u8(st->ctx, b->base, 0, total) != GCL_OK ||
      gcl_mem_upload(st->ctx, view_at, b->host, view) != GCL_OK)
    return arg_fail(a);
  if (i >= st->nparams) return 0; /* a --buffer: no parameter */
  return run_bind_buffer(st->packed, i, a, b->base, st->device) == GCL_OK ? 0 : arg_fail(a);
}

/* Elements of a tensor-map parameter: N of a tensormap[N], size / 128 of untyped bytes. */
static size_t tmap_elements(const run_state *st, size_t i) {
  gcl_field f;
  if (gcl_layout_param_field(gcl_args_layout(st->packed), i, &f) != GCL_OK) return 1;
  const gcl_param_info p = f.info;
  if (p.kind == GCL_PARAM_ARRAY) return p.count;
  return p.kind == GCL_PARAM_BYTES && p.size % GCL_TENSORMAP_BYTES == 0
             ? p.size / GCL_TENSORMAP_BYTES : 1;
}

static int setup_tmap(run_state *st, size_t i) {
  const runarg *a = &st->args[i];
  size_t n = tmap_elements(st, i);
  if (a->tmap_count != 1 && a->tmap_count != n) {
    run_error("%s %d '%s': parameter %zu holds %zu tensor maps, %zu buffers listed (list one "
              "for all, or %zu)", a->option, a->position, a->spec, i, n, a->tmap_count, n);
    return 2;
  }
  for (size_t e = 0; e < n; e++) {
    char name[RUNARG_NAME_MAX];
    runarg_tmap_buffer(a, a->tmap_count == 1 ? 0 : e, name);
    long b = run_find_buffer(st, name);
    gcl_tensormap_options o;
    int64_t strides[RUNARG_MAX_RANK];
    DLTensor t;
    run_tensor(&st->args[b], st->buffers[b].base, st->device, strides, &t);
    if (!run_tmap_options(a, &st->args[b], &o)) return 2;
    const gcl_layout *l = gcl_args_layout(st->packed);
    const DLTensor *tp = &t;
    gcl_field f, m;
    if (gcl_layout_param_field(l, i, &f) != GCL_OK ||
        (f.info.kind == GCL_PARAM_ARRAY && gcl_layout_element_field(l, &f, e, &m) != GCL_OK) ||
        gcl_args_set_tensormaps(st->packed, st->ctx, f.info.kind == GCL_PARAM_ARRAY ? &m : &f, 1,
                                &tp, &o, 1, 0) != GCL_OK)
      return arg_fail(a);
  }
  return 0;
}

/* Buffers first: tensor maps point into them. */
static int bind_all(run_state *st) {
  int rc = 0;
  for (size_t i = 0; !rc && i < st->nargs; i++)
    if (st->args[i].kind == RUNARG_BUFFER) rc = setup_buffer(st, i);
  for (size_t i = 0; !rc && i < st->nparams; i++) {
    const runarg *a = &st->args[i];
    if (a->kind == RUNARG_FIELDS) continue; /* run_set_fields, below */
    if (a->kind == RUNARG_TMAP) rc = setup_tmap(st, i);
    else if (a->kind != RUNARG_BUFFER &&
             gcl_args_set(st->packed, i, a->kind == RUNARG_HEX ? a->bytes : a->value,
                          a->size) != GCL_OK)
      rc = arg_fail(a);
  }
  if (!rc && run_set_fields(st, st->packed, 0, st->ctx) != GCL_OK) rc = 2;
  return rc;
}

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* Each launch is timed alone, two ways: CUDA events recorded around it on the default stream
 * (the kernel's time on the device's clock) and the host clock around gcl_launch + synchronize
 * (which includes the launch overhead, a few microseconds). */
static int launch_all(run_state *st) {
  gcl_launch_config c;
  memset(&c, 0, sizeof c);
  memcpy(c.grid, st->grid, sizeof c.grid);
  memcpy(c.block, st->block, sizeof c.block);
  memcpy(c.cluster, st->cluster, sizeof c.cluster);
  c.shared_bytes = st->shared_bytes;
  if (!(st->times_us = calloc((size_t)st->repeat, sizeof *st->times_us)) ||
      !(st->kernel_us = calloc((size_t)st->repeat, sizeof *st->kernel_us)))
    return run_error("out of host memory for %d times", st->repeat), 1;
  gcl_event *start = NULL, *stop = NULL; /* on the context's default stream, as the launch */
  if (gcl_event_create(st->ctx, &start) != GCL_OK || gcl_event_create(st->ctx, &stop) != GCL_OK) {
    gcl_event_destroy(start);
    return fail("timer");
  }
  int rc = 0;
  for (int r = -st->warmup; !rc && r < st->repeat; r++) {
    double t0 = now_us(), us = 0;
    if (gcl_event_record(start, NULL) != GCL_OK) rc = fail("timer");
    else if (gcl_launch(st->k, &c, st->packed) != GCL_OK) rc = fail("launch");
    else if (gcl_event_record(stop, NULL) != GCL_OK) rc = fail("timer");
    else if (gcl_context_synchronize(st->ctx) != GCL_OK) rc = fail("kernel");
    else if (gcl_event_elapsed_us(start, stop, &us) != GCL_OK) rc = fail("timer");
    else if (r >= 0) st->times_us[r] = now_us() - t0, st->kernel_us[r] = us;
  }
  gcl_event_destroy(start);
  gcl_event_destroy(stop);
  return rc;
}

static int download_and_save(run_state *st) {
  for (size_t i = 0; i < st->nargs; i++) {
    const runarg *a = &st->args[i];
    run_buffer *b = &st->buffers[i];
    if (a->kind == RUNARG_BUFFER &&
        gcl_mem_download(st->ctx, b->host, b->base + a->offset * a->size, b->view_bytes) != GCL_OK)
      return arg_fail(a);
  }
  for (size_t o = 0; o < st->nouts; o++) {
    long i = run_find_buffer(st, st->outs[o].name);
    FILE *f = fopen(st->outs[o].path, "wb");
    bool ok = f && fwrite(st->buffers[i].host, 1, st->buffers[i].view_bytes, f) ==
                       st->buffers[i].view_bytes;
    if (f && fclose(f)) ok = false;
    if (!ok) return run_error("--out %s=%s: %s", st->outs[o].name, st->outs[o].path, strerror(errno)), 1;
  }
  return 0;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

/* JSON has no NaN or infinity: null. digits: 17 for sums (round-trips a double), 9 for elements
 * (round-trips a float). */
static void print_number(FILE *f, double v, bool json, int digits) {
  if (json && !isfinite(v)) fputs("null", f);
  else fprintf(f, "%.*g", digits, v);
}

static void print_buffer(const run_state *st, size_t i, bool json) {
  const runarg *a = &st->args[i];
  const run_buffer *b = &st->buffers[i];
  uint64_t shown = a->count < 8 ? a->count : 8;
  double sum = runarg_sum(a->type, b->host, a->count);
  unsigned long long h = (unsigned long long)runarg_fnv1a(b->host, b->view_bytes);
  if (json) {
    printf("{\"option\": \"%s\", \"position\": %d, \"name\": \"%s\", \"type\": \"%s\", \"shape\": [",
           a->option, a->position, a->path[0] ? a->path : a->name, runarg_type_name(a->type));
    for (size_t d = 0; d < a->rank; d++) printf("%s%llu", d ? ", " : "", (unsigned long long)a->shape[d]);
    printf("], \"offset\": %llu, \"sum\": ", (unsigned long long)a->offset);
    print_number(stdout, sum, true, 17);
    printf(", \"fnv1a\": \"0x%016llx\", \"first\": [", h);
  } else {
    printf("buffer %s (%s %d) %s[%llu]@%llu  sum %.17g  fnv1a 0x%016llx  first",
           a->path[0] ? a->path : a->name[0] ? a->name : "-", a->option, a->position, runarg_type_name(a->type),
           (unsigned long long)a->count, (unsigned long long)a->offset, sum, h);
  }
  for (uint64_t e = 0; e < shown; e++) {
    fputs(json ? (e ? ", " : "") : " ", stdout);
    print_number(stdout, runarg_element(a->type, b->host, e), json, 9);
  }
  fputs(json ? "]}" : "\n", stdout);
}

static void print_dim3(const char *key, const unsigned d[3], bool json) {
  if (json) printf(", \"%s\": [%u, %u, %u]", key, d[0], d[1], d[2]);
  else printf("  %s %u,%u,%u", key, d[0], d[1], d[2]);
}

typedef struct run_times { double median, min, max; } run_times;

static run_times summarize(double *v, size_t n) {
  qsort(v, n, sizeof *v, cmp_double);
  run_times t = {n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v[0], v[n - 1]};
  return t;
}

static void report(run_state *st) {
  size_t n = (size_t)st->repeat, bytes = gcl_layout_size(gcl_args_layout(st->packed));
  run_times host = summarize(st->times_us, n), kernel = summarize(st->kernel_us, n);
  bool json = st->json;
  if (json) {
    printf("{\"module\": ");
    run_json_string(stdout, st->module);
    printf(", \"kernel\": ");
    run_json_string(stdout, st->kernel);
    printf(", \"launched\": true, \"device\": %d, \"sm\": %d", st->device, gcl_context_sm(st->ctx));
  } else {
    printf("kernel %s (%s) on device %d, sm_%d\n", st->kernel, st->module, st->device,
           gcl_context_sm(st->ctx));
  }
  print_dim3("grid", st->grid, json);
  print_dim3("block", st->block, json);
  print_dim3("cluster", st->cluster, json);
  if (json) {
    printf(", \"shared_bytes\": %zu, \"param_bytes\": %zu, \"seed\": %llu, \"repeat\": %d, "
           "\"warmup\": %d, \"kernel_us\": {\"median\": %.3f, \"min\": %.3f, \"max\": %.3f}, "
           "\"time_us\": {\"median\": %.3f, \"min\": %.3f, \"max\": %.3f}, \"buffers\": [",
           st->shared_bytes, bytes, (unsigned long long)st->seed, st->repeat, st->warmup,
           kernel.median, kernel.min, kernel.max, host.median, host.min, host.max);
  } else {
    printf("  smem %zu  params %zu bytes  seed %llu\n", st->shared_bytes, bytes,
           (unsigned long long)st->seed);
  }
  bool first = true;
  for (size_t i = 0; i < st->nargs; i++) {
    if (st->args[i].kind != RUNARG_BUFFER) continue;
    if (json && !first) fputs(", ", stdout);
    print_buffer(st, i, json);
    first = false;
  }
  if (json) printf("]}\n");
  else {
    printf("kernel time: median %.3f us over %d launch%s (min %.3f, max %.3f; CUDA events)\n",
           kernel.median, st->repeat, st->repeat == 1 ? "" : "es", kernel.min, kernel.max);
    printf("host time:   median %.3f us (min %.3f, max %.3f; host clock around launch + "
           "synchronize)\n", host.median, host.min, host.max);
  }
}

static void release_device(run_state *st) {
  for (size_t i = 0; i < st->nargs; i++) {
    if (st->buffers[i].base) gcl_mem_free(st->ctx, st->buffers[i].base);
    free(st->buffers[i].host);
  }
  gcl_args_destroy(st->packed);
  gcl_module_destroy(st->mod); /* its kernels with it */
  gcl_context_destroy(st->ctx);
  free(st->times_us);
  free(st->kernel_us);
  for (size_t i = 0; i < st->nargs; i++) { /* --devices: the next device starts afresh */
    st->buffers[i].base = 0;
    st->buffers[i].host = NULL;
  }
  st->packed = NULL, st->mod = NULL, st->k = NULL, st->ctx = NULL, st->times_us = NULL;
  st->kernel_us = NULL;
}

int run_on_device(run_state *st) {
  int rc = load_kernel(st);
  if (!rc) rc = bind_all(st);
  if (!rc) rc = launch_all(st);
  if (!rc) rc = download_and_save(st);
  if (!rc) report(st);
  release_device(st);
  return rc;
}
