/* Fields: paths into by-value aggregates, resolved against a layout's type trees once
 * (gcl_layout_field), formatted back (gcl_layout_field_path, messages), and every leaf visited
 * in buffer order (gcl_layout_visit_leaves). Path grammar in gclaunch.h. Fields are made by
 * gcl__field_make (layout.c): this file calls the layout, never the reverse. */
#include "layout_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PATH_MAX_BYTES 16384 /* >= (1 + 2 * 32 struct levels + 1) components of <= 130 chars */

static bool is_leaf(const gcl__type *t) {
  return !t || (t->kind != GCL_PARAM_STRUCT && t->kind != GCL_PARAM_ARRAY);
}

/* The place of element i of array t at place pl. */
static gcl__place element_place(const gcl__type *t, gcl__place pl, size_t i) {
  const gcl__type *e = t->elem;
  bool maps = e->kind == GCL_PARAM_TENSORMAP && e->size == GCL_TENSORMAP_BYTES;
  return (gcl__place){pl.rel + i * e->size, pl.owner + i * e->ptr_leaves,
                      pl.tmap + i * e->tmap_leaves, maps ? t->count - i : 0};
}

/* The place of member m of struct t at place pl. */
static gcl__place member_place(const gcl__type *t, gcl__place pl, size_t m) {
  for (size_t k = 0; k < m; k++) pl.owner += t->members[k]->ptr_leaves, pl.tmap += t->members[k]->tmap_leaves;
  pl.rel += t->offsets[m];
  pl.span = 0;
  return pl;
}

/* The place of parameter p's start. */
static gcl__place param_place(const gcl__lparam *p) {
  return (gcl__place){0, p->owner_at, p->tmap_at, 0};
}

/* --- formatting paths ------------------------------------------------------------------- */

typedef struct pbuf {
  char *buf;
  size_t cap, len; /* len counts everything, also what did not fit */
} pbuf;

static void put(pbuf *b, const char *fmt, ...) GCL__PRINTF(2, 3);
static void put(pbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *dst = b->buf && b->len < b->cap ? b->buf + b->len : NULL;
  int n = vsnprintf(dst, dst ? b->cap - b->len : 0, fmt, ap);
  va_end(ap);
  if (n > 0) b->len += (size_t)n;
}

static void put_param(pbuf *b, const gcl__lparam *p, size_t index) {
  if (p->info.name) put(b, "%s", p->info.name);
  else put(b, "%zu", index);
}

/* The member of struct t holding byte rel. */
static size_t member_at(const gcl__type *t, size_t rel) {
  size_t m = 0;
  while (m + 1 < t->member_count && t->offsets[m + 1] <= rel) m++;
  return m;
}

/* Appends the components from t down to target (at rel == 0), or down to the leaf holding rel
 * when target is NULL. */
static void put_path_below(pbuf *b, const gcl__type *t, size_t rel, const gcl__type *target) {
  while (t && !is_leaf(t) && !(t == target && rel == 0)) {
    if (t->kind == GCL_PARAM_STRUCT) {
      size_t m = member_at(t, rel);
      if (t->names[m]) put(b, ".%s", t->names[m]);
      else put(b, ".%zu", m);
      rel -= t->offsets[m];
      t = t->members[m];
    } else {
      size_t i = rel / t->elem->size;
      put(b, "[%zu]", i);
      rel -= i * t->elem->size;
      t = t->elem;
    }
  }
}

static bool is_whole(const gcl_field *f, const gcl__lparam *p) {
  return gcl__f(f, GCL__F_REL) == 0 && gcl__f_type(f) == p->type;
}

gcl_status gcl_layout_field_path(const gcl_layout *layout, const gcl_field *field, char *buf,
                                 size_t cap, size_t *needed) {
  if (!layout || !field || (!buf && cap))
    return gcl__fail_null("gcl_layout_field_path", 3, "layout", (const void *)layout, "field",
                          (const void *)field, "buf", (const void *)buf);
  if (gcl__f_layout(field) != layout || field->param >= gcl_layout_count(layout))
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_layout_field_path: field was not resolved "
                     "in this layout");
  const gcl__lparam *p = gcl__layout_lparam(layout, field->param);
  pbuf b = {buf, cap, 0};
  put_param(&b, p, field->param);
  put_path_below(&b, p->type, gcl__f(field, GCL__F_REL), gcl__f_type(field));
  if (needed) *needed = b.len; /* also when the path was cut: that is how to size buf */
  if (cap) buf[b.len < cap ? b.len : cap - 1] = '\0'; /* snprintf's contract: cut, never failed */
  return GCL_OK;
}

bool gcl__field_is_whole(const gcl_field *f) {
  return is_whole(f, gcl__layout_lparam(gcl__f_layout(f), f->param));
}

/* "parameter 0 'g'", then " field 'PATH'" unless whole: the path down to target at rel (target
 * NULL: down to the leaf at rel). */
static const char *label_at(const gcl_layout *layout, size_t param, size_t rel,
                            const gcl__type *target, bool whole, char *buf, size_t cap) {
  const gcl__lparam *p = gcl__layout_lparam(layout, param);
  pbuf b = {buf, cap, 0};
  if (cap) buf[0] = '\0';
  put(&b, "parameter %zu", param);
  if (p->info.name) put(&b, " '%s'", p->info.name);
  if (whole) return buf;
  put(&b, " field '");
  put_param(&b, p, param);
  put_path_below(&b, p->type, rel, target);
  put(&b, "'");
  return buf;
}

const char *gcl__field_label(const gcl_field *f, char *buf, size_t cap) {
  const gcl_layout *layout = gcl__f_layout(f);
  return label_at(layout, f->param, gcl__f(f, GCL__F_REL), gcl__f_type(f),
                  is_whole(f, gcl__layout_lparam(layout, f->param)), buf, cap);
}

const char *gcl__leaf_label(const gcl_layout *layout, size_t param, size_t rel, bool whole,
                            char *buf, size_t cap) {
  return label_at(layout, param, rel, NULL, whole, buf, cap);
}

const char *gcl__leaf_path_at(const gcl_layout *layout, size_t index, size_t rel, char *buf,
                              size_t cap) {
  const gcl__lparam *p = gcl__layout_lparam(layout, index);
  pbuf b = {buf, cap, 0};
  if (cap) buf[0] = '\0';
  put_param(&b, p, index);
  put_path_below(&b, p->type, rel, NULL);
  return buf;
}

/* --- resolving paths -------------------------------------------------------------------- */

typedef struct walk {
  const char *path;
  size_t pos;
  const gcl_layout *layout;
  const gcl__lparam *p;
  const gcl__type *t;
  gcl__place pl;
  const char *name;
} walk;

static gcl_status bad(const walk *w, gcl_status s, size_t col, const char *fmt, ...)
    GCL__PRINTF(4, 5);
static gcl_status bad(const walk *w, gcl_status s, size_t col, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return gcl__fail(s, "path '%.*s', col %zu: %s", (int)gcl__utf8_cut(w->path, 200), w->path,
                   col + 1, msg);
}

static bool ident_char(char c, bool first) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         (!first && c >= '0' && c <= '9');
}

/* Length of the identifier or number at pos (0 if neither); *num gets a number, saturated. */
static size_t component(const walk *w, bool *is_num, uint64_t *num) {
  const char *s = w->path + w->pos;
  size_t n = 0;
  *is_num = s[0] >= '0' && s[0] <= '9';
  *num = 0;
  if (*is_num) {
    for (; s[n] >= '0' && s[n] <= '9'; n++)
      *num = *num > UINT32_MAX ? *num : *num * 10 + (uint64_t)(s[n] - '0');
    return n;
  }
  while (ident_char(s[n], n == 0)) n++;
  return n;
}

/* 'g.segs' -- the path up to pos, for messages. */
static int upto(const char *path, size_t pos) { return (int)gcl__utf8_cut(path, pos > 200 ? 200 : pos); }

static gcl_status first_param(walk *w) {
  bool is_num;
  uint64_t num;
  size_t n = component(w, &is_num, &num);
  size_t count = gcl_layout_count(w->layout), index = 0;
  if (!n) return bad(w, GCL_ERROR_INVALID_ARGUMENT, 0, "expected a parameter name or index");
  if (is_num) {
    if (num >= count)
      return bad(w, GCL_ERROR_INVALID_ARGUMENT, 0, "parameter %.*s out of range: the layout has "
                 "%zu", (int)n, w->path, count);
    index = (size_t)num;
  } else {
    for (; index < count; index++) {
      const char *name = gcl__layout_lparam(w->layout, index)->info.name;
      if (name && strlen(name) == n && !memcmp(name, w->path, n)) break;
    }
    if (index == count)
      return bad(w, GCL_ERROR_NOT_FOUND, 0, "no parameter named '%.*s' among %zu parameters",
                 (int)n, w->path, count);
  }
  w->p = gcl__layout_lparam(w->layout, index);
  w->t = w->p->type, w->pl = param_place(w->p), w->name = w->p->info.name;
  w->pos = n;
  return GCL_OK;
}

/* "'g.n' (u32)" for messages about the value at the path so far. */
static const char *what_so_far(const walk *w, size_t end, char *buf, size_t cap) {
  char type[128];
  if (w->t) gcl__type_name(w->t, type, sizeof type);
  else snprintf(type, sizeof type, "bytes(%zu), untyped: a layout without a signature", w->p->size);
  snprintf(buf, cap, "'%.*s' (%s)", upto(w->path, end), w->path, type);
  return buf;
}

/* Lists member names ("loads, stores, 2, n") for a NOT_FOUND message. */
static const char *member_list(const gcl__type *t, char *buf, size_t cap) {
  pbuf b = {buf, cap, 0};
  buf[0] = '\0';
  for (size_t i = 0; i < t->member_count; i++) {
    if (t->names[i]) put(&b, "%s%s", i ? ", " : "", t->names[i]);
    else put(&b, "%s%zu", i ? ", " : "", i);
  }
  return buf;
}

static gcl_status pick_member(walk *w, size_t at, size_t n, bool is_num, uint64_t num) {
  char what[512], list[512];
  const gcl__type *t = w->t;
  long m = -1;
  if (is_num && num < t->member_count) m = (long)num;
  else if (!is_num) m = gcl__type_member(t, w->path + w->pos, n);
  if (m < 0 && is_num)
    return bad(w, GCL_ERROR_INVALID_ARGUMENT, w->pos, "member %.*s out of range: %s has %zu "
               "members", (int)n, w->path + w->pos, what_so_far(w, at, what, sizeof what),
               t->member_count);
  if (m < 0)
    return bad(w, GCL_ERROR_NOT_FOUND, w->pos, "no member '%.*s' in %s (members: %s)", (int)n,
               w->path + w->pos, what_so_far(w, at, what, sizeof what),
               member_list(t, list, sizeof list));
  w->pl = member_place(t, w->pl, (size_t)m);
  w->name = t->names[m];
  w->t = t->members[m];
  return GCL_OK;
}

/* ".name" or ".N" at w->pos (the '.'). */
static gcl_status step_member(walk *w) {
  char what[512];
  size_t at = w->pos++;
  bool is_num;
  uint64_t num;
  size_t n = component(w, &is_num, &num);
  if (!n) return bad(w, GCL_ERROR_INVALID_ARGUMENT, w->pos, "expected a member name or index after '.'");
  if (!w->t || w->t->kind != GCL_PARAM_STRUCT) {
    bool array = w->t && w->t->kind == GCL_PARAM_ARRAY;
    return bad(w, is_num || array ? GCL_ERROR_INVALID_ARGUMENT : GCL_ERROR_NOT_FOUND, at,
               "%s is not a struct%s", what_so_far(w, at, what, sizeof what),
               array ? ": index an array with [N]" : ": it has no members");
  }
  gcl_status s = pick_member(w, at, n, is_num, num);
  if (!s) w->pos += n;
  return s;
}

/* "[N]" at w->pos (the '['). */
static gcl_status step_element(walk *w) {
  char what[512];
  size_t at = w->pos++;
  bool is_num;
  uint64_t num;
  size_t n = component(w, &is_num, &num);
  if (!n || !is_num) return bad(w, GCL_ERROR_INVALID_ARGUMENT, w->pos, "expected an index after '['");
  if (w->path[w->pos + n] != ']')
    return bad(w, GCL_ERROR_INVALID_ARGUMENT, w->pos + n, "expected ']' after the index");
  if (!w->t || w->t->kind != GCL_PARAM_ARRAY)
    return bad(w, GCL_ERROR_INVALID_ARGUMENT, at, "%s is not an array",
               what_so_far(w, at, what, sizeof what));
  if (num >= w->t->count)
    return bad(w, GCL_ERROR_INVALID_ARGUMENT, w->pos, "index %.*s out of range: %s has %zu "
               "elements", (int)n, w->path + w->pos, what_so_far(w, at, what, sizeof what),
               w->t->count);
  w->pl = element_place(w->t, w->pl, (size_t)num);
  w->t = w->t->elem;
  w->pos += n + 1;
  return GCL_OK;
}

gcl_status gcl_layout_field(const gcl_layout *layout, const char *path, gcl_field *out) {
  if (!layout || !path || !out)
    return gcl__fail_null("gcl_layout_field", 3, "layout", (const void *)layout, "path",
                          (const void *)path, "out", (const void *)out);
  walk w = {.path = path, .layout = layout};
  gcl_status s = first_param(&w);
  while (!s && path[w.pos]) {
    if (path[w.pos] == '.') s = step_member(&w);
    else if (path[w.pos] == '[') s = step_element(&w);
    else {
      size_t len = gcl__utf8_len((const unsigned char *)path + w.pos, strnlen(path + w.pos, 4));
      s = bad(&w, GCL_ERROR_INVALID_ARGUMENT, w.pos, "expected '.', '[' or the end of the "
              "path, got '%.*s'", (int)(len ? len : 1), path + w.pos);
    }
  }
  if (s) return s;
  gcl__field_make(layout, w.p, w.t, w.pl, w.name, out);
  return GCL_OK;
}

gcl_status gcl_layout_param_field(const gcl_layout *layout, size_t index, gcl_field *out) {
  if (!layout || !out)
    return gcl__fail_null("gcl_layout_param_field", 2, "layout", (const void *)layout, "out",
                          (const void *)out);
  if (index >= gcl_layout_count(layout))
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "parameter index %zu out of range: the layout "
                     "has %zu parameters", index, gcl_layout_count(layout));
  *out = gcl__layout_lparam(layout, index)->field;
  return GCL_OK;
}

gcl_status gcl_layout_element_field(const gcl_layout *layout, const gcl_field *array,
                                    size_t element, gcl_field *out) {
  if (!layout || !array || !out)
    return gcl__fail_null("gcl_layout_element_field", 3, "layout", (const void *)layout, "array",
                          (const void *)array, "out", (const void *)out);
  const gcl__type *t = gcl__f_type(array);
  char l[512];
  if (gcl__f_layout(array) != layout || array->param >= gcl_layout_count(layout))
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_layout_element_field: the field was not "
                     "resolved in this layout");
  if (!t || t->kind != GCL_PARAM_ARRAY)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s is not an array: element %zu",
                     gcl__field_label(array, l, sizeof l), element);
  if (element >= t->count)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: element %zu out of range, the array has %zu",
                     gcl__field_label(array, l, sizeof l), element, t->count);
  gcl__place pl = {gcl__f(array, GCL__F_REL), gcl__f(array, GCL__F_OWNER),
                   gcl__f(array, GCL__F_TMAP), 0};
  gcl__field_make(layout, gcl__layout_lparam(layout, array->param), t->elem,
                  element_place(t, pl, element), array->info.name, out);
  return GCL_OK;
}

/* --- visiting leaves -------------------------------------------------------------------- */

typedef struct visit {
  const gcl_layout *layout;
  const gcl__lparam *p;
  gcl_leaf_fn fn;
  void *user;
  pbuf b;
} visit;

/* Visits the leaves of t at rel; returns nonzero when fn asked to stop. */
static int visit_type(visit *v, const gcl__type *t, gcl__place pl, const char *name) {
  size_t len = v->b.len;
  int stop = 0;
  if (is_leaf(t)) {
    gcl_field f;
    gcl__field_make(v->layout, v->p, t, pl, name, &f);
    return v->fn(&f, v->b.buf, v->user);
  }
  if (t->kind == GCL_PARAM_STRUCT) {
    for (size_t i = 0; i < t->member_count && !stop; i++) {
      if (t->names[i]) put(&v->b, ".%s", t->names[i]);
      else put(&v->b, ".%zu", i);
      stop = visit_type(v, t->members[i], member_place(t, pl, i), t->names[i]);
      v->b.len = len, v->b.buf[len] = '\0';
    }
    return stop;
  }
  for (size_t i = 0; i < t->count && !stop; i++) {
    put(&v->b, "[%zu]", i);
    stop = visit_type(v, t->elem, element_place(t, pl, i), name);
    v->b.len = len, v->b.buf[len] = '\0';
  }
  return stop;
}

gcl_status gcl_layout_visit_leaves(const gcl_layout *layout, gcl_leaf_fn fn, void *user) {
  if (!layout) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_layout_visit_leaves: layout is NULL");
  if (!fn) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_layout_visit_leaves: fn is NULL");
  visit v = {.layout = layout, .fn = fn, .user = user};
  v.b.cap = PATH_MAX_BYTES;
  v.b.buf = gcl__malloc(v.b.cap);
  if (!v.b.buf) return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "out of memory visiting leaves");
  int stop = 0;
  for (size_t i = 0; i < gcl_layout_count(layout) && !stop; i++) {
    v.p = gcl__layout_lparam(layout, i);
    v.b.len = 0;
    put_param(&v.b, v.p, i);
    stop = visit_type(&v, v.p->type, param_place(v.p), v.p->info.name);
  }
  gcl__free(v.b.buf);
  return GCL_OK;
}
