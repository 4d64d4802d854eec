/* Signature text -> parameter list (grammar in gclaunch/core.h), canonical formatting.
 * Errors carry the 1-based column of the offending token: "col 17: expected a type after
 * 'const'". The parser is recursive descent over a one-token lookahead lexer. */
#include "nameset.h"
#include "types.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 32           /* struct nesting; keeps recursion bounded on hostile input */
#define MAX_ALIGN ((size_t)32768) /* libffi stores alignment in an unsigned short */
#define MAX_NAME 128           /* keeps field paths (names joined by '.') bounded */

typedef struct sparam {
  char *name;
  bool grid_constant;
  gcl__type *type;
} sparam;

struct gcl_signature {
  size_t count;
  sparam *params;
  atomic_size_t refs; /* the caller's, plus one per layout sharing it (gcl__signature_share) */
};

typedef enum { TK_END, TK_IDENT, TK_NUM, TK_PUNCT, TK_BAD } tk_kind;

typedef struct parser {
  const char *text;
  size_t pos;       /* next character to lex */
  tk_kind kind;     /* current token */
  size_t tpos, tlen;
  uint64_t num;
  int depth;
  sparam *params;
  size_t count, cap;
  gcl__nameset names; /* the parameters' names, for the duplicate check */
} parser;

static const char *const reserved[] = {
    "const", "struct", "align", "grid_constant", "tensormap", "bytes", "ptr", "void",
    "bool", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f16", "bf16", "f32", "f64"};

static bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static void next(parser *p) {
  const char *s = p->text;
  while (s[p->pos] == ' ' || s[p->pos] == '\t' || s[p->pos] == '\n' || s[p->pos] == '\r')
    p->pos++;
  p->tpos = p->pos;
  char c = s[p->pos];
  if (c == '\0') {
    p->kind = TK_END;
  } else if (is_ident_start(c)) {
    while (is_ident_start(s[p->pos]) || is_digit(s[p->pos])) p->pos++;
    p->kind = TK_IDENT;
  } else if (is_digit(c)) {
    p->num = 0;
    for (; is_digit(s[p->pos]); p->pos++)  /* saturates; every use checks an upper bound */
      p->num = p->num > UINT32_MAX ? p->num : p->num * 10 + (uint64_t)(s[p->pos] - '0');
    p->kind = TK_NUM;
  } else {
    /* a bad token is one whole character: quoted whole in messages (a byte that starts no
     * UTF-8 sequence alone; the message writer shows it as \xNN) */
    size_t len = gcl__utf8_len((const unsigned char *)s + p->pos, strnlen(s + p->pos, 4));
    p->pos += len ? len : 1;
    p->kind = c != '\0' && strchr(",*()[]{}", c) ? TK_PUNCT : TK_BAD;
  }
  p->tlen = p->pos - p->tpos;
}

static bool is_word(const parser *p, const char *w) {
  return p->kind == TK_IDENT && strlen(w) == p->tlen && !memcmp(p->text + p->tpos, w, p->tlen);
}
static bool is_punct(const parser *p, char c) {
  return p->kind == TK_PUNCT && p->text[p->tpos] == c;
}

/* Describes the current token for messages: "'foo'" or "the end of the signature". */
static const char *tok_text(const parser *p, char *buf, size_t cap) {
  if (p->kind == TK_END) return "the end of the signature";
  int n = (int)gcl__utf8_cut(p->text + p->tpos, p->tlen > 40 ? 40 : p->tlen);
  snprintf(buf, cap, "'%.*s'", n, p->text + p->tpos);
  return buf;
}

static gcl_status fail_at(size_t pos, const char *fmt, ...) GCL__PRINTF(2, 3);
static gcl_status fail_at(size_t pos, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return gcl__fail(GCL_ERROR_PARSE, "col %zu: %s", pos + 1, msg);
}

/* "expected X, got Y" at the current token. */
static gcl_status expected(const parser *p, const char *what) {
  char t[64];
  return fail_at(p->tpos, "expected %s, got %s", what, tok_text(p, t, sizeof t));
}

static gcl_status expect_punct(parser *p, char c, const char *after) {
  if (!is_punct(p, c)) {
    char t[64];
    return fail_at(p->tpos, "expected '%c' after %s, got %s", c, after, tok_text(p, t, sizeof t));
  }
  next(p);
  return GCL_OK;
}

/* Length of the number written at col (messages quote it as written, never saturated). */
static int ndigits(const parser *p, size_t col) {
  size_t n = strspn(p->text + col, "0123456789");
  return n > 30 ? 30 : (int)n;
}

static int scalar_word(const parser *p) {
  for (int s = GCL_SCALAR_BOOL; s <= GCL_SCALAR_F64; s++)
    if (is_word(p, gcl__scalar_name((gcl_scalar)s))) return s;
  return -1;
}

static gcl_status oom(void) { return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "out of memory parsing a signature"); }

static gcl_status parse_type(parser *p, gcl__type **out);

/* ( N ) after bytes / align: the number and its column. */
static gcl_status parse_paren_num(parser *p, const char *after, uint64_t *n, size_t *col) {
  gcl_status s = expect_punct(p, '(', after);
  if (s) return s;
  if (p->kind != TK_NUM) return expected(p, "a number");
  *n = p->num, *col = p->tpos;
  next(p);
  return expect_punct(p, ')', "the number");
}

/* const T* | T* | void* | ptr */
static gcl_status parse_pointer(parser *p, gcl__type **out) {
  bool is_const = is_word(p, "const");
  if (is_const) next(p);
  int s = scalar_word(p);
  if (s < 0 && !is_word(p, "void"))
    return is_const ? expected(p, "a type after 'const'") : expected(p, "a type");
  char after[40];
  snprintf(after, sizeof after, "'%s%s'", is_const ? "const " : "",
           s < 0 ? "void" : gcl__scalar_name((gcl_scalar)s));
  next(p);
  gcl_status st = expect_punct(p, '*', after);
  if (st) return st;
  *out = gcl__type_pointer(s < 0 ? GCL_SCALAR_VOID : (gcl_scalar)s, is_const);
  return *out ? GCL_OK : oom();
}

static gcl_status parse_bytes(parser *p, gcl__type **out) {
  uint64_t n = 0;
  size_t col = 0;
  next(p);
  gcl_status s = parse_paren_num(p, "'bytes'", &n, &col);
  if (s) return s;
  if (n < 1) return fail_at(col, "bytes(N) needs N >= 1, got 0");
  if (n > GCL__TYPE_MAX_BYTES)
    return fail_at(col, "bytes(%.*s) is too large", ndigits(p, col), p->text + col);
  *out = gcl__type_bytes((size_t)n);
  return *out ? GCL_OK : oom();
}

/* A struct's members while they are parsed: types, names and the columns of the names. */
typedef struct members {
  gcl__type **types;
  char **names;
  size_t *cols;
  size_t n, cap;
  gcl__nameset set; /* the names, for the duplicate check */
} members;

static void members_free(members *m) {
  for (size_t i = 0; i < m->n; i++) {
    gcl__type_destroy(m->types[i]);
    gcl__free(m->names[i]);
  }
  gcl__free(m->types), gcl__free(m->names), gcl__free(m->cols);
  gcl__nameset_free(&m->set);
}

/* Appends (t, name); frees both when out of memory. */
static bool push_member(members *m, gcl__type *t, char *name, size_t col) {
  if (m->n == m->cap) {
    size_t c = m->cap ? m->cap * 2 : 4;
    gcl__type **g = gcl__realloc(m->types, c * sizeof *g);
    if (g) m->types = g;
    char **nm = g ? gcl__realloc(m->names, c * sizeof *nm) : NULL;
    if (nm) m->names = nm;
    size_t *cl = nm ? gcl__realloc(m->cols, c * sizeof *cl) : NULL;
    if (!cl) {
      gcl__type_destroy(t);
      gcl__free(name);
      return false;
    }
    m->cols = cl, m->cap = c;
  }
  m->types[m->n] = t, m->names[m->n] = name, m->cols[m->n] = col;
  m->n++;
  return !name || gcl__nameset_add(&m->set, name, strlen(name), m->n - 1);
}

static gcl_status parse_name(parser *p, const char *what, char **name);
static bool is_reserved(const parser *p);

/* A member's optional name must differ from the names before it in the same struct. */
static gcl_status check_member_name(const parser *p, const members *m, const char *name,
                                    size_t col) {
  size_t i;
  if (name && gcl__nameset_find(&m->set, name, strlen(name), &i))
    return fail_at(col, "duplicate member name '%s' in struct{...}: member %zu (col %zu) and "
                   "member %zu", name, i, m->cols[i] + 1, m->n);
  (void)p;
  return GCL_OK;
}

static gcl_status parse_member(parser *p, members *m) {
  gcl__type *t = NULL;
  char *name = NULL;
  gcl_status s = parse_type(p, &t);
  size_t col = p->tpos;
  if (!s) s = parse_name(p, "a member name, ',' or '}'", &name);
  if (!s) s = check_member_name(p, m, name, col);
  if (s) {
    gcl__type_destroy(t);
    gcl__free(name);
    return s;
  }
  return push_member(m, t, name, col) ? GCL_OK : oom();
}

static gcl_status parse_members(parser *p, members *m) {
  if (is_punct(p, '}')) return fail_at(p->tpos, "expected a member type in 'struct{', got '}' (empty structs are not allowed)");
  for (;;) {
    gcl_status s = parse_member(p, m);
    if (s) return s;
    if (is_punct(p, '}')) return next(p), GCL_OK;
    if (!is_punct(p, ','))
      return expected(p, p->kind == TK_IDENT ? "',' or '}' in struct{...}"
                                             : "a member name, ',' or '}' in struct{...}");
    next(p);
  }
}

static gcl_status parse_struct(parser *p, gcl__type **out) {
  size_t col = p->tpos;
  if (p->depth >= MAX_DEPTH) return fail_at(col, "structs nested deeper than %d", MAX_DEPTH);
  next(p);
  gcl_status s = expect_punct(p, '{', "'struct'");
  if (s) return s;
  members m = {0};
  p->depth++;
  s = parse_members(p, &m);
  p->depth--;
  if (s) {
    members_free(&m);
    return s;
  }
  gcl__free(m.cols);
  gcl__nameset_free(&m.set);
  gcl__type *t = gcl__type_struct(m.types, m.names, m.n);
  if (!t) return oom();
  if (t->size > GCL__TYPE_MAX_BYTES) {
    gcl__type_destroy(t);
    return fail_at(col, "struct is too large");
  }
  *out = t;
  return GCL_OK;
}

static gcl_status parse_base(parser *p, gcl__type **out) {
  if (is_word(p, "tensormap")) {
    next(p);
    *out = gcl__type_tensormap();
    return *out ? GCL_OK : oom();
  }
  if (is_word(p, "ptr")) {
    next(p);
    *out = gcl__type_pointer(GCL_SCALAR_VOID, false);
    return *out ? GCL_OK : oom();
  }
  if (is_word(p, "bytes")) return parse_bytes(p, out);
  if (is_word(p, "struct")) return parse_struct(p, out);
  int s = scalar_word(p);
  if (s >= 0) { /* T or T* */
    next(p);
    bool ptr = is_punct(p, '*');
    if (ptr) next(p);
    *out = ptr ? gcl__type_pointer((gcl_scalar)s, false) : gcl__type_scalar((gcl_scalar)s);
    return *out ? GCL_OK : oom();
  }
  return parse_pointer(p, out);
}

static bool may_lower_align(const gcl__type *t) {
  return t->kind == GCL_PARAM_TENSORMAP || t->kind == GCL_PARAM_BYTES ||
         t->kind == GCL_PARAM_POINTER; /* a pointer's align(N) is the data's, any power of two */
}

static gcl_status parse_align(parser *p, gcl__type *t) {
  uint64_t n = 0;
  size_t col = 0;
  next(p);
  gcl_status s = parse_paren_num(p, "'align'", &n, &col);
  if (s) return s;
  if (n == 0 || (n & (n - 1)) || n > MAX_ALIGN)
    return fail_at(col, "align(N) needs a power of two from 1 to %zu, got %.*s", MAX_ALIGN,
                   ndigits(p, col), p->text + col);
  if (n < t->align && !may_lower_align(t)) {
    char name[96];
    return fail_at(col, "align(%llu) is below the natural alignment %zu of '%s' (only tensormap "
                   "and bytes may be lowered)", (unsigned long long)n, t->align,
                   gcl__type_name(t, name, sizeof name));
  }
  gcl__type_set_align(t, (size_t)n);
  return GCL_OK;
}

static gcl_status parse_array(parser *p, gcl__type **t) {
  next(p);
  if (p->kind != TK_NUM) return expected(p, "an element count after '['");
  uint64_t n = p->num;
  size_t col = p->tpos;
  if (n < 1) return fail_at(col, "array length must be >= 1, got 0");
  if (n > GCL__TYPE_MAX_BYTES / (*t)->size)
    return fail_at(col, "array of %.*s elements is too large", ndigits(p, col), p->text + col);
  next(p);
  gcl_status s = expect_punct(p, ']', "the element count");
  if (s) return s;
  gcl__type *a = gcl__type_array(*t, (size_t)n);
  *t = a;
  return a ? GCL_OK : oom();
}

/* type = base [ align(N) ] [ [N] ]. On failure *out is NULL and nothing leaks. */
static gcl_status parse_type(parser *p, gcl__type **out) {
  gcl__type *t = NULL;
  gcl_status s = parse_base(p, &t);
  if (!s && is_word(p, "align")) s = parse_align(p, t);
  if (!s && is_punct(p, '[')) s = parse_array(p, &t); /* frees t when out of memory */
  if (s) {
    gcl__type_destroy(t); /* NULL when parse_array already freed it */
    return s;
  }
  *out = t;
  return GCL_OK;
}

static bool is_reserved(const parser *p) {
  for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
    if (is_word(p, reserved[i])) return true;
  return false;
}

static bool name_taken(const parser *p) {
  size_t i;
  return gcl__nameset_find(&p->names, p->text + p->tpos, p->tlen, &i);
}

/* An optional name: a C identifier that is no word of the grammar, at most MAX_NAME chars. */
static gcl_status parse_name(parser *p, const char *what, char **name) {
  char t[64];
  if (p->kind != TK_IDENT) return GCL_OK; /* names are optional */
  if (is_reserved(p))
    return fail_at(p->tpos, "expected %s, got %s (a reserved word)", what,
                   tok_text(p, t, sizeof t));
  if (p->tlen > MAX_NAME)
    return fail_at(p->tpos, "name %s... is %zu characters long, at most %d are allowed",
                   tok_text(p, t, sizeof t), p->tlen, MAX_NAME);
  *name = gcl__strndup(p->text + p->tpos, p->tlen);
  if (!*name) return oom();
  next(p);
  return GCL_OK;
}

static gcl_status parse_param_name(parser *p, char **name) {
  char t[64];
  if (p->kind == TK_IDENT && !is_reserved(p) && name_taken(p))
    return fail_at(p->tpos, "duplicate parameter name %s", tok_text(p, t, sizeof t));
  return parse_name(p, "a parameter name, ',' or the end of the signature", name);
}

static gcl_status push_param(parser *p, sparam sp) {
  if (p->count == p->cap) {
    size_t c = p->cap ? p->cap * 2 : 8;
    sparam *g = gcl__realloc(p->params, c * sizeof *g);
    if (!g) return oom();
    p->params = g, p->cap = c;
  }
  p->params[p->count++] = sp;
  if (sp.name && !gcl__nameset_add(&p->names, sp.name, strlen(sp.name), p->count - 1)) {
    p->count--; /* the caller frees sp's type and name */
    return oom();
  }
  return GCL_OK;
}

static gcl_status parse_param(parser *p) {
  sparam sp = {0};
  size_t col = p->tpos;
  sp.grid_constant = is_word(p, "grid_constant");
  if (sp.grid_constant) next(p);
  gcl_status s = parse_type(p, &sp.type);
  if (!s && sp.grid_constant && sp.type->kind == GCL_PARAM_POINTER)
    s = fail_at(col, "grid_constant applies to by-value parameters only, not to the pointer '%s*'",
                gcl__scalar_name(sp.type->scalar));
  if (!s) s = parse_param_name(p, &sp.name);
  if (!s) s = push_param(p, sp);
  if (s) {
    gcl__type_destroy(sp.type);
    gcl__free(sp.name);
  }
  return s;
}

static void free_params(sparam *ps, size_t n) {
  for (size_t i = 0; i < n; i++) {
    gcl__free(ps[i].name);
    gcl__type_destroy(ps[i].type);
  }
  gcl__free(ps);
}

static gcl_status parse_all(parser *p) {
  next(p);
  if (p->kind == TK_END) return GCL_OK; /* the empty signature: no parameters */
  for (;;) {
    gcl_status s = parse_param(p);
    if (s) return s;
    if (p->kind == TK_END) return GCL_OK;
    if (!is_punct(p, ','))
      return expected(p, p->kind == TK_IDENT ? "',' or the end of the signature"
                                             : "a parameter name, ',' or the end of the signature");
    next(p);
    if (p->kind == TK_END) return expected(p, "a parameter after ','");
  }
}

gcl_status gcl_signature_parse(const char *text, gcl_signature **out) {
  if (!text || !out) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_signature_parse: %s is NULL", text ? "out" : "text");
  parser p = {.text = text};
  gcl_status s = parse_all(&p);
  gcl__nameset_free(&p.names);
  gcl_signature *sig = s ? NULL : gcl__malloc(sizeof *sig);
  if (!s && !sig) s = oom();
  if (s) {
    free_params(p.params, p.count);
    return s;
  }
  sig->count = p.count;
  sig->params = p.params;
  atomic_init(&sig->refs, 1);
  *out = sig;
  return GCL_OK;
}

void gcl_signature_destroy(gcl_signature *sig) {
  if (!sig || atomic_fetch_sub_explicit(&sig->refs, 1, memory_order_acq_rel) != 1) return;
  free_params(sig->params, sig->count);
  gcl__free(sig);
}

size_t gcl_signature_count(const gcl_signature *sig) { return sig ? sig->count : 0; }

const gcl__type *gcl__signature_type(const gcl_signature *sig, size_t index) {
  return sig && index < sig->count ? sig->params[index].type : NULL;
}

gcl_status gcl_signature_param(const gcl_signature *sig, size_t index, gcl_param_info *info) {
  if (!sig || !info) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_signature_param: %s is NULL", sig ? "info" : "sig");
  if (index >= sig->count)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "parameter %zu out of range: the signature has %zu",
                     index, sig->count);
  memset(info, 0, sizeof *info);
  gcl__type_describe(sig->params[index].type, info);
  info->name = sig->params[index].name;
  info->grid_constant = sig->params[index].grid_constant;
  return GCL_OK;
}

static size_t format_into(const gcl_signature *sig, char *buf, size_t cap) {
  size_t len = 0;
  for (size_t i = 0; i < sig->count; i++) {
    const sparam *sp = &sig->params[i];
    const char *pre = i ? ", " : "";
    const char *gc = sp->grid_constant ? "grid_constant " : "";
    int n = snprintf(buf && len < cap ? buf + len : NULL, buf && len < cap ? cap - len : 0, "%s%s", pre, gc);
    len += (size_t)n;
    gcl__type_format(sp->type, buf, cap, &len);
    if (sp->name) {
      n = snprintf(buf && len < cap ? buf + len : NULL, buf && len < cap ? cap - len : 0, " %s", sp->name);
      len += (size_t)n;
    }
  }
  return len;
}

gcl_status gcl_signature_format(const gcl_signature *sig, char *buf, size_t cap, size_t *needed) {
  if (!sig || (!buf && cap)) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_signature_format: %s is NULL", sig ? "buf" : "sig");
  size_t len = format_into(sig, buf, cap);
  if (needed) *needed = len; /* also when the text was cut: that is how to size buf */
  if (cap) buf[len < cap ? len : cap - 1] = '\0'; /* snprintf's contract: cut, never failed */
  return GCL_OK;
}

/* A signature never changes after parsing, so a layout shares it instead of copying its type
 * trees (the copy was a sixth of bench_pack's "parse+layout 240 maps"). */
gcl_signature *gcl__signature_share(const gcl_signature *sig) {
  gcl_signature *s = (gcl_signature *)sig; /* only the count changes */
  atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
  return s;
}
