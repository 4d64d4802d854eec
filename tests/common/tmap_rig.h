/* The tensor-map tests' rig against libfakecuda.so: a context, device memory for the tensors, a
 * layout of `sig` for sm_90 and args of it (and a second, reference args when asked), the first
 * parameter's offset; closing frees all of it and asserts that no library block is left. Opening
 * also runs the re-point path check (gcl_tensormap_repoint_path), so that the driver calls the
 * tests count are their own: with the fake's default layout re-points patch, unless the test set
 * GCL_TMAP_PATCH=0 before (tmap_rig_driver_path) to exercise cuTensorMapReplaceAddress. */
#ifndef GCL_TEST_TMAP_RIG_H
#define GCL_TEST_TMAP_RIG_H

#include "fakecuda_test.h"

typedef struct tmap_rig {
  gcl_context *ctx;
  gcl_signature *sig;
  gcl_layout *layout;
  gcl_args *args, *ref; /* ref: NULL unless asked for */
  uint64_t mem;         /* mem_bytes of device memory */
  size_t maps_at;       /* parameter 0's offset */
  gcl_tensormap_path path; /* how re-points reach the maps (checked at open) */
} tmap_rig;

static inline void tmap_rig_open(tmap_rig *r, const char *sig, size_t mem_bytes, bool with_ref) {
  fake_use();
  memset(r, 0, sizeof *r);
  cr_assert_eq(gcl_context_create(0, &r->ctx), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_tensormap_repoint_path(r->ctx, &r->path), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_mem_alloc(r->ctx, mem_bytes, &r->mem), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_signature_parse(sig, &r->sig), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_layout_create(r->sig, 90, &r->layout), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_args_create(r->layout, &r->args), GCL_OK);
  if (with_ref) cr_assert_eq(gcl_args_create(r->layout, &r->ref), GCL_OK);
  cr_assert_eq(gcl_layout_param(r->layout, 0, &r->maps_at, NULL, NULL), GCL_OK);
}

/* Re-points in this process call the driver (each Criterion test is a process of its own): call
 * before tmap_rig_open. */
static inline void tmap_rig_driver_path(void) { setenv("GCL_TMAP_PATCH", "0", 1); }

static inline void tmap_rig_close(tmap_rig *r) {
  gcl_args_destroy(r->args);
  gcl_args_destroy(r->ref);
  gcl_layout_destroy(r->layout);
  gcl_signature_destroy(r->sig);
  gcl_mem_free(r->ctx, r->mem);
  gcl_context_destroy(r->ctx);
  assert_nothing_live();
}

#endif
