/* gclaunch's re-points against the driver's cuTensorMapReplaceAddress (tmap_patch_diff.h). */
#include "tmap_patch_diff.h"

#include <cuda.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "tmap_field.h"

#define MAPS 8
#define LIMIT (1ull << 57) /* the driver's address bound (docs/tensormap-rules.md, rule 26) */

typedef CUresult (*get_proc_fn)(const char *, void **, int, cuuint64_t,
                                CUdriverProcAddressQueryResult *);
typedef CUresult (*replace_fn)(CUtensorMap *, void *);

static replace_fn resolve(FILE *out) {
  const char *path = getenv("GCL_LIBCUDA");
  void *lib = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  get_proc_fn get = lib ? (get_proc_fn)dlsym(lib, "cuGetProcAddress_v2") : NULL;
  CUdriverProcAddressQueryResult q = 0;
  void *p = NULL;
  if (get) get("cuTensorMapReplaceAddress", &p, 12000, 0, &q);
  if (!p) fprintf(out, "tmap_patch_diff: no cuTensorMapReplaceAddress in %s\n",
                  path ? path : "libcuda.so.1");
  return (replace_fn)p;
}

/* A fresh address for a map of alignment align: random bits below 2^57 mostly, the ends and
 * smaller (allocation-like) ones too; never 0. */
static uint64_t fresh_address(tmap_gen *g, unsigned align) {
  uint64_t a;
  switch (tmap_gen_below(g, 16)) {
  case 0: return align;
  case 1: return LIMIT - align;
  case 2: case 3:
    a = ((uint64_t)tmap_gen_below(g, 1u << 30) << 10) | tmap_gen_below(g, 1u << 10);
    break;
  default:
    a = ((uint64_t)tmap_gen_below(g, 1u << 29) << 28) | tmap_gen_below(g, 1u << 28);
  }
  a &= (LIMIT - 1u) & ~(uint64_t)(align - 1u);
  return a ? a : align;
}

typedef struct rig {
  gcl_context *ctx;
  gcl_signature *sig;
  gcl_layout *layout;
  gcl_args *args;
  size_t maps_at;
  replace_fn replace;
} rig;

static const unsigned char *map_at(const rig *r, size_t i) {
  const void *data;
  size_t size;
  if (gcl_args_buffer(r->args, &data, &size) != GCL_OK) return NULL;
  return (const unsigned char *)data + r->maps_at + 128 * i;
}

static void report(FILE *out, const tmap_case *c, uint64_t a, size_t byte, bool refresh,
                   const unsigned char *got, const unsigned char *want) {
  char desc[1024];
  tmap_case_format(c, desc, sizeof desc);
  fprintf(out, "  DIFFERS: %s to 0x%llx, byte %zu: gclaunch 0x%02x, driver 0x%02x\n    %s\n",
          refresh ? "refresh" : "re-point", (unsigned long long)a, byte, got[byte], want[byte],
          desc);
}

/* One round: every map to a fresh address (one in eight stays), by gclaunch and by the
 * driver's replace of the copies; compared. mixed (a refresh): map 0 also gets another L2
 * promotion, so that gclaunch encodes it and re-points the others inside the same batch (the
 * plan's path rather than the walk of moves alone); its copy is then a fresh encode at the new
 * address (gcl_tensormap_encode: the driver's encode) and is not counted. -1 when a call failed. */
static int round_once(rig *r, tmap_gen *g, tmap_case *c, CUtensorMap *ref, bool refresh,
                      bool mixed, const tmap_patch_diff_options *o, FILE *out,
                      tmap_patch_diff_result *res) {
  uint64_t a[MAPS];
  const DLTensor *t[MAPS];
  gcl_tensormap_options opt[MAPS];
  for (size_t i = 0; i < MAPS; i++) {
    unsigned align = c[i].o.interleave == GCL_TENSORMAP_INTERLEAVE_32B ? 32u : 16u;
    uint64_t now = (uint64_t)(uintptr_t)c[i].t.data + c[i].t.byte_offset;
    a[i] = tmap_gen_below(g, 8) ? fresh_address(g, align) : now;
    c[i].t.data = (void *)(uintptr_t)a[i], c[i].t.byte_offset = 0;
    if (mixed && i == 0) c[0].o.l2_promotion = (c[0].o.l2_promotion + 1) % 4;
    t[i] = &c[i].t, opt[i] = c[i].o;
    if (mixed && i == 0) {
      if (gcl_tensormap_encode(r->ctx, &c[0].t, &c[0].o, &ref[0]) != GCL_OK)
        return fprintf(out, "tmap_patch_diff: %s\n", gcl_last_error()), -1;
    } else if (r->replace(&ref[i], (void *)(uintptr_t)a[i]) != CUDA_SUCCESS) {
      fprintf(out, "tmap_patch_diff: the driver refused the re-point to 0x%llx\n",
              (unsigned long long)a[i]);
      return -1;
    }
  }
  const gcl_field *f = TMAP_FIELD(r->args, 0, 0);
  gcl_status s = refresh ? gcl_args_set_tensormaps(r->args, r->ctx, f, MAPS, t, opt, MAPS,
                                                   GCL_TENSORMAP_REFRESH)
                         : gcl_args_repoint_tensormaps(r->args, r->ctx, f, MAPS, a);
  if (s != GCL_OK) return fprintf(out, "tmap_patch_diff: %s\n", gcl_last_error()), -1;
  for (size_t i = mixed ? 1 : 0; i < MAPS; i++) {
    const unsigned char *got = map_at(r, i), *want = (const unsigned char *)&ref[i];
    res->repoints++, res->by_interleave[c[i].o.interleave]++;
    res->im2col += c[i].o.im2col.pixels != 0;
    for (size_t b = 0; b < 128; b++)
      if (got[b] != want[b]) {
        if (res->differ++ < o->show) report(out, &c[i], a[i], b, refresh, got, want);
        break;
      }
  }
  return 0;
}

/* MAPS fresh descriptions set by gclaunch, their copies, then the rounds. */
static int batch(rig *r, tmap_gen *g, const tmap_patch_diff_options *o, FILE *out,
                 tmap_patch_diff_result *res) {
  tmap_case c[MAPS];
  CUtensorMap ref[MAPS];
  const DLTensor *t[MAPS];
  gcl_tensormap_options opt[MAPS];
  for (size_t i = 0; i < MAPS; i++) {
    uint64_t mem = fresh_address(g, 4096) & ~(uint64_t)4095u; /* + a byte_offset below 4 KiB */
    tmap_gen_valid(g, &c[i], mem ? mem : 4096, tmap_gen_below(g, 3) == 0);
    t[i] = &c[i].t, opt[i] = c[i].o;
  }
  if (gcl_args_set_tensormaps(r->args, r->ctx, TMAP_FIELD(r->args, 0, 0), MAPS, t, opt, MAPS,
                              0) != GCL_OK)
    return fprintf(out, "tmap_patch_diff: %s\n", gcl_last_error()), -1;
  for (size_t i = 0; i < MAPS; i++) memcpy(&ref[i], map_at(r, i), 128);
  res->descriptions += MAPS;
  int rounds = o->rounds ? o->rounds : 4;
  for (int k = 0; k < rounds; k++)
    if (round_once(r, g, c, ref, k % 2 == 1, k % 4 == 3, o, out, res)) return -1;
  return 0;
}

static int open_rig(rig *r, gcl_context *ctx, FILE *out) {
  memset(r, 0, sizeof *r);
  r->ctx = ctx;
  if (!(r->replace = resolve(out))) return -1;
  if (gcl_signature_parse("grid_constant tensormap[8] maps, u32 n", &r->sig) ||
      gcl_layout_create(r->sig, gcl_context_sm(ctx), &r->layout) ||
      gcl_args_create(r->layout, &r->args) ||
      gcl_layout_param(r->layout, 0, &r->maps_at, NULL, NULL) ||
      gcl_args_set_u32(r->args, 1, 0) || gcl_context_bind(ctx))
    return fprintf(out, "tmap_patch_diff: %s\n", gcl_last_error()), -1;
  return 0;
}

static void close_rig(rig *r) {
  gcl_args_destroy(r->args);
  gcl_layout_destroy(r->layout);
  gcl_signature_destroy(r->sig);
}

int tmap_patch_diff_run(gcl_context *ctx, const tmap_patch_diff_options *o, FILE *out,
                        tmap_patch_diff_result *res) {
  memset(res, 0, sizeof *res);
  rig r;
  tmap_gen g;
  tmap_gen_seed(&g, o->seed);
  int rc = open_rig(&r, ctx, out);
  if (!rc && gcl_tensormap_repoint_path(ctx, &res->path) != GCL_OK)
    rc = -1, fprintf(out, "tmap_patch_diff: %s\n", gcl_last_error());
  if (!rc)
    fprintf(out, "re-point path: patched interleaves 0x%x, %d checks, %d mismatches: %s\n",
            res->path.patched, res->path.checks, res->path.mismatches, res->path.reason);
  for (long n = 0; !rc && n < o->count; n += MAPS) rc = batch(&r, &g, o, out, res);
  close_rig(&r);
  if (rc) return rc;
  fprintf(out, "%ld descriptions, %ld re-points compared (interleave none %ld, 16B %ld, 32B %ld; "
          "im2col %ld): %ld differ from cuTensorMapReplaceAddress\n", res->descriptions,
          res->repoints, res->by_interleave[0], res->by_interleave[1], res->by_interleave[2],
          res->im2col, res->differ);
  return 0;
}
