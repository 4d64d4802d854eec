/* Re-points without the driver call, once the driver itself has shown how.
 *
 * A map's 128 bytes depend on its description and its address only, and
 * cuTensorMapReplaceAddress changes the address bits alone: on driver 580 (H100, sm_90),
 * descriptor bits 4 ... 56 (the first 8 bytes, little-endian) hold address bits 4 ... 56, and
 * patching them by hand gave the driver's bytes in every re-point measured (docs/tensormaps.md).
 * Nothing here takes that on trust for another device or driver: at the first re-point on a
 * device, gclaunch encodes a few dozen descriptions (ranks 1 ... 5, eight element types, every
 * swizzle and L2 promotion, tiled and im2col, at addresses from 16 to 2^57 - 32) and re-points
 * each twice, through cuTensorMapReplaceAddress and through the patch; each interleave mode whose
 * re-points all came out byte for byte equal is proven, and re-points of its maps patch the 8
 * bytes from then on. A mode not proven (a mismatch, a refusal, too few comparisons), a device
 * beyond GCL__TMAP_PATCH_DEVICES, or GCL_TMAP_PATCH=0 in the environment: the driver call, as
 * before. The state is per process (one driver) and per device; the hot path reads it with one
 * atomic load (cuda_internal.h, gcl__tmap_patch_modes). */
#include "cuda_internal.h"
#include "tmap.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Atomic unsigned char gcl__tmap_patch_state[GCL__TMAP_PATCH_DEVICES];

/* What the check found, per device, for gcl_tensormap_repoint_path: written under the lock
 * before the state is published, read after it. */
static struct {
  int checks, mismatches;
  char reason[160];
} found[GCL__TMAP_PATCH_DEVICES];
static pthread_mutex_t learn_lock = PTHREAD_MUTEX_INITIALIZER;

#define CASES_PER_MODE 8 /* descriptions per interleave mode, 2 re-points each */
#define MIN_CHECKS 12    /* a mode needs at least this many equal re-points to be proven */

/* xorshift64*: the same descriptions every run (a check that cannot be reproduced helps no one). */
static uint64_t next(uint64_t *s) {
  *s ^= *s >> 12, *s ^= *s << 25, *s ^= *s >> 27;
  return *s * 0x2545F4914F6CDD1Dull;
}

static uint32_t pick(uint64_t *s, uint32_t n) { return (uint32_t)(next(s) >> 33) % n; }

/* A random aligned address below 2^57, nonzero. */
static uint64_t random_address(uint64_t *s, unsigned align) {
  uint64_t a = next(s) & (GCL__TMAP_ADDRESS_LIMIT - 1u) & ~(uint64_t)(align - 1u);
  return a ? a : align;
}

typedef struct check_case {
  DLTensor t;
  int64_t shape[GCL_TENSORMAP_MAX_RANK];
  gcl_tensormap_options o;
} check_case;

/* Case k of interleave mode il: a description the checks accept (16-byte inner boxes and pixels,
 * rows of 64 ... 256 elements, so every swizzle and interleave takes it), at a random address. */
static void make_case(uint64_t *s, int il, int k, check_case *c) {
  static const DLDataType types[] = {{kDLUInt, 8, 1},  {kDLUInt, 16, 1}, {kDLFloat, 32, 1},
                                     {kDLBfloat, 16, 1}, {kDLFloat, 64, 1}, {kDLInt, 64, 1},
                                     {kDLFloat, 16, 1}, {kDLInt, 32, 1}};
  bool im2col = k % 4 == 3;
  int rank = il || im2col ? 3 + (int)pick(s, 3) : 1 + (int)pick(s, 5);
  DLDataType dt = types[(k + il) % 8];
  uint32_t eb = dt.bits / 8u;
  memset(c, 0, sizeof *c);
  for (int i = 0; i < rank; i++) /* DLPack order: shape[rank - 1] is TMA dimension 0 */
    c->shape[i] = i == rank - 1 ? 64 * (1 + (int64_t)pick(s, 4)) : 1 + (int64_t)pick(s, 300);
  c->o.interleave = il;
  c->o.swizzle = (int)pick(s, 4);
  c->o.l2_promotion = (int)pick(s, 4);
  c->o.oob_fill = dt.code == kDLFloat || dt.code == kDLBfloat ? (int)pick(s, 2) : 0;
  for (int i = 0; i < rank; i++) {
    c->o.box[i] = i == 0 ? 16u / eb : 1u + pick(s, 8);
    c->o.element_strides[i] = 1u + pick(s, 2);
  }
  if (im2col) {
    c->o.im2col.channels = 16u / eb;
    c->o.im2col.pixels = 1u + pick(s, 64);
    for (int i = 0; i + 2 < rank; i++) c->o.im2col.lower[i] = -(int32_t)pick(s, 2);
  }
  unsigned align = il == GCL_TENSORMAP_INTERLEAVE_32B ? 32u : 16u;
  c->t = (DLTensor){.data = (void *)(uintptr_t)random_address(s, align),
                    .device = {kDLCUDA, 0}, .ndim = rank, .dtype = dt, .shape = c->shape};
}

static CUresult replace_bound(gcl_context *ctx, CUtensorMap *m, uint64_t a) {
  CUresult rc = gcl__cu.cuTensorMapReplaceAddress(m, (void *)(uintptr_t)a);
  if (rc == CUDA_ERROR_INVALID_CONTEXT && gcl__context_bind(ctx) == GCL_OK)
    rc = gcl__cu.cuTensorMapReplaceAddress(m, (void *)(uintptr_t)a);
  return rc;
}

/* Re-points the encoded map *drv to a through the driver and its copy *own by the patch; the
 * number of equal re-points (0 or 1), or -1 when they differ (the first difference into why). */
static int compare_one(gcl_context *ctx, CUtensorMap *drv, CUtensorMap *own, uint64_t a, int il,
                       int k, char *why, size_t cap) {
  if (replace_bound(ctx, drv, a) != CUDA_SUCCESS) return 0;
  gcl__tmap_patch_address(own, a);
  for (size_t b = 0; b < sizeof *drv; b++)
    if (((unsigned char *)drv)[b] != ((unsigned char *)own)[b]) {
      if (!why[0])
        snprintf(why, cap, "interleave %d, map %d re-pointed to 0x%llx: the patch differs from "
               "cuTensorMapReplaceAddress at byte %zu", il, k, (unsigned long long)a, b);
      return -1;
    }
  return 1;
}

/* The re-points of interleave mode il compared; true when every one was equal and there were
 * enough. checks and mismatches accumulate; why gets the first mismatch. */
static bool prove_mode(gcl_context *ctx, int il, uint64_t *s, int *checks, int *mismatches,
                       char *why, size_t cap) {
  static const gcl__tmap_who who = {.text = "check"};
  unsigned align = il == GCL_TENSORMAP_INTERLEAVE_32B ? 32u : 16u;
  int equal = 0, bad = 0;
  for (int k = 0; k < CASES_PER_MODE; k++) {
    check_case c;
    gcl_tensormap_desc d;
    CUtensorMap drv, own; /* 64-byte aligned by its type */
    CUresult rc;
    make_case(s, il, k, &c);
    if (gcl__tmap_translate(&c.t, &c.o, &who, &d) != GCL_OK ||
        gcl__tmap_encode_bound(ctx, &d, &drv, &rc) != GCL_OK || rc != CUDA_SUCCESS)
      continue; /* not counted: the mode then may fall short of MIN_CHECKS */
    own = drv;
    const uint64_t to[2] = {random_address(s, align),
                            k % 2 ? align : GCL__TMAP_ADDRESS_LIMIT - align};
    for (int j = 0; j < 2; j++) {
      int r = compare_one(ctx, &drv, &own, to[j], il, k, why, cap);
      if (r < 0) bad++, own = drv; /* continue from the driver's bytes */
      else equal += r;
    }
  }
  *checks += equal + bad, *mismatches += bad;
  if (!bad && equal < MIN_CHECKS && !why[0])
    snprintf(why, cap, "interleave %d: %d re-points compared, %d needed (the driver refused the "
             "rest)", il, equal, MIN_CHECKS);
  return !bad && equal >= MIN_CHECKS;
}

/* Every interleave mode checked on ctx's device: the bits of the modes proven. */
static unsigned prove(gcl_context *ctx, int *checks, int *mismatches, char *why, size_t cap) {
  uint64_t s = 0x9E3779B97F4A7C15ull;
  unsigned modes = 0;
  why[0] = '\0';
  /* ctx current first (as an encode's second try would make it): the proof's encodes are then
   * not refused for want of it, a refusal compute-sanitizer reports as an API error (measured on
   * the H100: gpu_tmap_patch's one "error", INVALID_CONTEXT from the first encode). Once per
   * device; a failed bind leaves the encodes to their own second try, as before. */
  CUcontext cur = NULL;
  if (gcl__cu.cuCtxGetCurrent(&cur) != CUDA_SUCCESS || cur != ctx->ctx) (void)gcl__context_bind(ctx);
  for (int il = GCL_TENSORMAP_INTERLEAVE_NONE; il <= GCL_TENSORMAP_INTERLEAVE_32B; il++)
    if (prove_mode(ctx, il, &s, checks, mismatches, why, cap)) modes |= 1u << il;
  return modes;
}

/* The check for ctx's device, once (the first caller runs it; the others wait for its answer). */
unsigned gcl__tmap_patch_learn(gcl_context *ctx) {
  unsigned dev = (unsigned)ctx->device;
  if (dev >= GCL__TMAP_PATCH_DEVICES) return 0;
  pthread_mutex_lock(&learn_lock);
  unsigned st = atomic_load(&gcl__tmap_patch_state[dev]);
  if (!st) {
    const char *env = getenv("GCL_TMAP_PATCH");
    int checks = 0, mismatches = 0;
    char why[sizeof found[dev].reason] = "";
    unsigned modes = 0;
    if (env && strcmp(env, "0") == 0) snprintf(why, sizeof why, "GCL_TMAP_PATCH=0");
    else if (ctx->sm < 90) snprintf(why, sizeof why, "sm_%d has no tensor maps", ctx->sm);
    else modes = prove(ctx, &checks, &mismatches, why, sizeof why);
    found[dev].checks = checks, found[dev].mismatches = mismatches;
    memcpy(found[dev].reason, why, sizeof why);
    st = GCL__TMAP_PATCH_KNOWN | modes;
    atomic_store(&gcl__tmap_patch_state[dev], (unsigned char)st);
  }
  pthread_mutex_unlock(&learn_lock);
  return st & GCL__TMAP_PATCH_MODES;
}

gcl_status gcl_tensormap_repoint_path(gcl_context *ctx, gcl_tensormap_path *out) {
  if (!ctx || !out)
    return gcl__fail_null("gcl_tensormap_repoint_path", 2, "ctx", (const void *)ctx, "out",
                          (const void *)out);
  memset(out, 0, sizeof *out);
  unsigned dev = (unsigned)ctx->device;
  if (dev >= GCL__TMAP_PATCH_DEVICES) {
    snprintf(out->reason, sizeof out->reason, "device %u: gclaunch patches on devices 0 ... %d",
             dev, GCL__TMAP_PATCH_DEVICES - 1);
    return GCL_OK;
  }
  if (gcl__faulted()) return gcl__fault_check();
  out->patched = gcl__tmap_patch_modes(ctx);
  pthread_mutex_lock(&learn_lock);
  out->checks = found[dev].checks, out->mismatches = found[dev].mismatches;
  if (found[dev].reason[0])
    snprintf(out->reason, sizeof out->reason, "%s", found[dev].reason);
  else
    snprintf(out->reason, sizeof out->reason, "%d of %d re-points byte-identical to "
             "cuTensorMapReplaceAddress", out->checks - out->mismatches, out->checks);
  pthread_mutex_unlock(&learn_lock);
  return GCL_OK;
}
