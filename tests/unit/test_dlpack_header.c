/* gclaunch/dlpack.h must give the same DLPack layout whether it builds on the system header
 * (Debian's 0.6, which lacks every 1.x declaration) or declares DLPack 1.3 itself
 * (-DGCL_NO_SYSTEM_DLPACK). This file is compiled twice: once as the test (system header when one
 * is installed), once with -DGCL_NO_SYSTEM_DLPACK -DGCL_DLPACK_HEADER_NOSYS into a second object
 * that only provides the layout and sample values of its variant. The static asserts make either
 * build fail on a wrong layout; the tests compare both variants at run time. */
#include "gclaunch/dlpack.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Every size and offset docs/facts.md gives ("DLPack"), in one order, for both variants. */
#define LAYOUT_LIST(X)                                                                            \
  X(sizeof(DLDevice), 8) X(sizeof(DLDataType), 4) X(sizeof(DLTensor), 48)                         \
  X(offsetof(DLTensor, data), 0) X(offsetof(DLTensor, device), 8) X(offsetof(DLTensor, ndim), 16) \
  X(offsetof(DLTensor, dtype), 20) X(offsetof(DLTensor, shape), 24)                               \
  X(offsetof(DLTensor, strides), 32) X(offsetof(DLTensor, byte_offset), 40)                       \
  X(sizeof(DLManagedTensor), 64) X(offsetof(DLManagedTensor, manager_ctx), 48)                    \
  X(offsetof(DLManagedTensor, deleter), 56) X(sizeof(DLPackVersion), 8)                           \
  X(sizeof(DLManagedTensorVersioned), 80) X(offsetof(DLManagedTensorVersioned, manager_ctx), 8)   \
  X(offsetof(DLManagedTensorVersioned, deleter), 16)                                              \
  X(offsetof(DLManagedTensorVersioned, flags), 24)                                                \
  X(offsetof(DLManagedTensorVersioned, dl_tensor), 32)

#define LAYOUT_ASSERT(expr, want) _Static_assert((expr) == (want), #expr " == " #want);
LAYOUT_LIST(LAYOUT_ASSERT)

_Static_assert(DLPACK_MAJOR_VERSION == 1, "gclaunch speaks DLPack major version 1");
_Static_assert(DLPACK_FLAG_BITMASK_READ_ONLY == 1 && DLPACK_FLAG_BITMASK_IS_COPIED == 2 &&
                   DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED == 4,
               "DLPack flag bits");
_Static_assert(kDLCUDA == 2 && kDLCUDAHost == 3 && kDLCUDAManaged == 13, "device types");
_Static_assert(kDLInt == 0 && kDLUInt == 1 && kDLFloat == 2 && kDLBfloat == 4, "type codes");
_Static_assert(GCL_DL_BOOL == 6 && GCL_DL_DEVICE_CUDA_MANAGED == 13, "gclaunch's constants");

#define LAYOUT_VALUE(expr, want) (size_t)(expr),
#define LAYOUT_COUNT(expr, want) +1
enum { layout_count = 0 LAYOUT_LIST(LAYOUT_COUNT) };

#ifdef GCL_DLPACK_HEADER_NOSYS
/* ---- the second object: DLPack 1.3 as gclaunch declares it ---- */
#if defined(DLPACK_VERSION) || !defined(GCL_DLPACK_OWN_DECLARATIONS)
#error "GCL_NO_SYSTEM_DLPACK must not include the system <dlpack/dlpack.h>"
#endif
_Static_assert(DLPACK_MINOR_VERSION == 3, "gclaunch's own declarations are DLPack 1.3");
_Static_assert(kDLBool == 6 && kDLFloat4_e2m1fn == 17 && kDLTrn == 18, "1.x enumerators");

void gcl_test_nosys_layout(size_t *out);
void gcl_test_nosys_sample(DLManagedTensorVersioned *m, DLManagedTensor *legacy);

void gcl_test_nosys_layout(size_t *out) {
  const size_t values[] = {LAYOUT_LIST(LAYOUT_VALUE)};
  memcpy(out, values, sizeof values);
}

/* Fills structs through this variant's declarations; the test reads them through the other. */
void gcl_test_nosys_sample(DLManagedTensorVersioned *m, DLManagedTensor *legacy) {
  static int64_t shape[2] = {3, 5};
  memset(m, 0, sizeof *m);
  m->version.major = 1;
  m->version.minor = 3;
  m->flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  m->dl_tensor.data = (void *)(uintptr_t)0x1000;
  m->dl_tensor.device.device_type = kDLCUDAManaged;
  m->dl_tensor.device.device_id = 7;
  m->dl_tensor.ndim = 2;
  m->dl_tensor.dtype.code = kDLBool;
  m->dl_tensor.dtype.bits = 8;
  m->dl_tensor.dtype.lanes = 1;
  m->dl_tensor.shape = shape;
  m->dl_tensor.byte_offset = 16;
  memset(legacy, 0, sizeof *legacy);
  legacy->dl_tensor = m->dl_tensor;
  legacy->manager_ctx = m;
}

#else
/* ---- the test: whatever header the build found ---- */
#include <criterion/criterion.h>

void gcl_test_nosys_layout(size_t *out);
void gcl_test_nosys_sample(DLManagedTensorVersioned *m, DLManagedTensor *legacy);

Test(dlpack_header, both_variants_have_the_same_layout) {
  const size_t here[] = {LAYOUT_LIST(LAYOUT_VALUE)};
  size_t nosys[layout_count];
  gcl_test_nosys_layout(nosys);
  for (int i = 0; i < layout_count; i++)
    cr_expect_eq(here[i], nosys[i], "layout value %d: %zu here, %zu without the system header", i,
                 here[i], nosys[i]);
}

Test(dlpack_header, uses_the_system_header_when_installed) {
#if defined(__has_include)
#if __has_include(<dlpack/dlpack.h>)
  /* Debian's 0.6 defines DLPACK_VERSION; 1.x defines DLPACK_MAJOR_VERSION itself. */
#ifdef GCL_DLPACK_OWN_DECLARATIONS
  cr_fail("<dlpack/dlpack.h> is installed but gclaunch/dlpack.h did not include it");
#endif
#ifdef DLPACK_VERSION
  cr_log_info("system dlpack.h: DLPACK_VERSION %d", DLPACK_VERSION);
#endif
#endif
#endif
  cr_expect_eq(DLPACK_MAJOR_VERSION, 1);
}

Test(dlpack_header, structs_cross_between_variants) {
  DLManagedTensorVersioned m;
  DLManagedTensor legacy;
  gcl_test_nosys_sample(&m, &legacy);
  cr_expect_eq(m.version.major, 1);
  cr_expect_eq(m.version.minor, 3);
  cr_expect_eq(m.flags, DLPACK_FLAG_BITMASK_READ_ONLY);
  cr_expect_eq((uintptr_t)m.dl_tensor.data, 0x1000);
  cr_expect_eq((int)m.dl_tensor.device.device_type, GCL_DL_DEVICE_CUDA_MANAGED);
  cr_expect_eq(m.dl_tensor.device.device_id, 7);
  cr_expect_eq(m.dl_tensor.ndim, 2);
  cr_expect_eq(m.dl_tensor.dtype.code, GCL_DL_BOOL);
  cr_expect_eq(m.dl_tensor.dtype.bits, 8);
  cr_expect_eq(m.dl_tensor.shape[1], 5);
  cr_expect_eq(m.dl_tensor.byte_offset, 16);
  cr_expect_eq(legacy.manager_ctx, (void *)&m);
  cr_expect_eq(legacy.dl_tensor.byte_offset, 16);
}
#endif
