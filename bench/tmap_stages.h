/* The checks of gcl_tensormap_check one stage at a time, for bench_refresh (bench/tmap_stages.c). */
#ifndef BENCH_TMAP_STAGES_H
#define BENCH_TMAP_STAGES_H

#include <gclaunch/gclaunch.h>

#define BENCH_TMAP_STAGES 2 /* lib/core/tmap.h's GCL__TMAP_STAGES */

/* The first `stages` checks (0 ... BENCH_TMAP_STAGES) of the translation, in the order
 * gcl_tensormap_check runs them; out is complete only with all of them. */
gcl_status bench_tmap_translate_upto(const DLTensor *t, const gcl_tensormap_options *o,
                                     gcl_tensormap_desc *out, int stages);
/* Stage `stage`'s name (0-based); "?" outside. */
const char *bench_tmap_stage_name(int stage);

#endif
