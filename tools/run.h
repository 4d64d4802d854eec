/* gclaunch run: state shared by run.c (options and CPU-side validation), runcheck.c (checks
 * against the module), runfields.c (field specs), runexec.c (device side: buffers, binding,
 * launch, timing, report) and runcommon.c (the helpers they all call). The files call each other
 * top down only: run.c -> runcheck.c -> runfields.c -> runcommon.c, run.c -> runexec.c ->
 * runfields.c (tests/cli/file_graph.sh fails on a cycle). */
#ifndef TOOLS_RUN_H
#define TOOLS_RUN_H

#include "runargs.h"

#include <gclaunch/gclaunch.h>
#include <stdbool.h>
#include <stdio.h>

#define GCL_RUN_MAX_OUTS 64

typedef struct run_out {
  const char *name; /* a buffer's NAME */
  const char *path;
} run_out;

typedef struct run_buffer {
  uint64_t base;         /* device allocation: offset + count elements */
  unsigned char *host;   /* the count elements of the view */
  size_t view_bytes;
  void *file_data;       /* RUNARG_FILE: the file's bytes, read before the GPU */
} run_buffer;

typedef struct run_state {
  const char *module, *kernel, *signature;
  char *kernel_name;           /* the kernel's name in the module (mangled), found on the CPU */
  int arch;                    /* --arch sm_NN (0: none) */
  int sm;                      /* the architecture everything was checked for */
  const char *arch_from;       /* where sm came from: "--arch", "the device", "the module's own" */
  long device_shared_limit;    /* the device's opt-in shared memory per block (0: no device) */
  unsigned grid[3], block[3], cluster[3];
  size_t shared_bytes;
  int repeat, warmup, device;  /* device: the one being run on now */
  bool device_given;           /* --device N */
  bool devices_given;          /* --devices all|D,D: the same launch on each, own buffers */
  runarg_devices devices;
  int run_devices[RUNARG_MAX_DEVICES]; /* resolved: the devices to run on, in order */
  size_t n_run_devices;
  uint64_t seed;
  bool json;
  runarg *args;       /* nparams --arg specs in order (parameter i is args[i]), then the
                             --buffer specs (buffers that are no parameter), nargs in all */
  run_buffer *buffers;    /* one per arg; used by buffer args only */
  size_t nargs, nparams;
  const char **extra;     /* --buffer specs until parsed */
  size_t nextra;
  run_out outs[GCL_RUN_MAX_OUTS];
  size_t nouts;
  /* device side */
  gcl_context *ctx;
  gcl_module *mod;
  gcl_kernel *k;
  gcl_args *packed;
  double *times_us;       /* repeat launch times: host clock around launch + synchronize */
  double *kernel_us;      /* repeat kernel times: CUDA events around the launch */
} run_state;

/* --- helpers (runcommon.c, which calls no other file of tools/) --- */
/* Prints "gclaunch run: " and the message to stderr. */
void run_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Writes s as a JSON string literal. */
void run_json_string(FILE *f, const char *s);
/* Index of the buffer argument called name; -1 if none. */
long run_find_buffer(const run_state *st, const char *name);
/* Fills t as the DLPack tensor of buffer argument a on device (data = base, byte_offset = view). */
void run_tensor(const runarg *a, uint64_t base, int device, int64_t *strides, DLTensor *t);
/* Sets buffer argument a (allocated at base) into parameter i: a DLPack tensor into a pointer
 * parameter, the view's address into untyped bytes. */
gcl_status run_bind_buffer(gcl_args *args, size_t i, const runarg *a, uint64_t base, int device);
/* Box and options of a tmap argument in TMA order; false (message printed) when the box's rank
 * differs from the buffer's. */
bool run_tmap_options(const runarg *tmap, const runarg *buf, gcl_tensormap_options *o);

/* --- field specs, --arg PATH=SPEC (runfields.c) --- */
/* Resolves every field spec against layout and gives each parameter they set a placeholder
 * (kind RUNARG_FIELDS) at its index, so that args[i] is parameter i again; the positional
 * --arg specs fill the other parameters in order. -1 to go on, else 2 after a message. */
int run_place_fields(run_state *st, const gcl_layout *layout);
/* Sets every field spec into args: buffers at their own st->buffers base on the GPU (ctx given),
 * at cpu_base on the CPU check (ctx NULL: tensor maps then get zero bytes). Message printed on
 * failure. */
gcl_status run_set_fields(const run_state *st, gcl_args *args, uint64_t cpu_base, gcl_context *ctx);

/* --- checks against the module (runcheck.c) --- */
/* Reads st->module for the target architecture (sets st->sm, st->arch_from, st->kernel_name) and
 * finds st->kernel in it. -1 to go on, else the exit status (1) after a message. */
int run_read_module(run_state *st, gcl_image **img, size_t *k);
/* The --signature (or, without one, the image's records) against kernel k and the --arg specs,
 * packed on the CPU. -1 to go on, else the exit status after a message. */
int run_check_args(run_state *st, const gcl_image *img, size_t k);
/* Grid, block, cluster and shared memory against kernel k's records and the architecture. */
bool run_check_config(const run_state *st, const gcl_image *img, size_t k);
/* tmap lists: one buffer, or N for a tensormap[N]. */
bool run_check_tmap_counts(const run_state *st, const gcl_layout *layout);

/* Device side (runexec.c) on st->device: returns the process exit status. Releases everything it
 * made, so that it can run again on the next device. */
int run_on_device(run_state *st);

#endif
