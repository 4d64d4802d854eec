/* gclaunch demo: the plan shared by demo.c (plan, CPU-only view, command) and demo_gpu.c (the
 * copy on one or several GPUs), and the helpers both use (demo_common.c, which calls neither).
 * Internal to the gclaunch program. */
#ifndef TOOLS_DEMO_H
#define TOOLS_DEMO_H

#include "runargs.h"

#include <gclaunch/gclaunch.h>
#include <stdbool.h>
#include <stdint.h>

#define POISON 0xA5

#define DEMO_STAGE_BYTES 16384u /* kernels/megakernel.cu GCL_STAGE_BYTES: the largest box */
#define DEMO_RING_MAX 13        /* kernels/megakernel.cu GCL_RING_MAX */
#define DEMO_BOX_BYTES 256u /* box rows of 256 B: TMA moves wide rows faster (bench/RESULTS.md) */
#define DEMO_BOX_ROWS 64u   /* 256 B x 64 rows = 16 KiB, the kernel's stage: fewer, larger TMA ops */

/* The kernel's work item (kernels/megakernel.cu WorkItem). */
typedef struct work_item { uint32_t src, dst, rank, bytes; int32_t sc[3], dc[3]; } work_item;

/* A 2-D view (rows x cols, row pitch in elements) at byte_offset inside one allocation. */
typedef struct view {
  DLTensor t;
  int64_t shape[2], strides[2];
  uint64_t dev;
  size_t bytes;
  unsigned char *host;
} view;

typedef struct demo {
  int tensors, iters;
  size_t mib;
  view *src, *dst;
  work_item *work;
  size_t n_work, cap_work;
  size_t n_maps; /* the kernel's N */
  char kernel[32], signature[96];
  uint64_t view_bytes; /* bytes of all source views */
  uint64_t sector_bytes; /* bytes of the 32-byte sectors the boxes' rows touch, loads + stores */
  int row_align;         /* --row-align: every view's rows (pitch, byte_offset) start at a
                            multiple of this many bytes of a 256-byte aligned allocation */
  int stages, blocks_per_sm;  /* the ring kernel's stages (dynamic shared memory) and blocks */
  bool tune;                  /* neither --stages nor --blocks-per-sm given: demo_gpu.c times
                                 the candidate rings on the device and keeps the fastest */
  int l2;                     /* --l2: the maps' gcl_tensormap_l2_promotion */
  bool interleave;            /* --order interleave: box i of every tensor, then box i + 1 */
  runarg_devices devices; /* --devices; default: device 0 */
  bool devices_given;
} demo;

/* --- demo_common.c --- */
uint64_t demo_rng(void);
double demo_now_s(void);
/* $GCL_KERNEL_DIR, else the build's kernel folder. */
const char *demo_kernel_dir(void);
/* Tensor j has dtype demo_dtypes[j % 3] (f32, bf16, u8), named demo_dtype_names[j % 3]. */
extern const DLDataType demo_dtypes[3];
extern const char *const demo_dtype_names[3];
size_t demo_row_bytes(const view *v);
/* Byte offset of row r of v inside its allocation. */
size_t demo_row_at(const view *v, int64_t r);
/* Tensor map options: 256-byte box rows, d's L2 promotion; store: the map is a TMA store destination. */
gcl_tensormap_options demo_box_for(const demo *d, const view *v, int store);

/* The megakernel's globals struct, as fields resolved once: "g.maps[e]", "g.work", "g.n_work". */
#define DEMO_MAX_MAPS 254
typedef struct demo_fields {
  gcl_field maps[DEMO_MAX_MAPS], work, n_work;
} demo_fields;
int demo_resolve_fields(const gcl_layout *layout, size_t n_maps, demo_fields *f);

/* --- demo_gpu.c --- */
/* Copies and verifies on the devices d asks for (device 0 by default), tensors round-robin.
 * 0: copied and verified; 1: no usable GPU for this (said why); -1: failed. */
int demo_run_on_gpus(demo *d);

#endif
