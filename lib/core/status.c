/* Status names, default texts and the thread-local failure message. */
#include "internal.h"

#include <stdbool.h>
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

size_t gcl__utf8_len(const unsigned char *s, size_t n) {
  if (!n) return 0;
  unsigned c = s[0];
  if (c < 0x80) return 1;
  size_t len = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  if (!len || n < len) return 0;
  for (size_t i = 1; i < len; i++)
    if ((s[i] & 0xC0) != 0x80) return 0;
  if (c == 0xE0 && s[1] < 0xA0) return 0;  /* overlong */
  if (c == 0xED && s[1] >= 0xA0) return 0; /* a surrogate */
  if (c == 0xF0 && s[1] < 0x90) return 0;  /* overlong */
  if (c == 0xF4 && s[1] >= 0x90) return 0; /* past U+10FFFF */
  return len;
}

size_t gcl__utf8_cut(const char *s, size_t n) {
  const unsigned char *u = (const unsigned char *)s;
  size_t m = 0;
  while (m < n && u[m]) {
    size_t len = u[m] < 0x80 ? 1 : gcl__utf8_len(u + m, strnlen(s + m, 4));
    if (!len) len = 1; /* not text: one byte, shown escaped by the message writer */
    if (m + len > n) break;
    m += len;
  }
  return m;
}

/* Rewrites this thread's message as valid UTF-8 from byte `from` on (the part just written):
 * bytes that start no valid sequence become "\xNN"; what does not fit is cut at a character. */
static void make_text(size_t from) {
  static _Thread_local char raw[GCL__MESSAGE_MAX];
  size_t n = strlen(last_error + from), out = from;
  const unsigned char *u = (const unsigned char *)raw;
  bool clean = true;
  for (size_t i = from; last_error[i]; i++)
    if ((unsigned char)last_error[i] >= 0x80) { clean = false; break; }
  if (clean) return;
  memcpy(raw, last_error + from, n + 1);
  for (size_t i = 0; i < n;) {
    size_t len = gcl__utf8_len(u + i, n - i);
    if (len) {
      if (out + len >= sizeof last_error) break;
      memcpy(last_error + out, raw + i, len);
      out += len, i += len;
    } else {
      if (out + 4 >= sizeof last_error) break;
      snprintf(last_error + out, 5, "\\x%02X", u[i]);
      out += 4, i++;
    }
  }
  last_error[out] = '\0';
}

static gcl_status vfail(gcl_status s, const char *fmt, va_list ap) {
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  make_text(0);
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
  make_text(used);
}

const char *gcl__param_label(char *buf, size_t cap, size_t index, const char *name) {
  if (name)
    snprintf(buf, cap, "parameter %zu '%s'", index, name);
  else
    snprintf(buf, cap, "parameter %zu", index);
  return buf;
}
