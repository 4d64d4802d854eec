/* Where a test program finds its data: the same binary works in the build directory and in the
 * relocatable test kit (`ninja -C BUILD testkit`, tests/kit/), wherever either lies. No absolute
 * path of the build machine is compiled in (tests/kit/check_paths.sh greps the kit for them):
 *   kernels      $GCL_KERNEL_DIR, else <the program's folder>/../kernels (BUILD/tests/NAME and
 *                KIT/tests/NAME both have their kernels one folder up);
 *   source files $GCL_SOURCE_DIR (made absolute against the working directory: `meson test`
 *                and the build directory's ctest file set it, wherever the build directory
 *                lies), else <the program's folder>/../src (the kit's copy of the repository's
 *                test data);
 *   libfakecuda  <the program's folder>/fakecuda/libfakecuda.so (FAKECUDA_PATH);
 *   CUDA toolkit $CUDA_PATH, else GCL_CUDA_ROOT (the toolkit the build used; not a path of the
 *                source or build tree).
 * Included into every test program by tests/meson.build (-include), so GCL_KERNEL_DIR and
 * GCL_SOURCE_DIR read as before in the tests: as strings (const char *), not literals. */
#ifndef GCL_TEST_PATHS_H
#define GCL_TEST_PATHS_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef GCL_CUDA_ROOT
#define GCL_CUDA_ROOT "/usr/local/cuda"
#endif

/* A thread-local ring of buffers: a few results can be used together (several in one printf). */
static inline char *gcl_test_path_buf_(void) {
  static _Thread_local char bufs[8][PATH_MAX];
  static _Thread_local unsigned next;
  return bufs[next++ % 8];
}

/* realpath(<the program's folder>/rel) into a ring buffer; NULL when it does not exist. */
static inline const char *gcl_test_from_exe_(const char *rel) {
  char exe[PATH_MAX], joined[PATH_MAX + 64];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return NULL;
  exe[n] = 0;
  char *slash = strrchr(exe, '/');
  if (!slash) return NULL;
  *slash = 0;
  if ((size_t)snprintf(joined, sizeof joined, "%s/%s", exe, rel) >= sizeof joined) return NULL;
  char *out = gcl_test_path_buf_();
  return realpath(joined, out) ? out : NULL;
}

static inline int gcl_test_is_dir_(const char *p) {
  struct stat st;
  return p && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The folder of the built kernels (see the top). */
static inline const char *gcl_test_kernel_dir(void) {
  const char *env = getenv("GCL_KERNEL_DIR");
  if (env && *env) return env;
  const char *d = gcl_test_from_exe_("../kernels");
  return d ? d : "kernels";
}

/* The root of the repository's files the tests read (see the top). */
static inline const char *gcl_test_source_dir(void) {
  const char *env = getenv("GCL_SOURCE_DIR");
  if (env && *env) {
    char *abs = gcl_test_path_buf_();
    return realpath(env, abs) ? abs : env;
  }
  const char *d = gcl_test_from_exe_("../src");
  return gcl_test_is_dir_(d) ? d : "src";
}

/* The CUDA toolkit's root (see the top). */
static inline const char *gcl_test_cuda_root(void) {
  const char *env = getenv("CUDA_PATH");
  return env && *env ? env : GCL_CUDA_ROOT;
}

/* tests/fakecuda/libfakecuda.so, the CPU stand-in for libcuda that the 'fake' tests link: found
 * next to the test program (tests/tsan defines its own FAKECUDA_PATH). */
static inline const char *gcl_test_fakecuda_path(void) {
  const char *p = gcl_test_from_exe_("fakecuda/libfakecuda.so");
  return p ? p : "tests/fakecuda/libfakecuda.so";
}
#ifndef FAKECUDA_PATH
#define FAKECUDA_PATH gcl_test_fakecuda_path()
#endif
/* tests/fakenvshmem/libfakenvshmem.so, NVSHMEM's CPU stand-in, found the same way. */
static inline const char *gcl_test_fakenvshmem_path(void) {
  const char *p = gcl_test_from_exe_("fakenvshmem/libfakenvshmem.so");
  return p ? p : "tests/fakenvshmem/libfakenvshmem.so";
}

/* A file next to the test program (BUILD/tests/NAME, built there by tests/meson.build); NULL when
 * it is not there. */
static inline const char *gcl_test_beside(const char *name) { return gcl_test_from_exe_(name); }

/* dir/name into a ring buffer. */
static inline const char *gcl_test_join(const char *dir, const char *name) {
  char *out = gcl_test_path_buf_();
  snprintf(out, PATH_MAX, "%s/%s", dir, name);
  return out;
}
/* A file of the built kernels, and one of the repository (a path relative to its root). */
#define GCL_KERNEL(name) gcl_test_join(gcl_test_kernel_dir(), (name))
#define GCL_SOURCE(rel) gcl_test_join(gcl_test_source_dir(), (rel))

#define GCL_KERNEL_DIR gcl_test_kernel_dir()
#define GCL_SOURCE_DIR gcl_test_source_dir()

#endif
