/* Tensor-map arrays as one grid-constant parameter: kernels/megakernel.cu copies tensors of several
 * ranks, dtypes and offsets, picking each tile's TMA descriptors from `tensormap[N] maps` by
 * run-time index. Random data (seed printed), destinations poisoned first, every byte of every
 * allocation compared with the host (views must be copied exactly and nothing written outside).
 *
 * TMA stores write whole 16-byte chunks: a destination whose rows are not a multiple of 16 bytes
 * would get the bytes after each row overwritten (seen on the H200). So destinations (and the
 * self-copied tensor) have rows rounded up to 16 bytes and are encoded with options.store = 1;
 * sources keep odd row lengths (loads clip exactly), and the destination columns past the
 * source's get the load's out-of-bounds fill, zeros. An odd destination is refused before launch. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gclaunch/gclaunch.h"
#include "../common/test_rng.h"
#include "../common/tmap_field.h"

#define CHECK(call) cr_assert_eq((call), GCL_OK, "%s: %s", #call, gcl_last_error())
#define POISON 0xA5

typedef struct work_item { uint32_t src, dst, rank, bytes; int32_t sc[3], dc[3]; } work_item;

/* A tensor view inside its own device allocation, with a host mirror of the allocation. */
typedef struct view {
  DLTensor t;
  int64_t shape[3], strides[3];
  uint64_t dev;
  size_t bytes;
  unsigned char *host;
} view;

/* A copy: src view -> dst view (same shape), or a self copy (dst == NULL) of the top half of the
 * rows of src onto its bottom half through one descriptor. */
typedef struct job { view src, dst; bool self; uint32_t src_map, dst_map; } job;

static void seed_rng(void) { seed_rng_for("test_tensormap"); }

static const DLDataType dtypes[3] = {{kDLFloat, 32, 1}, {kDLBfloat, 16, 1}, {kDLUInt, 8, 1}};

/* Describes a view of shape (rank dims, outermost first) with a row pitch padded to 16 bytes plus
 * pad_rows*16 bytes, starting offset16*16 bytes into the allocation. Allocates nothing yet. */
static void shape_view(view *v, int rank, DLDataType dt, const int64_t *shape, int pad16,
                       int offset16) {
  memset(v, 0, sizeof *v);
  size_t es = dt.bits / 8u;
  int64_t inner = shape[rank - 1];
  int64_t pitch = rank == 1 ? 1 : (int64_t)((inner * es + 15) / 16 * 16 + 16 * pad16) / (int64_t)es;
  for (int d = 0; d < rank; d++) v->shape[d] = shape[d];
  v->strides[rank - 1] = 1;
  if (rank >= 2) v->strides[rank - 2] = pitch;
  if (rank == 3) v->strides[0] = pitch * shape[1];
  size_t extent = (size_t)(rank == 1 ? inner : v->strides[0] * shape[0]) * es;
  v->t.device.device_type = kDLCUDA;
  v->t.ndim = rank;
  v->t.dtype = dt;
  v->t.shape = v->shape;
  v->t.strides = v->strides;
  v->t.byte_offset = 16u * (unsigned)offset16;
  v->bytes = v->t.byte_offset + extent + 64; /* slack: writes past the view would show */
}

static void alloc_view(gcl_context *ctx, view *v, int device) {
  v->host = malloc(v->bytes);
  cr_assert_not_null(v->host);
  CHECK(gcl_mem_alloc(ctx, v->bytes, &v->dev));
  v->t.data = (void *)(uintptr_t)v->dev;
  v->t.device.device_id = device;
}

static void free_view(gcl_context *ctx, view *v) {
  if (v->dev) CHECK(gcl_mem_free(ctx, v->dev));
  free(v->host);
}

static size_t row_bytes(const view *v) {
  return (size_t)v->shape[v->t.ndim - 1] * (v->t.dtype.bits / 8u);
}

/* Byte offset in v's allocation of innermost row (a, b): a indexes dimension 0 of a 3-D view,
 * b the rows of a 2-D view (or dimension 1 of a 3-D one). */
static size_t row_offset(const view *v, int64_t a, int64_t b) {
  int r = v->t.ndim;
  int64_t e = (r == 3 ? a * v->strides[0] : 0) + (r >= 2 ? b * v->strides[r - 2] : 0);
  return v->t.byte_offset + (size_t)e * (v->t.dtype.bits / 8u);
}

/* Calls fn(v, a, b, ctx) for every innermost row of v. */
static void for_rows(const view *v, void (*fn)(const view *, int64_t, int64_t, void *),
                     void *ctx) {
  int r = v->t.ndim;
  int64_t n0 = r == 3 ? v->shape[0] : 1, n1 = r >= 2 ? v->shape[r - 2] : 1;
  for (int64_t a = 0; a < n0; a++)
    for (int64_t b = 0; b < n1; b++) fn(v, a, b, ctx);
}

static void random_fill(view *v) {
  for (size_t i = 0; i < v->bytes; i++) v->host[i] = (unsigned char)rng();
}

/* Elements in a row of n elements of es bytes rounded up to a multiple of 16 bytes. */
static int64_t round_row16(int64_t n, size_t es) {
  int64_t per16 = (int64_t)(16 / es);
  return (n + per16 - 1) / per16 * per16;
}

/* Job j of a plan: ranks 1-3, three dtypes, odd sizes, offsets and padded pitches vary with j.
 * Store destinations get rows of a multiple of 16 bytes (see the top of the file). */
static void make_job(gcl_context *ctx, int device, job *jb, unsigned j, bool self) {
  DLDataType dt = dtypes[j % 3];
  int rank = self ? 2 : j % 5 == 4 ? 3 : j % 7 == 6 ? 1 : 2;
  int64_t shape[3] = {1 + j % 3, 5 + (j * 37) % 60, 7 + (j * 53) % 300};
  if (rank == 2) { shape[0] = shape[1]; shape[1] = shape[2]; }
  if (rank == 1) shape[0] = shape[1] * shape[2];
  if (self) shape[0] = 2 * 16 * (1 + j % 3); /* halves of whole 16-row boxes: no overlap */
  if (self) shape[1] = round_row16(shape[1], dt.bits / 8u);
  memset(jb, 0, sizeof *jb);
  jb->self = self;
  shape_view(&jb->src, rank, dt, shape, (int)(j % 3), (int)(j % 2 ? 1 + j % 5 : 0));
  alloc_view(ctx, &jb->src, device);
  random_fill(&jb->src);
  if (self) return;
  shape[rank - 1] = round_row16(shape[rank - 1], dt.bits / 8u);
  shape_view(&jb->dst, rank, dt, shape, (int)((j + 1) % 3), (int)(j % 3 ? 2 + j % 4 : 0));
  alloc_view(ctx, &jb->dst, device);
  memset(jb->dst.host, POISON, jb->dst.bytes);
}

static void poison_row(const view *v, int64_t a, int64_t b, void *unused) {
  (void)unused;
  memset(v->host + row_offset(v, a, b), POISON, row_bytes(v));
}

/* Uploads the sources and the poisoned destinations (for a self copy: its bottom half). */
static void upload_job(gcl_context *ctx, job *jb) {
  if (jb->self) {
    view bottom = jb->src;
    bottom.shape[0] /= 2;
    bottom.t.byte_offset += (uint64_t)(bottom.shape[0] * jb->src.strides[0]) *
                            (jb->src.t.dtype.bits / 8u);
    for_rows(&bottom, poison_row, NULL);
  }
  CHECK(gcl_mem_upload(ctx, jb->src.dev, jb->src.host, jb->src.bytes));
  if (!jb->self) CHECK(gcl_mem_fill_u8(ctx, jb->dst.dev, POISON, jb->dst.bytes));
}

/* Boxes of 128 bytes (a multiple of 16) x 16 x 2; store: the map is a TMA store destination. */
static gcl_tensormap_options box_for(const view *v, int store) {
  gcl_tensormap_options o;
  memset(&o, 0, sizeof o);
  o.box[0] = 128u / (v->t.dtype.bits / 8u);
  o.box[1] = 16;
  o.box[2] = 2;
  o.store = store;
  return o;
}

typedef struct plan {
  job *jobs;
  size_t n_jobs;
  work_item *work;
  size_t n_work, cap_work;
} plan;

static void push_work(plan *p, work_item w) {
  if (p->n_work == p->cap_work) {
    p->cap_work = p->cap_work ? 2 * p->cap_work : 1024;
    p->work = realloc(p->work, p->cap_work * sizeof *p->work);
    cr_assert_not_null(p->work);
  }
  p->work[p->n_work++] = w;
}

/* One work item per box of the (source) view; a self copy walks only the top half. */
static void plan_tiles(plan *p, const job *jb) {
  const view *v = &jb->src;
  gcl_tensormap_options o = box_for(v, jb->self);
  gcl_tensormap_desc d;
  CHECK(gcl_tensormap_check(&v->t, &o, &d));
  cr_assert_leq(d.box_bytes, 16384u, "the kernel's stage holds 16 KiB");
  uint64_t dims[3] = {d.dims[0], d.rank > 1 ? d.dims[1] : 1, d.rank > 2 ? d.dims[2] : 1};
  uint32_t shift = 0;
  if (jb->self) shift = (uint32_t)(dims[1] /= 2);
  for (uint64_t z = 0; z < dims[2]; z += o.box[2])
    for (uint64_t y = 0; y < dims[1]; y += o.box[1])
      for (uint64_t x = 0; x < dims[0]; x += o.box[0]) {
        work_item w = {jb->src_map, jb->dst_map, d.rank, d.box_bytes,
                       {(int32_t)x, (int32_t)y, (int32_t)z},
                       {(int32_t)x, (int32_t)(y + shift), (int32_t)z}};
        push_work(p, w);
      }
}

/* Maps for n descriptors: pairs (2j, 2j+1); an odd n ends with one self copy. */
static void make_plan(gcl_context *ctx, int device, size_t n_maps, plan *p) {
  memset(p, 0, sizeof *p);
  p->n_jobs = n_maps / 2 + n_maps % 2;
  p->jobs = calloc(p->n_jobs, sizeof *p->jobs);
  cr_assert_not_null(p->jobs);
  for (size_t j = 0; j < p->n_jobs; j++) {
    bool self = n_maps % 2 && j == p->n_jobs - 1;
    make_job(ctx, device, &p->jobs[j], (unsigned)j, self);
    p->jobs[j].src_map = (uint32_t)(2 * j);
    p->jobs[j].dst_map = self ? (uint32_t)(2 * j) : (uint32_t)(2 * j + 1);
    upload_job(ctx, &p->jobs[j]);
    plan_tiles(p, &p->jobs[j]);
  }
}

static void free_plan(gcl_context *ctx, plan *p) {
  for (size_t j = 0; j < p->n_jobs; j++) {
    free_view(ctx, &p->jobs[j].src);
    if (!p->jobs[j].self) free_view(ctx, &p->jobs[j].dst);
  }
  free(p->jobs);
  free(p->work);
}

typedef struct expect_ctx { const view *from; view *to; } expect_ctx;

/* The source row, then zeros (the load's out-of-bounds fill) up to the end of the wider
 * destination row. */
static void copy_row(const view *v, int64_t a, int64_t b, void *c) {
  expect_ctx *e = c;
  unsigned char *to = e->to->host + row_offset(e->to, a, b);
  memcpy(to, e->from->host + row_offset(v, a, b), row_bytes(v));
  memset(to + row_bytes(v), 0, row_bytes(e->to) - row_bytes(v));
}

/* Expected bytes of the destination allocation: poison with the source rows copied in. */
static void expect_job(job *jb, unsigned char **expected, const view **dst) {
  if (jb->self) {
    view top = jb->src, bottom = jb->src;
    top.shape[0] = bottom.shape[0] = jb->src.shape[0] / 2;
    bottom.t.byte_offset += (uint64_t)(top.shape[0] * jb->src.strides[0]) *
                            (jb->src.t.dtype.bits / 8u);
    expect_ctx e = {&top, &bottom};
    for_rows(&top, copy_row, &e);
    *dst = &jb->src;
  } else {
    expect_ctx e = {&jb->src, &jb->dst};
    for_rows(&jb->src, copy_row, &e);
    *dst = &jb->dst;
  }
  *expected = (*dst)->host;
}

static void verify_plan(gcl_context *ctx, plan *p) {
  for (size_t j = 0; j < p->n_jobs; j++) {
    unsigned char *want;
    const view *dst;
    expect_job(&p->jobs[j], &want, &dst);
    unsigned char *got = malloc(dst->bytes);
    cr_assert_not_null(got);
    CHECK(gcl_mem_download(ctx, got, dst->dev, dst->bytes));
    if (memcmp(got, want, dst->bytes)) {
      size_t i = 0;
      while (got[i] == want[i]) i++;
      cr_assert_fail("job %zu (maps %u -> %u, rank %d, dtype code %u bits %u, byte_offset %llu): "
                     "byte %zu of the allocation is 0x%02x, expected 0x%02x",
                     j, p->jobs[j].src_map, p->jobs[j].dst_map, dst->t.ndim, dst->t.dtype.code,
                     dst->t.dtype.bits, (unsigned long long)dst->t.byte_offset, i, got[i],
                     want[i]);
    }
    free(got);
  }
}

typedef struct rig {
  gcl_context *ctx;
  gcl_module *mod;
  gcl_kernel *kernel;
  gcl_args *args;
  gcl_device_info info;
} rig;

/* Context, module (the fatbin: SASS for sm_90, PTX for later), kernel with its signature. */
static void open_rig(rig *r, const char *kernel, const char *signature) {
  memset(r, 0, sizeof *r);
  seed_rng();
  CHECK(gcl_context_create(0, &r->ctx));
  if (gcl_context_sm(r->ctx) < 90)
    cr_skip_test("TMA needs sm_90, device is sm_%d", gcl_context_sm(r->ctx));
  CHECK(gcl_device_query(0, &r->info));
  CHECK(gcl_module_load_file(r->ctx, GCL_KERNEL("megakernel.fatbin"), &r->mod));
  CHECK(gcl_module_find_kernel(r->mod, kernel, signature, &r->kernel));
  CHECK(gcl_args_create(gcl_kernel_layout(r->kernel), &r->args));
}

static void close_rig(rig *r) {
  gcl_args_destroy(r->args);
  gcl_module_destroy(r->mod);
  gcl_context_destroy(r->ctx);
}

static void set_plan_args(rig *r, plan *p, uint64_t *work_dev) {
  for (size_t j = 0; j < p->n_jobs; j++) {
    job *jb = &p->jobs[j];
    gcl_tensormap_options o = box_for(&jb->src, jb->self);
    CHECK(gcl_args_set_tensormaps(r->args, r->ctx, TMAP_FIELD(r->args, 0, jb->src_map), 1, (const DLTensor *const[]){&jb->src.t}, &o, 1, 0));
    if (jb->self) continue;
    gcl_tensormap_options od = box_for(&jb->dst, 1);
    CHECK(gcl_args_set_tensormaps(r->args, r->ctx, TMAP_FIELD(r->args, 0, jb->dst_map), 1, (const DLTensor *const[]){&jb->dst.t}, &od, 1, 0));
  }
  size_t wbytes = p->n_work * sizeof *p->work;
  CHECK(gcl_mem_alloc(r->ctx, wbytes, work_dev));
  CHECK(gcl_mem_upload(r->ctx, *work_dev, p->work, wbytes));
  CHECK(gcl_args_set_ptr(r->args, 1, *work_dev));
  CHECK(gcl_args_set_u32(r->args, 2, (uint32_t)p->n_work));
}

static void launch_plan(rig *r, plan *p) {
  gcl_launch_config cfg;
  memset(&cfg, 0, sizeof cfg);
  size_t grid = (size_t)r->info.multiprocessors * 4;
  cfg.grid[0] = (unsigned)(p->n_work < grid ? p->n_work : grid);
  cfg.block[0] = 32;
  CHECK(gcl_launch(r->kernel, &cfg, r->args));
  CHECK(gcl_context_synchronize(r->ctx));
}

static void copy_with(const char *kernel, const char *signature, size_t n_maps,
                      size_t maps_offset) {
  rig r;
  open_rig(&r, kernel, signature);
  size_t off = 0, size = 0;
  CHECK(gcl_layout_param(gcl_kernel_layout(r.kernel), 0, &off, &size, NULL));
  cr_assert_eq(size, n_maps * GCL_TENSORMAP_BYTES);
  if (gcl_context_sm(r.ctx) == 90) cr_assert_eq(off, maps_offset, "maps at 0x%zx", off);
  plan p;
  make_plan(r.ctx, gcl_context_device(r.ctx), n_maps, &p);
  uint64_t work_dev = 0;
  set_plan_args(&r, &p, &work_dev);
  launch_plan(&r, &p);
  verify_plan(r.ctx, &p);
  fprintf(stderr, "%s: %zu maps, %zu tensors, %zu boxes copied exactly\n", kernel, n_maps,
          p.n_jobs, p.n_work);
  CHECK(gcl_mem_free(r.ctx, work_dev));
  free_plan(r.ctx, &p);
  close_rig(&r);
}

#define SIG(n) "grid_constant tensormap[" #n "] maps, const void* work, u32 n_work"
#define SIG64(n) "grid_constant tensormap align(64)[" #n "] maps, const void* work, u32 n_work"

Test(tensormap, copy_n1) { copy_with("megakernel_copy_1", SIG(1), 1, 0x70); }
Test(tensormap, copy_n16) { copy_with("megakernel_copy_16", SIG(16), 16, 0x70); }
Test(tensormap, copy_n64) { copy_with("megakernel_copy_64", SIG(64), 64, 0x70); }
Test(tensormap, copy_n255) { copy_with("megakernel_copy_255", SIG(255), 255, 0x70); }
Test(tensormap, copy_n16_align64) { copy_with("megakernel_copy_a64_16", SIG64(16), 16, 0x30); }
Test(tensormap, copy_n255_align64) { copy_with("megakernel_copy_a64_255", SIG64(255), 255, 0x30); }

Test(tensormap, n255_fills_the_parameter_limit) {
  rig r;
  open_rig(&r, "megakernel_copy_255", SIG(255));
  if (gcl_context_sm(r.ctx) == 90)
    cr_assert_eq(gcl_layout_size(gcl_kernel_layout(r.kernel)), (size_t)GCL_PARAM_LIMIT);
  close_rig(&r);
}

Test(tensormap, align64_kernel_rejects_the_128_aligned_signature) {
  rig r;
  open_rig(&r, "megakernel_copy_1", SIG(1));
  if (gcl_context_sm(r.ctx) != 90) cr_skip_test("both alignments sit at offset 0 after sm_90");
  gcl_kernel *k = NULL;
  gcl_status s = gcl_module_find_kernel(r.mod, "megakernel_copy_a64_16", SIG(16), &k);
  cr_assert_eq(s, GCL_ERROR_SIGNATURE_MISMATCH, "%s: %s", gcl_status_name(s), gcl_last_error());
  cr_assert_null(k);
  close_rig(&r);
}

static void expect_failure(gcl_status got, gcl_status want, const char *n1, const char *n2) {
  const char *m = gcl_last_error();
  cr_assert_eq(got, want, "expected %s, got %s: %s", gcl_status_name(want), gcl_status_name(got),
               m);
  cr_assert(strstr(m, n1), "message lacks '%s': %s", n1, m);
  if (n2) cr_assert(strstr(m, n2), "message lacks '%s': %s", n2, m);
}

/* Sets element `element` of a full 16-map plan to `bad`, which must be refused with a message
 * holding n1 and n2 and leave the parameter buffer as it was; then the plan still copies exactly.
 * bad_of(p, &bad, &o) picks the view from the plan's jobs and says how to encode it. */
static void rejected_before_launch(void (*bad_of)(const plan *, view *, gcl_tensormap_options *),
                                   size_t element, const char *n1, const char *n2) {
  rig r;
  open_rig(&r, "megakernel_copy_16", SIG(16));
  plan p;
  make_plan(r.ctx, gcl_context_device(r.ctx), 16, &p);
  uint64_t work_dev = 0;
  set_plan_args(&r, &p, &work_dev);
  const void *buf = NULL;
  size_t size = 0;
  CHECK(gcl_args_buffer(r.args, &buf, &size));
  unsigned char *before = malloc(size);
  cr_assert_not_null(before);
  memcpy(before, buf, size);
  view bad;
  gcl_tensormap_options o;
  bad_of(&p, &bad, &o);
  expect_failure(gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, element), 1, (const DLTensor *const[]){&bad.t}, &o, 1, 0), GCL_ERROR_TENSOR,
                 n1, n2);
  CHECK(gcl_args_buffer(r.args, &buf, &size));
  cr_assert(!memcmp(before, buf, size), "a failed set changed the parameter buffer");
  launch_plan(&r, &p);
  verify_plan(r.ctx, &p);
  free(before);
  CHECK(gcl_mem_free(r.ctx, work_dev));
  free_plan(r.ctx, &p);
  close_rig(&r);
}

static char unaligned_addr[32];

/* Job 1's bfloat16 source two elements further: fine for a pointer, not for TMA. */
static void unaligned_source(const plan *p, view *bad, gcl_tensormap_options *o) {
  *bad = p->jobs[1].src;
  cr_assert_eq(bad->t.dtype.bits, 16);
  bad->t.byte_offset += 4;
  snprintf(unaligned_addr, sizeof unaligned_addr, "0x%llx",
           (unsigned long long)(bad->dev + bad->t.byte_offset));
  *o = box_for(bad, 0);
}

/* A view whose address after byte_offset is not 16-byte aligned is refused when its descriptor is
 * set, before any launch; the args keep their bytes and the launch still copies everything. */
Test(tensormap, unaligned_view_rejected_before_launch) {
  rejected_before_launch(unaligned_source, 3, "parameter 0 'maps' field 'maps[3]'", "16-byte aligned");
  cr_assert(strstr(gcl_last_error(), unaligned_addr), "message lacks the address %s: %s",
            unaligned_addr, gcl_last_error());
}

/* Job 0's source (float32 rows of 7 elements = 28 bytes) as a store destination. */
static void odd_destination(const plan *p, view *bad, gcl_tensormap_options *o) {
  *bad = p->jobs[0].src;
  cr_assert(row_bytes(bad) % 16, "job 0's source rows are %zu bytes", row_bytes(bad));
  *o = box_for(bad, 1);
}

/* A store destination whose rows do not end on a 16-byte boundary would have the bytes after each
 * row overwritten by TMA stores: refused with store = 1 before any launch, naming the element. */
Test(tensormap, odd_store_destination_rejected_before_launch) {
  rejected_before_launch(odd_destination, 1, "parameter 0 'maps' field 'maps[1]'",
                         "TMA stores write whole 16-byte chunks");
  cr_assert(strstr(gcl_last_error(), "28 bytes"), "%s", gcl_last_error());
}

Test(tensormap, wrong_slot_or_device_is_rejected) {
  rig r;
  open_rig(&r, "megakernel_copy_16", SIG(16));
  plan p;
  make_plan(r.ctx, gcl_context_device(r.ctx), 2, &p);
  const DLTensor *t = &p.jobs[0].src.t;
  gcl_tensormap_options o = box_for(&p.jobs[0].src, 0);
  expect_failure(gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 15), 2, (const DLTensor *const[]){t, t}, &o, 1, 0), GCL_ERROR_INVALID_ARGUMENT,
                 "parameter 0 'maps' field 'maps[15]'", "n = 2 maps from here, but only 1");
  expect_failure(gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 1, 0), 1, (const DLTensor *const[]){t}, &o, 1, 0), GCL_ERROR_TYPE_MISMATCH,
                 "parameter 1 'work'", "tensormap");
  DLTensor elsewhere = *t;
  elsewhere.device.device_id = gcl_context_device(r.ctx) + 1;
  expect_failure(gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, 5), 1, (const DLTensor *const[]){&elsewhere}, &o, 1, 0), GCL_ERROR_TENSOR,
                 "parameter 0 'maps' field 'maps[5]'", "device");
  cr_assert(!gcl_args_is_set(r.args, 0));
  /* The standalone encoder gives the bytes the slot gets. */
  _Alignas(128) unsigned char map[GCL_TENSORMAP_BYTES];
  CHECK(gcl_tensormap_encode(r.ctx, t, &o, map));
  for (size_t e = 0; e < 16; e++) CHECK(gcl_args_set_tensormaps(r.args, r.ctx, TMAP_FIELD(r.args, 0, e), 1, (const DLTensor *const[]){t}, &o, 1, 0));
  CHECK(gcl_args_set_ptr(r.args, 1, p.jobs[0].src.dev));
  CHECK(gcl_args_set_u32(r.args, 2, 0));
  const void *buf = NULL;
  size_t size = 0, off = 0;
  CHECK(gcl_args_buffer(r.args, &buf, &size));
  CHECK(gcl_layout_param(gcl_kernel_layout(r.kernel), 0, &off, NULL, NULL));
  cr_assert(!memcmp((const unsigned char *)buf + off + 5 * GCL_TENSORMAP_BYTES, map, sizeof map),
            "element 5 differs from gcl_tensormap_encode's bytes");
  free_plan(r.ctx, &p);
  close_rig(&r);
}
