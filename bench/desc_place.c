/* bench_descriptors: the descriptor placements (see desc.h and kernels/descbench.cu). A runner
 * is one placement set up for one configuration on one tensor set: open it, launch it (H
 * re-encodes and uploads its table first), re-point it at another tensor set, verify and time
 * it, close it. */
#include <dlfcn.h>
#include <string.h>

#include "bench_util.h"
#include "desc.h"

const char *const placement_names[PL_COUNT] = {"P", "S", "G", "G+prefetch", "D", "H", "C", "T"};

double desc_now_s(void) { return bench_now_ns() / 1e9; }

uint32_t desc_cols(const config *c) { return c->cols ? c->cols : 4096; }

/* Rows per source tensor: a multiple of box_h with k * rows * cols * esize >= min_bytes. */
static uint32_t rows_for(const config *c) {
  size_t min = c->min_bytes ? c->min_bytes : (size_t)1 << 30;
  size_t row = (size_t)desc_cols(c) * (c->bits / 8), per_k = (size_t)c->k * row;
  size_t rows = (min + per_k - 1) / per_k;
  return (uint32_t)((rows + c->box_h - 1) / c->box_h * c->box_h);
}

size_t desc_bytes(const config *c) {
  return (size_t)c->k * rows_for(c) * desc_cols(c) * (c->bits / 8);
}

/* The smallest even b >= 2 with 2^b >= n: the shuffle's Feistel width. */
static uint32_t perm_bits(uint32_t n) {
  uint32_t b = 2;
  while (b < 32 && ((uint64_t)1 << b) < n) b += 2;
  return b;
}

shape desc_shape(const bench *b, const config *c, uint32_t *grid) {
  shape s = {0};
  s.k = c->k;
  s.rows = rows_for(c);
  s.box_w = c->box_w;
  s.box_h = c->box_h;
  s.tiles_x = desc_cols(c) / c->box_w;
  s.tiles_per_tensor = s.tiles_x * (s.rows / c->box_h);
  s.tile_bytes = c->box_w * c->box_h * (c->bits / 8);
  s.boxes = c->ring.boxes ? c->ring.boxes : 1;
  s.order = c->order;
  s.perm_bits = perm_bits(s.k * s.tiles_per_tensor);
  const uint32_t smem = SMEM_PER_SM;
  uint32_t dflt = smem / s.tile_bytes >= 4 ? 4 : smem / s.tile_bytes ? smem / s.tile_bytes : 1;
  s.stages = c->ring.stages ? c->ring.stages : dflt;
  s.lag = c->ring.stages ? c->ring.lag : s.stages > 1;
  uint32_t per_sm = c->ring.per_sm ? c->ring.per_sm : smem / (s.stages * s.boxes * s.tile_bytes);
  *grid = (uint32_t)b->sms * (per_sm ? per_sm : 1);
  return s;
}

/* --- the tensors ------------------------------------------------------------------------------ */

/* Points tensor i < k at source i of the set at src, tensor k at the destination at dst. */
static void retarget(runner *r, uint64_t src, uint64_t dst) {
  size_t tensor_bytes = r->bytes / r->c.k;
  r->src = src;
  r->dst = dst;
  for (uint32_t i = 0; i <= r->c.k; i++) {
    r->addr[i] = i < r->c.k ? src + i * tensor_bytes : dst;
    r->t[i].data = (void *)(uintptr_t)r->addr[i];
  }
}

static void make_tensors(runner *r) {
  uint32_t n = r->c.k + 1;
  r->t = calloc(n, sizeof *r->t);
  r->tp = calloc(n, sizeof *r->tp);
  r->shp = calloc(2 * (size_t)n, sizeof *r->shp);
  r->addr = calloc(n, sizeof *r->addr);
  for (uint32_t i = 0; i < n; i++) {
    DLTensor *t = &r->t[i];
    r->shp[2 * i] = i < r->c.k ? r->s.rows : (int64_t)r->s.rows * r->c.k;
    r->shp[2 * i + 1] = desc_cols(&r->c);
    t->device.device_type = kDLCUDA;
    t->ndim = 2;
    t->dtype = (DLDataType){r->c.code, r->c.bits, 1};
    t->shape = &r->shp[2 * i];
    r->tp[i] = t;
  }
  retarget(r, r->src, r->dst);
}

/* --- the tensor-map calls (the only two places that name them) ------------------------------ */

/* Map `first` of parameter index (a tensormap[N] or a single tensormap) as a field; each
 * parameter's map 0 is resolved once, as a program would, so the timed calls resolve nothing. */
static const gcl_field *map_field(runner *r, size_t index, size_t first, gcl_field *scratch) {
  const gcl_layout *l = gcl_kernel_layout(r->kern);
  if (!r->maps) {
    size_t n = gcl_layout_count(l);
    r->maps = calloc(n, sizeof *r->maps);
    if (!r->maps) CHECK(GCL_ERROR_OUT_OF_MEMORY);
    for (size_t i = 0; i < n; i++) {
      gcl_field p;
      CHECK(gcl_layout_param_field(l, i, &p));
      if (p.info.kind == GCL_PARAM_ARRAY) CHECK(gcl_layout_element_field(l, &p, 0, &r->maps[i]));
      else r->maps[i] = p;
    }
  }
  if (first == 0) return &r->maps[index];
  gcl_field p;
  CHECK(gcl_layout_param_field(l, index, &p));
  CHECK(gcl_layout_element_field(l, &p, first, scratch));
  return scratch;
}

/* Encodes tensors t[0 .. n) into elements first ... of parameter index. */
static void maps_set(runner *r, size_t index, size_t first, size_t n, const DLTensor **t) {
  gcl_field f;
  CHECK(gcl_args_set_tensormaps(r->args, r->b->ctx, map_field(r, index, first, &f), n, t, &r->o,
                                1, 0));
}

/* Re-points elements first ... first + n - 1 of parameter index at addr[0 .. n). */
static void maps_repoint(runner *r, size_t index, size_t first, size_t n, const uint64_t *addr) {
  gcl_field f;
  CHECK(gcl_args_repoint_tensormaps(r->args, r->b->ctx, map_field(r, index, first, &f), n, addr));
}

/* --- host tables (G, GP, H) ------------------------------------------------------------------- */

static void encode_table(runner *r) {
  for (uint32_t i = 0; i <= r->c.k; i++)
    CHECK(gcl_tensormap_encode(r->b->ctx, r->tp[i], &r->o, r->table + 128 * (size_t)i));
}

/* The driver's cuTensorMapReplaceAddress, from the libcuda.so.1 gclaunch loaded (NULL if none:
 * e.g. a fake driver); returns a CUresult. */
typedef int (*replace_fn)(void *map, void *address);
static replace_fn driver_replace(void) {
  static replace_fn fn;
  static int tried;
  if (!tried) {
    tried = 1;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    void *sym = lib ? dlsym(lib, "cuTensorMapReplaceAddress") : NULL;
    memcpy(&fn, &sym, sizeof fn);
  }
  return fn;
}

/* G's re-point on the host: the cheapest way, the driver's replace-address on each map (a full
 * encode where the driver has none). */
static void repoint_table(runner *r) {
  replace_fn fn = driver_replace();
  if (!fn) {
    encode_table(r);
    return;
  }
  for (uint32_t i = 0; i <= r->c.k; i++)
    if (fn(r->table + 128 * (size_t)i, (void *)(uintptr_t)r->addr[i]) != 0) {
      fprintf(stderr, "bench_descriptors: cuTensorMapReplaceAddress failed\n");
      exit(1);
    }
}

static void upload_table(runner *r) {
  CHECK(gcl_mem_upload_async(r->b->ctx, r->b->maps, r->table, 128 * (size_t)(r->c.k + 1),
                             r->b->stream));
}

/* C: the address of the module's __constant__ array (cuLibraryGetGlobal of the libcuda.so.1
 * gclaunch loaded; 0 without one, e.g. under a fake driver). */
typedef int (*get_global_fn)(uint64_t *dptr, size_t *bytes, void *library, const char *name);
static uint64_t const_maps(runner *r) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  void *sym = lib ? dlsym(lib, "cuLibraryGetGlobal") : NULL;
  get_global_fn fn;
  memcpy(&fn, &sym, sizeof fn);
  uint64_t at = 0;
  size_t bytes = 0;
  if (!fn || fn(&at, &bytes, gcl_module_cu_library(r->b->mod), "desc_const_maps") != 0 ||
      bytes < 128 * (size_t)(r->c.k + 1))
    return 0;
  return at;
}

static void upload_const(runner *r) {
  CHECK(gcl_mem_upload_async(r->b->ctx, r->const_at, r->table, 128 * (size_t)(r->c.k + 1),
                             r->b->stream));
}

static void upload_addresses(runner *r) {
  CHECK(gcl_mem_upload_async(r->b->ctx, r->b->addrs, r->addr, 8 * (size_t)(r->c.k + 1),
                             r->b->stream));
}

/* --- kernels and arguments -------------------------------------------------------------------- */

/* The kernel's name and signature; 1 when the placement has no kernel for this K. */
static int kernel_for(const runner *r, char *name, size_t name_size, char *sig, size_t sig_size) {
  uint32_t k = r->c.k;
  int param = r->pl == PL_P || r->pl == PL_S;
  if (param && k != 1 && k != 8 && k != 64 && k != 240) return 1;
  if (r->pl == PL_C && k + 1 > CONST_MAPS_MAX) return 1;
  switch (r->pl) {
  case PL_C:
    snprintf(name, name_size, "desc_const");
    snprintf(sig, sig_size, SHAPE_SIG);
    return 0;
  case PL_P:
    snprintf(name, name_size, "desc_param_%u", k + 1);
    snprintf(sig, sig_size, "grid_constant tensormap[%u] maps, " SHAPE_SIG, k + 1);
    return 0;
  case PL_S: {
    snprintf(name, name_size, "desc_sep_%u", k + 1);
    size_t at = 0;
    for (uint32_t i = 0; i <= k; i++)
      at += snprintf(sig + at, sig_size - at, "grid_constant tensormap, ");
    snprintf(sig + at, sig_size - at, "%s", SHAPE_SIG);
    return 0;
  }
  case PL_D:
    snprintf(name, name_size, "desc_device");
    snprintf(sig, sig_size, "grid_constant tensormap[2] tmpl, const u64* addrs, void* slots, "
             SHAPE_SIG);
    return 0;
  default:
    snprintf(name, name_size, r->pl == PL_GP ? "desc_global_prefetch" : "desc_global");
    snprintf(sig, sig_size, "const void* maps, " SHAPE_SIG);
    return 0;
  }
}

static size_t shape_index(const runner *r) {
  return r->pl == PL_S ? r->c.k + 1 : r->pl == PL_D ? 3 : r->pl == PL_C ? 0 : 1;
}

const char *desc_kernel_name(placement pl, uint32_t k, char *buf, size_t size) {
  runner r = {.pl = pl, .c = {.k = k}};
  char sig[32 * 260];
  return kernel_for(&r, buf, size, sig, sizeof sig) ? NULL : buf;
}

/* Puts the descriptors where the placement wants them. */
static void place_descriptors(runner *r) {
  uint32_t k = r->c.k;
  switch (r->pl) {
  case PL_P: maps_set(r, 0, 0, k + 1, r->tp); break;
  case PL_S:
    for (uint32_t i = 0; i <= k; i++) maps_set(r, i, 0, 1, r->tp + i);
    break;
  case PL_C:
    r->table = aligned_alloc(128, 128 * (size_t)(k + 1));
    encode_table(r);
    upload_const(r);
    break;
  case PL_D:
    maps_set(r, 0, 0, 1, r->tp);          /* the sources' template */
    maps_set(r, 0, 1, 1, r->tp + k);      /* the destination's */
    upload_addresses(r);
    CHECK(gcl_args_set_ptr(r->args, 1, r->b->addrs));
    CHECK(gcl_args_set_ptr(r->args, 2, r->b->slots));
    break;
  case PL_T: /* the library's table: encoded through the plan, uploaded on the stream */
    CHECK(gcl_tensormap_table_create(r->b->ctx, k + 1, &r->tab));
    CHECK(gcl_tensormap_table_set(r->tab, 0, k + 1, r->tp, &r->o, 1, 0));
    CHECK(gcl_tensormap_table_upload(r->tab, r->b->stream));
    CHECK(gcl_args_set_ptr(r->args, 0, gcl_tensormap_table_address(r->tab)));
    break;
  default:
    r->table = aligned_alloc(128, 128 * (size_t)(k + 1));
    encode_table(r);
    upload_table(r);
    CHECK(gcl_args_set_ptr(r->args, 0, r->b->maps));
  }
}

void runner_set_shape(runner *r, const shape *s, uint32_t grid) {
  r->s = *s;
  CHECK(gcl_args_set(r->args, shape_index(r), s, sizeof *s));
  gcl_launch_config lc = {.grid = {grid, 1, 1}, .block = {32, 1, 1},
                          .shared_bytes = (size_t)s->stages * s->boxes * s->tile_bytes,
                          .stream = gcl_stream_handle(r->b->stream)};
  r->lc = lc;
}

/* 0: ready; 1: the placement does not exist for this configuration (P and S beyond the
 * parameter space, D beyond its slots). */
int runner_open(runner *r, bench *b, const config *c, placement pl, uint64_t src, uint64_t dst) {
  *r = (runner){.b = b, .c = *c, .pl = pl, .src = src, .dst = dst};
  uint32_t grid;
  r->s = desc_shape(b, c, &grid);
  r->bytes = desc_bytes(c);
  size_t sig_size = 32 * (size_t)(c->k + 2) + 256;
  char name[64], *sig = malloc(sig_size);
  int skip = kernel_for(r, name, sizeof name, sig, sig_size) ||
             (pl == PL_D && grid > (uint32_t)b->sms * BLOCKS_MAX_PER_SM) ||
             (pl == PL_C && !(r->const_at = const_maps(r)));
  if (!skip) {
    CHECK(gcl_module_find_kernel(b->mod, name, sig, &r->kern));
    CHECK(gcl_args_create(gcl_kernel_layout(r->kern), &r->args));
    r->o.box[0] = c->box_w;
    r->o.box[1] = c->box_h;
    r->o.l2_promotion = c->l2;
    make_tensors(r);
    place_descriptors(r);
    runner_set_shape(r, &r->s, grid);
  }
  free(sig);
  return skip;
}

void runner_close(runner *r) {
  gcl_args_destroy(r->args);
  free(r->t);
  free(r->tp);
  free(r->shp);
  free(r->addr);
  free(r->table);
  free(r->maps);
  if (r->tab) CHECK(gcl_stream_synchronize(r->b->stream)); /* a launch may still read it */
  gcl_tensormap_table_destroy(r->tab);
  memset(r, 0, sizeof *r);
}

/* What each launch needs first: H re-encodes its table and uploads it on the stream; T uploads
 * the maps its re-point changed (gcl_tensormap_table_upload; nothing when none did). */
void runner_prepare(runner *r) {
  if (r->pl == PL_T) CHECK(gcl_tensormap_table_upload(r->tab, r->b->stream));
  if (r->pl != PL_H) return;
  encode_table(r);
  upload_table(r);
}

void runner_launch(runner *r) {
  runner_prepare(r);
  CHECK(gcl_launch(r->kern, &r->lc, r->args));
}

/* Re-points every map at the tensor set (src, dst) as the placement must: gclaunch's
 * replace-address into the parameters (P, S), the host's replace-address into its table and an
 * upload (G, GP; C to its __constant__ array), nothing before the launch's own re-encode (H), an upload of the K+1 addresses
 * (D), gcl_tensormap_table_repoint of all K+1 maps (T; its upload is runner_prepare's, or in a
 * graph the replay's copy node after gcl_graph_set_table). */
void runner_repoint(runner *r, uint64_t src, uint64_t dst) {
  uint32_t k = r->c.k;
  retarget(r, src, dst);
  switch (r->pl) {
  case PL_P: maps_repoint(r, 0, 0, k + 1, r->addr); break;
  case PL_S:
    for (uint32_t i = 0; i <= k; i++) maps_repoint(r, i, 0, 1, r->addr + i);
    break;
  case PL_G: case PL_GP: repoint_table(r); upload_table(r); break;
  case PL_C: repoint_table(r); upload_const(r); break;
  case PL_D: upload_addresses(r); break;
  case PL_T: CHECK(gcl_tensormap_table_repoint(r->tab, 0, k + 1, r->addr)); break;
  default: break;
  }
}
