/* consumer.c -- a program built against an *installed* gclaunch (pkg-config or CMake), CPU only:
 * parses a signature and prints its sm_90 parameter layout. tests/install/check.sh builds it both
 * ways and compares the output with the offsets docs/facts.md gives for sm_90
 * ("Placement rule"). */
#include <gclaunch/gclaunch.h>
#include <stdio.h>

#define DEFAULT_SIGNATURE \
  "grid_constant tensormap[2] maps, const f32* align(16) src, f32* dst, u64 n, struct{i32,i32,f32} tile"

static int fail(const char *what, gcl_status s) {
  fprintf(stderr, "consumer: %s: %s: %s\n", what, gcl_status_name(s), gcl_last_error());
  return 1;
}

static int print_layout(const gcl_layout *layout) {
  for (size_t i = 0; i < gcl_layout_count(layout); i++) {
    gcl_field f;
    size_t offset, size, align;
    gcl_status s = gcl_layout_param(layout, i, &offset, &size, &align);
    if (s == GCL_OK) s = gcl_layout_param_field(layout, i, &f);
    if (s != GCL_OK) return fail("gcl_layout_param", s);
    const gcl_param_info info = f.info;
    printf("param %zu %s offset %zu size %zu align %zu\n", i, info.name ? info.name : "-", offset,
           size, align);
  }
  printf("bytes %zu\n", gcl_layout_size(layout));
  return 0;
}

int main(int argc, char **argv) {
  const char *text = argc > 1 ? argv[1] : DEFAULT_SIGNATURE;
  gcl_signature *sig = NULL;
  gcl_layout *layout = NULL;
  gcl_status s = gcl_signature_parse(text, &sig);
  if (s != GCL_OK) return fail("gcl_signature_parse", s);
  s = gcl_layout_create(sig, 90, &layout);
  gcl_signature_destroy(sig);
  if (s != GCL_OK) return fail("gcl_layout_create", s);
  printf("gclaunch %s sm_90\n", gcl_version());
  int rc = print_layout(layout);
  gcl_layout_destroy(layout);
  return rc;
}
