/* The function tables of the CUDA driver and NVRTC: filled once by the loader (driver.c), read by
 * every file of lib/cuda. A leaf, so that no file reaches another through them. */
#include "driver.h"

gcl__cu_api gcl__cu;
gcl__nvrtc_api gcl__nvrtc;
