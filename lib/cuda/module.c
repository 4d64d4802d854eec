/* Modules: cubin, fatbin or PTX images loaded context-independently (cuLibraryLoadData), and CUDA
 * source compiled with NVRTC. A module keeps its context pointer and owns its kernels. */
#include "cuda_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FATBIN_MAGIC 0xBA55ED50u

static uint64_t read_le(const unsigned char *p, size_t n) {
  uint64_t v = 0;
  for (size_t i = n; i-- > 0;) v = v << 8 | p[i];
  return v;
}

/* A table of count entries of entry_size bytes at offset must lie within size. */
static bool table_fits(uint64_t offset, uint64_t count, uint64_t entry_size, size_t size) {
  if (count == 0) return true;
  if (offset > size || entry_size > size) return false;
  return count <= (size - offset) / (entry_size ? entry_size : 1);
}

static gcl_status check_elf(const unsigned char *p, size_t size) {
  if (size < 64 || p[4] != 2 || p[5] != 1)
    return gcl__fail(GCL_ERROR_BAD_IMAGE,
                     "image: ELF but not a 64-bit little-endian cubin (%zu bytes, class %d)",
                     size, size > 4 ? p[4] : -1);
  uint64_t phoff = read_le(p + 0x20, 8), shoff = read_le(p + 0x28, 8);
  uint64_t phentsize = read_le(p + 0x36, 2), phnum = read_le(p + 0x38, 2);
  uint64_t shentsize = read_le(p + 0x3a, 2), shnum = read_le(p + 0x3c, 2);
  if (!table_fits(phoff, phnum, phentsize, size) || !table_fits(shoff, shnum, shentsize, size))
    return gcl__fail(GCL_ERROR_BAD_IMAGE,
                     "image: cubin truncated: its headers need section table at %llu (%llu x "
                     "%llu bytes) but the image has %zu bytes",
                     (unsigned long long)shoff, (unsigned long long)shnum,
                     (unsigned long long)shentsize, size);
  return GCL_OK;
}

static gcl_status check_fatbin(const unsigned char *p, size_t size) {
  if (size < 16) return gcl__fail(GCL_ERROR_BAD_IMAGE, "image: fatbin header truncated (%zu bytes)", size);
  uint64_t header = read_le(p + 6, 2), body = read_le(p + 8, 8);
  if (header < 16 || header > size || body > size - header)
    return gcl__fail(GCL_ERROR_BAD_IMAGE,
                     "image: fatbin truncated: header %llu + body %llu bytes, image has %zu",
                     (unsigned long long)header, (unsigned long long)body, size);
  return GCL_OK;
}

/* PTX: whitespace and comments, then a directive such as .version. */
static bool looks_like_ptx(const char *t, size_t size) {
  size_t i = 0;
  while (i < size) {
    if (t[i] == ' ' || t[i] == '\t' || t[i] == '\r' || t[i] == '\n') {
      i++;
    } else if (i + 1 < size && t[i] == '/' && t[i + 1] == '/') {
      while (i < size && t[i] != '\n') i++;
    } else if (i + 1 < size && t[i] == '/' && t[i + 1] == '*') {
      for (i += 2; i + 1 < size && !(t[i] == '*' && t[i + 1] == '/'); i++) {}
      i += 2;
    } else {
      break;
    }
  }
  return i < size && size - i >= 8 && memcmp(t + i, ".version", 8) == 0;
}

gcl_status gcl__image_format(const void *data, size_t size, gcl_image_format *format) {
  const unsigned char *p = data;
  if (!data || size < 4)
    return gcl__fail(GCL_ERROR_BAD_IMAGE, "image: expected at least 4 bytes, got %zu", data ? size : 0);
  gcl_status s = GCL_OK;
  gcl_image_format f;
  if (memcmp(p, "\x7f" "ELF", 4) == 0) {
    f = GCL_IMAGE_CUBIN;
    s = check_elf(p, size);
  } else if (read_le(p, 4) == FATBIN_MAGIC) {
    f = GCL_IMAGE_FATBIN;
    s = check_fatbin(p, size);
  } else if (looks_like_ptx(data, size)) {
    f = GCL_IMAGE_PTX;
  } else {
    return gcl__fail(GCL_ERROR_BAD_IMAGE,
                     "image: not a cubin (ELF magic 7f 45 4c 46), fatbin (magic 0xBA55ED50) or PTX "
                     "text (.version first); first bytes %02x %02x %02x %02x",
                     p[0], p[1], p[2], p[3]);
  }
  if (s == GCL_OK) *format = f;
  return s;
}

gcl_status gcl__read_file(const char *path, void **data, size_t *size) {
  char err[256];
  FILE *f = fopen(path, "rb");
  if (!f) return gcl__fail(GCL_ERROR_IO, "cannot open '%s': %s", path, strerror_r(errno, err, sizeof err));
  struct stat st;
  if (fstat(fileno(f), &st) == 0 && !S_ISREG(st.st_mode)) {
    fclose(f);
    return gcl__fail(GCL_ERROR_IO, "cannot read '%s': not a regular file", path);
  }
  long n = -1;
  if (fseek(f, 0, SEEK_END) == 0) n = ftell(f);
  if (n < 0 || fseek(f, 0, SEEK_SET) != 0) {
    int e = errno;
    fclose(f);
    return gcl__fail(GCL_ERROR_IO, "cannot size '%s': %s", path, strerror_r(e, err, sizeof err));
  }
  char *buf = gcl__malloc((size_t)n + 1);
  if (!buf) {
    fclose(f);
    return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "reading '%s': cannot allocate %ld bytes", path, n + 1);
  }
  size_t got = fread(buf, 1, (size_t)n, f);
  int e = ferror(f) ? errno : 0;
  fclose(f);
  if (got != (size_t)n) {
    gcl__free(buf);
    return gcl__fail(GCL_ERROR_IO, "reading '%s': got %zu of %ld bytes%s%s", path, got, n,
                     e ? ": " : "", e ? strerror_r(e, err, sizeof err) : "");
  }
  buf[n] = 0;
  *data = buf;
  *size = (size_t)n;
  return GCL_OK;
}

static const char *format_name(gcl_image_format f) {
  return f == GCL_IMAGE_CUBIN ? "cubin" : f == GCL_IMAGE_FATBIN ? "fatbin" : "PTX";
}

static bool load_error_is_image(CUresult rc) {
  return rc == CUDA_ERROR_INVALID_IMAGE || rc == CUDA_ERROR_INVALID_PTX ||
         rc == CUDA_ERROR_UNSUPPORTED_PTX_VERSION || rc == CUDA_ERROR_NO_BINARY_FOR_GPU ||
         rc == CUDA_ERROR_INVALID_SOURCE;
}

/* cuLibraryLoadData with the JIT log buffers of m. PTX must be NUL-terminated for the driver. */
static gcl_status load_image(gcl_module *m, const void *data, size_t size, gcl_image_format f) {
  char *copy = NULL;
  if (f == GCL_IMAGE_PTX && memchr(data, 0, size) == NULL) {
    if (!(copy = gcl__malloc(size + 1))) return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "PTX copy of %zu bytes", size);
    memcpy(copy, data, size);
    copy[size] = 0;
    data = copy;
  }
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                         CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void *vals[] = {m->jit_error, (void *)(uintptr_t)sizeof m->jit_error, m->jit_info,
                  (void *)(uintptr_t)sizeof m->jit_info};
  gcl_status s = gcl__context_bind(m->ctx); /* the JIT targets the current context's device */
  CUresult rc = CUDA_SUCCESS;
  if (s == GCL_OK) rc = gcl__cu.cuLibraryLoadData(&m->lib, data, opts, vals, 4, NULL, NULL, 0);
  gcl__free(copy);
  if (s != GCL_OK) return s;
  if (rc == CUDA_SUCCESS) return GCL_OK;
  s = gcl__cu_fail(rc, "cuLibraryLoadData(%s image, %zu bytes)", format_name(f), size);
  if (m->jit_error[0]) {
    gcl__fail_append("\nJIT log:\n");
    gcl__fail_append(m->jit_error);
  }
  return load_error_is_image(rc) ? GCL_ERROR_BAD_IMAGE : s;
}

static gcl_status module_new(gcl_context *ctx, gcl_module **out) {
  gcl_status s = gcl__cu_load();
  if (s != GCL_OK) return s;
  gcl_module *m = gcl__calloc(1, sizeof *m);
  if (!m) return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "module: out of memory");
  m->ctx = ctx;
  *out = m;
  return GCL_OK;
}

gcl_status gcl_module_load_data(gcl_context *ctx, const void *data, size_t size, gcl_module **out) {
  if (!out) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "out: expected a pointer, got NULL");
  if (!ctx) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "ctx: expected a context, got NULL");
  if (!data) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "data: expected an image, got NULL");
  gcl_image_format f;
  gcl_module *m = NULL;
  gcl_status s = gcl__image_format(data, size, &f);
  if (s == GCL_OK) s = module_new(ctx, &m);
  if (s == GCL_OK && (s = load_image(m, data, size, f)) != GCL_OK) gcl__free(m);
  if (s == GCL_OK) *out = m;
  return s;
}

gcl_status gcl_module_load_file(gcl_context *ctx, const char *path, gcl_module **out) {
  if (!out) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "out: expected a pointer, got NULL");
  if (!path) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "path: expected a file name, got NULL");
  if (!ctx) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "ctx: expected a context, got NULL");
  void *data = NULL;
  size_t size = 0;
  gcl_status s = gcl__read_file(path, &data, &size);
  if (s != GCL_OK) return s;
  s = gcl_module_load_data(ctx, data, size, out);
  gcl__free(data);
  if (s != GCL_OK) {
    gcl__fail_append(" (file '");
    gcl__fail_append(path);
    gcl__fail_append("')");
  }
  return s;
}

/* --- NVRTC ------------------------------------------------------------------------------------ */

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
    if (!options[i]) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "options[%zu]: expected text, got NULL", i);
  if (option_count > 4096) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "option_count: %zu is too many", option_count);
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
  nvrtcResult rc = gcl__nvrtc.nvrtcCreateProgram(&prog, source, prog_name, 0, NULL, NULL);
  if (rc != NVRTC_SUCCESS) s = gcl__fail(GCL_ERROR_COMPILE, "nvrtcCreateProgram('%s'): %s", prog_name, gcl__nvrtc.nvrtcGetErrorString(rc));
  if (rc == NVRTC_SUCCESS) {
    s = run_nvrtc(prog, prog_name, opts, n, arch, log);
    if (s == GCL_OK) s = program_image(prog, image, size);
    gcl__nvrtc.nvrtcDestroyProgram(&prog);
  }
  gcl__free(opts);
  return s;
}

gcl_status gcl_module_compile(gcl_context *ctx, const char *source, const char *name,
                              const char *const *options, size_t option_count, gcl_module **out) {
  if (!out) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "out: expected a pointer, got NULL");
  if (!ctx) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "ctx: expected a context, got NULL");
  if (!source) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "source: expected CUDA source, got NULL");
  if (option_count && !options)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "options: NULL with option_count %zu", option_count);
  void *image = NULL;
  size_t size = 0;
  char *log = NULL;
  gcl_module *m = NULL;
  gcl_status s = gcl__nvrtc_compile(source, name, options, option_count, ctx->sm, &image, &size, &log);
  gcl_image_format f = GCL_IMAGE_CUBIN;
  if (s == GCL_OK) s = gcl__image_format(image, size, &f);
  if (s == GCL_OK) s = module_new(ctx, &m);
  if (s == GCL_OK && (s = load_image(m, image, size, f)) != GCL_OK) gcl__free(m);
  gcl__free(image);
  if (s != GCL_OK) {
    gcl__free(log);
    return s;
  }
  m->compile_log = log;
  *out = m;
  return GCL_OK;
}

const char *gcl_module_log(const gcl_module *mod) {
  if (!mod) return "";
  if (mod->compile_log) return mod->compile_log;
  return mod->jit_error[0] ? mod->jit_error : mod->jit_info;
}

void gcl_module_destroy(gcl_module *mod) {
  if (!mod) return;
  while (mod->kernels) {
    gcl_kernel *k = mod->kernels;
    mod->kernels = k->next;
    gcl__kernel_free(k);
  }
  if (mod->lib) gcl__cu.cuLibraryUnload(mod->lib);
  gcl__free(mod->compile_log);
  gcl__free(mod);
}
