/* tests/common/pe_spawn.c, the one PE launcher of the two-PE test, bench_nvshmem_bw and
 * examples/nvshmem_gather.c, against libfakecuda.so and libfakenvshmem.so: two processes start
 * PE 0 and PE 1 of 2 from PE 0's unique id on the GPUs they are given (both on GPU 0 when there is
 * one), a failing PE ends the one waiting for it, a PE past the deadline is killed, and the
 * description says when PEs share a GPU. */
#include "fakecuda_test.h"
#include "fakenvshmem.h"
#include "../common/pe_spawn.h"

#include <time.h>
#include <unistd.h>

static void use_fakes(void) {
  fake_use();
  setenv("GCL_NVSHMEM_PATH", gcl_test_fakenvshmem_path(), 1);
}

/* Starts the PE on its device and checks what NVSHMEM was given: 0 when all is as planned. */
static int start_and_check(int rank, int pes, int device, const gcl_pe_unique_id *id, void *user) {
  (void)user;
  gcl_context *ctx = NULL;
  int me = -1, n = -1;
  if (gcl_context_create(device, &ctx) != GCL_OK || gcl_pe_start(ctx, id, rank, pes) != GCL_OK)
    return fprintf(stderr, "PE %d: %s\n", rank, gcl_last_error()), 10;
  if (gcl_pe_id(&me) != GCL_OK || gcl_pe_count(&n) != GCL_OK || me != rank || n != pes) return 11;
  if (fakenvshmem_device() != device || fakenvshmem_rank() != rank) return 12;
  if (gcl_pe_stop() != GCL_OK) return 13;
  gcl_context_destroy(ctx);
  return 0;
}

Test(pe_spawn, two_PEs_on_one_GPU_start_from_PE_0s_id_both_on_GPU_0) {
  use_fakes();
  cr_assert_eq(pe_spawn_run(2, 1, 30, start_and_check, NULL), 0);
}

Test(pe_spawn, two_PEs_on_two_GPUs_start_one_per_GPU) {
  use_fakes();
  cr_assert_eq(fakecuda_set_devices(2), 0); /* the children inherit it */
  cr_assert_eq(pe_spawn_gpus(16), 2);
  cr_assert_eq(pe_spawn_run(2, 2, 30, start_and_check, NULL), 0);
}

static int one_fails(int rank, int pes, int device, const gcl_pe_unique_id *id, void *user) {
  (void)pes, (void)device, (void)id, (void)user;
  if (rank == 1) return 3;
  sleep(30); /* PE 0 waits as it would in a barrier for PE 1 */
  return 0;
}

Test(pe_spawn, a_failing_PE_ends_the_one_waiting_for_it) {
  use_fakes();
  time_t t0 = time(NULL);
  cr_assert_eq(pe_spawn_run(2, 1, 0, one_fails, NULL), 1);
  cr_assert_lt(time(NULL) - t0, 20, "PE 0 was ended, not waited for");
}

static int hangs(int rank, int pes, int device, const gcl_pe_unique_id *id, void *user) {
  (void)rank, (void)pes, (void)device, (void)id, (void)user;
  sleep(30);
  return 0;
}

Test(pe_spawn, PEs_past_the_deadline_are_killed) {
  use_fakes();
  time_t t0 = time(NULL);
  cr_assert_eq(pe_spawn_run(2, 1, 1, hangs, NULL), 1);
  cr_assert_lt(time(NULL) - t0, 20);
}

Test(pe_spawn, the_description_says_when_PEs_share_a_GPU) {
  char b[128];
  cr_assert_str_eq(pe_spawn_describe(2, 2, b, sizeof b), "2 PEs on 2 GPUs");
  cr_assert_str_eq(pe_spawn_describe(2, 1, b, sizeof b), "2 PEs on 1 GPU (2 processes share GPU 0, time-sliced)");
  cr_assert_str_eq(pe_spawn_describe(1, 1, b, sizeof b), "1 PE on 1 GPU");
  cr_assert_eq(pe_spawn_run(0, 1, 0, hangs, NULL), 1, "0 PEs refused");
}
