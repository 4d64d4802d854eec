/* NVSHMEM's host library (libnvshmem_host.so.3) opened at run time through gcl__lib_open, like
 * libcuda and NVRTC: where its ecosystem keeps it -- GCL_NVSHMEM_PATH (the library or its folder),
 * else the dynamic loader's own search, else $NVSHMEM_HOME/lib -- or the file a caller names
 * (gcl_nvshmem_open: the Python package hands over the pip wheel it found by import). Its entry
 * points are resolved and its version checked before it is used; one library per process. */
#include "nvshmem.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define GCL__NVSHMEM_SONAME "libnvshmem_host.so.3"

gcl__nvshmem_api gcl__nvshmem;

static pthread_mutex_t nvshmem_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool opened; /* gcl__nvshmem is filled: read without the lock on the fast path */
static struct {
  bool searched;   /* the default search ran (and failed, unless opened) */
  gcl_status status;
  char message[GCL__MESSAGE_MAX];
  char path[1024]; /* the library open, or "(not found)" */
  int version[3];  /* of the last library examined, usable or not (gcl_nvshmem_version) */
} found = {.path = "(not found)"};

static bool version_ok(const int v[3]) {
  const int min[3] = {GCL__NVSHMEM_MIN_MAJOR, GCL__NVSHMEM_MIN_MINOR, GCL__NVSHMEM_MIN_PATCH};
  for (int i = 0; i < 3; i++)
    if (v[i] != min[i]) return v[i] > min[i];
  return true;
}

/* Resolves lib's entry points into api and reads its version: GCL_OK, or GCL_ERROR_NO_NVSHMEM
 * naming the missing entry point or both versions (into msg). */
static gcl_status resolve(void *lib, const char *path, gcl__nvshmem_api *api, char *msg, size_t cap) {
#define GCL_X_SYM(name, ret, params)                                                              \
  *(void **)&api->name = dlsym(lib, #name);                                                       \
  if (!api->name)                                                                                 \
    return snprintf(msg, cap, "NVSHMEM '%s' lacks %s", path, #name), GCL_ERROR_NO_NVSHMEM;
  GCL_NVSHMEM_ENTRY_POINTS(GCL_X_SYM)
#undef GCL_X_SYM
  int *v = api->version;
  api->nvshmemx_vendor_get_version_info(&v[0], &v[1], &v[2]);
  memcpy(found.version, v, sizeof found.version);
  if (version_ok(v)) return GCL_OK;
  snprintf(msg, cap, "NVSHMEM '%s' is version %d.%d.%d; gclaunch needs 3.3.9 or later "
           "(nvshmemx_culibrary_init)", path, v[0], v[1], v[2]);
  return GCL_ERROR_NO_NVSHMEM;
}

/* Under the lock: lib (opened as s->path) becomes the library, or is closed again (its path is
 * kept: gcl_nvshmem_path names one too old to use too). */
static gcl_status adopt(void *lib, const gcl__lib_search *s, char *msg, size_t cap) {
  gcl__nvshmem_api api;
  memset(&api, 0, sizeof api);
  gcl_status st = resolve(lib, s->path, &api, msg, cap);
  if (st != GCL_OK) {
    snprintf(found.path, sizeof found.path, "%s", s->path);
    dlclose(lib);
    return st;
  }
  gcl__nvshmem = api;
  snprintf(found.path, sizeof found.path, "%s", s->path);
  found.status = GCL_OK;
  found.message[0] = 0;
  atomic_store(&opened, true);
  return GCL_OK;
}

/* path: the library, or a folder holding it. */
static void *open_file_or_folder(gcl__lib_search *s, const char *path) {
  char buf[1100];
  void *lib = gcl__lib_open(s, path, RTLD_NOW | RTLD_GLOBAL, NULL); /* its plugins resolve against it */
  snprintf(buf, sizeof buf, "%s/" GCL__NVSHMEM_SONAME, path);
  return lib ? lib : gcl__lib_open(s, buf, RTLD_NOW | RTLD_GLOBAL, NULL);
}

/* Under the lock, once: GCL_NVSHMEM_PATH, else the loader, else $NVSHMEM_HOME/lib. */
static void search(void) {
  found.searched = true;
  static gcl__lib_search s;
  const char *env = getenv("GCL_NVSHMEM_PATH"), *home = getenv("NVSHMEM_HOME");
  char buf[1100] = "";
  void *lib = NULL;
  if (env && *env) {
    lib = open_file_or_folder(&s, env);
  } else {
    lib = gcl__lib_open(&s, GCL__NVSHMEM_SONAME, RTLD_NOW | RTLD_GLOBAL, "nvshmem_my_pe");
    if (home && *home) snprintf(buf, sizeof buf, "%s/lib/" GCL__NVSHMEM_SONAME, home);
    if (!lib) lib = gcl__lib_open(&s, buf, RTLD_NOW | RTLD_GLOBAL, NULL);
  }
  found.status = lib ? adopt(lib, &s, found.message, sizeof found.message) : GCL_ERROR_NO_NVSHMEM;
  if (lib) return;
  snprintf(found.message, sizeof found.message, "NVSHMEM host library (" GCL__NVSHMEM_SONAME ") "
           "not found: tried %.1500s%s (set GCL_NVSHMEM_PATH to the library or its folder, or "
           "NVSHMEM_HOME; from Python the pip wheel nvidia-nvshmem-cu13 is found by import)",
           s.tried, env && *env ? " (GCL_NVSHMEM_PATH)" : home && *home ? "" : ", NVSHMEM_HOME unset");
}

/* The default search, once, unless a library is open already. */
static void ensure_searched(void) {
  if (atomic_load(&opened)) return;
  pthread_mutex_lock(&nvshmem_lock);
  if (!atomic_load(&opened) && !found.searched) search();
  pthread_mutex_unlock(&nvshmem_lock);
}

gcl_status gcl__nvshmem_load(void) {
  if (atomic_load(&opened)) return GCL_OK;
  ensure_searched();
  pthread_mutex_lock(&nvshmem_lock);
  gcl_status s = atomic_load(&opened) ? GCL_OK : found.status;
  char message[GCL__MESSAGE_MAX];
  memcpy(message, found.message, sizeof message);
  pthread_mutex_unlock(&nvshmem_lock);
  return s == GCL_OK ? GCL_OK : gcl__fail(s, "%s", message);
}

gcl_status gcl_nvshmem_init(void) { return gcl__nvshmem_load(); }

/* Whether a and b name the same file (b may be a folder holding the soname). */
static bool same_library(const char *open_path, const char *given) {
  struct stat a, b;
  char buf[1100];
  if (stat(open_path, &a) != 0) return strcmp(open_path, given) == 0;
  snprintf(buf, sizeof buf, "%s/" GCL__NVSHMEM_SONAME, given);
  return (stat(given, &b) == 0 && S_ISREG(b.st_mode) && a.st_dev == b.st_dev && a.st_ino == b.st_ino) ||
         (stat(buf, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino);
}

gcl_status gcl_nvshmem_open(const char *path) {
  if (!path || !*path)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_nvshmem_open: path is %s", path ? "empty" : "NULL");
  pthread_mutex_lock(&nvshmem_lock);
  gcl_status s = GCL_OK;
  char message[GCL__MESSAGE_MAX] = "";
  if (atomic_load(&opened)) {
    if (!same_library(found.path, path))
      s = GCL_ERROR_NVSHMEM, snprintf(message, sizeof message, "gcl_nvshmem_open: '%s': NVSHMEM's "
                                      "host library '%s' is already open (one per process)", path, found.path);
  } else {
    gcl__lib_search ls;
    memset(&ls, 0, sizeof ls);
    void *lib = open_file_or_folder(&ls, path);
    char why[GCL__MESSAGE_MAX - 32] = "";
    s = lib ? adopt(lib, &ls, why, sizeof why) : GCL_ERROR_NO_NVSHMEM;
    if (!lib) snprintf(message, sizeof message, "gcl_nvshmem_open: tried %.1000s: %.800s", ls.tried, ls.reason);
    else if (s != GCL_OK) snprintf(message, sizeof message, "gcl_nvshmem_open: %s", why);
  }
  pthread_mutex_unlock(&nvshmem_lock);
  return s == GCL_OK ? GCL_OK : gcl__fail(s, "%s", message);
}

const char *gcl_nvshmem_path(void) {
  ensure_searched();
  return found.path;
}

gcl_status gcl_nvshmem_version(int *major, int *minor, int *patch) {
  if (!major || !minor || !patch)
    return gcl__fail_null("gcl_nvshmem_version", 3, "major", (const void *)major, "minor",
                          (const void *)minor, "patch", (const void *)patch);
  ensure_searched();
  if (!found.version[0]) return gcl__nvshmem_load();
  *major = found.version[0]; /* also for a library too old to use: info tells it */
  *minor = found.version[1];
  *patch = found.version[2];
  return GCL_OK;
}
