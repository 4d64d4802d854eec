/* bench_launch: host submit time per launch, gclaunch against the raw driver, same kernels
 * (kernels/launchcfg.cu), interleaved in one process.
 *
 * Paths: cuLaunchKernel with kernelParams, cuLaunchKernel with an `extra` buffer packed at the
 * driver's offsets, cuLaunchKernelEx with kernelParams, and gcl_launch with kernelParams and with
 * `extra` (gcl_kernel_set_launch_mode picks the kernel's mode). Every launch first re-sets one argument
 * (the kernel's i32 `idx`): a store for the raw paths, gcl_args_set_i32 for gclaunch.
 *
 * Method: per repetition and path, sync the stream, time the submission of --launches launches
 * with a monotonic clock, then sync outside the timer. The kernels do nothing, so the device
 * drains the queue about as fast as the host fills it and submission never blocks on a full
 * queue (a deep queue would measure the device, not the host). Paths rotate their order each
 * repetition; the first repetition is a warm-up. Reported: median over --reps repetitions of
 * microseconds per launch, the ratio gclaunch / fastest raw path (the raw path with the lowest
 * median), and the paired ratio: the median over repetitions of each repetition's gclaunch
 * sample over the same repetition's fastest-raw sample (they are taken milliseconds apart, so
 * the machine's drift between repetitions cancels). Graph replay: --launches
 * gcl_launch calls captured in one graph, replayed; device time per kernel node (median).
 *
 * --runs R repeats the whole measurement R times in the same process (the cases interleaved
 * anew each run) and prints every run's table and ratios, then the spread: the ratio's range
 * per case over the runs, and how much the fastest raw path itself moved between runs.
 *
 * --decompose adds three paths between cuLaunchKernelEx and gcl_launch, each one piece more:
 * cuCtxGetCurrent + cuLaunchKernelEx (gcl_launch's context check), gcl_args_set_i32 +
 * cuLaunchKernelEx from the args' own parameter pointers (the setter), and gcl_launch without
 * re-setting idx (the launch alone); it prints what each adds to cuLaunchKernelEx in ns per
 * launch, paired within repetitions.
 *
 * Usage: bench_launch [--reps N] [--launches N] [--runs R] [--no-graph] [--decompose]
 *                     [--kernels DIR] [--csv FILE]
 * Without a GPU it says so and exits 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "driver.h" /* the resolved driver table, exported to the benchmarks (gclaunch_driver_dep) */
#include "bench_util.h"
#include "exedir.h"

static double now_us(void) { return bench_now_ns() / 1e3; }

/* PATH_COUNT paths always; with --decompose also the steps from cuLaunchKernelEx to gcl_launch
 * (kernelParams), each adding one piece of what gcl_launch does on top of the raw call. */
enum { PATH_RAW_PARAMS, PATH_RAW_EXTRA, PATH_RAW_EX, PATH_RAW_EX_EXTRA, PATH_GCL_PARAMS,
       PATH_GCL_EXTRA, PATH_COUNT, PATH_EX_CTX = PATH_COUNT, PATH_EX_SETTER, PATH_GCL_NOSET,
       PATH_ALL };
#define PATH_RAW_LAST PATH_RAW_EX_EXTRA
static const char *path_names[PATH_ALL] = {
    "cuLaunchKernel params", "cuLaunchKernel extra", "cuLaunchKernelEx", "cuLaunchKernelEx extra",
    "gcl_launch params", "gcl_launch extra", "cuCtxGetCurrent + cuLaunchKernelEx",
    "gcl_args_set_i32 + cuLaunchKernelEx", "gcl_launch params without re-set"};

typedef struct bench_case {
  const char *label, *kernel, *sig;
  size_t idx;        /* the parameter re-set on every launch */
  gcl_kernel *k[2];  /* kernelParams mode, extra mode */
  gcl_args *args[2];
  void **params;     /* raw: one pointer per parameter into storage */
  void **own;        /* PATH_EX_SETTER: one pointer per parameter into args[0]'s own bytes */
  unsigned char *storage, *packed; /* raw: values at host (kernelParams) and driver (extra) offsets */
  size_t packed_size, *offsets, count;
  double median[PATH_ALL], graph_us;
  int fastest;          /* the raw path with the lowest median */
  double paired[2];     /* median over repetitions of gcl_launch (params, extra) / fastest raw */
  double added_ns[PATH_ALL]; /* --decompose: median over repetitions of (path - cuLaunchKernelEx) */
} bench_case;

#define MAX_RUNS 16

typedef struct options {
  int reps, launches, runs, graph, paths; /* paths: PATH_COUNT, or PATH_ALL with --decompose */
  const char *kernels, *csv;
} options;

static void die(const char *what) {
  fprintf(stderr, "bench_launch: %s: %s\n", what, gcl_last_error());
  exit(1);
}
#define TRY(call) do { if ((call) != GCL_OK) die(#call); } while (0)
#define CU(call) do { CUresult rc_ = (call); if (rc_ != CUDA_SUCCESS) { \
  fprintf(stderr, "bench_launch: %s: %s\n", #call, gcl__cu_error_name(rc_)); exit(1); } } while (0)

/* Raw storage: each parameter's bytes (zero, or a device pointer for 8-byte pointers) in a host
 * block for kernelParams, and the same values packed at the driver's offsets for extra. */
static void raw_setup(bench_case *c, uint64_t dev) {
  const gcl_layout *l = gcl_kernel_layout(c->k[0]);
  c->count = gcl_layout_count(l);
  c->packed_size = gcl_layout_size(l);
  c->storage = aligned_alloc(128, 32768);
  c->packed = aligned_alloc(128, 32768);
  c->params = calloc(c->count, sizeof *c->params);
  c->offsets = calloc(c->count, sizeof *c->offsets);
  if (!c->storage || !c->packed || !c->params || !c->offsets) die("out of memory");
  memset(c->storage, 0, 32768), memset(c->packed, 0, 32768);
  for (size_t i = 0; i < c->count; i++) {
    size_t size = 0;
    gcl_field f;
    TRY(gcl_layout_param(l, i, &c->offsets[i], &size, NULL));
    TRY(gcl_layout_param_field(l, i, &f));
    const gcl_param_info info = f.info;
    c->params[i] = c->storage + c->offsets[i]; /* any host address works; these are distinct */
    if (info.kind == GCL_PARAM_POINTER) memcpy(c->params[i], &dev, 8);
    memcpy(c->packed + c->offsets[i], c->params[i], size);
    for (int mode = 0; mode < 2; mode++) TRY(gcl_args_set(c->args[mode], i, c->params[i], size));
  }
}

/* The kernelParams pointers into args' own packed bytes (what gcl_launch passes the driver),
 * through the public gcl_args_buffer and the layout's offsets. */
static void **args_param_pointers(const gcl_args *args) {
  const void *data = NULL;
  size_t size = 0, off = 0;
  TRY(gcl_args_buffer(args, &data, &size));
  const gcl_layout *l = gcl_args_layout(args);
  void **out = calloc(gcl_layout_count(l) + 1, sizeof *out);
  if (!out) exit(1);
  for (size_t i = 0; i < gcl_layout_count(l); i++) {
    TRY(gcl_layout_param(l, i, &off, NULL, NULL));
    out[i] = (unsigned char *)(uintptr_t)data + off;
  }
  return out;
}

static void case_setup(bench_case *c, gcl_module *m, uint64_t dev) {
  for (int mode = 0; mode < 2; mode++) {
    TRY(gcl_module_find_kernel(m, c->kernel, c->sig, &c->k[mode]));
    TRY(gcl_kernel_set_launch_mode(c->k[mode], mode ? GCL_LAUNCH_EXTRA_BUFFER : GCL_LAUNCH_KERNEL_PARAMS));
    TRY(gcl_args_create(gcl_kernel_layout(c->k[mode]), &c->args[mode]));
  }
  raw_setup(c, dev);
  c->own = args_param_pointers(c->args[0]);
}

/* Submits n launches on path p; returns microseconds per launch (submission only). */
static double run_path(bench_case *c, int p, int n, CUstream stream) {
  CUfunction fn = gcl_kernel_cu_function(c->k[0]);
  int32_t *idx_host = c->params[c->idx];
  unsigned char *idx_packed = c->packed + c->offsets[c->idx];
  size_t size = c->packed_size;
  void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, c->packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                   CU_LAUNCH_PARAM_END};
  CUlaunchConfig ex = {1, 1, 1, 32, 1, 1, 0, stream, NULL, 0};
  gcl_launch_config cfg = {.grid = {1, 1, 1}, .block = {32, 1, 1}, .stream = stream};
  gcl_args *args = c->args[p == PATH_GCL_EXTRA];
  gcl_kernel *k = c->k[p == PATH_GCL_EXTRA];
  void **gcl_params = c->own; /* PATH_EX_SETTER launches from the args' own bytes */
  CUcontext cur;
  CU(gcl__cu.cuStreamSynchronize(stream));
  double t0 = now_us();
  for (int32_t i = 0; i < n; i++) {
    switch (p) {
    case PATH_RAW_PARAMS:
      *idx_host = i;
      CU(gcl__cu.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, stream, c->params, NULL));
      break;
    case PATH_RAW_EXTRA:
      memcpy(idx_packed, &i, sizeof i);
      CU(gcl__cu.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, stream, NULL, extra));
      break;
    case PATH_RAW_EX:
      *idx_host = i;
      CU(gcl__cu.cuLaunchKernelEx(&ex, fn, c->params, NULL));
      break;
    case PATH_RAW_EX_EXTRA:
      memcpy(idx_packed, &i, sizeof i);
      CU(gcl__cu.cuLaunchKernelEx(&ex, fn, NULL, extra));
      break;
    case PATH_EX_CTX: /* + gcl_launch's context check */
      *idx_host = i;
      CU(gcl__cu.cuCtxGetCurrent(&cur));
      CU(gcl__cu.cuLaunchKernelEx(&ex, fn, c->params, NULL));
      break;
    case PATH_EX_SETTER: /* + the setter, launching the args' own parameter pointers */
      if (gcl_args_set_i32(args, c->idx, i) != GCL_OK) die("gcl_args_set_i32");
      CU(gcl__cu.cuLaunchKernelEx(&ex, fn, gcl_params, NULL));
      break;
    case PATH_GCL_NOSET: /* gcl_launch alone: the same idx every time */
      if (gcl_launch(k, &cfg, args) != GCL_OK) die("gcl_launch");
      break;
    default:
      if (gcl_args_set_i32(args, c->idx, i) != GCL_OK || gcl_launch(k, &cfg, args) != GCL_OK)
        die("gcl_launch");
    }
  }
  double t = (now_us() - t0) / n;
  CU(gcl__cu.cuStreamSynchronize(stream));
  return t;
}

static void measure(bench_case *c, const options *o, CUstream stream) {
  double *samples = calloc((size_t)o->reps * PATH_ALL, sizeof *samples);
  if (!samples) die("out of memory");
  for (int p = 0; p < o->paths; p++) run_path(c, p, o->launches, stream); /* warm-up */
  for (int r = 0; r < o->reps; r++)
    for (int j = 0; j < o->paths; j++) {
      int p = (j + r) % o->paths;
      samples[p * o->reps + r] = run_path(c, p, o->launches, stream);
    }
  for (int p = 0; p < o->paths; p++) c->median[p] = bench_median(samples + p * o->reps, o->reps);
  c->fastest = PATH_RAW_PARAMS;
  for (int p = PATH_RAW_PARAMS + 1; p <= PATH_RAW_LAST; p++)
    if (c->median[p] < c->median[c->fastest]) c->fastest = p;
  /* Paired: each repetition's gcl_launch sample over the same repetition's sample of the fastest
   * raw path (measured within ~PATH_COUNT x launches x 3 us of each other), so drift of the
   * machine between repetitions cancels; the median of those ratios. */
  double *ratios = calloc((size_t)o->reps, sizeof *ratios);
  if (!ratios) die("out of memory");
  for (int m = 0; m < 2; m++) {
    for (int r = 0; r < o->reps; r++)
      ratios[r] = samples[(PATH_GCL_PARAMS + m) * o->reps + r] / samples[c->fastest * o->reps + r];
    c->paired[m] = bench_median(ratios, o->reps);
  }
  /* What each step adds to cuLaunchKernelEx, paired within repetitions too, in ns per launch. */
  for (int p = PATH_GCL_PARAMS; p < o->paths; p++) {
    for (int r = 0; r < o->reps; r++)
      ratios[r] = 1e3 * (samples[p * o->reps + r] - samples[PATH_RAW_EX * o->reps + r]);
    c->added_ns[p] = bench_median(ratios, o->reps);
  }
  free(ratios);
  free(samples);
}

/* Device time per node of a graph of n captured gcl_launch calls, median over reps replays. */
static void measure_graph(bench_case *c, const options *o, CUstream stream) {
  CUgraph g;
  CUgraphExec exec;
  gcl_launch_config cfg = {.grid = {1, 1, 1}, .block = {32, 1, 1}, .stream = stream};
  CU(gcl__cu.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
  for (int32_t i = 0; i < o->launches; i++)
    if (gcl_args_set_i32(c->args[0], c->idx, i) != GCL_OK || gcl_launch(c->k[0], &cfg, c->args[0]) != GCL_OK)
      die("gcl_launch (capture)");
  CU(gcl__cu.cuStreamEndCapture(stream, &g));
  CU(gcl__cu.cuGraphInstantiateWithFlags(&exec, g, 0));
  double *t = calloc((size_t)o->reps, sizeof *t);
  if (!t) die("out of memory");
  CU(gcl__cu.cuGraphLaunch(exec, stream));
  CU(gcl__cu.cuStreamSynchronize(stream));
  for (int r = 0; r < o->reps; r++) {
    double t0 = now_us();
    CU(gcl__cu.cuGraphLaunch(exec, stream));
    CU(gcl__cu.cuStreamSynchronize(stream));
    t[r] = (now_us() - t0) / o->launches;
  }
  c->graph_us = bench_median(t, o->reps);
  free(t);
  CU(gcl__cu.cuGraphExecDestroy(exec));
  CU(gcl__cu.cuGraphDestroy(g));
}

static double best_raw(const bench_case *c) { return c->median[c->fastest]; }

static void report(bench_case *cases, int n, const options *o, int run) {
  printf("\nrun %d of %d: host submit time per launch, us (median of %d x %d launches)\n", run + 1,
         o->runs, o->reps, o->launches);
  printf("%-16s", "case");
  for (int p = 0; p < PATH_COUNT; p++) printf(" %22s", path_names[p]);
  printf(" %12s %12s %13s %13s %14s\n", "ratio params", "ratio extra", "paired params",
         "paired extra", "graph us/node");
  for (int i = 0; i < n; i++) {
    bench_case *c = &cases[i];
    double best = best_raw(c);
    printf("%-16s", c->label);
    for (int p = 0; p < PATH_COUNT; p++) printf(" %22.3f", c->median[p]);
    printf(" %12.3f %12.3f %13.3f %13.3f %14.3f\n", c->median[PATH_GCL_PARAMS] / best,
           c->median[PATH_GCL_EXTRA] / best, c->paired[0], c->paired[1], c->graph_us);
  }
  printf("ratio = median / median of the fastest raw path; paired = median over repetitions of the "
         "ratio within one repetition (fastest raw path per case:");
  for (int i = 0; i < n; i++) printf(" %s: %s%s", cases[i].label, path_names[cases[i].fastest], i + 1 < n ? "," : ")\n");
  if (o->paths == PATH_COUNT) return;
  printf("\ndecomposition: ns per launch added to cuLaunchKernelEx (median over repetitions of the "
         "difference within one repetition)\n%-16s", "case");
  static const int steps[] = {PATH_EX_CTX, PATH_EX_SETTER, PATH_GCL_NOSET, PATH_GCL_PARAMS};
  for (int j = 0; j < 4; j++) printf(" %36s", path_names[steps[j]]);
  printf("\n");
  for (int i = 0; i < n; i++) {
    printf("%-16s", cases[i].label);
    for (int j = 0; j < 4; j++) printf(" %32.1f ns", cases[i].added_ns[steps[j]]);
    printf("\n");
  }
}

/* Per case over the runs: range of gcl_launch (params) / fastest raw path, as a ratio of medians
 * and paired, and of the fastest raw path itself (how much the machine moved between runs). */
static void report_spread(double ratio[][MAX_RUNS], double paired[][MAX_RUNS],
                          double raw[][MAX_RUNS], bench_case *cases, int n, int runs) {
  printf("\nover %d runs in this process: gcl_launch (params) / fastest raw path, as a ratio of "
         "medians and paired, and the fastest raw path's own run-to-run spread\n", runs);
  for (int i = 0; i < n; i++) {
    double lo = ratio[i][0], hi = lo, plo = paired[i][0], phi = plo, rlo = raw[i][0], rhi = rlo;
    for (int r = 1; r < runs; r++) {
      lo = ratio[i][r] < lo ? ratio[i][r] : lo, hi = ratio[i][r] > hi ? ratio[i][r] : hi;
      plo = paired[i][r] < plo ? paired[i][r] : plo, phi = paired[i][r] > phi ? paired[i][r] : phi;
      rlo = raw[i][r] < rlo ? raw[i][r] : rlo, rhi = raw[i][r] > rhi ? raw[i][r] : rhi;
    }
    printf("%-16s ratio %.3f ... %.3f, paired %.3f ... %.3f (runs:", cases[i].label, lo, hi, plo,
           phi);
    for (int r = 0; r < runs; r++) printf(" %.3f/%.3f", ratio[i][r], paired[i][r]);
    printf(")   fastest raw %.3f ... %.3f us (spread %.1f%%)\n", rlo, rhi, 100.0 * (rhi / rlo - 1));
  }
}

static void write_csv(FILE *f, bench_case *cases, int n, const options *o, int run) {
  for (int i = 0; i < n; i++) {
    for (int p = 0; p < o->paths; p++)
      fprintf(f, "%s,%s,%.4f,%d,%d,%d\n", cases[i].label, path_names[p], cases[i].median[p],
              o->reps, o->launches, run + 1);
    for (int p = PATH_COUNT; p < o->paths; p++)
      fprintf(f, "%s,ns added to cuLaunchKernelEx by: %s,%.1f,%d,%d,%d\n", cases[i].label,
              path_names[p], cases[i].added_ns[p], o->reps, o->launches, run + 1);
    if (o->paths > PATH_COUNT)
      fprintf(f, "%s,ns added to cuLaunchKernelEx by: %s,%.1f,%d,%d,%d\n", cases[i].label,
              path_names[PATH_GCL_PARAMS], cases[i].added_ns[PATH_GCL_PARAMS], o->reps,
              o->launches, run + 1);
    fprintf(f, "%s,graph replay per node,%.4f,%d,%d,%d\n", cases[i].label, cases[i].graph_us,
            o->reps, o->launches, run + 1);
    fprintf(f, "%s,paired ratio gcl_launch params / %s,%.4f,%d,%d,%d\n", cases[i].label,
            path_names[cases[i].fastest], cases[i].paired[0], o->reps, o->launches, run + 1);
    fprintf(f, "%s,paired ratio gcl_launch extra / %s,%.4f,%d,%d,%d\n", cases[i].label,
            path_names[cases[i].fastest], cases[i].paired[1], o->reps, o->launches, run + 1);
  }
}

static options parse(int argc, char **argv) {
  options o = {21, 2000, 1, 1, PATH_COUNT, bench_exe_rel("../kernels"), NULL};
  for (int i = 1; i < argc; i++) {
    bool more = i + 1 < argc;
    if (more && strcmp(argv[i], "--reps") == 0) o.reps = atoi(argv[++i]);
    else if (more && strcmp(argv[i], "--launches") == 0) o.launches = atoi(argv[++i]);
    else if (more && strcmp(argv[i], "--runs") == 0) o.runs = atoi(argv[++i]);
    else if (strcmp(argv[i], "--no-graph") == 0) o.graph = 0; /* e.g. on the fake driver */
    else if (strcmp(argv[i], "--decompose") == 0) o.paths = PATH_ALL;
    else if (more && strcmp(argv[i], "--kernels") == 0) o.kernels = argv[++i];
    else if (more && strcmp(argv[i], "--csv") == 0) o.csv = argv[++i];
    else {
      fprintf(stderr, "usage: bench_launch [--reps N] [--launches N] [--runs R] [--no-graph] "
                      "[--decompose] [--kernels DIR] [--csv FILE]\n");
      exit(2);
    }
  }
  if (o.reps < 1 || o.launches < 1 || o.runs < 1 || o.runs > MAX_RUNS) {
    fprintf(stderr, "bench_launch: --reps and --launches must be positive, --runs 1 ... %d\n",
            MAX_RUNS);
    exit(2);
  }
  return o;
}

int main(int argc, char **argv) {
  options o = parse(argc, argv);
  gcl_context *ctx = NULL;
  if (gcl_context_create(0, &ctx) != GCL_OK) {
    printf("bench_launch: skipped, no usable GPU: %s\n", gcl_last_error());
    return 0;
  }
  TRY(gcl_context_bind(ctx));
  char path[1024];
  snprintf(path, sizeof path, "%s/launchcfg.fatbin", o.kernels);
  gcl_module *m = NULL;
  TRY(gcl_module_load_file(ctx, path, &m));
  uint64_t dev = 0;
  TRY(gcl_mem_alloc(ctx, 4096, &dev));
  CUstream stream;
  CU(gcl__cu.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  bench_case cases[] = {
      {.label = "8 args", .kernel = "bench_args8", .idx = 7,
       .sig = "i32 a, i32 b, f32 c, f32 d, const f32* p0, f32* p1, u64 n, i32 idx"},
      {.label = "tensormap[16]", .kernel = "bench_maps16", .idx = 1,
       .sig = "grid_constant tensormap[16] m, i32 idx, u64* out"},
      {.label = "tensormap[240]", .kernel = "bench_maps240", .idx = 1,
       .sig = "grid_constant tensormap[240] m, i32 idx, u64* out"},
  };
  int n = (int)(sizeof cases / sizeof *cases);
  gcl_device_info info;
  TRY(gcl_device_query(0, &info));
  int driver = 0;
  TRY(gcl_driver_version(&driver));
  printf("bench_launch: %s (sm_%d), driver %d.%d\n", info.name, info.sm, driver / 1000, driver % 1000 / 10);
  for (int i = 0; i < n; i++) case_setup(&cases[i], m, dev);
  FILE *csv = NULL;
  if (o.csv && !(csv = fopen(o.csv, "w"))) {
    perror(o.csv);
    return 1;
  }
  if (csv) fprintf(csv, "case,path,us_per_launch,reps,launches,run\n");
  static double ratio[3][MAX_RUNS], paired[3][MAX_RUNS], raw[3][MAX_RUNS];
  for (int run = 0; run < o.runs; run++) {
    for (int i = 0; i < n; i++) {
      measure(&cases[i], &o, stream);
      if (o.graph) measure_graph(&cases[i], &o, stream);
      ratio[i][run] = cases[i].median[PATH_GCL_PARAMS] / best_raw(&cases[i]);
      paired[i][run] = cases[i].paired[0];
      raw[i][run] = best_raw(&cases[i]);
    }
    report(cases, n, &o, run);
    if (csv) write_csv(csv, cases, n, &o, run);
  }
  if (o.runs > 1) report_spread(ratio, paired, raw, cases, n, o.runs);
  if (csv) fclose(csv);
  for (int i = 0; i < n; i++) {
    gcl_args_destroy(cases[i].args[0]), gcl_args_destroy(cases[i].args[1]);
    free(cases[i].storage), free(cases[i].packed), free(cases[i].params), free(cases[i].offsets);
  }
  CU(gcl__cu.cuStreamDestroy(stream));
  TRY(gcl_mem_free(ctx, dev));
  gcl_module_destroy(m);
  gcl_context_destroy(ctx);
  return 0;
}
