/* PTX reader: each `.entry` and its `.param` list. PTX carries types and alignments but no
 * offsets; each parameter becomes gclaunch signature text ("u32", "ptr",
 * "bytes(2048) align(128)") and the layout engine places them for the chosen architecture. */
#include "image_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct lexer {
  const char *p, *end;
  const char *tok; /* current token */
  size_t len;
} lexer;

static bool ident_char(char c) {
  return isalnum((unsigned char)c) || c == '_' || c == '$' || c == '%' || c == '.';
}

static void skip_blank(lexer *lx) {
  while (lx->p < lx->end) {
    if (isspace((unsigned char)*lx->p)) lx->p++;
    else if (lx->end - lx->p >= 2 && lx->p[0] == '/' && lx->p[1] == '/') {
      while (lx->p < lx->end && *lx->p != '\n') lx->p++;
    } else if (lx->end - lx->p >= 2 && lx->p[0] == '/' && lx->p[1] == '*') {
      const char *q = lx->p + 2;
      while (q + 1 < lx->end && !(q[0] == '*' && q[1] == '/')) q++;
      lx->p = q + 1 < lx->end ? q + 2 : lx->end;
    } else
      return;
  }
}

/* Advances to the next token; false at the end. Strings are one token, quotes included. */
static bool next(lexer *lx) {
  skip_blank(lx);
  if (lx->p >= lx->end) return false;
  const char *s = lx->p;
  if (*s == '"') {
    const char *q = s + 1;
    while (q < lx->end && *q != '"' && *q != '\n') q++;
    lx->p = q < lx->end ? q + 1 : q;
  } else if (ident_char(*s)) {
    while (lx->p < lx->end && ident_char(*lx->p)) lx->p++;
  } else
    lx->p++;
  lx->tok = s;
  lx->len = (size_t)(lx->p - s);
  return true;
}

static bool is(const lexer *lx, const char *word) {
  return lx->len == strlen(word) && memcmp(lx->tok, word, lx->len) == 0;
}

typedef struct ptx_param {
  size_t elem, count, align;
  const char *scalar; /* signature scalar for one element, NULL for .b/.u widths mapped below */
  bool ptr, explicit_align;
} ptx_param;

/* Element size and signature scalar of a PTX type directive; 0 if tok is not a type. */
static size_t type_size(const lexer *lx, const char **scalar) {
  static const struct { const char *ptx, *sig; size_t size; } types[] = {
      {".b8", "u8", 1},    {".u8", "u8", 1},    {".s8", "i8", 1},    {".b16", "u16", 2},
      {".u16", "u16", 2},  {".s16", "i16", 2},  {".f16", "f16", 2},  {".bf16", "bf16", 2},
      {".b32", "u32", 4},  {".u32", "u32", 4},  {".s32", "i32", 4},  {".f32", "f32", 4},
      {".b64", "u64", 8},  {".u64", "u64", 8},  {".s64", "i64", 8},  {".f64", "f64", 8}};
  for (size_t i = 0; i < sizeof types / sizeof *types; i++)
    if (is(lx, types[i].ptx)) {
      *scalar = types[i].sig;
      return types[i].size;
    }
  return 0;
}

static bool read_number(lexer *lx, size_t *out) {
  if (!next(lx) || !isdigit((unsigned char)lx->tok[0])) return false;
  char buf[24];
  if (lx->len >= sizeof buf) return false;
  memcpy(buf, lx->tok, lx->len);
  buf[lx->len] = 0;
  char *e;
  unsigned long long v = strtoull(buf, &e, 10);
  if (*e || v == 0 || v > (1u << 20)) return false;
  *out = (size_t)v;
  return true;
}

static gcl_status bad(const char *kernel, size_t index, const char *what) {
  return gcl__fail(GCL_ERROR_BAD_IMAGE, "ptx: kernel '%.200s' parameter %zu: %s", kernel, index,
                   what);
}

/* The PTX ISA's identifier: [a-zA-Z][a-zA-Z0-9_$]* or [_$%][a-zA-Z0-9_$]+ (ASCII only). */
static bool is_identifier(const char *t, size_t n) {
  if (!n) return false;
  bool letter = isalpha((unsigned char)t[0]) && (unsigned char)t[0] < 0x80;
  if (!letter && t[0] != '_' && t[0] != '$' && t[0] != '%') return false;
  if (!letter && n < 2) return false;
  for (size_t i = 1; i < n; i++)
    if (!(isalnum((unsigned char)t[i]) && (unsigned char)t[i] < 0x80) && t[i] != '_' && t[i] != '$')
      return false;
  return true;
}

#define PTX_IDENT_RULE "PTX identifiers are ASCII: [a-zA-Z][a-zA-Z0-9_$]* or [_$%%][a-zA-Z0-9_$]+" /* a format */

/* A token that is no part of a parameter declaration's grammar (a directive, a number, [ ], or
 * the name): a non-ASCII byte, or a name outside the identifier grammar. ptxas refuses both. */
static gcl_status bad_token(const lexer *lx, const char *kernel, size_t index) {
  char what[160];
  if ((unsigned char)lx->tok[0] >= 0x80)
    snprintf(what, sizeof what, "non-ASCII byte 0x%02X in the declaration (" PTX_IDENT_RULE ")",
             (unsigned char)lx->tok[0]);
  else
    snprintf(what, sizeof what, "'%.*s' is not a PTX identifier (" PTX_IDENT_RULE ")",
             (int)(lx->len > 40 ? 40 : lx->len), lx->tok);
  return bad(kernel, index, what);
}

/* One `.param ...` up to the token after it (`,` or `)`), left in lx. */
static gcl_status read_param(lexer *lx, const char *kernel, size_t index, ptx_param *p) {
  ptx_param r = {.count = 1};
  if (!is(lx, ".param")) return bad(kernel, index, "expected .param");
  while (next(lx) && !is(lx, ",") && !is(lx, ")")) {
    size_t size;
    if (is(lx, ".align")) {
      size_t a;
      if (!read_number(lx, &a) || (a & (a - 1)))
        return bad(kernel, index, ".align is not followed by a power of two");
      if (!r.ptr) { /* after .ptr it is the alignment of the data pointed to */
        r.align = a;
        r.explicit_align = true;
      }
    } else if (is(lx, ".ptr")) r.ptr = true;
    else if (is(lx, "[")) {
      if (!read_number(lx, &r.count) || !next(lx) || !is(lx, "]"))
        return bad(kernel, index, "array size is not a positive number in [ ]");
    } else if ((size = type_size(lx, &r.scalar)) != 0) r.elem = size;
    else if (lx->tok[0] != '.' && !is_identifier(lx->tok, lx->len)) return bad_token(lx, kernel, index);
  }
  if (!is(lx, ",") && !is(lx, ")")) return bad(kernel, index, "the parameter list is not closed");
  if (r.elem == 0) return bad(kernel, index, "no type");
  if (!r.explicit_align) r.align = r.elem;
  *p = r;
  return GCL_OK;
}

/* Signature text of one parameter into buf. */
static void param_text(const ptx_param *p, char *buf, size_t cap) {
  if (p->count == 1 && p->align == p->elem)
    snprintf(buf, cap, "%s", p->ptr && p->elem == 8 ? "ptr" : p->scalar);
  else
    snprintf(buf, cap, "bytes(%zu) align(%zu)", p->elem * p->count, p->align);
}

/* Places the kernel's parameters with the layout engine for sm; fills k. */
static gcl_status place(gcl__image_kernel *k, const char *sig_text, int sm) {
  gcl_signature *sig = NULL;
  gcl_layout *layout = NULL;
  gcl_status s = gcl_signature_parse(sig_text, &sig);
  if (s == GCL_OK) s = gcl_layout_create(sig, sm, &layout);
  for (size_t p = 0; s == GCL_OK && p < k->info.param_count; p++)
    s = gcl_layout_param(layout, p, &k->params[p].offset, &k->params[p].size,
                         &k->params[p].align);
  if (s == GCL_OK) k->info.param_bytes = gcl_layout_size(layout);
  gcl_layout_destroy(layout);
  gcl_signature_destroy(sig);
  if (s != GCL_OK) {
    char why[GCL__MESSAGE_MAX];
    snprintf(why, sizeof why, "%s", gcl_last_error());
    gcl__fail(s, "ptx: kernel '%.200s' on sm_%d: %s", k->name, sm, why);
  }
  return s;
}

static gcl_status fill_kernel(gcl__image_kernel *k, const ptx_param *params, size_t n,
                              const char *text, int sm) {
  k->params = gcl__calloc(n ? n : 1, sizeof *k->params);
  if (!k->params) return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "ptx: out of memory");
  k->info.param_count = n;
  for (size_t p = 0; p < n; p++) param_text(&params[p], k->params[p].kind, sizeof k->params[p].kind);
  return n ? place(k, text, sm) : GCL_OK;
}

/* Parameters of one .entry; lx is on the token after the kernel name. */
static gcl_status read_params(lexer *lx, gcl__image_kernel *k, int sm) {
  size_t cap = 256, used = 0, n = 0;
  char *text = gcl__malloc(cap);
  ptx_param *params = NULL;
  gcl_status s = text ? GCL_OK : gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "ptx: out of memory");
  if (s == GCL_OK) text[0] = 0;
  bool open = is(lx, "(") && next(lx) && !is(lx, ")");
  while (s == GCL_OK && open) {
    ptx_param p;
    char item[64];
    if ((s = read_param(lx, k->name, n, &p)) != GCL_OK) break;
    param_text(&p, item, sizeof item);
    if (used + strlen(item) + 3 > cap) {
      char *t = gcl__realloc(text, cap *= 2);
      if (!t) { s = gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "ptx: out of memory"); break; }
      text = t;
    }
    used += (size_t)snprintf(text + used, cap - used, "%s%s", n ? ", " : "", item);
    ptx_param *grown = gcl__realloc(params, (n + 1) * sizeof *params);
    if (!grown) { s = gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "ptx: out of memory"); break; }
    params = grown;
    params[n++] = p;
    open = is(lx, ",") && next(lx);
  }
  if (s == GCL_OK) s = fill_kernel(k, params, n, text, sm);
  gcl__free(params);
  gcl__free(text);
  return s;
}

/* `.maxntid x, y, z` and `.reqntid x, y, z` between the parameter list and the body. */
static void read_directives(lexer *lx, gcl__image_kernel *k) {
  while (next(lx) && !is(lx, "{") && !is(lx, ";") && !is(lx, ".entry")) {
    bool max = is(lx, ".maxntid"), req = is(lx, ".reqntid");
    if (!max && !req) continue;
    size_t xyz[3] = {1, 1, 1};
    for (int i = 0; i < 3; i++) {
      if (!read_number(lx, &xyz[i])) break;
      lexer peek = *lx;
      if (!next(&peek) || !is(&peek, ",")) break;
      *lx = peek;
    }
    if (max) k->info.max_threads = (int)(xyz[0] * xyz[1] * xyz[2] > (1u << 20) ? 0 : xyz[0] * xyz[1] * xyz[2]);
    for (int i = 0; req && i < 3; i++) k->info.reqntid[i] = (int)xyz[i];
  }
}

/* Whether the body starting at lx's `{` holds griddepcontrol.wait (cudaGridDependencySynchronize
 * compiles to it); leaves lx on the matching `}` (or at the end). 1 or 0. */
static int body_waits(lexer *lx) {
  int waits = 0;
  for (size_t depth = 1; depth && next(lx);) {
    if (is(lx, "{")) depth++;
    else if (is(lx, "}")) depth--;
    else if (is(lx, "griddepcontrol.wait")) waits = 1;
  }
  return waits;
}

static gcl_status read_entry(lexer *lx, gcl_image *img, int sm) {
  if (!next(lx) || !ident_char(lx->tok[0])) {
    if (lx->p <= lx->end && lx->tok && (unsigned char)lx->tok[0] >= 0x80)
      return gcl__fail(GCL_ERROR_BAD_IMAGE, "ptx: .entry name starts with the non-ASCII byte 0x%02X "
                       "(" PTX_IDENT_RULE ")", (unsigned char)lx->tok[0]);
    return gcl__fail(GCL_ERROR_BAD_IMAGE, "ptx: .entry is not followed by a kernel name");
  }
  /* the whole name, as ptxas reads it: no byte of another character may follow it */
  if (!is_identifier(lx->tok, lx->len) || (lx->p < lx->end && (unsigned char)*lx->p >= 0x80)) {
    int n = (int)(lx->len > 200 ? 200 : lx->len);
    if (lx->p < lx->end && (unsigned char)*lx->p >= 0x80)
      return gcl__fail(GCL_ERROR_BAD_IMAGE, "ptx: .entry name '%.*s' is followed by the non-ASCII "
                       "byte 0x%02X (" PTX_IDENT_RULE ")", n, lx->tok, (unsigned char)*lx->p);
    return gcl__fail(GCL_ERROR_BAD_IMAGE, "ptx: .entry name '%.*s' is not a PTX identifier ("
                     PTX_IDENT_RULE ")", n, lx->tok);
  }
  gcl__image_kernel *k;
  gcl_status s = gcl__image_add_kernel(img, lx->tok, lx->len, 0, &k);
  if (s != GCL_OK) return s;
  if (!next(lx))
    return gcl__fail(GCL_ERROR_BAD_IMAGE, "ptx: kernel '%s' ends after its name", k->name);
  if ((s = read_params(lx, k, sm)) != GCL_OK) return s;
  read_directives(lx, k);
  if (is(lx, "{")) k->waits = body_waits(lx);
  return GCL_OK;
}

/* sm 0 means the PTX's own `.target sm_NN` (the architecture it was written for): the sm of the
 * token after .target, left unchanged when it is not sm_NN. */
static void target_sm(lexer *lx, int *sm) {
  if (!next(lx) || lx->len < 5 || memcmp(lx->tok, "sm_", 3) != 0) return;
  int v = 0;
  for (size_t i = 3; i < lx->len && isdigit((unsigned char)lx->tok[i]) && v < 1000; i++)
    v = 10 * v + (lx->tok[i] - '0');
  if (v >= 10 && v <= 255) *sm = v;
}

gcl_status gcl__ptx_read(gcl_image *img, gcl__bytes data, int sm) {
  const char *text = (const char *)data.p;
  lexer lx = {.p = text, .end = text + strnlen(text, data.n)}; /* text ends at a NUL if any */
  bool version = false, own = sm == 0, elsewhere = false;
  size_t first = img->count;
  gcl_status s = GCL_OK;
  if (sm == 0) sm = 90;
  while (s == GCL_OK && next(&lx)) {
    if (is(&lx, ".version")) version = true;
    else if (is(&lx, "griddepcontrol.wait")) elsewhere = true; /* in a .func an entry may call */
    else if (is(&lx, ".target") && own) target_sm(&lx, &sm);
    else if (is(&lx, ".entry")) s = version ? read_entry(&lx, img, sm)
                                            : gcl__fail(GCL_ERROR_BAD_IMAGE,
                                                        "ptx: .entry before the .version directive");
  }
  if (s == GCL_OK && !version) s = gcl__fail(GCL_ERROR_BAD_IMAGE, "ptx: no .version directive");
  if (s != GCL_OK) return s;
  for (size_t k = first; k < img->count; k++) /* no body (a declaration): unknown */
    if (img->kernels[k].waits == 0 && elsewhere) img->kernels[k].waits = -1;
  img->format = GCL_IMAGE_PTX;
  img->sm = sm;
  return GCL_OK;
}
