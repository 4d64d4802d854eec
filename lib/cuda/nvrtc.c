/* CUDA source to a cubin (or PTX) with NVRTC, opened at run time (driver.c loads it). Needs no
 * driver: gcl_module_compile (module.c) loads the result. */
#include "cuda_internal.h"
#include "nvrtc_headers.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static bool has_arch_option(const char *const *options, size_t count) {
  for (size_t i = 0; i < count; i++)
    if (strncmp(options[i], "-arch", 5) == 0 || strncmp(options[i], "--gpu-architecture", 18) == 0)
      return true;
  return false;
}

/* -I<toolkit>/include/cccl next to the NVRTC library in use, so that <cuda/std/...> resolves
 * (NVRTC has no default include path for it). Empty when not found. */
static void cccl_include(char *buf, size_t cap) {
  Dl_info info;
  buf[0] = 0;
  if (!dladdr((void *)gcl__nvrtc.nvrtcVersion, &info) || !info.dli_fname) return;
  char dir[900];
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

static char *program_log(nvrtcProgram prog) {
  size_t n = 0;
  if (gcl__nvrtc.nvrtcGetProgramLogSize(prog, &n) != NVRTC_SUCCESS) n = 0;
  char *log = gcl__calloc(n + 1, 1);
  if (log && n && gcl__nvrtc.nvrtcGetProgramLog(prog, log) != NVRTC_SUCCESS) log[0] = 0;
  return log;
}

/* The cubin, or the PTX (NUL-terminated) when the -arch was virtual. */
static gcl_status program_image(nvrtcProgram prog, void **image, size_t *size) {
  size_t n = 0;
  bool ptx = gcl__nvrtc.nvrtcGetCUBINSize(prog, &n) != NVRTC_SUCCESS || n == 0;
  if (ptx && gcl__nvrtc.nvrtcGetPTXSize(prog, &n) != NVRTC_SUCCESS)
    return gcl__fail(GCL_ERROR_COMPILE, "NVRTC produced neither a cubin nor PTX");
  char *buf = gcl__calloc(n + 1, 1);
  if (!buf) return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "NVRTC output of %zu bytes", n);
  nvrtcResult rc = ptx ? gcl__nvrtc.nvrtcGetPTX(prog, buf) : gcl__nvrtc.nvrtcGetCUBIN(prog, buf);
  if (rc != NVRTC_SUCCESS) {
    gcl__free(buf);
    return gcl__fail(GCL_ERROR_COMPILE, "nvrtcGet%s: %s", ptx ? "PTX" : "CUBIN",
                     gcl__nvrtc.nvrtcGetErrorString(rc));
  }
  *image = buf;
  *size = ptx ? strlen(buf) : n;
  return GCL_OK;
}

static gcl_status run_nvrtc(nvrtcProgram prog, const char *name, const char **opts, size_t n,
                            const char *arch, char **log) {
  nvrtcResult rc = gcl__nvrtc.nvrtcCompileProgram(prog, (int)n, opts);
  char *text = program_log(prog);
  gcl__free(*log);
  *log = text;
  if (rc == NVRTC_SUCCESS) return GCL_OK;
  gcl_status s = gcl__fail(GCL_ERROR_COMPILE, "compiling '%s' (%s): %s\n", name, arch,
                           gcl__nvrtc.nvrtcGetErrorString(rc));
  gcl__fail_append(text ? text : "(no compiler log)");
  return s;
}

gcl_status gcl__nvrtc_compile(const char *source, const char *name, const char *const *options,
                              size_t option_count, int sm, void **image, size_t *size, char **log) {
  for (size_t i = 0; i < option_count; i++)
    if (!options[i]) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_module_compile: options[%zu] is NULL", i);
  if (option_count > 4096) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_module_compile: option_count %zu is too many (at most 4096)", option_count);
  gcl_status s = gcl__nvrtc_load();
  if (s != GCL_OK) return s;
  char arch[32], cccl[1024];
  cccl_include(cccl, sizeof cccl);
  snprintf(arch, sizeof arch, "-arch=sm_%d", sm);
  const char **opts = gcl__malloc((option_count + 2) * sizeof *opts);
  if (!opts) return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "NVRTC options");
  size_t n = 0;
  if (cccl[0]) opts[n++] = cccl;
  for (size_t i = 0; i < option_count; i++) opts[n++] = options[i];
  if (!has_arch_option(options, option_count)) opts[n++] = arch;
  else snprintf(arch, sizeof arch, "%s", "-arch as given");
  nvrtcProgram prog;
  const char *prog_name = name ? name : "gclaunch.cu";
  /* The kernel-side headers (<gclaunch/tma.cuh>, ...) travel with every program. */
  nvrtcResult rc = gcl__nvrtc.nvrtcCreateProgram(&prog, source, prog_name, GCL_NVRTC_HEADER_COUNT,
                                                 nvrtc_header_texts, nvrtc_header_names);
  if (rc != NVRTC_SUCCESS) s = gcl__fail(GCL_ERROR_COMPILE, "nvrtcCreateProgram('%s'): %s", prog_name, gcl__nvrtc.nvrtcGetErrorString(rc));
  if (rc == NVRTC_SUCCESS) {
    s = run_nvrtc(prog, prog_name, opts, n, arch, log);
    if (s == GCL_OK) s = program_image(prog, image, size);
    gcl__nvrtc.nvrtcDestroyProgram(&prog);
  }
  gcl__free(opts);
  return s;
}


gcl_status gcl_nvrtc_compile(const char *source, const char *name, const char *const *options,
                             size_t option_count, int sm, void **image, size_t *size) {
  if (!source || !image || !size || (option_count && !options))
    return gcl__fail_null("gcl_nvrtc_compile", 4, "source", (const void *)source, "image",
                          (const void *)image, "size", (const void *)size, "options",
                          (const void *)options);
  if (sm < 10 || sm > 255)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_nvrtc_compile: sm %d: expected an "
                     "architecture number such as 90", sm);
  char *log = NULL;
  void *out = NULL;
  size_t n = 0;
  gcl_status s = gcl__nvrtc_compile(source, name, options, option_count, sm, &out, &n, &log);
  gcl__free(log);
  if (s == GCL_OK) *image = out, *size = n;
  return s;
}
