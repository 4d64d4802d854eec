/* Example: a megakernel that takes ONE grid-constant globals struct, as real megakernels do
 * (kernels/megakernel.cu, megakernel_globals_16):
 *   struct Globals { TM maps[16]; const WorkItem *work; unsigned n_work; };
 * Its TMA descriptors sit in the struct's maps[] and the kernel indexes them at run time; every
 * member is set through a field resolved once ("g.maps[3]", "g.work", "g.n_work").
 *   example_megakernel_tmaps [megakernel.sm_90.cubin]
 * Map 0 describes the source tensor, map 1 the destination (a view at byte_offset 256); the other
 * maps repeat the source, because every leaf must be set. Each work item names the two
 * descriptors it uses and the box's coordinates. All 16 maps are encoded in one call
 * (gclaunch/tensormap.h: the slots g.maps[0 ... 15] of the args, one source per map -- a tensor
 * with its producer's DLPack flags --, gcl_tensormaps_set); then the kernel is relaunched on new
 * buffers of the same shapes by re-pointing maps 0 and 1 alone (gcl_tensormaps_repoint: no
 * re-encode), the way a megakernel relaunches every step: the copy goes on from the destination
 * into a third buffer.
 * sm_90 or later. */
#include <gclaunch/gclaunch.h>
#include <stdio.h>
#include <string.h>

#define ROWS 64
#define COLS 64
#define BOX 16
#define MAPS 16

/* kernels/megakernel.cu's WorkItem (40 bytes): map indices, rank, box bytes, source and
 * destination coordinates innermost first (the innermost ones multiples of 16 bytes: TMA). */
typedef struct work_item { uint32_t src, dst, rank, bytes; int32_t sc[3], dc[3]; } work_item;

static int check(gcl_status s, const char *what) {
  if (s != GCL_OK) fprintf(stderr, "%s: %s: %s\n", what, gcl_status_name(s), gcl_last_error());
  return s != GCL_OK;
}

static DLTensor matrix(uint64_t base, uint64_t byte_offset, int64_t *shape, int64_t *strides) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = (void *)(uintptr_t)base;
  t.device.device_type = kDLCUDA;
  t.ndim = 2;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = shape;      /* DLPack order: rows, then columns */
  t.strides = strides;
  t.byte_offset = byte_offset;
  return t;
}

#define SIGNATURE "grid_constant struct{tensormap[16] maps, const void* work, u32 n_work} g"

/* The globals' fields, resolved once against the kernel's layout: the first map (the calls
 * below cover maps[0 ... n-1] from it), the work list and its length. */
typedef struct fields { gcl_field maps, work, n_work; } fields;

static int resolve(const gcl_layout *l, fields *f) {
  return check(gcl_layout_field(l, "g.maps[0]", &f->maps), "g.maps[0]") ||
         check(gcl_layout_field(l, "g.work", &f->work), "g.work") ||
         check(gcl_layout_field(l, "g.n_work", &f->n_work), "g.n_work");
}

/* The descriptors: all 16 encoded straight into the struct's maps in one call (no copy, no
 * allocation), each with its own options. */
static int set_maps(gcl_args *args, gcl_context *ctx, const fields *f, const DLTensor *src,
                    const DLTensor *dst) {
  gcl_tensormap_source what[MAPS];
  gcl_tensormap_options o[MAPS];
  gcl_tensormap_slots where;
  memset(what, 0, sizeof what);
  memset(o, 0, sizeof o);
  for (size_t i = 0; i < MAPS; i++) {
    what[i].tensor = i == 1 ? dst : src; /* dlpack_flags 0: our own, writable memory */
    o[i].box[0] = BOX; /* TMA order: box[0] is the contiguous (column) dimension */
    o[i].box[1] = BOX;
    o[i].store = i == 1; /* the destination: rows must be whole 16-byte chunks (TMA stores) */
  }
  return check(gcl_args_tensormap_slots(args, &f->maps, MAPS, &where), "g.maps[0 ... 15]") ||
         check(gcl_tensormaps_set(ctx, &where, what, o, MAPS), "g.maps[0 ... 15]");
}

/* The relaunch: map 0 now reads the last destination (b + 256), map 1 writes c + 256. */
static int relaunch(gcl_context *ctx, gcl_kernel *k, gcl_args *args, const fields *f, uint64_t b,
                    uint64_t c, const gcl_launch_config *cfg) {
  uint64_t addresses[2] = {b + 256, c + 256}; /* data + byte_offset of each new view */
  gcl_tensormap_slots first2;
  return check(gcl_args_tensormap_slots(args, &f->maps, 2, &first2), "g.maps[0 ... 1]") ||
         check(gcl_tensormaps_repoint(ctx, &first2, addresses), "re-point") ||
         check(gcl_launch(k, cfg, args), "relaunch") ||
         check(gcl_context_synchronize(ctx), "kernel");
}

static int run(gcl_context *ctx, gcl_kernel *k, gcl_args *args, uint64_t a, uint64_t b,
               uint64_t c, uint64_t work) {
  fields f;
  if (resolve(gcl_kernel_layout(k), &f)) return 1;
  int64_t shape[2] = {ROWS, COLS}, strides[2] = {COLS, 1};
  DLTensor src = matrix(a, 0, shape, strides), dst = matrix(b, 256, shape, strides);
  work_item items[(ROWS / BOX) * (COLS / BOX)];
  for (uint32_t i = 0; i < sizeof items / sizeof *items; i++) {
    int32_t x = (int32_t)(BOX * (i % (COLS / BOX))), y = (int32_t)(BOX * (i / (COLS / BOX)));
    items[i] = (work_item){0, 1, 2, BOX * BOX * 4, {x, y, 0}, {x, y, 0}};
  }
  gcl_launch_config cfg = {.grid = {sizeof items / sizeof *items}, .block = {32}};
  return set_maps(args, ctx, &f, &src, &dst) ||
         check(gcl_mem_upload(ctx, work, items, sizeof items), "upload work") ||
         check(gcl_args_set_field_ptr(args, &f.work, work), "g.work") ||
         check(gcl_args_set_field_u32(args, &f.n_work, sizeof items / sizeof *items), "g.n_work") ||
         check(gcl_launch(k, &cfg, args), "launch") ||
         check(gcl_context_synchronize(ctx), "kernel") || relaunch(ctx, k, args, &f, b, c, &cfg);
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "build/kernels/megakernel.sm_90.cubin";
  static float host[ROWS * COLS], back[ROWS * COLS], again[ROWS * COLS];
  for (int i = 0; i < ROWS * COLS; i++) host[i] = (float)i;
  if (check(gcl_driver_init(), "driver")) return 2;
  gcl_context *ctx = NULL;
  gcl_module *mod = NULL;
  gcl_kernel *k = NULL;
  gcl_args *args = NULL;
  uint64_t a = 0, b = 0, c = 0, work = 0;
  int bad = check(gcl_context_create(0, &ctx), "context") ||
            check(gcl_module_load_file(ctx, path, &mod), path) ||
            check(gcl_module_find_kernel(mod, "megakernel_globals_16", SIGNATURE, &k), "kernel") ||
            check(gcl_args_create(gcl_kernel_layout(k), &args), "args") ||
            check(gcl_mem_alloc(ctx, sizeof host, &a), "alloc a") ||
            check(gcl_mem_alloc(ctx, sizeof host + 256, &b), "alloc b") ||
            check(gcl_mem_alloc(ctx, sizeof host + 256, &c), "alloc c") ||
            check(gcl_mem_alloc(ctx, 1024, &work), "alloc work") ||
            check(gcl_mem_upload(ctx, a, host, sizeof host), "upload a") ||
            run(ctx, k, args, a, b, c, work) ||
            check(gcl_mem_download(ctx, back, b + 256, sizeof back), "download b") ||
            check(gcl_mem_download(ctx, again, c + 256, sizeof again), "download c");
  bool same = !bad && !memcmp(host, back, sizeof back) && !memcmp(host, again, sizeof again);
  if (!bad) printf("copy %s, relaunch through re-pointed maps %s\n",
                   memcmp(host, back, sizeof back) ? "DIFFERS" : "matches",
                   memcmp(host, again, sizeof again) ? "DIFFERS" : "matches");
  uint64_t ptrs[] = {a, b, c, work};
  for (int i = 0; i < 4; i++)
    if (ptrs[i]) gcl_mem_free(ctx, ptrs[i]);
  gcl_args_destroy(args);
  gcl_module_destroy(mod);
  gcl_context_destroy(ctx);
  return bad || !same;
}
