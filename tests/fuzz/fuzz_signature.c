/* libFuzzer target: the signature parser. Any text must parse or fail cleanly; a parsed
 * signature's canonical text must parse again to an equal signature with the same canonical
 * text, and its layout (sm_90) and args must build or fail cleanly. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gclaunch/gclaunch.h"

#define CHECK(cond)                                                                               \
  do {                                                                                            \
    if (!(cond)) __builtin_trap();                                                                \
  } while (0)

static int same_text(const char *a, const char *b) { return (!a && !b) || (a && b && !strcmp(a, b)); }

static void check_equal(const gcl_signature *a, const gcl_signature *b) {
  CHECK(gcl_signature_count(a) == gcl_signature_count(b));
  for (size_t i = 0; i < gcl_signature_count(a); i++) {
    gcl_param_info x, y;
    CHECK(gcl_signature_param(a, i, &x) == GCL_OK);
    CHECK(gcl_signature_param(b, i, &y) == GCL_OK);
    CHECK(same_text(x.name, y.name));
    CHECK(x.kind == y.kind && x.elem_kind == y.elem_kind && x.scalar == y.scalar);
    CHECK(x.is_const == y.is_const && x.grid_constant == y.grid_constant);
    CHECK(x.size == y.size && x.align == y.align && x.count == y.count);
    CHECK(x.elem_size == y.elem_size && x.pointee_align == y.pointee_align);
  }
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
    CHECK(gcl_signature_parse(canon, &again) == GCL_OK);
    check_equal(sig, again);
    char *canon2 = format(again);
    CHECK(strcmp(canon, canon2) == 0);
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
