/* gcl__lib_open (driver.h): every library gclaunch opens at run time goes through here, so that
 * each says the same things about what it tried and what it found. */
#include "driver.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static void note_tried(gcl__lib_search *s, const char *candidate) {
  size_t cap = sizeof s->tried, used = s->tried_len;
  if (used >= cap - 1) return;
  int n = snprintf(s->tried + used, cap - used, "%s'%s'", used ? ", " : "", candidate);
  s->tried_len = n < 0 ? used : (used + (size_t)n < cap ? used + (size_t)n : cap - 1);
}

void *gcl__lib_open(gcl__lib_search *s, const char *candidate, int flags, const char *symbol) {
  if (!candidate || !*candidate) return NULL;
  void *lib = dlopen(candidate, flags);
  if (!lib) {
    const char *err = dlerror();
    snprintf(s->reason, sizeof s->reason, "%s", err ? err : "unknown error");
    note_tried(s, candidate);
    return NULL;
  }
  snprintf(s->path, sizeof s->path, "%s", candidate);
  Dl_info info;
  void *sym = strchr(candidate, '/') || !symbol ? NULL : dlsym(lib, symbol);
  if (sym && dladdr(sym, &info) && info.dli_fname && strchr(info.dli_fname, '/'))
    snprintf(s->path, sizeof s->path, "%s", info.dli_fname); /* where the loader found it */
  return lib;
}
