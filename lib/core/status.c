/* Status names, default texts and the thread-local failure message. */
#include "internal.h"

#include <stdio.h>
#include <string.h>

static _Thread_local char last_error[GCL__MESSAGE_MAX];
/* The CUresult behind this thread's last failure; 0 when that failure was not a driver call. */
static _Thread_local int last_cuda_error;

/* Lookups by value: the enum may have gaps, so no array indexed by position. */
const char *gcl_status_name(gcl_status s) {
  switch (s) {
#define GCL_X_NAME(name, value, text) \
  case name: return #name;
    GCL_STATUS_LIST(GCL_X_NAME)
#undef GCL_X_NAME
  case GCL_STATUS_COUNT: break;
  }
  return "GCL_STATUS_UNKNOWN";
}

const char *gcl_status_text(gcl_status s) {
  switch (s) {
#define GCL_X_TEXT(name, value, text) \
  case name: return text;
    GCL_STATUS_LIST(GCL_X_TEXT)
#undef GCL_X_TEXT
  case GCL_STATUS_COUNT: break;
  }
  return "unknown status";
}

const char *gcl_version(void) { return GCL_VERSION_STRING; }

unsigned gcl_version_number(void) { return GCL_VERSION_NUMBER; }

const char *gcl_last_error(void) { return last_error; }

int gcl_last_cuda_error(void) { return last_cuda_error; }

void gcl__set_last_cuda_error(int cuda_error) { last_cuda_error = cuda_error; }

static gcl_status vfail(gcl_status s, const char *fmt, va_list ap) {
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  last_cuda_error = 0;
  return s;
}

gcl_status gcl__fail(gcl_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfail(s, fmt, ap);
  va_end(ap);
  return s;
}

gcl_status gcl__fail_null(const char *fn, int n, ...) {
  va_list ap;
  va_start(ap, n);
  const char *which = "an argument";
  for (int i = 0; i < n; i++) {
    const char *name = va_arg(ap, const char *);
    const void *value = va_arg(ap, const void *);
    if (!value) {
      which = name;
      break;
    }
  }
  va_end(ap);
  return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", fn, which);
}

void gcl__fail_append(const char *text) {
  size_t used = strlen(last_error);
  if (used + 1 >= sizeof last_error) return;
  snprintf(last_error + used, sizeof last_error - used, "%s", text);
}

const char *gcl__param_label(char *buf, size_t cap, size_t index, const char *name) {
  if (name)
    snprintf(buf, cap, "parameter %zu '%s'", index, name);
  else
    snprintf(buf, cap, "parameter %zu", index);
  return buf;
}
