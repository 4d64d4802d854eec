/* Module files on the CPU for run and inspect (climodule.h). */
#include "climodule.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef GCL_HAVE_LIBIBERTY
#include <libiberty/demangle.h>
#endif

void cli_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "gclaunch %s: ", cmd);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

int cli_parse_arch(const char *s) {
  if (!strncmp(s, "sm_", 3)) s += 3;
  else if (!strncmp(s, "compute_", 8)) s += 8;
  char *end;
  long v = strtol(s, &end, 10);
  if (end == s || (*end && strcmp(end, "a") && strcmp(end, "f")) || v < 10 || v > 255) return 0;
  return (int)v;
}

/* The library's one file reader (NUL-terminated; free with gcl_file_free). */
unsigned char *cli_read_file(const char *cmd, const char *what, const char *path, size_t *size) {
  void *data = NULL;
  *size = 0;
  if (gcl_file_read(path, &data, size) != GCL_OK) cli_error(cmd, "%s: %s", what, gcl_last_error());
  return data;
}

bool cli_is_source(const char *path) {
  size_t n = strlen(path);
  return n >= 3 && !strcmp(path + n - 3, ".cu");
}

/* --- NVRTC without a GPU: the library's own libnvrtc (gcl_nvrtc_path), entry points by name -- */

typedef struct nvrtc_prog nvrtc_prog;
typedef struct nvrtc_api {
  int (*create)(nvrtc_prog **, const char *, const char *, int, const char *const *,
                const char *const *);
  int (*compile)(nvrtc_prog *, int, const char *const *);
  int (*cubin_size)(nvrtc_prog *, size_t *);
  int (*cubin)(nvrtc_prog *, char *);
  int (*log_size)(nvrtc_prog *, size_t *);
  int (*log)(nvrtc_prog *, char *);
  int (*destroy)(nvrtc_prog **);
} nvrtc_api;

static bool nvrtc_open(const char *cmd, nvrtc_api *api) {
  if (gcl_nvrtc_init() != GCL_OK) return cli_error(cmd, "NVRTC: %s", gcl_last_error()), false;
  void *h = dlopen(gcl_nvrtc_path(), RTLD_NOW | RTLD_LOCAL); /* already open: the same handle */
  void **f = (void **)api;
  static const char *const names[] = {"nvrtcCreateProgram", "nvrtcCompileProgram",
                                      "nvrtcGetCUBINSize", "nvrtcGetCUBIN", "nvrtcGetProgramLogSize",
                                      "nvrtcGetProgramLog", "nvrtcDestroyProgram"};
  for (size_t i = 0; h && i < sizeof names / sizeof *names; i++)
    if (!(f[i] = dlsym(h, names[i]))) return cli_error(cmd, "NVRTC: no %s", names[i]), false;
  if (!h) cli_error(cmd, "NVRTC: cannot open '%s'", gcl_nvrtc_path());
  return h != NULL;
}

/* -I<toolkit>/include/cccl beside the NVRTC library (lib64/..), as gcl_module_compile adds it;
 * the library's file is found from one of its functions (gcl_nvrtc_path may be a bare soname). */
static void cccl_option(const nvrtc_api *api, char *buf, size_t cap) {
  char dir[900];
  Dl_info info;
  buf[0] = 0;
  if (!dladdr(*(void **)&api->create, &info) || !info.dli_fname) return;
  snprintf(dir, sizeof dir, "%s", info.dli_fname);
  for (int up = 0; up < 2; up++) {
    char *slash = strrchr(dir, '/');
    if (!slash) return;
    *slash = 0;
  }
  char path[1000];
  snprintf(path, sizeof path, "%s/include/cccl", dir);
  if (access(path, F_OK) == 0) snprintf(buf, cap, "-I%s", path);
}

static void print_log(const nvrtc_api *api, nvrtc_prog *prog) {
  size_t n = 0;
  if (api->log_size(prog, &n) != 0 || n < 2) return;
  char *text = calloc(n + 1, 1);
  if (text && api->log(prog, text) == 0) fprintf(stderr, "%s", text);
  free(text);
}

/* source compiled for sm_SM into a cubin (malloc'd). */
static unsigned char *compile(const char *cmd, const char *path, const char *source, int sm,
                              size_t *size) {
  nvrtc_api api;
  if (!nvrtc_open(cmd, &api)) return NULL;
  char arch[32], cccl[1024];
  snprintf(arch, sizeof arch, "-arch=sm_%d", sm);
  cccl_option(&api, cccl, sizeof cccl);
  const char *opts[2] = {arch, cccl};
  nvrtc_prog *prog = NULL;
  unsigned char *cubin = NULL;
  if (api.create(&prog, source, path, 0, NULL, NULL) != 0) {
    cli_error(cmd, "%s: NVRTC could not create a program", path);
    return NULL;
  }
  if (api.compile(prog, cccl[0] ? 2 : 1, opts) != 0) {
    cli_error(cmd, "%s: NVRTC failed to compile it for sm_%d:", path, sm);
    print_log(&api, prog);
  } else if (api.cubin_size(prog, size) == 0 && *size && (cubin = malloc(*size)) &&
             api.cubin(prog, (char *)cubin) != 0)
    free(cubin), cubin = NULL;
  api.destroy(&prog);
  return cubin;
}

bool cli_module_read(const char *cmd, const char *path, int sm, gcl_image **img) {
  size_t size = 0;
  unsigned char *data = cli_read_file(cmd, "MODULE", path, &size), *cubin = NULL;
  if (data && cli_is_source(path)) {
    cubin = compile(cmd, path, (const char *)data, sm ? sm : 90, &size);
    gcl_file_free(data);
    if (!cubin) return false;
  }
  if (!data) return false;
  gcl_status s = gcl_image_parse(cubin ? cubin : data, size, sm, img);
  if (cubin) free(cubin);
  else gcl_file_free(data);
  if (s != GCL_OK) cli_error(cmd, "%s: %s: %s", path, gcl_status_name(s), gcl_last_error());
  return s == GCL_OK;
}
