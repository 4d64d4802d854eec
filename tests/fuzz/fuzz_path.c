/* libFuzzer target: field paths (issue 14). Input: a signature line, '\n', then a path. The
 * signature is parsed and laid out for sm_90; the path must resolve or fail cleanly (a message
 * naming the path). A resolved field must lie inside its parameter, format back to a path that
 * resolves to the same field and formats to itself, and take raw bytes of its size in args
 * (counted set afterwards). The first leaves of the layout are checked the same way. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gclaunch/gclaunch.h"

#define CHECK(cond)                                                                               \
  do {                                                                                            \
    if (!(cond)) __builtin_trap();                                                                \
  } while (0)

#define MAX_LEAVES 64

static char *path_of(const gcl_layout *l, const gcl_field *f) {
  size_t needed = 0;
  CHECK(gcl_layout_field_path(l, f, NULL, 0, &needed) == GCL_OK); /* snprintf's contract */
  CHECK(needed > 0);                                                  /* a path is never empty */
  char *p = malloc(needed + 1);
  CHECK(p != NULL);
  CHECK(gcl_layout_field_path(l, f, p, needed + 1, NULL) == GCL_OK);
  CHECK(strlen(p) == needed);
  return p;
}

static void check_field(const gcl_layout *l, const gcl_field *f) {
  size_t off = 0, size = 0;
  CHECK(f->param < gcl_layout_count(l));
  CHECK(gcl_layout_param(l, f->param, &off, &size, NULL) == GCL_OK);
  CHECK(f->offset >= off && f->offset + f->size <= off + size);
  CHECK(f->size > 0 && f->align > 0 && (f->align & (f->align - 1)) == 0);
  char *p = path_of(l, f);
  gcl_field g;
  CHECK(gcl_layout_field(l, p, &g) == GCL_OK);
  CHECK(g.param == f->param && g.offset == f->offset && g.size == f->size && g.align == f->align);
  CHECK(g.info.kind == f->info.kind);
  char *q = path_of(l, &g);
  CHECK(strcmp(p, q) == 0);
  free(q);
  free(p);
}

static void check_args(const gcl_layout *l, const gcl_field *f) {
  gcl_args *a = NULL;
  if (gcl_args_create(l, &a) != GCL_OK) return;
  unsigned char *zero = calloc(1, f->size);
  CHECK(zero != NULL);
  CHECK(!gcl_args_field_is_set(a, f) || f->size == 0);
  CHECK(gcl_args_set_field(a, f, zero, f->size) == GCL_OK);
  CHECK(gcl_args_field_is_set(a, f));
  free(zero);
  gcl_args_destroy(a);
}

typedef struct leaves { const gcl_layout *l; size_t n; } leaves;

static int on_leaf(const gcl_field *f, const char *path, void *user) {
  leaves *v = user;
  gcl_field g;
  CHECK(gcl_layout_field(v->l, path, &g) == GCL_OK);
  CHECK(g.offset == f->offset && g.size == f->size && g.param == f->param);
  check_field(v->l, f);
  return ++v->n >= MAX_LEAVES;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = 0;
  char *nl = memchr(text, '\n', size);
  const char *path = nl ? nl + 1 : "0";
  if (nl) *nl = 0;
  gcl_signature *sig = NULL;
  gcl_layout *layout = NULL;
  if (gcl_signature_parse(text, &sig) == GCL_OK && gcl_layout_create(sig, 90, &layout) == GCL_OK) {
    gcl_field f;
    gcl_status s = gcl_layout_field(layout, path, &f);
    if (s == GCL_OK) {
      check_field(layout, &f);
      check_args(layout, &f);
    } else {
      CHECK(s == GCL_ERROR_NOT_FOUND || s == GCL_ERROR_INVALID_ARGUMENT);
      CHECK(strstr(gcl_last_error(), "path '") != NULL);
    }
    leaves v = {layout, 0};
    CHECK(gcl_layout_visit_leaves(layout, on_leaf, &v) == GCL_OK);
  }
  gcl_layout_destroy(layout);
  gcl_signature_destroy(sig);
  free(text);
  return 0;
}
