/* libFuzzer target: the signature parser, with its own printed form as the oracle. Any text must
 * parse or fail cleanly; a parsed signature's canonical text must parse again to the same type
 * tree -- every parameter's description, and, laid out for sm_90, every leaf of every parameter
 * (struct members, array elements, nested to any depth) with the same path, kind, offset, size and
 * alignment -- and print the same text again; its layout and args must build or fail cleanly,
 * the same way for both parses. A mismatch aborts with a message saying what differs (libFuzzer
 * reports it as a crash with the input). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gclaunch/gclaunch.h"

#define CHECK(cond)                                                                               \
  do {                                                                                            \
    if (!(cond)) __builtin_trap();                                                                \
  } while (0)
/* The oracle disagrees: say what, then abort (libFuzzer saves the input). */
#define ORACLE(cond, ...)                                                                         \
  do {                                                                                            \
    if (!(cond)) {                                                                                \
      fprintf(stderr, "fuzz_signature oracle: ");                                                \
      fprintf(stderr, __VA_ARGS__);                                                               \
      fprintf(stderr, "\n");                                                                      \
      abort();                                                                                    \
    }                                                                                             \
  } while (0)

static int same_text(const char *a, const char *b) { return (!a && !b) || (a && b && !strcmp(a, b)); }

static void check_equal(const gcl_signature *a, const gcl_signature *b, const char *canon) {
  ORACLE(gcl_signature_count(a) == gcl_signature_count(b), "%zu parameters, reparsed %zu: '%s'",
         gcl_signature_count(a), gcl_signature_count(b), canon);
  for (size_t i = 0; i < gcl_signature_count(a); i++) {
    gcl_param_info x, y;
    CHECK(gcl_signature_param(a, i, &x) == GCL_OK);
    CHECK(gcl_signature_param(b, i, &y) == GCL_OK);
    ORACLE(same_text(x.name, y.name), "parameter %zu: name '%s', reparsed '%s'", i,
           x.name ? x.name : "(none)", y.name ? y.name : "(none)");
    ORACLE(x.kind == y.kind && x.elem_kind == y.elem_kind && x.scalar == y.scalar &&
           x.is_const == y.is_const && x.grid_constant == y.grid_constant && x.size == y.size &&
           x.align == y.align && x.count == y.count && x.elem_size == y.elem_size &&
           x.pointee_align == y.pointee_align,
           "parameter %zu differs after print and parse: kind %d/%d size %zu/%zu align %zu/%zu "
           "count %zu/%zu: '%s'", i, (int)x.kind, (int)y.kind, x.size, y.size, x.align, y.align,
           x.count, y.count, canon);
  }
}

/* The leaves of a layout, as text, one per line: path, offset, size, align and description. */
typedef struct leaves {
  char *text;
  size_t len, cap, count;
} leaves;
#define MAX_LEAVES 4096 /* tensormap[N] and arrays of structs: enough to compare, bounded time */

static void append(leaves *l, const char *line) {
  size_t add = strlen(line);
  if (l->len + add + 1 > l->cap) {
    size_t cap = (l->cap ? 2 * l->cap : 4096) + add;
    char *grown = realloc(l->text, cap);
    CHECK(grown != NULL);
    l->text = grown;
    l->cap = cap;
  }
  memcpy(l->text + l->len, line, add + 1);
  l->len += add;
}

static int collect(const gcl_field *f, const char *path, void *user) {
  leaves *l = user;
  char line[512];
  snprintf(line, sizeof line, "%s @%zu +%zu /%zu k%d e%d s%d c%d n%zu es%zu pa%zu\n", path,
           f->offset, f->size, f->align, (int)f->info.kind, (int)f->info.elem_kind,
           (int)f->info.scalar, (int)f->info.is_const, f->info.count, f->info.elem_size,
           f->info.pointee_align);
  append(l, line);
  return ++l->count >= MAX_LEAVES;
}

/* sig's type tree laid out for sm_90, leaf by leaf; NULL text when the layout is refused. */
static gcl_status tree(const gcl_signature *sig, leaves *out) {
  memset(out, 0, sizeof *out);
  gcl_layout *layout = NULL;
  gcl_status s = gcl_layout_create(sig, 90, &layout);
  if (s != GCL_OK) return s;
  CHECK(gcl_layout_visit_leaves(layout, collect, out) == GCL_OK);
  char total[64];
  snprintf(total, sizeof total, "size %zu\n", gcl_layout_size(layout));
  append(out, total);
  gcl_layout_destroy(layout);
  return GCL_OK;
}

/* The same type tree: both laid out or both refused (with the same status), leaf for leaf. */
static void check_same_tree(const gcl_signature *a, const gcl_signature *b, const char *canon) {
  leaves x, y;
  gcl_status sx = tree(a, &x), sy = tree(b, &y);
  ORACLE(sx == sy, "layout of the parse: %s, of the reparse: %s: '%s'", gcl_status_name(sx),
         gcl_status_name(sy), canon);
  if (sx == GCL_OK) {
    const char *tx = x.text ? x.text : "", *ty = y.text ? y.text : "";
    if (strcmp(tx, ty)) {
      size_t i = 0;
      while (tx[i] && tx[i] == ty[i]) i++;
      while (i > 0 && tx[i - 1] != '\n') i--;
      ORACLE(0, "the type trees differ at leaf line \"%.200s\" vs \"%.200s\": '%s'", tx + i, ty + i,
             canon);
    }
  }
  free(x.text);
  free(y.text);
}

/* The canonical text, malloc'ed; NULL only if formatting failed (a bug). */
static char *format(const gcl_signature *sig) {
  size_t needed = 0;
  char probe[1];
  CHECK(gcl_signature_format(sig, probe, 0, &needed) == GCL_OK); /* snprintf's contract */
  char *text = malloc(needed + 1);
  CHECK(text != NULL);
  CHECK(gcl_signature_format(sig, text, needed + 1, NULL) == GCL_OK);
  CHECK(strlen(text) == needed);
  return text;
}

static void exercise_layout(const gcl_signature *sig) {
  gcl_layout *layout = NULL;
  if (gcl_layout_create(sig, 90, &layout) != GCL_OK) return;
  CHECK(gcl_layout_count(layout) == gcl_signature_count(sig));
  CHECK(gcl_layout_size(layout) <= GCL_PARAM_LIMIT);
  gcl_args *args = NULL;
  if (gcl_args_create(layout, &args) == GCL_OK) {
    const void *data;
    size_t size;
    gcl_status s = gcl_args_buffer(args, &data, &size);
    CHECK(s == (gcl_layout_count(layout) ? GCL_ERROR_UNSET_ARGUMENT : GCL_OK));
    gcl_args_destroy(args);
  }
  gcl_layout_destroy(layout);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = 0;
  gcl_signature *sig = NULL;
  if (gcl_signature_parse(text, &sig) == GCL_OK) {
    char *canon = format(sig);
    gcl_signature *again = NULL;
    ORACLE(gcl_signature_parse(canon, &again) == GCL_OK, "the printed form '%s' does not parse: %s",
           canon, gcl_last_error());
    check_equal(sig, again, canon);
    check_same_tree(sig, again, canon);
    char *canon2 = format(again);
    ORACLE(strcmp(canon, canon2) == 0, "printed '%s', reprinted '%s'", canon, canon2);
    exercise_layout(sig);
    free(canon2);
    free(canon);
    gcl_signature_destroy(again);
    gcl_signature_destroy(sig);
  } else {
    CHECK(sig == NULL);
    CHECK(gcl_last_error()[0] != 0);
  }
  free(text);
  return 0;
}
