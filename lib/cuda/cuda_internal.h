/* Objects of the driver edge. Internal. */
#ifndef GCL_CUDA_INTERNAL_H
#define GCL_CUDA_INTERNAL_H

#include "driver.h"

struct gcl_context {
  CUcontext ctx;
  CUdevice dev;
  int device;
  int sm;
};

/* Makes ctx current on this thread if it is not already. */
gcl_status gcl__context_bind(gcl_context *ctx);

#endif
