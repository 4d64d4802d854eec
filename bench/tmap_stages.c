/* bench_refresh's cost of each of gcl_tensormap_check's checks (issue 25), kept out of the
 * library: this file compiles lib/core/tmap.c into the benchmark under its own names (so its
 * copy does not clash with the library's) and runs a prefix of the checks through tmap.c's
 * static translate_upto, in the order gcl__tmap_translate runs them. */
#define gcl__tmap_translate bench__tmap_translate
#define gcl__tmap_who_format bench__tmap_who_format
#define gcl__tmap_fail bench__tmap_fail
#define gcl__tmap_type_name bench__tmap_type_name
#define gcl_tensormap_check bench__tensormap_check
#define gcl__tmap_sparse_small bench__tmap_sparse_small
#define gcl__tmap_refuse_flags bench__tmap_refuse_flags
#include "../lib/core/tmap.c"

#include "tmap_stages.h"

_Static_assert(BENCH_TMAP_STAGES == GCL__TMAP_STAGES, "bench/tmap_stages.h is lib/core/tmap.h's count");

/* The arguments and reserved words, then the one pass over the rule table (a message only on a
 * refusal, which the benchmark never takes). */
static const char *const stage_names[GCL__TMAP_STAGES] = {
    "arguments, reserved words",
    "the one pass (options, tensor, dims, strides, address, box or im2col)"};

const char *bench_tmap_stage_name(int stage) {
  return stage >= 0 && stage < GCL__TMAP_STAGES ? stage_names[stage] : "?";
}

gcl_status bench_tmap_translate_upto(const DLTensor *t, const gcl_tensormap_options *o,
                                     gcl_tensormap_desc *out, int stages) {
  static const gcl__tmap_who who = {.text = "tensor"};
  return translate_upto(t, o, &who, out, stages);
}
