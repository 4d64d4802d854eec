/* The CPU argument-buffer tests' fixture: a signature parsed, its layout for sm and args of it;
 * drop() frees all three. */
#ifndef GCL_TEST_ARGS_FIXTURE_H
#define GCL_TEST_ARGS_FIXTURE_H

#include <criterion/criterion.h>

#include "gclaunch/gclaunch.h"

typedef struct fixture {
  gcl_signature *sig;
  gcl_layout *layout;
  gcl_args *args;
} fixture;

static inline fixture make(const char *text, int sm) {
  fixture f = {0};
  cr_assert_eq(gcl_signature_parse(text, &f.sig), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_layout_create(f.sig, sm, &f.layout), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_args_create(f.layout, &f.args), GCL_OK, "%s", gcl_last_error());
  return f;
}

static inline void drop(fixture *f) {
  gcl_args_destroy(f->args);
  gcl_layout_destroy(f->layout);
  gcl_signature_destroy(f->sig);
}

#endif
