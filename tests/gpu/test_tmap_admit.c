/* Issue 53 on the GPU: tests/unit/test_tmap_admit.c's script (the DLPack flags repro at the same
 * address and moved, on args by element and by member, a table, the 0.4 verbs and a one-map
 * encode) against the real driver, with re-points by cuTensorMapReplaceAddress
 * (GCL_TMAP_PATCH=0) and by the patch the device proved, in one process: the same statuses,
 * messages and bytes both ways. */
#define GCL_TMAP_ADMIT_GPU 1
#include "../unit/test_tmap_admit.c"
