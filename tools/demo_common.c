/* gclaunch demo: the helpers demo.c (plan, CPU-only view, command) and demo_gpu.c (the copy on
 * the GPUs) share -- the generator and clock, the kernels' folder, the views' dtypes and rows,
 * the tensor-map options of a box, the globals struct's fields. A leaf of the tools' file graph:
 * it calls no other file of tools/ (tests/cli/file_graph.sh), so demo.c and demo_gpu.c both call
 * down into it and never into each other's helpers. */
#include "demo.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
uint64_t demo_rng(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

double demo_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#ifndef GCL_KERNEL_REL_DIR
#define GCL_KERNEL_REL_DIR ""
#endif
#ifndef GCL_KERNEL_INSTALL_DIR
#define GCL_KERNEL_INSTALL_DIR ""
#endif

static bool has_kernels(const char *dir) {
  char path[PATH_MAX];
  int n = snprintf(path, sizeof path, "%s/megakernel.fatbin", dir);
  return *dir && n > 0 && (size_t)n < sizeof path && access(path, R_OK) == 0;
}

/* <this executable's folder>/rel when it holds the kernels, made absolute (realpath: no bin/.. in
 * what the demo prints); NULL otherwise. */
static const char *kernels_from_exe(const char *exe, const char *rel, char *out) {
  char joined[PATH_MAX];
  int len = snprintf(joined, sizeof joined, "%s/%s", exe, rel);
  if (len > 0 && (size_t)len < sizeof joined && has_kernels(joined) && realpath(joined, out)) return out;
  return NULL;
}

/* $GCL_KERNEL_DIR; else tools/../kernels, for the tool in a build tree or in the relocatable test
 * kit (no path of the build machine is compiled in); else the installed kernels, found from this
 * executable's folder (<bindir>/../share/gclaunch/kernels: staged and relocated installs work) or
 * at the configured install path; else "kernels". */
const char *demo_kernel_dir(void) {
  static char found[PATH_MAX];
  const char *env = getenv("GCL_KERNEL_DIR");
  if (env && *env) return env;
  char exe[900];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (slash) *slash = 0;
    if (kernels_from_exe(exe, "../kernels", found)) return found;
    if (GCL_KERNEL_REL_DIR[0] && kernels_from_exe(exe, GCL_KERNEL_REL_DIR, found)) return found;
  }
  if (has_kernels(GCL_KERNEL_INSTALL_DIR)) return GCL_KERNEL_INSTALL_DIR;
  return "kernels";
}

const DLDataType demo_dtypes[3] = {{kDLFloat, 32, 1}, {kDLBfloat, 16, 1}, {kDLUInt, 8, 1}};
const char *const demo_dtype_names[3] = {"f32", "bf16", "u8"};

size_t demo_row_bytes(const view *v) { return (size_t)v->shape[1] * (v->t.dtype.bits / 8u); }
size_t demo_row_at(const view *v, int64_t r) {
  return v->t.byte_offset + (size_t)(r * v->strides[0]) * (v->t.dtype.bits / 8u);
}

/* DEMO_BOX_BYTES-wide box rows; store: the map is a TMA store destination (16-byte rows checked). */
gcl_tensormap_options demo_box_for(const demo *d, const view *v, int store) {
  gcl_tensormap_options o;
  memset(&o, 0, sizeof o);
  o.l2_promotion = d->l2;
  o.box[0] = DEMO_BOX_BYTES / (v->t.dtype.bits / 8u);
  o.box[1] = DEMO_BOX_ROWS;
  o.store = store;
  return o;
}

int demo_resolve_fields(const gcl_layout *layout, size_t n_maps, demo_fields *f) {
  char path[32];
  for (size_t e = 0; e < n_maps && e < DEMO_MAX_MAPS; e++) {
    snprintf(path, sizeof path, "g.maps[%zu]", e);
    if (gcl_layout_field(layout, path, &f->maps[e]) != GCL_OK) {
      fprintf(stderr, "demo: %s\n", gcl_last_error());
      return -1;
    }
  }
  if (gcl_layout_field(layout, "g.work", &f->work) != GCL_OK ||
      gcl_layout_field(layout, "g.n_work", &f->n_work) != GCL_OK) {
    fprintf(stderr, "demo: %s\n", gcl_last_error());
    return -1;
  }
  return 0;
}
