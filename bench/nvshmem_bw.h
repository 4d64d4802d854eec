/* bench_nvshmem_bw: options (nvshmem_bw_opts.c, CPU only: tested without a GPU) and the per-PE
 * measurement (nvshmem_bw.c). */
#ifndef GCL_BENCH_NVSHMEM_BW_H
#define GCL_BENCH_NVSHMEM_BW_H

#include <stddef.h>

#define BW_MAX_PES 16      /* the kernel's tensormap[16] */
#define BW_TILE_BYTES 8192 /* bw_tma's box: 256 u32 x 8 rows */
#define BW_METHODS 4       /* tma, get, put, copy: bits of bw_options.methods in this order */

typedef struct bw_options {
  size_t bytes;      /* per peer */
  size_t chunk;      /* bytes per nvshmemx_{get,put}mem_block call */
  int pes;           /* 0: one per GPU */
  int reps, warmup;  /* timed samples (median) and untimed ones before */
  int iters;         /* runs of a method per sample, back to back */
  int blocks;        /* grid of the kernels; 0: 2 per multiprocessor */
  int launches, launch_reps; /* launch-cost check: launches per sample, samples (0: skip it) */
  const char *cubin; /* bench/nvshmem_bw.cu device-linked with NVSHMEM (bench/nvshmem_bw.sh) */
  unsigned methods;  /* bit m: method m (tma, get, put, copy) measured; default all */
  int signatures;    /* --signatures: print "kernel|signature" per kernel used, exit 0 */
} bw_options;

/* Parses argv into *o. Returns -1 to go on, else the exit status: 0 after --help (usage on
 * stdout), 2 after a bad argument (one line on stderr naming the option, the value and what is
 * expected, then the usage). */
int bw_parse(int argc, char **argv, bw_options *o);

#endif
