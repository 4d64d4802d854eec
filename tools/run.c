/* gclaunch run: launch one kernel from the command line. Everything that can be checked without a
 * GPU -- options, every --arg spec, the signature, the module's parameter sizes, tensor-map boxes,
 * input files -- is checked first, so mistakes are reported on any machine; then the driver. */
#include "cli.h"
#include "climodule.h"
#include "cliopts.h"
#include "run.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef enum run_option {
  RUN_GRID, RUN_BLOCK, RUN_CLUSTER, RUN_SMEM, RUN_SIGNATURE, RUN_ARCH, RUN_ARG, RUN_BUFFER, RUN_OUT,
  RUN_REPEAT, RUN_WARMUP, RUN_DEVICE, RUN_DEVICES, RUN_SEED, RUN_JSON
} run_option;
#define RUN_OPTION_COUNT (RUN_JSON + 1)
static const cli_option run_options[RUN_OPTION_COUNT] = {
    [RUN_GRID] = {"--grid", "X[,Y,Z]", "blocks in the grid (required)"},
    [RUN_BLOCK] = {"--block", "X[,Y,Z]", "threads in a block (required)"},
    [RUN_CLUSTER] = {"--cluster", "X[,Y,Z]", "blocks in a thread-block cluster"},
    [RUN_SMEM] = {"--smem", "BYTES", "dynamic shared memory per block"},
    [RUN_SIGNATURE] = {"--signature", "TEXT",
                       "the kernel's parameters (gclaunch's signature text),\n"
                       "checked against MODULE's records; without it the\n"
                       "records alone"},
    [RUN_ARCH] = {"--arch", "sm_NN",
                  "the architecture to check and lay out for (default: the\n"
                  "device's, else the module's own)"},
    [RUN_ARG] = {"--arg", "SPEC", "one per kernel parameter, in order (SPEC below)"},
    [RUN_BUFFER] = {"--buffer", "NAME=buf:...",
                    "a buffer that is no parameter (for tmap: and --out)"},
    [RUN_OUT] = {"--out", "NAME=FILE", "after the launches, write buffer NAME's view to FILE"},
    [RUN_REPEAT] = {"--repeat", "N", "timed launches (default 1)"},
    [RUN_WARMUP] = {"--warmup", "N", "launches before the timed ones (default 0)"},
    [RUN_DEVICE] = {"--device", "N", "the device to run on (default 0)"},
    [RUN_DEVICES] = {"--devices", "all|D,D...",
                     "the same launch on each device listed (all: every\n"
                     "device present), each with its own context, module,\n"
                     "buffers and report"},
    [RUN_SEED] = {"--seed", "N", "the generator of =rand fills (default 1)"},
    [RUN_JSON] = {"--json", NULL, "the report as JSON: one object per device and line"},
};

void run_usage(FILE *f) {
  fprintf(f,
      "usage: gclaunch run MODULE KERNEL --grid X[,Y,Z] --block X[,Y,Z] --arg SPEC ... [options]\n\n"
      "MODULE is a cubin, fatbin, PTX or host ELF file, or CUDA source (.cu, compiled with NVRTC).\n"
      "KERNEL is its name (mangled, or demangled without parameters when unique).\n"
      "Before any GPU is used, everything is checked against MODULE itself for one architecture\n"
      "(--arch, else the device's, else the module's own): the kernel, --signature against its\n"
      "parameter records, the --arg specs, the block against its thread limits, shared memory,\n"
      "clusters, tmap lists against tensormap[N]. Exit 1 when MODULE says otherwise.\n");
  cli_options_print(f, "run", run_options, RUN_OPTION_COUNT);
  fprintf(f,
      "\nSPEC (--arg), one per kernel parameter in order, or PATH=SPEC for a field:\n"
      "  f32:1.5  u64:42  i32:-3  bool:true ...      a scalar (bool i8 u8 i16 u16 i32 u32 i64 u64\n"
      "                                             f16 bf16 f32 f64)\n"
      "  [NAME=]buf:TYPE:SHAPE[@OFFSET][=FILL]       a device buffer; SHAPE 1024 or 64x64; FILL\n"
      "                                             zeros (default), iota, rand or @FILE; OFFSET\n"
      "                                             elements before the view (a DLPack byte_offset)\n"
      "  tmap:BUF[,BUF...]:box=AxB[:swizzle=128][:oob=nan][:store=1]\n"
      "                                             tensor map(s) over named buffers, one per\n"
      "                                             element of a tensormap[N] (one name: all)\n"
      "  tmap:BUF:im2col=PIXELSxCHANNELS[:lower=W,H][:upper=W,H]\n"
      "                                             im2col maps over a channels-last buffer\n"
      "  hex:0011aa                                 raw bytes (struct, bytes(N), ...)\n"
      "  PATH=SPEC                                  a field of a by-value struct instead of a whole\n"
      "                                             parameter (g.maps[3]=tmap:a:box=64x64, g.n=u32:7)\n"
      "After the launches: each buffer's sum, FNV-1a hash and first elements, and two median\n"
      "times over --repeat launches: the kernel's (device events recorded around each launch)\n"
      "and the host's (host clock around launch + synchronize, launch overhead included).\n"
      "Exit 2 on a usage error or (after\n"
      "every check passed) without a GPU, 1 when the module or the driver fails.\n");
}

static bool parse_number(const char *opt, const char *v, long long lo, long long hi, long long *out) {
  char *end;
  errno = 0;
  long long x = strtoll(v, &end, 10);
  if (!*v || *end || errno || x < lo || x > hi) {
    run_error("%s '%s': expected an integer in %lld ... %lld", opt, v, lo, hi);
    return false;
  }
  *out = x;
  return true;
}

static bool add_out(run_state *st, const char *v) {
  const char *eq = strchr(v, '=');
  if (!eq || eq == v || !eq[1] || st->nouts == GCL_RUN_MAX_OUTS) {
    run_error("--out '%s': expected NAME=FILE (NAME of a buffer argument)", v);
    return false;
  }
  char *name = strndup(v, (size_t)(eq - v));
  if (!name) return false;
  st->outs[st->nouts++] = (run_out){name, eq + 1};
  return true;
}

static bool add_arg(run_state *st, const char *spec) {
  char err[512];
  runarg *grown = realloc(st->args, (st->nargs + 1) * sizeof *grown);
  if (!grown) return false;
  st->args = grown;
  if (runarg_parse(spec, (int)st->nargs + 1, &st->args[st->nargs], err, sizeof err)) {
    st->nargs++;
    return true;
  }
  fprintf(stderr, "gclaunch run: %s\n", err);
  return false;
}

static bool add_extra(run_state *st, const char *spec) {
  const char **grown = realloc(st->extra, (st->nextra + 1) * sizeof *grown);
  if (!grown) return false;
  st->extra = grown;
  st->extra[st->nextra++] = spec;
  return true;
}

static bool parse_buffers(run_state *st);

/* --buffer specs after the --arg ones: named buffers that are no kernel parameter (the tensors of
 * tensor maps, mostly). */
static bool parse_extras(run_state *st) {
  /* Field specs (PATH=) set parts of a parameter: they go after the --buffer specs, and
   * run_place_fields later gives each parameter they set a placeholder at its index. */
  size_t n = 0;
  for (size_t i = 0; i < st->nargs; i++) n += st->args[i].path[0] == 0;
  runarg *fields = malloc((st->nargs - n + 1) * sizeof *fields);
  if (!fields) return false;
  size_t f = 0, w = 0;
  for (size_t i = 0; i < st->nargs; i++) {
    if (st->args[i].path[0]) fields[f++] = st->args[i];
    else st->args[w++] = st->args[i];
  }
  st->nargs = st->nparams = n;
  bool ok = parse_buffers(st);
  for (size_t i = 0; i < f; i++) {
    runarg *grown = ok ? realloc(st->args, (st->nargs + 1) * sizeof *grown) : NULL;
    if (!grown) ok = false, runarg_free(&fields[i]);
    else st->args = grown, st->args[st->nargs++] = fields[i];
  }
  free(fields);
  return ok;
}

static bool parse_buffers(run_state *st) {
  for (size_t k = 0; k < st->nextra; k++) {
    char err[512];
    runarg *grown = realloc(st->args, (st->nargs + 1) * sizeof *grown);
    if (!grown) return false;
    st->args = grown;
    runarg *a = &st->args[st->nargs];
    if (!runarg_parse(st->extra[k], (int)k + 1, a, err, sizeof err)) {
      const char *rest = err + strlen("--arg ");
      run_error("--buffer %s", rest); /* the parser counts --arg; the number is the same */
      return false;
    }
    st->nargs++;
    a->option = "--buffer";
    if (a->kind != RUNARG_BUFFER || !a->name[0]) {
      run_error("--buffer %zu '%s': expected NAME=buf:TYPE:SHAPE...", k + 1, a->spec);
      return false;
    }
  }
  return true;
}

/* Option id (a run_options index) with its value v; false (message printed) when malformed. */
static bool parse_option(run_state *st, run_option id, const char *v) {
  const char *o = run_options[id].name;
  long long n;
  char err[256];
  switch (id) {
  case RUN_GRID: case RUN_BLOCK: case RUN_CLUSTER: {
    unsigned *d = id == RUN_GRID ? st->grid : id == RUN_BLOCK ? st->block : st->cluster;
    if (runarg_parse_dim3(v, d)) return true;
    run_error("%s '%s': expected X[,Y[,Z]] with each 1 ... 2147483647", o, v);
    return false;
  }
  case RUN_ARG: return add_arg(st, v);
  case RUN_BUFFER: return add_extra(st, v);
  case RUN_OUT: return add_out(st, v);
  case RUN_SIGNATURE: return st->signature = v, true;
  case RUN_ARCH:
    if ((st->arch = cli_parse_arch(v)) != 0) return true;
    run_error("--arch '%s': expected an architecture such as sm_90", v);
    return false;
  case RUN_SMEM: return parse_number(o, v, 0, 1 << 30, &n) && (st->shared_bytes = (size_t)n, true);
  case RUN_REPEAT: return parse_number(o, v, 1, 1000000, &n) && (st->repeat = (int)n, true);
  case RUN_WARMUP: return parse_number(o, v, 0, 1000000, &n) && (st->warmup = (int)n, true);
  case RUN_DEVICE:
    st->device_given = true;
    return parse_number(o, v, 0, 1023, &n) && (st->device = (int)n, true);
  case RUN_DEVICES:
    st->devices_given = true;
    if (runarg_parse_devices(v, &st->devices, err, sizeof err)) return true;
    run_error("%s", err);
    return false;
  case RUN_SEED: return parse_number(o, v, 0, INT64_MAX, &n) && (st->seed = (uint64_t)n, true);
  case RUN_JSON: return st->json = true, true;
  }
  return false;
}

/* Returns -1 to go on, else the exit status. Goes on after a mistake, to report them all. */
static int parse_command_line(int argc, char **argv, run_state *st) {
  bool ok = true, help = false;
  const char *pos[2] = {NULL, NULL};
  int npos = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v;
    int id = cli_option_next("run", run_options, RUN_OPTION_COUNT, argc, argv, &i, &v);
    if (id == CLI_HELP) help = true;
    else if (id == CLI_REFUSED) ok = false;
    else if (id >= 0) ok = parse_option(st, (run_option)id, v) && ok;
    else if (npos < 2) pos[npos++] = a;
    else run_error("unexpected '%s' (MODULE and KERNEL are already '%s' and '%s')", a, pos[0], pos[1]), ok = false;
  }
  if (help) return run_usage(stdout), 0;
  if (npos < 2) run_error("expected MODULE and KERNEL"), run_usage(stderr), ok = false;
  if (ok && st->grid[0] == 0) run_error("--grid is required"), ok = false;
  if (ok && st->block[0] == 0) run_error("--block is required"), ok = false;
  if (ok && st->device_given && st->devices_given)
    run_error("--device and --devices exclude each other"), ok = false;
  ok = ok && parse_extras(st);
  st->module = pos[0];
  st->kernel = pos[1];
  return ok ? -1 : 2;
}

/* Buffer names are unique; tmaps and --out name buffers; tmap boxes pass gcl_tensormap_check on
 * a stand-in address (256-byte aligned, as cuMemAlloc's are). */
static bool check_tmap(const run_state *st, const runarg *a) {
  for (size_t e = 0; e < a->tmap_count; e++) {
    char name[RUNARG_NAME_MAX];
    runarg_tmap_buffer(a, e, name);
    long b = run_find_buffer(st, name);
    if (b < 0) {
      run_error("%s %d '%s': no buffer argument is named '%s' (name one NAME=buf:...)",
                a->option, a->position, a->spec, name);
      return false;
    }
    gcl_tensormap_options o;
    int64_t strides[RUNARG_MAX_RANK];
    DLTensor t;
    run_tensor(&st->args[b], UINT64_C(1) << 32, st->device, strides, &t);
    if (!run_tmap_options(a, &st->args[b], &o)) return false;
    if (gcl_tensormap_check(&t, &o, NULL) != GCL_OK) {
      run_error("%s %d '%s': buffer '%s': %s", a->option, a->position, a->spec, name, gcl_last_error());
      return false;
    }
  }
  return true;
}

static bool check_names(const run_state *st) {
  for (size_t i = 0; i < st->nargs; i++) {
    const runarg *a = &st->args[i];
    if (a->name[0] && run_find_buffer(st, a->name) != (long)i && a->kind == RUNARG_BUFFER) {
      run_error("%s %d '%s': the name '%s' is taken by an earlier buffer", a->option, a->position, a->spec,
                a->name);
      return false;
    }
    if (a->kind == RUNARG_TMAP && !check_tmap(st, a)) return false;
  }
  for (size_t i = 0; i < st->nouts; i++)
    if (run_find_buffer(st, st->outs[i].name) < 0) {
      run_error("--out %s=%s: no buffer argument is named '%s'", st->outs[i].name,
                st->outs[i].path, st->outs[i].name);
      return false;
    }
  return true;
}

/* Whole file into a malloc'd buffer; NULL (message printed) on failure. */
static unsigned char *read_file(const char *what, const char *path, size_t *size) {
  return cli_read_file("run", what, path, size);
}

/* @FILE fills: read now, so a missing file is reported without a GPU. */
static bool read_fill_files(run_state *st) {
  for (size_t i = 0; i < st->nargs; i++) {
    const runarg *a = &st->args[i];
    if (a->kind != RUNARG_BUFFER || a->fill != RUNARG_FILE) continue;
    char what[64];
    size_t size;
    snprintf(what, sizeof what, "%s %d", a->option, a->position);
    struct stat sb; /* judged before it is read: never more than the view is read */
    if (stat(a->file, &sb) == 0 && S_ISREG(sb.st_mode) &&
        (unsigned long long)sb.st_size != (unsigned long long)(a->count * a->size)) {
      run_error("%s %d '%s': '%s' has %llu bytes, the view has %llu (%llu x %zu)", a->option,
                a->position, a->spec, a->file, (unsigned long long)sb.st_size,
                (unsigned long long)(a->count * a->size), (unsigned long long)a->count, a->size);
      return false;
    }
    if (!(st->buffers[i].file_data = read_file(what, a->file, &size))) return false;
    if (size != a->count * a->size) {
      run_error("%s %d '%s': '%s' has %zu bytes, the view has %llu (%llu x %zu)", a->option,
                a->position, a->spec, a->file, size, (unsigned long long)(a->count * a->size),
                (unsigned long long)a->count, a->size);
      return false;
    }
  }
  return true;
}

/* Everything the CPU can check, the module file included. Returns -1 to go on, else the exit
 * status after a message: 2 for the command line (specs, counts, files), 1 when the module says
 * otherwise (no such kernel, another signature, a launch configuration it cannot take). */
static int validate(run_state *st) {
  st->buffers = calloc(st->nargs + 1, sizeof *st->buffers);
  if (!st->buffers) return run_error("out of memory"), 2;
  if (!check_names(st)) return 2;
  gcl_image *img = NULL;
  size_t k = 0;
  int rc = run_read_module(st, &img, &k);
  if (rc < 0) rc = run_check_args(st, img, k);
  if (rc < 0 && !run_check_config(st, img, k)) rc = 1;
  gcl_image_destroy(img);
  if (rc < 0 && !read_fill_files(st)) rc = 2;
  return rc;
}

/* The devices to run on: --device's one, or --devices resolved against the count present.
 * False with *why set when one does not exist. */
static bool pick_devices(run_state *st, int count, const char **why) {
  static char err[256];
  if (!st->devices_given) {
    st->run_devices[0] = st->device;
    st->n_run_devices = 1;
    *why = "no such device";
    return st->device < count;
  }
  st->n_run_devices = runarg_resolve_devices(&st->devices, count, st->run_devices, err, sizeof err);
  *why = err;
  if (st->n_run_devices == 1 && st->devices.all)
    fprintf(stderr, "gclaunch run: --devices all: 1 device present, running on device 0 only\n");
  return st->n_run_devices > 0;
}

/* Without a usable driver or device: say so plainly, after what the CPU could check. */
static int driver_ready(run_state *st) {
  int count = 0;
  const char *why = NULL;
  gcl_status s = gcl_driver_init();
  if (s == GCL_OK) s = gcl_device_count(&count);
  if (s == GCL_OK && pick_devices(st, count, &why)) return -1;
  if (s != GCL_OK) why = gcl_last_error();
  fprintf(stderr, "gclaunch run: checked against '%s' for sm_%d (%s): kernel '%s', its "
          "signature and parameter sizes, the --arg specs, grid, block, cluster and shared memory\n",
          st->module, st->sm, st->arch_from, st->kernel);
  fprintf(stderr, "gclaunch run: the %zu arguments are valid, but there is no GPU to run on: %s (%s)\n",
          st->nparams, why, s == GCL_OK ? "device index" : gcl_status_name(s));
  if (st->json) {
    printf("{\"kernel\": ");
    run_json_string(stdout, st->kernel);
    printf(", \"arch\": \"sm_%d\", \"launched\": false, \"status\": \"%s\", \"error\": ",
           st->sm,
           s == GCL_OK ? "GCL_ERROR_NO_DEVICE" : gcl_status_name(s));
    run_json_string(stdout, why);
    printf("}\n");
  }
  return 2;
}

static void release(run_state *st) {
  for (size_t i = 0; i < st->nargs; i++) {
    runarg_free(&st->args[i]);
    if (st->buffers) gcl_file_free(st->buffers[i].file_data);
  }
  for (size_t i = 0; i < st->nouts; i++) free((char *)st->outs[i].name);
  free(st->args);
  free(st->buffers);
  free(st->kernel_name);
  free(st->extra);
}

int cmd_run(int argc, char **argv) {
  run_state st;
  memset(&st, 0, sizeof st);
  st.repeat = 1;
  st.seed = 1;
  int rc = parse_command_line(argc, argv, &st);
  if (rc < 0) rc = validate(&st);
  if (rc < 0) rc = driver_ready(&st);
  if (rc < 0 && st.n_run_devices > 1 && st.nouts)
    rc = 2, run_error("--out with %zu devices: the files would be overwritten; run one device",
                      st.n_run_devices);
  for (size_t i = 0; rc < 0 && i < st.n_run_devices; i++) { /* each device from scratch */
    st.device = st.run_devices[i];
    int r = run_on_device(&st);
    if (r != 0 || i + 1 == st.n_run_devices) rc = r;
  }
  release(&st);
  return rc;
}
