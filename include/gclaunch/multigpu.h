/* gclaunch/multigpu.h -- several GPUs: one NVSHMEM PE per process, symmetric memory, modules
 * attached to the PE, peer tensor maps (docs/multigpu.md). Included by gclaunch/runtime.h; the
 * conventions are written in gclaunch.h. */
#ifndef GCLAUNCH_MULTIGPU_H
#define GCLAUNCH_MULTIGPU_H

#include "gclaunch/stream.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gcl_tensormap_table gcl_tensormap_table; /* runtime.h: tables in device memory */

/* ---------------------------------------------------------------------------------------------
 * Several GPUs: one NVSHMEM PE per process (docs/multigpu.md)
 *
 * gclaunch rides NVSHMEM, not a transport of its own. Its host library (libnvshmem_host.so.3,
 * 3.3.9 or later) is opened at run time, never linked: GCL_NVSHMEM_PATH (the library or its
 * folder) when set, else the loader's search (LD_LIBRARY_PATH, ld.so.cache), else
 * $NVSHMEM_HOME/lib -- nothing else -- or the file given to gcl_nvshmem_open (the Python package
 * hands over the pip wheel nvidia-nvshmem-cu13 that Python's import system finds). A process
 * starts one PE on one gclaunch context (one GPU); N GPUs are N processes (two may share a GPU,
 * with limits: docs/multigpu.md). Rank 0 makes a unique id (gcl_pe_unique_id_create) and
 * sends its 128 bytes to the
 * others by any channel (a pipe, a file, torch.distributed, MPI); every rank then starts with it.
 * One process on one GPU is a valid single PE (id NULL, rank 0, count 1).
 * A module device-linked with NVSHMEM (gcl_module_uses_nvshmem) must be attached in the PE's
 * context before any of its kernels is launched; gcl_launch refuses an unattached one
 * (GCL_ERROR_NOT_ATTACHED naming module and kernel) without calling the driver. A kernel that
 * calls NVSHMEM barriers or waits (nvshmem_barrier_all, nvshmem_*_wait_until, collectives) must
 * be launched cooperatively (config.cooperative = true) with the same grid on every PE: that is
 * NVSHMEM's collective launch, with its grid-fit check (gcl_kernel_max_cooperative_grid);
 * clusters and PDL stay available. Keep NVLink multicast off (NVSHMEM_DISABLE_NVLS=1).
 * Every call here is thread-safe (one lock); NVSHMEM itself wants one thread at a time.
 * ------------------------------------------------------------------------------------------- */

/* Opens the NVSHMEM host library (the search runs once, unless gcl_nvshmem_open opened one).
 * GCL_ERROR_NO_NVSHMEM naming every path tried, a missing entry point, or a version older than
 * 3.3.9. */
GCL_API gcl_status gcl_nvshmem_init(void);
/* Opens the NVSHMEM host library at path (the file, or a folder holding libnvshmem_host.so.3)
 * instead of searching, when none is open yet; a library already open stays (one per process):
 * GCL_OK when path is that same file, else GCL_ERROR_NVSHMEM naming both. GCL_ERROR_NO_NVSHMEM
 * naming what was tried and why (the loader's reason, a missing entry point, both versions);
 * GCL_ERROR_INVALID_ARGUMENT for NULL or "". A failure changes nothing: a later open or the
 * default search may still succeed. Thread-safe. */
GCL_API gcl_status gcl_nvshmem_open(const char *path);
/* The library opened (or found too old), or "(not found)". Never NULL. */
GCL_API const char *gcl_nvshmem_path(void);
/* Its version (nvshmemx_vendor_get_version_info), also for one too old to use;
 * GCL_ERROR_NO_NVSHMEM when none was opened. */
GCL_API gcl_status gcl_nvshmem_version(int *major, int *minor, int *patch);

/* NVSHMEM's unique id (nvshmemx_uniqueid_t): 128 opaque bytes, copied as they are. */
#define GCL_PE_UNIQUE_ID_BYTES 128
typedef struct gcl_pe_unique_id {
  unsigned char bytes[GCL_PE_UNIQUE_ID_BYTES];
} gcl_pe_unique_id;

/* Rank 0 only, before gcl_pe_start: a fresh id for this run (nvshmemx_get_uniqueid).
 * GCL_ERROR_NO_NVSHMEM; GCL_ERROR_NVSHMEM naming the call and its return. */
GCL_API gcl_status gcl_pe_unique_id_create(gcl_pe_unique_id *out);
/* Starts this process's PE: rank of count, on ctx's device (ctx made current; it must outlive
 * the PE), bootstrapped from rank 0's id (collective: every rank calls it with the same id).
 * id NULL is allowed for count 1 (a single PE). GCL_ERROR_INVALID_ARGUMENT for NULL ctx, rank
 * outside 0 ... count - 1, or NULL id with count > 1; GCL_ERROR_NVSHMEM when a PE is already
 * started in this process (one PE per process) or an NVSHMEM call fails (named, with its
 * return); GCL_ERROR_NO_NVSHMEM. NVSHMEM reads its NVSHMEM_* environment here. */
GCL_API gcl_status gcl_pe_start(gcl_context *ctx, const gcl_pe_unique_id *id, int rank, int count);
/* Stops the PE (nvshmemx_hostlib_finalize; collective): every symmetric buffer is freed with it.
 * The PE's context is synchronized first (work still running may use the heap finalize unmaps):
 * its failure is returned (GCL_ERROR_DRIVER, GCL_ERROR_KERNEL_FAULT) and the PE keeps running.
 * GCL_ERROR_NVSHMEM when none is started or while modules are attached (detach or destroy them
 * first). A new PE may be started afterwards. */
GCL_API gcl_status gcl_pe_stop(void);
/* The context the PE was started on; NULL when none. */
GCL_API gcl_context *gcl_pe_context(void);
/* This PE's rank and the number of PEs. GCL_ERROR_NVSHMEM when no PE is started. */
GCL_API gcl_status gcl_pe_id(int *id);
GCL_API gcl_status gcl_pe_count(int *count);
/* A barrier of all PEs ordered on stream (NULL: the PE context's default stream): work after it
 * on the stream starts once every PE reached it, with their earlier symmetric-memory writes
 * visible (nvshmemx_barrier_all_on_stream). Collective. GCL_ERROR_NVSHMEM when no PE is
 * started; GCL_ERROR_INVALID_ARGUMENT for a stream of another context. */
GCL_API gcl_status gcl_pe_barrier(gcl_stream *stream);

/* Alignment of every symmetric buffer. */
#define GCL_SYMMETRIC_ALIGN 256
/* Allocates bytes of symmetric memory on every PE (collective: every PE calls it with the same
 * bytes, in the same order): *address is this PE's copy, a device pointer of the PE's context
 * like gcl_mem_alloc's -- a kernel argument, a DLTensor's data, a tensor map's address.
 * GCL_SYMMETRIC_ALIGN-aligned. NVSHMEM 3.x ends the process when its heap cannot grow, so the
 * size is checked before NVSHMEM sees it (every refusal names the numbers; nothing changes; the
 * PE goes on working): GCL_ERROR_INVALID_ARGUMENT for 0 or a size that overflows when rounded;
 * GCL_ERROR_OUT_OF_MEMORY when the live buffers and this one exceed the heap's limit
 * (NVSHMEM_MAX_MEMORY_PER_GPU, 128 GiB by default; NVSHMEM_SYMMETRIC_SIZE, 1 GiB by default, with
 * NVSHMEM_DISABLE_CUDA_VMM=1), when the heap would have to grow (by whole
 * NVSHMEM_CUMEM_GRANULARITY grains, 512 MiB by default) beyond the device's free memory
 * (cuMemGetInfo), or when NVSHMEM returns NULL. GCL_ERROR_NVSHMEM when no PE is started. The
 * checks are local: a size refused on one PE and not on another leaves the other waiting in
 * NVSHMEM's collective allocation, so give every PE the same sizes and environment. */
GCL_API gcl_status gcl_symmetric_alloc(size_t bytes, uint64_t *address);
/* Frees a symmetric buffer (collective). GCL_ERROR_INVALID_ARGUMENT for an address
 * gcl_symmetric_alloc did not return. */
GCL_API gcl_status gcl_symmetric_free(uint64_t address);
/* PE peer's copy of address (any address inside a symmetric buffer) as a pointer this PE can
 * load from and store to (nvshmem_ptr): this PE's own address for peer = self.
 * GCL_ERROR_PEER_UNREACHABLE naming the peer when NVSHMEM gives NULL (no NVLink or P2P path:
 * only NVSHMEM's own put/get reach it); GCL_ERROR_INVALID_ARGUMENT for an address outside every
 * symmetric buffer or peer outside 0 ... count - 1. *out untouched on failure. */
GCL_API gcl_status gcl_symmetric_peer_address(uint64_t address, int peer, uint64_t *out);

/* Whether mod is device-linked with NVSHMEM (its image defines nvshmemi_device_state_d): 1 or 0
 * (also for NULL). Reads. */
GCL_API int gcl_module_uses_nvshmem(const gcl_module *mod);
/* Attaches mod to the PE: its NVSHMEM device-library version (nvshmemi_device_lib_version_d) is
 * checked against the host library's (majors equal, the module's minor at most the host's), then
 * nvshmemx_culibrary_init fills its device state. Its kernels may launch from then on (in the
 * PE's context). Attaching an attached module does nothing. GCL_ERROR_NVSHMEM before
 * gcl_pe_start or when culibrary_init fails (its return named); GCL_ERROR_INVALID_ARGUMENT for a
 * module that does not use NVSHMEM or was loaded in another device's context than the PE's;
 * GCL_ERROR_NVSHMEM_VERSION naming both versions. gcl_module_destroy detaches first. */
GCL_API gcl_status gcl_module_attach(gcl_module *mod);
/* Detaches mod (nvshmemx_culibrary_finalize); its kernels are refused again (gcl_launch,
 * gcl_graph_set_args) until the next attach. A graph captured while it was attached still holds
 * its kernels: detach after the graph's last launch. GCL_ERROR_INVALID_ARGUMENT when it is not
 * attached. */
GCL_API gcl_status gcl_module_detach(gcl_module *mod);

/* Peer tensor maps: n maps, map first + i over PE pes[i]'s copy of tensor (tensor->data inside a
 * symmetric buffer; shape, strides, dtype and byte_offset as given), encoded as
 * gcl_args_set_tensormaps does (options[0] for every map, flags 0 or GCL_TENSORMAP_REFRESH) in
 * the PE's context: a `tensormap[N]` parameter or struct field the kernel indexes by PE at run
 * time. Every peer is resolved before any map is encoded: GCL_ERROR_PEER_UNREACHABLE naming the
 * PE and its index in pes, nothing changed. Re-point like any other map
 * (gcl_args_repoint_tensormaps with gcl_symmetric_peer_address's addresses). */
GCL_API gcl_status gcl_args_set_peer_tensormaps(gcl_args *args, const gcl_field *first,
                                                const DLTensor *tensor, const int *pes, size_t n,
                                                const gcl_tensormap_options *options,
                                                unsigned flags);
/* The same into entries first ... first + n - 1 of a descriptor table (gcl_tensormap_table_set). */
GCL_API gcl_status gcl_tensormap_table_set_peers(gcl_tensormap_table *table, size_t first,
                                                 const DLTensor *tensor, const int *pes, size_t n,
                                                 const gcl_tensormap_options *options,
                                                 unsigned flags);

#ifdef __cplusplus
}
#endif
#endif /* GCLAUNCH_MULTIGPU_H */
