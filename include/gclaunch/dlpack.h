/* gclaunch/dlpack.h -- DLPack 1.x declarations for gclaunch.
 *
 * Uses the system <dlpack/dlpack.h> when one is installed and adds what an older header lacks
 * (Debian ships 0.6: no DLPackVersion, no DLManagedTensorVersioned, no flags, no bool/fp8 codes).
 * Without a system header it declares the DLPack 1.3 layout itself. The layouts of DLDevice,
 * DLDataType, DLTensor and DLManagedTensor are unchanged from 0.6 to 1.3; the static asserts in
 * lib/core/dltensor.c check the sizes and offsets.
 */
#ifndef GCLAUNCH_DLPACK_H
#define GCLAUNCH_DLPACK_H

#include <stdint.h>
#include <stddef.h>

#if defined(__has_include)
#  if __has_include(<dlpack/dlpack.h>) && !defined(GCL_NO_SYSTEM_DLPACK)
#    include <dlpack/dlpack.h>
#  endif
#endif

#ifndef DLPACK_EXTERN_C
/* No system header: declare the DLPack 1.3 layout. The upstream include guard is defined too, so
 * that a later #include <dlpack/dlpack.h> adds nothing instead of redeclaring the structs. */
#define GCL_DLPACK_OWN_DECLARATIONS 1
#define DLPACK_DLPACK_H_
#ifdef __cplusplus
#define DLPACK_EXTERN_C extern "C"
#else
#define DLPACK_EXTERN_C
#endif
#define DLPACK_DLL

#ifdef __cplusplus
extern "C" {
#endif
typedef enum {
  kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLOpenCL = 4, kDLVulkan = 7, kDLMetal = 8,
  kDLVPI = 9, kDLROCM = 10, kDLROCMHost = 11, kDLExtDev = 12, kDLCUDAManaged = 13,
  kDLOneAPI = 14, kDLWebGPU = 15, kDLHexagon = 16, kDLMAIA = 17, kDLTrn = 18
} DLDeviceType;

typedef struct { DLDeviceType device_type; int32_t device_id; } DLDevice;

typedef enum {
  kDLInt = 0U, kDLUInt = 1U, kDLFloat = 2U, kDLOpaqueHandle = 3U, kDLBfloat = 4U,
  kDLComplex = 5U, kDLBool = 6U,
  kDLFloat8_e3m4 = 7U, kDLFloat8_e4m3 = 8U, kDLFloat8_e4m3b11fnuz = 9U, kDLFloat8_e4m3fn = 10U,
  kDLFloat8_e4m3fnuz = 11U, kDLFloat8_e5m2 = 12U, kDLFloat8_e5m2fnuz = 13U,
  kDLFloat8_e8m0fnu = 14U, kDLFloat6_e2m3fn = 15U, kDLFloat6_e3m2fn = 16U, kDLFloat4_e2m1fn = 17U
} DLDataTypeCode;

typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } DLDataType;

typedef struct {
  void *data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape;
  int64_t *strides;
  uint64_t byte_offset;
} DLTensor;

typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;
#ifdef __cplusplus
}
#endif
#endif /* no system header */

/* What DLPack 1.0 and later add; absent from 0.6-0.8 headers. */
#if !defined(DLPACK_MAJOR_VERSION)
#define GCL_DLPACK_ADD_VERSIONED 1
#define DLPACK_MAJOR_VERSION 1
#define DLPACK_MINOR_VERSION 3
#endif

#ifdef GCL_DLPACK_ADD_VERSIONED
#ifdef __cplusplus
extern "C" {
#endif
typedef struct { uint32_t major; uint32_t minor; } DLPackVersion;

typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned *self);
  uint64_t flags;
  DLTensor dl_tensor;
} DLManagedTensorVersioned;
#ifdef __cplusplus
}
#endif
#endif

#ifndef GCL_DLPACK_ADD_VERSIONED
/* DLPack 1.0 and 1.1 declare the struct without a typedef; repeating a typedef is valid C11. */
typedef struct DLManagedTensorVersioned DLManagedTensorVersioned;
#endif

#ifndef DLPACK_FLAG_BITMASK_READ_ONLY
#define DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0UL)
#endif
#ifndef DLPACK_FLAG_BITMASK_IS_COPIED
#define DLPACK_FLAG_BITMASK_IS_COPIED (1UL << 1UL)
#endif
#ifndef DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED
#define DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED (1UL << 2UL)
#endif

/* Type codes and device types newer than the 0.6 header, as plain constants (gclaunch compares
 * the numeric values, so they work whichever header declared the enums). */
#define GCL_DL_BOOL 6
#define GCL_DL_DEVICE_CUDA_MANAGED 13

#endif /* GCLAUNCH_DLPACK_H */
