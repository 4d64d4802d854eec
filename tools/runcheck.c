/* gclaunch run: the checks against the module file itself, on the CPU, before any GPU is needed.
 * The architecture is --arch's, else the device's when there is one, else the image's own (a
 * cubin's, a fatbin's highest cubin, a PTX's .target); the kernel's signature, parameter sizes,
 * launch configuration and tensor-map lists are checked against what the image records for it. */
#include "climodule.h"
#include "run.h"

#include <stdlib.h>
#include <string.h>

/* Maximum shared memory per block (opt-in) of the architecture, in bytes, from the library's
 * table of architectures (gcl_arch_query). 0: not known there (not checked). */
static long shared_limit(int sm) {
  gcl_arch_info a;
  return gcl_arch_query(sm, &a) == GCL_OK ? (long)a.shared_optin_bytes : 0;
}

/* --arch, else the device's architecture when a driver and the device are there (no context is
 * made: gcl_device_query only). 0: the image's own. */
static int target_arch(run_state *st) {
  if (st->arch) return st->arch_from = "--arch", st->arch;
  int count = 0, dev = st->device;
  if (st->devices_given) dev = st->devices.all || !st->devices.count ? 0 : st->devices.list[0];
  gcl_device_info info;
  if (gcl_driver_init() != GCL_OK || gcl_device_count(&count) != GCL_OK || dev >= count ||
      gcl_device_query(dev, &info) != GCL_OK)
    return 0;
  st->device_shared_limit = info.max_shared_per_block_optin;
  st->arch_from = "the device";
  return info.sm;
}

/* A cubin runs on its own architecture and later minors of the same major. */
static bool arch_fits(const run_state *st, const gcl_image *img, int want) {
  int own = gcl_image_sm(img);
  if (gcl_image_format(img) != GCL_IMAGE_CUBIN || !want || (own / 10 == want / 10 && own <= want))
    return true;
  run_error("MODULE '%s' is a cubin for sm_%d; it cannot run on sm_%d (%s)", st->module, own, want,
            st->arch_from);
  return false;
}

/* The image of st->module for the target architecture, with the kernel found in it. -1 to go
 * on, else the exit status. */
int run_read_module(run_state *st, gcl_image **img, size_t *k) {
  int want = target_arch(st);
  if (!cli_module_read("run", st->module, want, img)) return 1;
  if (!arch_fits(st, *img, want) || !cli_kernel_find("run", *img, st->module, st->kernel, k)) return 1;
  if (!st->arch_from) st->arch_from = "the module's own";
  st->sm = gcl_image_sm(*img);
  gcl_image_kernel_info info;
  if (gcl_image_kernel(*img, *k, &info) != GCL_OK || !(st->kernel_name = strdup(info.name)))
    return run_error("out of memory"), 1;
  return -1;
}

static bool dims_ok(const char *opt, const unsigned d[3], const unsigned max[3]) {
  for (int i = 0; i < 3; i++)
    if (d[i] > max[i]) {
      run_error("%s %u,%u,%u: dimension %d is %u, at most %u", opt, d[0], d[1], d[2], i, d[i], max[i]);
      return false;
    }
  return true;
}

/* Threads per block against the device limits and the kernel's own (.maxntid / .reqntid). */
static bool check_block(const run_state *st, const gcl_image_kernel_info *info) {
  static const unsigned block_max[3] = {1024, 1024, 64}, grid_max[3] = {2147483647u, 65535, 65535};
  if (!dims_ok("--grid", st->grid, grid_max) || !dims_ok("--block", st->block, block_max)) return false;
  unsigned long long threads = (unsigned long long)st->block[0] * st->block[1] * st->block[2];
  const int *r = info->reqntid;
  if (r[0] > 0 && (st->block[0] != (unsigned)r[0] || st->block[1] != (unsigned)(r[1] ? r[1] : 1) ||
                   st->block[2] != (unsigned)(r[2] ? r[2] : 1))) {
    run_error("--block %u,%u,%u: kernel '%s' requires exactly %d,%d,%d threads (reqntid in '%s')",
              st->block[0], st->block[1], st->block[2], st->kernel, r[0], r[1] ? r[1] : 1,
              r[2] ? r[2] : 1, st->module);
    return false;
  }
  int max = info->max_threads > 0 ? info->max_threads : 1024;
  if (threads <= (unsigned long long)max) return true;
  run_error("--block %u,%u,%u: %llu threads, kernel '%s' allows at most %d per block (%s)",
            st->block[0], st->block[1], st->block[2], threads, st->kernel, max,
            info->max_threads > 0 ? "its max threads / maxntid in the module" : "the device limit");
  return false;
}

static bool check_cluster(const run_state *st) {
  if (!st->cluster[0]) return true;
  if (st->sm < 90) {
    run_error("--cluster %u,%u,%u: thread block clusters need sm_90 or later, the kernel is for "
              "sm_%d", st->cluster[0], st->cluster[1], st->cluster[2], st->sm);
    return false;
  }
  for (int i = 0; i < 3; i++)
    if (st->grid[i] % st->cluster[i]) {
      run_error("--cluster %u,%u,%u: dimension %d (%u) does not divide --grid's (%u)",
                st->cluster[0], st->cluster[1], st->cluster[2], i, st->cluster[i], st->grid[i]);
      return false;
    }
  return true;
}

static bool check_shared(const run_state *st, const gcl_image_kernel_info *info) {
  long limit = st->device_shared_limit > 0 ? st->device_shared_limit : shared_limit(st->sm);
  long stat = info->shared_bytes > 0 ? info->shared_bytes : 0;
  /* From sm_80 on, a cubin's .nv.shared.<kernel> holds the 1 KB a block reserves for the system
   * (0x400 for every kernel of kernels/launchcfg.cu, shared variables or not); the opt-in limit
   * already leaves it out. */
  if (st->sm >= 80 && stat >= 1024) stat -= 1024;
  if (!limit || (unsigned long long)stat + st->shared_bytes <= (unsigned long long)limit) return true;
  run_error("--smem %zu: with the kernel's %ld bytes of static shared memory that is %llu bytes, "
            "more than the %ld bytes a block can have on sm_%d", st->shared_bytes, stat,
            (unsigned long long)stat + st->shared_bytes, limit, st->sm);
  return false;
}

/* Grid, block, cluster and shared memory against the kernel's records and the architecture. */
bool run_check_config(const run_state *st, const gcl_image *img, size_t k) {
  gcl_image_kernel_info info;
  if (gcl_image_kernel(img, k, &info) != GCL_OK) return run_error("%s", gcl_last_error()), false;
  return check_block(st, &info) && check_cluster(st) && check_shared(st, &info);
}

/* Each tmap argument lists one buffer (for every element) or exactly N of a tensormap[N]. */
bool run_check_tmap_counts(const run_state *st, const gcl_layout *layout) {
  for (size_t i = 0; i < st->nparams; i++) {
    const runarg *a = &st->args[i];
    gcl_field f;
    if (a->kind != RUNARG_TMAP || gcl_layout_param_field(layout, i, &f) != GCL_OK) continue;
    const gcl_param_info p = f.info;
    size_t n = p.kind == GCL_PARAM_ARRAY ? p.count
               : p.kind == GCL_PARAM_BYTES && p.size % GCL_TENSORMAP_BYTES == 0 ? p.size / GCL_TENSORMAP_BYTES : 1;
    if (a->tmap_count == 1 || a->tmap_count == n) continue;
    run_error("%s %d '%s': parameter %zu '%s' holds %zu tensor maps, %zu buffers listed (list one "
              "for all, or %zu)", a->option, a->position, a->spec, i, p.name ? p.name : "", n,
              a->tmap_count, n);
    return false;
  }
  return true;
}

/* A scalar spec must name the parameter's own type: f32:1 into an i32 has the right size and the
 * wrong bits. */
static bool check_kind(const runarg *a, size_t i, const gcl_param_info *p) {
  const char *want = NULL;
  if (p->kind == GCL_PARAM_BYTES) return true; /* untyped bytes take any value of their size */
  gcl_param_kind k = p->kind == GCL_PARAM_ARRAY ? p->elem_kind : p->kind;
  if (a->kind == RUNARG_SCALAR && (p->kind != GCL_PARAM_SCALAR || p->scalar != a->type))
    want = p->kind == GCL_PARAM_SCALAR ? runarg_type_name(p->scalar) : "not a scalar";
  else if (a->kind == RUNARG_BUFFER && p->kind != GCL_PARAM_POINTER) want = "not a pointer";
  else if (a->kind == RUNARG_TMAP && k != GCL_PARAM_TENSORMAP) want = "not a tensormap";
  if (!want) return true;
  static const char *const kinds[] = {"a scalar", "a buffer", "a tensor map", "bytes"};
  run_error("%s %d '%s': parameter %zu '%s' is %s, the argument is %s", a->option, a->position,
            a->spec, i, p->name ? p->name : "", want,
            a->kind == RUNARG_SCALAR ? runarg_type_name(a->type) : kinds[a->kind]);
  return false;
}

typedef struct unset_leaf { const gcl_args *args; size_t param; char path[512]; } unset_leaf;

/* Stops at the first leaf of u->param that was never set, keeping its path. */
static int find_unset(const gcl_field *leaf, const char *path, void *user) {
  unset_leaf *u = user;
  if (leaf->param != u->param || gcl_args_field_is_set(u->args, leaf)) return 0;
  snprintf(u->path, sizeof u->path, "%s", path);
  return 1;
}

/* Every parameter that field specs set must be whole: each of its leaves set by some spec. */
static bool fields_complete(const run_state *st, const gcl_args *args) {
  for (size_t i = 0; i < st->nparams; i++) {
    if (st->args[i].kind != RUNARG_FIELDS || gcl_args_is_set(args, i)) continue;
    unset_leaf u = {.args = args, .param = i};
    gcl_layout_visit_leaves(gcl_args_layout(args), find_unset, &u);
    run_error("the field specs leave a leaf unset: field '%s' was never set", u.path);
    return false;
  }
  return true;
}

/* Packs every scalar, hex and buffer argument into args on the CPU (buffers at stand-in device
 * addresses), so the library's own checks -- sizes, dtypes, alignment of offset views -- run
 * before any GPU is needed. Tensor maps were checked by check_tmap (run.c). */
static bool pack_on_cpu(const run_state *st, const gcl_layout *layout) {
  gcl_args *args = NULL;
  if (gcl_args_create(layout, &args) != GCL_OK) return run_error("%s", gcl_last_error()), false;
  bool ok = true;
  for (size_t i = 0; ok && i < st->nparams; i++) {
    const runarg *a = &st->args[i];
    if (a->kind == RUNARG_FIELDS) continue; /* set below, by run_set_fields */
    gcl_field f;
    gcl_status s = gcl_layout_param_field(layout, i, &f);
    if (s == GCL_OK && !(ok = check_kind(a, i, &f.info))) break;
    if (s == GCL_OK && a->kind == RUNARG_SCALAR) s = gcl_args_set(args, i, a->value, a->size);
    if (s == GCL_OK && a->kind == RUNARG_HEX) s = gcl_args_set(args, i, a->bytes, a->size);
    if (s == GCL_OK && a->kind == RUNARG_BUFFER)
      s = run_bind_buffer(args, i, a, UINT64_C(1) << 32, st->device);
    if (s != GCL_OK) ok = false, run_error("%s %d '%s': %s", a->option, a->position, a->spec, gcl_last_error());
  }
  if (ok) ok = run_set_fields(st, args, UINT64_C(1) << 32, NULL) == GCL_OK;
  ok = ok && fields_complete(st, args);
  gcl_args_destroy(args);
  return ok;
}

/* The signature laid out for st->sm (not a fixed architecture: sm_100 places a first tensor map
 * at 0, sm_90 at 112, so a full tensormap[255] fits on one and not the other). */
static int signature_layout(const run_state *st, const gcl_image *img, size_t k, gcl_layout **out) {
  gcl_signature *sig = NULL;
  int rc = -1;
  if (gcl_signature_parse(st->signature, &sig) != GCL_OK)
    rc = 2, run_error("--signature '%s': %s", st->signature, gcl_last_error());
  else if (gcl_layout_create(sig, st->sm, out) != GCL_OK)
    rc = 2, run_error("--signature '%s' on sm_%d: %s", st->signature, st->sm, gcl_last_error());
  else if (!cli_signature_check("run", img, k, *out, st->module))
    rc = 1;
  gcl_signature_destroy(sig);
  return rc;
}

/* Kernel k's parameter offsets and sizes as the image records them, as a raw layout. */
static int image_layout(const run_state *st, const gcl_image *img, size_t k, gcl_layout **out) {
  gcl_image_kernel_info info;
  gcl_status s = gcl_image_kernel(img, k, &info);
  size_t n = s == GCL_OK ? info.param_count : 0;
  size_t *offsets = calloc(n + 1, sizeof *offsets), *sizes = calloc(n + 1, sizeof *sizes);
  if (!offsets || !sizes) s = GCL_ERROR_OUT_OF_MEMORY;
  for (size_t p = 0; s == GCL_OK && p < n; p++)
    s = gcl_image_param(img, k, p, &offsets[p], &sizes[p], NULL);
  if (s == GCL_OK) s = gcl_layout_create_raw(n, offsets, sizes, st->sm, out);
  if (s != GCL_OK) run_error("%s '%s': %s", st->module, st->kernel, gcl_last_error());
  free(offsets), free(sizes);
  return s == GCL_OK ? -1 : 1;
}

int run_check_args(run_state *st, const gcl_image *img, size_t k) {
  gcl_layout *layout = NULL;
  int rc = st->signature ? signature_layout(st, img, k, &layout) : image_layout(st, img, k, &layout);
  if (rc < 0) rc = run_place_fields(st, layout);
  if (rc < 0 && gcl_layout_count(layout) != st->nparams) {
    rc = 2;
    if (st->signature)
      run_error("--signature has %zu parameters, %zu --arg given", gcl_layout_count(layout), st->nparams);
    else
      run_error("kernel '%s' has %zu parameters in '%s', %zu --arg given", st->kernel,
                gcl_layout_count(layout), st->module, st->nparams);
  }
  if (rc < 0 && !(run_check_tmap_counts(st, layout) && pack_on_cpu(st, layout))) rc = 2;
  gcl_layout_destroy(layout);
  return rc;
}
