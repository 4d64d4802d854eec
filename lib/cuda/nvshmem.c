/* NVSHMEM's host library (libnvshmem_host.so.3) opened at run time, like NVRTC (driver.c): found
 * through GCL_NVSHMEM_PATH, the loader's own search, NVSHMEM_HOME, the usual install prefixes and
 * the pip wheel's layout (site-packages/nvidia/nvshmem/lib) of the python3 environments on the
 * system; its version read and checked. */
#include "nvshmem.h"

#include <dlfcn.h>
#include <glob.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GCL__NVSHMEM_SONAME "libnvshmem_host.so.3"

gcl__nvshmem_api gcl__nvshmem;

static pthread_once_t nvshmem_once = PTHREAD_ONCE_INIT;
static struct {
  gcl_status status;
  char message[GCL__MESSAGE_MAX];
  char path[1024];
  size_t tried_len;
} found;

static void note_tried(const char *path) {
  size_t cap = sizeof found.message, used = found.tried_len;
  if (used >= cap - 1) return;
  int n = snprintf(found.message + used, cap - used, "%s'%s'", used ? ", " : "", path);
  found.tried_len = n < 0 ? used : (used + (size_t)n < cap ? used + (size_t)n : cap - 1);
}

static void *try_open(const char *path) {
  void *lib = dlopen(path, RTLD_NOW | RTLD_GLOBAL); /* its plugins resolve against it */
  if (lib) snprintf(found.path, sizeof found.path, "%s", path);
  else note_tried(path);
  return lib;
}

/* Every match of pattern, in glob's order; the first that opens. */
static void *try_glob(const char *pattern) {
  glob_t g;
  void *lib = NULL;
  if (glob(pattern, 0, NULL, &g) != 0) {
    note_tried(pattern); /* no match: the message shows where it looked */
    return NULL;
  }
  for (size_t i = 0; i < g.gl_pathc && !lib; i++) lib = try_open(g.gl_pathv[i]);
  globfree(&g);
  return lib;
}

/* The wheel under the environment of each python3 on PATH (a venv's bin/python3 gives
 * bin/../lib/python3.X/site-packages). */
static void *try_path_pythons(void) {
  const char *path = getenv("PATH");
  if (!path) return NULL;
  char dir[768], pattern[1024];
  while (*path) {
    size_t n = strcspn(path, ":");
    snprintf(dir, sizeof dir, "%.*s", (int)(n < sizeof dir ? n : sizeof dir - 1), path);
    path += n + (path[n] == ':');
    snprintf(pattern, sizeof pattern, "%s/python3", dir);
    if (!dir[0] || access(pattern, X_OK) != 0) continue;
    snprintf(pattern, sizeof pattern,
             "%s/../lib/python3*/*-packages/nvidia/nvshmem/lib/" GCL__NVSHMEM_SONAME, dir);
    void *lib = try_glob(pattern);
    if (lib) return lib;
  }
  return NULL;
}

static void *search(void) {
  const char *env = getenv("GCL_NVSHMEM_PATH");
  char buf[1024];
  if (env && *env) {
    snprintf(buf, sizeof buf, "%s/" GCL__NVSHMEM_SONAME, env);
    void *lib = try_open(env);
    return lib ? lib : try_open(buf); /* a file, or the folder holding it */
  }
  void *lib = try_open(GCL__NVSHMEM_SONAME);
  const char *home = getenv("NVSHMEM_HOME");
  if (!lib && home && *home) {
    snprintf(buf, sizeof buf, "%s/lib/" GCL__NVSHMEM_SONAME, home);
    lib = try_open(buf);
  }
  static const char *const prefixes[] = {
      "/usr/lib/x86_64-linux-gnu/nvshmem/*/" GCL__NVSHMEM_SONAME,
      "/usr/lib/aarch64-linux-gnu/nvshmem/*/" GCL__NVSHMEM_SONAME,
      "/usr/local/nvshmem/lib/" GCL__NVSHMEM_SONAME, "/opt/nvidia/nvshmem/lib/" GCL__NVSHMEM_SONAME};
  for (size_t i = 0; !lib && i < sizeof prefixes / sizeof *prefixes; i++) lib = try_glob(prefixes[i]);
  const char *venv = getenv("VIRTUAL_ENV");
  if (!lib && venv && *venv) {
    snprintf(buf, sizeof buf, "%s/lib/python3*/site-packages/nvidia/nvshmem/lib/" GCL__NVSHMEM_SONAME, venv);
    lib = try_glob(buf);
  }
  if (!lib) lib = try_path_pythons();
  static const char *const wheels[] = {
      "/usr/local/lib/python3*/*-packages/nvidia/nvshmem/lib/" GCL__NVSHMEM_SONAME,
      "/usr/lib/python3*/*-packages/nvidia/nvshmem/lib/" GCL__NVSHMEM_SONAME,
      "/opt/*/.venv/lib/python3*/site-packages/nvidia/nvshmem/lib/" GCL__NVSHMEM_SONAME};
  for (size_t i = 0; !lib && i < sizeof wheels / sizeof *wheels; i++) lib = try_glob(wheels[i]);
  return lib;
}

static bool version_ok(const int v[3]) {
  const int min[3] = {GCL__NVSHMEM_MIN_MAJOR, GCL__NVSHMEM_MIN_MINOR, GCL__NVSHMEM_MIN_PATCH};
  for (int i = 0; i < 3; i++)
    if (v[i] != min[i]) return v[i] > min[i];
  return true;
}

static void fail(const char *fmt, const char *a, const char *b) {
  char text[GCL__MESSAGE_MAX];
  snprintf(text, sizeof text, fmt, a, b);
  memcpy(found.message, text, sizeof text);
  found.status = GCL_ERROR_NO_NVSHMEM;
}

static void nvshmem_load_once(void) {
  void *lib = search();
  if (!lib) {
    char tried[GCL__MESSAGE_MAX];
    memcpy(tried, found.message, sizeof tried);
    fail("NVSHMEM host library (" GCL__NVSHMEM_SONAME ") not found: tried %.1800s%s (set "
         "GCL_NVSHMEM_PATH to the library or its folder)", tried, "");
    snprintf(found.path, sizeof found.path, "%s", "(not found)");
    return;
  }
#define GCL_X_SYM(name, ret, params)                                                              \
  *(void **)&gcl__nvshmem.name = dlsym(lib, #name);                                               \
  if (!gcl__nvshmem.name) return fail("NVSHMEM '%s' lacks %s", found.path, #name);
  GCL_NVSHMEM_ENTRY_POINTS(GCL_X_SYM)
#undef GCL_X_SYM
  int *v = gcl__nvshmem.version;
  gcl__nvshmem.nvshmemx_vendor_get_version_info(&v[0], &v[1], &v[2]);
  if (!version_ok(v)) {
    char have[64];
    snprintf(have, sizeof have, "%d.%d.%d", v[0], v[1], v[2]);
    return fail("NVSHMEM '%s' is version %s; gclaunch needs 3.3.9 or later "
                "(nvshmemx_culibrary_init)", found.path, have);
  }
  found.status = GCL_OK;
  found.message[0] = 0;
}

gcl_status gcl__nvshmem_load(void) {
  pthread_once(&nvshmem_once, nvshmem_load_once);
  if (found.status != GCL_OK) return gcl__fail(found.status, "%s", found.message);
  return GCL_OK;
}

gcl_status gcl_nvshmem_init(void) { return gcl__nvshmem_load(); }

const char *gcl_nvshmem_path(void) {
  pthread_once(&nvshmem_once, nvshmem_load_once);
  return found.path;
}

gcl_status gcl_nvshmem_version(int *major, int *minor, int *patch) {
  if (!major || !minor || !patch)
    return gcl__fail_null("gcl_nvshmem_version", 3, "major", (const void *)major, "minor",
                          (const void *)minor, "patch", (const void *)patch);
  pthread_once(&nvshmem_once, nvshmem_load_once);
  if (!gcl__nvshmem.version[0]) return gcl__fail(found.status, "%s", found.message);
  *major = gcl__nvshmem.version[0]; /* also for a library too old to use: info tells it */
  *minor = gcl__nvshmem.version[1];
  *patch = gcl__nvshmem.version[2];
  return GCL_OK;
}
