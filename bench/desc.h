/* bench_descriptors' shared pieces: the configuration, the Shape the kernels read, and a runner
 * (one descriptor placement set up for one configuration). descriptors.c is the main table,
 * desc_place.c the placements, desc_measure.c verification and timing, desc_relaunch.c the relaunch study, desc_sweep.c the ring sweep
 * and the probe of issue 16. kernels/descbench.cu is the device side. */
#ifndef GCL_BENCH_DESC_H
#define GCL_BENCH_DESC_H

#include <gclaunch/gclaunch.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                                               \
  do {                                                                                            \
    gcl_status s_ = (call);                                                                       \
    if (s_ != GCL_OK) {                                                                           \
      fprintf(stderr, "bench_descriptors: %s: %s: %s\n", #call, gcl_status_name(s_),             \
              gcl_last_error());                                                                  \
      exit(1);                                                                                    \
    }                                                                                             \
  } while (0)

typedef struct shape {
  uint32_t k, rows, tiles_x, tiles_per_tensor, box_w, box_h, tile_bytes, stages, lag, boxes;
  uint32_t order, perm_bits;
} shape; /* kernels/descbench.cu Shape */
#define SHAPE_SIG "struct{u32,u32,u32,u32,u32,u32,u32,u32,u32,u32,u32,u32} s"
#define STAGES_MAX 16            /* kernels/descbench.cu GCL_DESC_STAGES_MAX */
#define SLOTS_PER_BLOCK 65       /* kernels/descbench.cu GCL_DESC_SLOTS (D's global slots) */
#define BLOCKS_MAX_PER_SM 32     /* D's slots are allocated for this many blocks per SM */
#define SMEM_PER_SM (200 * 1024) /* what the rings may take of an SM's 228 KiB */
#define K_MAX 4096
#define PARAM_K_MAX 240          /* P and S kernels exist for K = 1, 8, 64, 240 */

enum { ORDER_INTERLEAVED = 0, ORDER_TENSOR = 1, ORDER_SHUFFLED = 2 };

/* A ring: 0 fields mean the default choice; boxes = tiles per stage (0 = 1). */
typedef struct ring { uint32_t stages, per_sm, lag, boxes; } ring;

typedef struct config {
  const char *dtype;
  uint8_t code, bits;
  uint32_t box_w, box_h;
  uint32_t k;
  ring ring;
  int l2;          /* gcl_tensormap_options.l2_promotion (0: none) */
  uint32_t order;  /* ORDER_* */
  uint32_t cols;   /* elements per row of every tensor (0: 4096) */
  size_t min_bytes;/* each tensor set holds at least this much (0: 1 GiB) */
} config;

/* P: one tensormap[K+1]; S: K+1 separate parameters; G, GP: a global table (+ prefetch);
 * D: made on the device; H: the host re-encodes the global table before every launch;
 * C: a __constant__ array of the module (uploaded to its symbol), K+1 <= CONST_MAPS_MAX;
 * T: gclaunch's own gcl_tensormap_table (G's kernel; re-point and upload through the library,
 *    in a graph gcl_graph_capture_table / gcl_graph_set_table). */
typedef enum placement { PL_P, PL_S, PL_G, PL_GP, PL_D, PL_H, PL_C, PL_T, PL_COUNT } placement;
#define CONST_MAPS_MAX 480       /* kernels/descbench.cu GCL_DESC_CONST_MAX */
extern const char *const placement_names[PL_COUNT];

typedef struct bench {
  gcl_context *ctx;
  gcl_module *mod;
  gcl_stream *stream;
  gcl_kernel *compare;
  int sms, reps, launches;
  unsigned placements; /* bit pl set: measure placement pl (--placements) */
  uint64_t src, dst, maps, addrs, slots, bad; /* device buffers */
  size_t src_bytes;
} bench;

/* One placement ready to launch on one tensor set (sources at src, destination at dst). */
typedef struct runner {
  bench *b;
  config c;
  shape s;
  placement pl;
  gcl_kernel *kern;
  gcl_args *args;
  gcl_launch_config lc;
  uint64_t src, dst;
  size_t bytes;          /* of the sources (= of the destination) */
  DLTensor *t;           /* K+1 tensors (sources, then the destination) */
  const DLTensor **tp;   /* pointers to them */
  int64_t *shp;          /* their shapes */
  uint64_t *addr;        /* their addresses */
  gcl_tensormap_options o;
  unsigned char *table;  /* G, GP, H, C: the K+1 maps on the host */
  gcl_tensormap_table *tab; /* T: the library's table of the K+1 maps */
  uint64_t const_at;     /* C: the device address of the __constant__ array */
  gcl_field *maps;       /* per parameter: its first map (resolved once; NULL: not yet) */
} runner;

/* desc_place.c */
uint32_t desc_cols(const config *c);
size_t desc_bytes(const config *c); /* of one tensor set's sources */
shape desc_shape(const bench *b, const config *c, uint32_t *grid);
int runner_open(runner *r, bench *b, const config *c, placement pl, uint64_t src, uint64_t dst);
void runner_set_shape(runner *r, const shape *s, uint32_t grid);
void runner_prepare(runner *r); /* what a launch needs first (H: re-encode, upload) */
void runner_launch(runner *r);  /* runner_prepare + gcl_launch */
void runner_repoint(runner *r, uint64_t src, uint64_t dst);
void runner_close(runner *r);
double desc_now_s(void);
/* The kernel each placement runs at K (NULL: none at this K), for --registers. */
const char *desc_kernel_name(placement pl, uint32_t k, char *buf, size_t size);

/* desc_measure.c */
int runner_check(runner *r);
int runner_verify(runner *r);
double runner_time(runner *r);
double desc_time_memcpy(bench *b, size_t bytes);

/* desc_relaunch.c */
int desc_relaunch(bench *b, FILE *csv, const uint32_t *ks, size_t nks, size_t size, uint32_t cols);

/* desc_sweep.c: issue 16's ring sweep (--sweep) and probe (--probe) */
void desc_report(bench *b, FILE *csv, const runner *r, const char *where, double sec,
                 double copy_sec);
int desc_probe(bench *b, FILE *csv);
int desc_sweep(bench *b, config *tiles, size_t ntiles, FILE *csv);

#endif
