/* One process per NVSHMEM PE, for the programs that run several (the two-PE test, bench_nvshmem_bw,
 * examples/nvshmem_gather.c): the parent counts the GPUs in a child (it starts no CUDA itself
 * before forking), forks the PEs, and PE 0's unique id reaches the others through a pipe. PE r
 * runs on GPU r % gpus: with fewer GPUs than PEs, several processes share a GPU (NVSHMEM's
 * "limited MPG" without MPS: the GPU time-slices between them; docs/multigpu.md says what that
 * mode cannot do). Public gclaunch API only. */
#ifndef GCL_PE_SPAWN_H
#define GCL_PE_SPAWN_H

#include <gclaunch/gclaunch.h>

/* What one PE runs: its rank, the PE count, its GPU and rank 0's unique id (already exchanged;
 * gcl_pe_start(ctx, id, rank, pes) is the PE's to call). Returns 0 when its results verified. */
typedef int (*pe_spawn_main)(int rank, int pes, int device, const gcl_pe_unique_id *id, void *user);

/* The GPUs this process could use (counted in a forked child), at most max; 0 without a driver. */
int pe_spawn_gpus(int max);
/* "2 PEs on 2 GPUs" or "2 PEs on 1 GPU (2 processes share GPU 0, time-sliced)", into buf. */
const char *pe_spawn_describe(int pes, int gpus, char *buf, size_t cap);
/* Forks pes processes (pes >= 1, gpus >= 1) and waits for them: 0 when every one exited 0. The
 * first PE that fails ends the others (they would wait in a barrier for it), each named on
 * stderr. timeout_s > 0: a PE still running after it is killed (SIGKILL) and named. Sets
 * NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME=lo unless it is set (every PE is on this host). */
int pe_spawn_run(int pes, int gpus, unsigned timeout_s, pe_spawn_main fn, void *user);

#endif
