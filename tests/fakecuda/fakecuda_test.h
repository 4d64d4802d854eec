/* Helpers shared by the tests that run gclaunch against libfakecuda.so. */
#ifndef FAKECUDA_TEST_H
#define FAKECUDA_TEST_H

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "fakecuda.h"
#include "gclaunch/gclaunch.h"

/* Any text that gcl_module_load_data takes for PTX; the fake accepts every image. */
static const char fake_ptx[] = "//\n.version 8.0\n.target sm_90\n.address_size 64\n";

/* The kernel measured on the H200 (docs/facts.md "Placement rule"):
 * (grid_constant CUtensorMap m, char c, int *out). */
#define FAKE_K_SIGNATURE "grid_constant tensormap m, i8 c, i32* out"
static inline void fake_declare_k(void) {
  const size_t off[] = {112, 240, 248}, size[] = {128, 1, 8};
  cr_assert_eq(fakecuda_set_params("k", 3, off, size), 0);
}

/* Points the loader at the fake (each Criterion test runs in a fresh process, so the loader's
 * once-only initialisation sees it) and clears the fake's tables. */
static inline void fake_use(void) {
  setenv("GCL_LIBCUDA", FAKECUDA_PATH, 1);
  fakecuda_reset();
  fakecuda_restore();
  fake_declare_k();
}

#define assert_msg_has(text)                                                                      \
  cr_assert(strstr(gcl_last_error(), (text)) != NULL, "message lacks \"%s\": %s", (text),        \
            gcl_last_error())

/* Everything gclaunch took from the driver was given back. */
static inline void assert_nothing_live(void) {
  cr_assert_eq(fakecuda_live("retain"), 0, "primary context retains outstanding");
  cr_assert_eq(fakecuda_live("memory"), 0, "allocations outstanding");
  cr_assert_eq(fakecuda_live("library"), 0, "libraries outstanding");
  cr_assert_eq(fakecuda_live("stream"), 0, "streams outstanding");
  cr_assert_eq(fakecuda_live("event"), 0, "events outstanding");
  cr_assert_eq(fakecuda_live("host"), 0, "pinned host allocations outstanding");
  cr_assert_eq(fakecuda_live("graph"), 0, "graphs outstanding");
  cr_assert_eq(fakecuda_live("exec"), 0, "graph execs outstanding");
}

/* A 2-D float tensor of rows x cols in fake device memory (host memory), contiguous. */
typedef struct fake_tensor {
  int64_t shape[2], strides[2];
  DLTensor t;
  uint64_t address;
} fake_tensor;

static inline void fake_tensor_init(fake_tensor *f, uint64_t address, int64_t rows, int64_t cols) {
  f->shape[0] = rows, f->shape[1] = cols;
  f->strides[0] = cols, f->strides[1] = 1;
  f->address = address;
  f->t = (DLTensor){.data = (void *)(uintptr_t)address, .device = {kDLCUDA, 0}, .ndim = 2,
                    .dtype = {kDLFloat, 32, 1}, .shape = f->shape, .strides = f->strides,
                    .byte_offset = 0};
}

static inline gcl_tensormap_options fake_tmap_options(void) {
  gcl_tensormap_options o;
  memset(&o, 0, sizeof o);
  o.box[0] = 32, o.box[1] = 8;
  return o;
}

#endif
