/* runargs.c: parser of `gclaunch run --arg` specs. Pure CPU; every error names the argument. */
#include "runargs.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h> /* INFINITY only: no libm */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parser {
  const char *spec;
  int position;
  char *err;
  size_t cap;
} parser;

static bool bad(const parser *p, const char *fmt, ...) {
  int n = snprintf(p->err, p->cap, "--arg %d '%s': ", p->position, p->spec);
  if (n >= 0 && (size_t)n < p->cap) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err + n, p->cap - (size_t)n, fmt, ap);
    va_end(ap);
  }
  return false;
}

/* The library's scalar names (gcl_scalar_name); "?" for VOID and values outside the enum. */
const char *runarg_type_name(gcl_scalar t) {
  return t == GCL_SCALAR_VOID ? "?" : gcl_scalar_name(t);
}

/* Type named by the len bytes at s; GCL_SCALAR_VOID if none. */
static gcl_scalar type_lookup(const char *s, size_t len) {
  for (int t = GCL_SCALAR_BOOL; t <= GCL_SCALAR_F64; t++) {
    const char *name = gcl_scalar_name((gcl_scalar)t);
    if (strlen(name) == len && !strncmp(name, s, len)) return (gcl_scalar)t;
  }
  return GCL_SCALAR_VOID;
}

/* A decimal count at *s (1 ... max), advancing *s past it. */
static bool parse_count(const char **s, uint64_t max, uint64_t *out) {
  if (!isdigit((unsigned char)**s)) return false;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(*s, &end, 10);
  if (errno || v < 1 || v > max) return false;
  *s = end;
  *out = v;
  return true;
}

/* "AxBxC" into dims; *rank gets the count. Stops at the first character that is not part of it. */
static bool parse_dims(const char **s, uint64_t max, uint64_t *dims, size_t *rank) {
  size_t r = 0;
  do {
    if (r == RUNARG_MAX_RANK || !parse_count(s, max, &dims[r])) return false;
    r++;
  } while (**s == 'x' && (*s)++);
  *rank = r;
  return true;
}

static bool parse_int(const parser *p, const char *v, gcl_scalar t, runarg *out) {
  static const int64_t lo[] = {[GCL_SCALAR_I8] = INT8_MIN, [GCL_SCALAR_I16] = INT16_MIN,
                               [GCL_SCALAR_I32] = INT32_MIN, [GCL_SCALAR_I64] = INT64_MIN};
  static const uint64_t hi[] = {[GCL_SCALAR_I8] = INT8_MAX,   [GCL_SCALAR_U8] = UINT8_MAX,
                                [GCL_SCALAR_I16] = INT16_MAX, [GCL_SCALAR_U16] = UINT16_MAX,
                                [GCL_SCALAR_I32] = INT32_MAX, [GCL_SCALAR_U32] = UINT32_MAX,
                                [GCL_SCALAR_I64] = INT64_MAX, [GCL_SCALAR_U64] = UINT64_MAX};
  bool is_signed = t == GCL_SCALAR_I8 || t == GCL_SCALAR_I16 || t == GCL_SCALAR_I32 ||
                   t == GCL_SCALAR_I64;
  char *end;
  errno = 0;
  uint64_t bits;
  if (is_signed) {
    long long x = strtoll(v, &end, 0);
    if (!errno && *v && !*end && (x < lo[t] || x > (int64_t)hi[t])) errno = ERANGE;
    bits = (uint64_t)x;
  } else {
    bits = strtoull(v, &end, 0);
    if (strchr(v, '-') || (!errno && bits > hi[t])) errno = ERANGE;
  }
  if (!*v || *end || isspace((unsigned char)*v)) return bad(p, "'%s' is not an integer", v);
  if (errno) return bad(p, "%s out of range for %s", v, runarg_type_name(t));
  memcpy(out->value, &bits, out->size); /* little-endian host: the low bytes */
  return true;
}

static bool parse_float(const parser *p, const char *v, gcl_scalar t, runarg *out) {
  char *end;
  double x = strtod(v, &end);
  if (!*v || *end || isspace((unsigned char)*v)) return bad(p, "'%s' is not a number", v);
  if (t != GCL_SCALAR_F64 && x == x && (x < 0 ? -x : x) > 3.4028234663852886e38 &&
      (x < 0 ? -x : x) != (double)INFINITY)
    return bad(p, "%s out of range for %s", v, runarg_type_name(t));
  runarg_store(t, out->value, x);
  return true;
}

static bool parse_scalar(const parser *p, gcl_scalar t, const char *v, runarg *out) {
  out->kind = RUNARG_SCALAR;
  out->type = t;
  out->size = runarg_type_size(t);
  if (t == GCL_SCALAR_BOOL) {
    if (strcmp(v, "true") && strcmp(v, "false") && strcmp(v, "1") && strcmp(v, "0"))
      return bad(p, "'%s' is not a bool (true, false, 1, 0)", v);
    out->value[0] = v[0] == 't' || v[0] == '1';
    return true;
  }
  if (t == GCL_SCALAR_F16 || t == GCL_SCALAR_BF16 || t == GCL_SCALAR_F32 || t == GCL_SCALAR_F64)
    return parse_float(p, v, t, out);
  return parse_int(p, v, t, out);
}

static bool parse_fill(const parser *p, const char *s, runarg *out) {
  if (!strcmp(s, "zeros")) out->fill = RUNARG_ZEROS;
  else if (!strcmp(s, "iota")) out->fill = RUNARG_IOTA;
  else if (!strcmp(s, "rand")) out->fill = RUNARG_RAND;
  else if (s[0] == '@' && s[1]) out->fill = RUNARG_FILE, out->file = s + 1;
  else return bad(p, "unknown fill '%s' (expected zeros, iota, rand or @FILE)", s);
  return true;
}

/* body after "buf:": TYPE ":" SHAPE [ "@" OFFSET ] [ "=" FILL ] */
static bool parse_buffer(const parser *p, const char *s, runarg *out) {
  const char *colon = strchr(s, ':');
  size_t tlen = colon ? (size_t)(colon - s) : strcspn(s, "=@");
  gcl_scalar t = type_lookup(s, tlen);
  if (t == GCL_SCALAR_VOID) return bad(p, "unknown element type '%.*s'", (int)tlen, s);
  if (!colon) return bad(p, "expected buf:%s:COUNT (a shape such as 1024 or 64x64)", gcl_scalar_name(t));
  out->kind = RUNARG_BUFFER;
  out->type = t;
  out->size = runarg_type_size(t);
  const char *q = colon + 1, *shape = q;
  if (!parse_dims(&q, UINT32_MAX, out->shape, &out->rank) || (*q && *q != '@' && *q != '='))
    return bad(p, "bad shape '%.*s' (expected 1 to 5 counts >= 1 joined by 'x', e.g. 64x64)",
               (int)strcspn(shape, "@="), shape);
  out->count = 1;
  for (size_t i = 0; i < out->rank; i++) out->count *= out->shape[i];
  if (out->count > (UINT64_C(1) << 40) / out->size)
    return bad(p, "%" PRIu64 " elements is more than 1 TiB", out->count);
  if (*q == '@') {
    char *end = (char *)++q;
    errno = 0;
    unsigned long long off = isdigit((unsigned char)*q) ? strtoull(q, &end, 10) : 0;
    if (end == q || errno || off > (UINT64_C(1) << 32) || (*end && *end != '='))
      return bad(p, "bad element offset '@%.*s' (expected @N with 0 <= N <= 2^32)",
                 (int)strcspn(q, "="), q);
    out->offset = off;
    q = end;
  }
  return *q == '=' ? parse_fill(p, q + 1, out) : true;
}

static bool parse_box(const parser *p, const char *v, runarg *out) {
  uint64_t dims[RUNARG_MAX_RANK];
  const char *q = v;
  if (!parse_dims(&q, 256, dims, &out->box_rank) || *q)
    return bad(p, "bad box '%s' (expected 1 to 5 sizes 1 ... 256 joined by 'x', e.g. 64x64)", v);
  for (size_t i = 0; i < out->box_rank; i++) out->box[i] = (uint32_t)dims[i];
  return true;
}

/* "PIXELSxCHANNELS" (1 ... 1024 and 1 ... 256; the library checks the limits again). */
static bool parse_im2col(const parser *p, const char *v, runarg *out) {
  unsigned long pixels = 0, channels = 0;
  char *end = NULL;
  errno = 0;
  if (isdigit((unsigned char)*v)) pixels = strtoul(v, &end, 10);
  if (end && *end == 'x' && isdigit((unsigned char)end[1])) channels = strtoul(end + 1, &end, 10);
  if (!end || *end || errno || pixels < 1 || pixels > 1024 || channels < 1 || channels > 256)
    return bad(p, "bad im2col '%s' (expected PIXELSxCHANNELS, 1 ... 1024 pixels and 1 ... 256 "
               "channels, e.g. 128x64)", v);
  out->im2col_pixels = (uint32_t)pixels;
  out->im2col_channels = (uint32_t)channels;
  return true;
}

/* "W[,H[,D]]": signed offsets (the library checks each rank's range). */
static bool parse_corner(const parser *p, const char *key, const char *v, int32_t c[3]) {
  const char *q = v;
  for (int i = 0; i < 3; i++) {
    char *end = NULL;
    errno = 0;
    long x = (*q == '-' || isdigit((unsigned char)*q)) ? strtol(q, &end, 10) : 0;
    if (!end || end == q || errno || x < -32768 || x > 32767 || (*end && *end != ','))
      break;
    c[i] = (int32_t)x;
    if (!*end) return true;
    q = end + 1;
  }
  return bad(p, "bad %s '%s' (expected W[,H[,D]]: 1 to 3 offsets -32768 ... 32767, e.g. -1,-1)",
             key, v);
}

static bool parse_tmap_option(const parser *p, const char *o, size_t len, runarg *out) {
  char v[64];
  snprintf(v, sizeof v, "%.*s", (int)len, o);
  char *eq = strchr(v, '=');
  if (!eq)
    return bad(p, "tmap option '%s' has no '=' (box=, swizzle=, oob=, store=, im2col=, lower=, "
               "upper=)", v);
  *eq++ = 0;
  if (!strcmp(v, "box")) return parse_box(p, eq, out);
  if (!strcmp(v, "swizzle")) {
    static const char *const sw[] = {"none", "32", "64", "128"};
    for (int i = 0; i < 4; i++)
      if (!strcmp(eq, sw[i])) return out->swizzle = i, true;
    return bad(p, "unknown swizzle '%s' (none, 32, 64, 128)", eq);
  }
  if (!strcmp(v, "oob")) {
    if (strcmp(eq, "zero") && strcmp(eq, "nan")) return bad(p, "unknown oob '%s' (zero, nan)", eq);
    out->oob_fill = eq[0] == 'n' ? GCL_TENSORMAP_OOB_NAN : GCL_TENSORMAP_OOB_ZERO;
    return true;
  }
  if (!strcmp(v, "store")) {
    if (strcmp(eq, "0") && strcmp(eq, "1")) return bad(p, "bad store '%s' (0 or 1)", eq);
    return out->store = eq[0] == '1', true;
  }
  if (!strcmp(v, "im2col")) return parse_im2col(p, eq, out);
  if (!strcmp(v, "lower") || !strcmp(v, "upper"))
    return parse_corner(p, v, eq, v[0] == 'l' ? out->im2col_lower : out->im2col_upper);
  return bad(p, "unknown tmap option '%s' (box=, swizzle=, oob=, store=, im2col=, lower=, "
             "upper=)", v);
}

static bool valid_name(const char *s, size_t len) {
  if (!len || len >= RUNARG_NAME_MAX || isdigit((unsigned char)s[0])) return false;
  for (size_t i = 0; i < len; i++)
    if (!isalnum((unsigned char)s[i]) && s[i] != '_') return false;
  return true;
}

/* body after "tmap:": BUF { "," BUF } { ":" OPTION } */
static bool parse_tmap(const parser *p, const char *s, runarg *out) {
  out->kind = RUNARG_TMAP;
  out->tmap_list = s;
  out->tmap_list_len = strcspn(s, ":");
  for (const char *b = s; b < s + out->tmap_list_len; out->tmap_count++) {
    size_t len = strcspn(b, ",:");
    if (!valid_name(b, len)) return bad(p, "bad buffer name '%.*s' in the tmap list", (int)len, b);
    b += len + (b[len] == ',');
  }
  if (!out->tmap_count) return bad(p, "expected tmap:BUFFER[,BUFFER...]:box=AxB");
  for (const char *o = s + out->tmap_list_len; *o == ':';) {
    size_t len = strcspn(o + 1, ":");
    if (!parse_tmap_option(p, o + 1, len, out)) return false;
    o += 1 + len;
  }
  if (!out->box_rank && !out->im2col_pixels)
    return bad(p, "a tmap needs box=AxB (the box size, in the buffer's shape order) or "
               "im2col=PIXELSxCHANNELS");
  if (out->box_rank && out->im2col_pixels)
    return bad(p, "box= and im2col= exclude each other (an im2col map has no box)");
  return true;
}

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = (char)tolower((unsigned char)c);
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static bool parse_hex(const parser *p, const char *s, runarg *out) {
  size_t n = strlen(s);
  if (!n || n % 2) return bad(p, "expected an even, non-zero number of hex digits, got %zu", n);
  for (size_t i = 0; i < n; i++)
    if (hex_digit(s[i]) < 0) return bad(p, "'%c' at %zu is not a hex digit", s[i], i);
  out->bytes = malloc(n / 2);
  if (!out->bytes) return bad(p, "out of memory");
  for (size_t i = 0; i < n / 2; i++)
    out->bytes[i] = (unsigned char)(hex_digit(s[2 * i]) << 4 | hex_digit(s[2 * i + 1]));
  out->kind = RUNARG_HEX;
  out->size = n / 2;
  return true;
}

/* A field path: identifiers and indexes joined by '.' and '[N]' (the library checks the rest). */
static bool is_path(const char *s, size_t len) {
  if (!memchr(s, '.', len) && !memchr(s, '[', len)) return false;
  for (size_t i = 0; i < len; i++)
    if (!isalnum((unsigned char)s[i]) && !strchr("_.[]", s[i])) return false;
  return len < RUNARG_PATH_MAX;
}

/* Splits off "NAME=" (or "PATH=") when an '=' comes before the first ':'. */
static bool parse_name(const parser *p, const char **s, runarg *out) {
  size_t len = strcspn(*s, ":=");
  if ((*s)[len] != '=') return true;
  if (is_path(*s, len)) {
    memcpy(out->path, *s, len);
    out->path[len] = 0;
    *s += len + 1;
    return true;
  }
  if (!valid_name(*s, len))
    return bad(p, "bad name '%.*s' (a C identifier of at most %d characters, or a field path "
               "such as g.maps[3])", (int)len, *s, RUNARG_NAME_MAX - 1);
  memcpy(out->name, *s, len);
  out->name[len] = 0;
  *s += len + 1;
  return true;
}

static bool parse_body(const parser *p, const char *s, runarg *out) {
  size_t klen = strcspn(s, ":");
  if (!s[klen])
    return bad(p, "expected KIND:VALUE (e.g. f32:1.5, buf:f32:1024=iota, tmap:BUF:box=64x64, hex:00ff)");
  const char *rest = s + klen + 1;
  if (klen == 3 && !strncmp(s, "buf", 3)) return parse_buffer(p, rest, out);
  if (klen == 4 && !strncmp(s, "tmap", 4)) return parse_tmap(p, rest, out);
  if (klen == 3 && !strncmp(s, "hex", 3)) return parse_hex(p, rest, out);
  gcl_scalar t = type_lookup(s, klen);
  if (t == GCL_SCALAR_VOID)
    return bad(p, "unknown argument kind '%.*s' (a scalar type such as f32, or buf, tmap, hex)",
               (int)klen, s);
  return parse_scalar(p, t, rest, out);
}

bool runarg_parse(const char *spec, int position, runarg *out, char *err, size_t cap) {
  parser p = {spec ? spec : "", position, err, cap};
  runarg a;
  memset(&a, 0, sizeof a);
  a.position = position;
  a.option = "--arg";
  a.spec = p.spec;
  const char *s = p.spec;
  if (!parse_name(&p, &s, &a) || !parse_body(&p, s, &a)) {
    runarg_free(&a);
    return false;
  }
  *out = a;
  return true;
}

void runarg_free(runarg *a) {
  if (!a) return;
  free(a->bytes);
  a->bytes = NULL;
}

void runarg_tmap_buffer(const runarg *a, size_t i, char *name) {
  const char *b = a->tmap_list;
  for (; i > 0; i--) b += strcspn(b, ",:") + 1;
  size_t len = strcspn(b, ",:");
  snprintf(name, RUNARG_NAME_MAX, "%.*s", (int)len, b);
}

bool runarg_parse_dim3(const char *text, unsigned out[3]) {
  unsigned v[3] = {1, 1, 1};
  const char *s = text;
  for (int i = 0; i < 3; i++) {
    uint64_t x;
    if (!parse_count(&s, INT32_MAX, &x)) return false;
    v[i] = (unsigned)x;
    if (!*s) break;
    if (*s++ != ',' || i == 2) return false;
  }
  memcpy(out, v, sizeof v);
  return true;
}

/* One device ordinal at *s (decimal, 0 ... 1023), advancing *s. */
static bool parse_device(const char **s, int *out) {
  if (!isdigit((unsigned char)**s)) return false;
  long v = 0;
  while (isdigit((unsigned char)**s) && v <= 1023) v = v * 10 + (*(*s)++ - '0');
  if (v > 1023) return false;
  *out = (int)v;
  return true;
}

bool runarg_parse_devices(const char *text, runarg_devices *out, char *err, size_t cap) {
  runarg_devices d = {0};
  const char *s = text ? text : "";
  if (strcmp(s, "all") == 0) {
    d.all = true;
    *out = d;
    return true;
  }
  while (true) {
    int v = 0;
    if (d.count == RUNARG_MAX_DEVICES)
      return snprintf(err, cap, "--devices '%s': more than %d devices", s, RUNARG_MAX_DEVICES), false;
    if (!parse_device(&s, &v))
      return snprintf(err, cap, "--devices '%s': expected 'all' or device numbers 0 ... 1023 "
                      "separated by commas (e.g. 0,1)", text ? text : ""), false;
    for (size_t i = 0; i < d.count; i++)
      if (d.list[i] == v) return snprintf(err, cap, "--devices '%s': device %d listed twice", text, v), false;
    d.list[d.count++] = v;
    if (!*s) break;
    if (*s++ != ',') return snprintf(err, cap, "--devices '%s': expected ',' after device %d", text, v), false;
  }
  *out = d;
  return true;
}

size_t runarg_resolve_devices(const runarg_devices *d, int present, int *list, char *err,
                                  size_t cap) {
  if (present <= 0) return snprintf(err, cap, "no CUDA device present"), 0;
  if (d->all) {
    size_t n = present < RUNARG_MAX_DEVICES ? (size_t)present : RUNARG_MAX_DEVICES;
    for (size_t i = 0; i < n; i++) list[i] = (int)i;
    return n;
  }
  for (size_t i = 0; i < d->count; i++) {
    if (d->list[i] >= present)
      return snprintf(err, cap, "--devices: device %d does not exist (%d device%s: 0 ... %d)",
                      d->list[i], present, present == 1 ? "" : "s", present - 1), 0;
    list[i] = d->list[i];
  }
  return d->count;
}
