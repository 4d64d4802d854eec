/* One NVSHMEM PE per process, against libfakecuda.so and libfakenvshmem.so (tests/fakenvshmem):
 * the loader (found, its version, absent, too old), the PE's lifecycle and every refusal
 * (runtime.h "Several GPUs"), symmetric memory and peer addresses, module attach and the
 * unattached-launch refusal, and peer tensor maps. Each Criterion test runs in a fresh process,
 * so the loaders' once-only initialisation sees each test's environment. */
#include "fakecuda_test.h"
#include "fakenvshmem.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* kernels/nvshmem_state.cu's kernel: (int *out). */
static void declare_put_self(void) {
  const size_t off[] = {0}, size[] = {8};
  cr_assert_eq(fakecuda_set_params("put_self", 1, off, size), 0);
}

static void use_fakes(void) {
  fake_use();
  setenv("GCL_NVSHMEM_PATH", gcl_test_fakenvshmem_path(), 1);
  fakenvshmem_reset();
  declare_put_self();
}

static gcl_context *ctx0(void) {
  gcl_context *ctx = NULL;
  cr_assert_eq(gcl_context_create(0, &ctx), GCL_OK, "%s", gcl_last_error());
  return ctx;
}

/* A PE of count PEs (rank 0) on a fresh context, started from a unique id. */
static gcl_context *started(int count) {
  gcl_context *ctx = ctx0();
  gcl_pe_unique_id id;
  cr_assert_eq(gcl_pe_unique_id_create(&id), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_pe_start(ctx, &id, 0, count), GCL_OK, "%s", gcl_last_error());
  return ctx;
}

static void finish(gcl_context *ctx) {
  if (gcl_pe_context()) cr_assert_eq(gcl_pe_stop(), GCL_OK, "%s", gcl_last_error());
  gcl_context_destroy(ctx);
  cr_assert_eq(fakenvshmem_initialized(), 0);
  assert_nothing_live();
}

static gcl_module *load(gcl_context *ctx, const char *file) {
  gcl_module *m = NULL;
  cr_assert_eq(gcl_module_load_file(ctx, GCL_KERNEL(file), &m), GCL_OK, "%s", gcl_last_error());
  return m;
}

/* --- The loader ---------------------------------------------------------------------------- */

Test(pe_loader, finds_the_library_named_by_GCL_NVSHMEM_PATH_and_reads_its_version) {
  use_fakes();
  cr_assert_eq(gcl_nvshmem_init(), GCL_OK, "%s", gcl_last_error());
  cr_assert_str_eq(gcl_nvshmem_path(), gcl_test_fakenvshmem_path());
  int v[3] = {0};
  cr_assert_eq(gcl_nvshmem_version(&v[0], &v[1], &v[2]), GCL_OK);
  cr_assert(v[0] == 3 && v[1] == 4 && v[2] == 5, "%d.%d.%d", v[0], v[1], v[2]);
}

Test(pe_loader, a_folder_in_GCL_NVSHMEM_PATH_is_searched_for_the_soname) {
  use_fakes();
  char dir[] = "/tmp/gcl_nvshmem_XXXXXX", link[600];
  cr_assert_not_null(mkdtemp(dir));
  snprintf(link, sizeof link, "%s/libnvshmem_host.so.3", dir);
  cr_assert_eq(symlink(gcl_test_fakenvshmem_path(), link), 0);
  setenv("GCL_NVSHMEM_PATH", dir, 1);
  gcl_status s = gcl_nvshmem_init();
  unlink(link);
  rmdir(dir);
  cr_assert_eq(s, GCL_OK, "%s", gcl_last_error());
  cr_assert_str_eq(gcl_nvshmem_path(), link);
}

/* A fake environment ROOT holding the wheel's layout: ROOT/bin/python3 and
 * ROOT/lib/python3.99/site-packages/nvidia/nvshmem/lib/libnvshmem_host.so.3 (the fake). */
static void make_wheel_env(char *root, size_t cap, char *lib, size_t lib_cap) {
  char path[1024];
  snprintf(root, cap, "/tmp/gcl_wheel_XXXXXX");
  cr_assert_not_null(mkdtemp(root));
  snprintf(path, sizeof path, "mkdir -p '%s/bin' '%s/lib/python3.99/site-packages/nvidia/nvshmem/lib' "
           "&& printf '#!/bin/sh\n' > '%s/bin/python3' && chmod +x '%s/bin/python3'", root, root, root, root);
  cr_assert_eq(system(path), 0);
  snprintf(lib, lib_cap, "%s/lib/python3.99/site-packages/nvidia/nvshmem/lib/libnvshmem_host.so.3", root);
  char *abs = realpath(gcl_test_fakenvshmem_path(), NULL);
  cr_assert_not_null(abs);
  cr_assert_eq(symlink(abs, lib), 0);
  free(abs);
  unsetenv("GCL_NVSHMEM_PATH");
  unsetenv("NVSHMEM_HOME");
}

static void remove_tree(const char *root) {
  char cmd[1100];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  cr_assert_eq(system(cmd), 0);
}

/* The library looks where NVSHMEM's ecosystem keeps it and nowhere else (issue 54): a wheel under
 * a python3 on PATH or $VIRTUAL_ENV is the Python package's to find (by import), not the C
 * library's. */
Test(pe_loader, the_wheel_of_a_python3_on_PATH_or_VIRTUAL_ENV_is_not_searched) {
  use_fakes();
  void *h = dlopen("libnvshmem_host.so.3", RTLD_LAZY | RTLD_LOCAL);
  if (h) dlclose(h), cr_skip_test("the loader's own search finds libnvshmem_host.so.3 on this machine");
  char root[64], lib[512], path[600];
  make_wheel_env(root, sizeof root, lib, sizeof lib);
  snprintf(path, sizeof path, "%s/bin:/usr/bin:/bin", root);
  setenv("PATH", path, 1);
  setenv("VIRTUAL_ENV", root, 1);
  gcl_status s = gcl_nvshmem_init();
  char msg[2048];
  snprintf(msg, sizeof msg, "%s", gcl_last_error());
  remove_tree(root);
  cr_assert_eq(s, GCL_ERROR_NO_NVSHMEM, "%s", msg);
  cr_assert(strstr(msg, "tried 'libnvshmem_host.so.3', NVSHMEM_HOME unset") != NULL, "%s", msg);
  cr_assert(strstr(msg, "site-packages") == NULL && strstr(msg, "/opt/") == NULL, "%s", msg);
  cr_assert_str_eq(gcl_nvshmem_path(), "(not found)");
}

Test(pe_loader, NVSHMEM_HOME_lib_is_searched_after_the_loader) {
  use_fakes();
  void *h = dlopen("libnvshmem_host.so.3", RTLD_LAZY | RTLD_LOCAL);
  if (h) dlclose(h), cr_skip_test("the loader's own search finds libnvshmem_host.so.3 on this machine");
  char dir[] = "/tmp/gcl_nvhome_XXXXXX", sub[600], link[700];
  cr_assert_not_null(mkdtemp(dir));
  snprintf(sub, sizeof sub, "%s/lib", dir);
  cr_assert_eq(mkdir(sub, 0700), 0);
  snprintf(link, sizeof link, "%s/libnvshmem_host.so.3", sub);
  cr_assert_eq(symlink(gcl_test_fakenvshmem_path(), link), 0);
  unsetenv("GCL_NVSHMEM_PATH");
  setenv("NVSHMEM_HOME", dir, 1);
  gcl_status s = gcl_nvshmem_init();
  char found[1024];
  snprintf(found, sizeof found, "%s", gcl_nvshmem_path());
  unlink(link), rmdir(sub), rmdir(dir);
  cr_assert_eq(s, GCL_OK, "%s", gcl_last_error());
  cr_assert_str_eq(found, link);
}

/* gcl_nvshmem_open: the Python package's hand-over of the wheel it found by import. */
Test(pe_loader, gcl_nvshmem_open_opens_a_given_file_or_folder_after_a_failed_search) {
  use_fakes();
  setenv("GCL_NVSHMEM_PATH", "/nonexistent/libnvshmem_host.so.3", 1);
  cr_assert_eq(gcl_nvshmem_init(), GCL_ERROR_NO_NVSHMEM);
  cr_assert_eq(gcl_nvshmem_open(NULL), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl_nvshmem_open(""), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl_nvshmem_open("/nonexistent/dir"), GCL_ERROR_NO_NVSHMEM);
  assert_msg_has("gcl_nvshmem_open: tried '/nonexistent/dir', '/nonexistent/dir/libnvshmem_host.so.3'");
  cr_assert_eq(gcl_nvshmem_init(), GCL_ERROR_NO_NVSHMEM, "a failed open changes nothing");
  char root[64], lib[512];
  make_wheel_env(root, sizeof root, lib, sizeof lib);
  char folder[600];
  snprintf(folder, sizeof folder, "%s", lib);
  *strrchr(folder, '/') = 0;
  gcl_status s = gcl_nvshmem_open(folder);
  char msg[2048], found[1024];
  snprintf(msg, sizeof msg, "%s", gcl_last_error());
  snprintf(found, sizeof found, "%s", gcl_nvshmem_path());
  gcl_status again = gcl_nvshmem_open(lib), init = gcl_nvshmem_init();
  remove_tree(root);
  cr_assert_eq(s, GCL_OK, "%s", msg);
  cr_assert_str_eq(found, lib);
  cr_assert_eq(again, GCL_OK, "the same file again");
  cr_assert_eq(init, GCL_OK, "open from now on");
  int v[3];
  cr_assert_eq(gcl_nvshmem_version(&v[0], &v[1], &v[2]), GCL_OK);
}

Test(pe_loader, gcl_nvshmem_open_of_another_library_than_the_open_one_is_refused_naming_both) {
  use_fakes();
  cr_assert_eq(gcl_nvshmem_init(), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_nvshmem_open("/usr/lib/other/libnvshmem_host.so.3"), GCL_ERROR_NVSHMEM);
  assert_msg_has("'/usr/lib/other/libnvshmem_host.so.3'");
  assert_msg_has("is already open (one per process)");
  cr_assert_str_eq(gcl_nvshmem_path(), gcl_test_fakenvshmem_path());
  cr_assert_eq(gcl_nvshmem_open(gcl_test_fakenvshmem_path()), GCL_OK);
}

Test(pe_loader, gcl_nvshmem_open_of_a_library_too_old_is_refused_and_changes_nothing) {
  use_fakes();
  setenv("FAKENVSHMEM_VERSION", "3.3.8", 1);
  fakenvshmem_reset();
  unsetenv("GCL_NVSHMEM_PATH");
  cr_assert_eq(gcl_nvshmem_open(gcl_test_fakenvshmem_path()), GCL_ERROR_NO_NVSHMEM);
  assert_msg_has("is version 3.3.8; gclaunch needs 3.3.9 or later");
  unsetenv("FAKENVSHMEM_VERSION");
  fakenvshmem_reset();
  cr_assert_eq(gcl_nvshmem_open(gcl_test_fakenvshmem_path()), GCL_OK, "%s", gcl_last_error());
}

Test(pe_loader, an_absent_library_is_GCL_ERROR_NO_NVSHMEM_naming_what_was_tried) {
  use_fakes();
  setenv("GCL_NVSHMEM_PATH", "/nonexistent/libnvshmem_host.so.3", 1);
  cr_assert_eq(gcl_nvshmem_init(), GCL_ERROR_NO_NVSHMEM);
  assert_msg_has("'/nonexistent/libnvshmem_host.so.3'");
  assert_msg_has("GCL_NVSHMEM_PATH");
  cr_assert_str_eq(gcl_nvshmem_path(), "(not found)");
  int a, b, c;
  cr_assert_eq(gcl_nvshmem_version(&a, &b, &c), GCL_ERROR_NO_NVSHMEM);
  gcl_context *ctx = ctx0();
  cr_assert_eq(gcl_pe_start(ctx, NULL, 0, 1), GCL_ERROR_NO_NVSHMEM);
  gcl_context_destroy(ctx);
}

Test(pe_loader, a_library_older_than_3_3_9_is_refused_with_both_versions) {
  use_fakes();
  fakenvshmem_set("3.3.8", NULL, NULL);
  cr_assert_eq(gcl_nvshmem_init(), GCL_ERROR_NO_NVSHMEM);
  assert_msg_has("version 3.3.8");
  assert_msg_has("3.3.9 or later");
  int v[3];
  cr_assert_eq(gcl_nvshmem_version(&v[0], &v[1], &v[2]), GCL_OK, "the version of one too old is told");
  cr_assert_eq(v[2], 8);
  gcl_pe_unique_id id;
  cr_assert_eq(gcl_pe_unique_id_create(&id), GCL_ERROR_NO_NVSHMEM);
  cr_assert_eq(fakenvshmem_calls("nvshmemx_get_uniqueid"), 0);
}

Test(pe_loader, version_3_3_9_and_4_0_0_are_accepted) {
  use_fakes();
  fakenvshmem_set("3.3.9", NULL, NULL);
  cr_assert_eq(gcl_nvshmem_init(), GCL_OK, "%s", gcl_last_error());
}

/* --- Start, queries, stop ------------------------------------------------------------------- */

Test(pe, a_single_PE_starts_without_an_id_on_the_contexts_device) {
  use_fakes();
  gcl_context *ctx = ctx0();
  cr_assert_eq(gcl_pe_start(ctx, NULL, 0, 1), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(fakenvshmem_device(), 0);
  cr_assert_eq(fakenvshmem_rank(), 0);
  cr_assert_eq(fakenvshmem_count(), 1);
  int id = -1, n = -1;
  cr_assert_eq(gcl_pe_id(&id), GCL_OK);
  cr_assert_eq(gcl_pe_count(&n), GCL_OK);
  cr_assert(id == 0 && n == 1);
  cr_assert_eq(gcl_pe_context(), ctx);
  cr_assert_eq(gcl_pe_stop(), GCL_OK, "%s", gcl_last_error());
  cr_assert_null(gcl_pe_context());
  finish(ctx);
}

Test(pe, rank_1_of_2_starts_from_rank_0s_id_on_its_device) {
  use_fakes();
  cr_assert_eq(fakecuda_set_devices(2), 0);
  gcl_context *ctx = NULL;
  cr_assert_eq(gcl_context_create(1, &ctx), GCL_OK);
  gcl_pe_unique_id id; /* made by "rank 0": any process may; the bytes travel as they are */
  cr_assert_eq(gcl_pe_unique_id_create(&id), GCL_OK);
  gcl_pe_unique_id carried;
  memcpy(&carried, &id, sizeof id);
  cr_assert_eq(gcl_pe_start(ctx, &carried, 1, 2), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(fakenvshmem_device(), 1, "cuda_device_id is the context's device");
  cr_assert_eq(fakenvshmem_rank(), 1);
  cr_assert_eq(fakenvshmem_count(), 2);
  int pe;
  cr_assert_eq(gcl_pe_id(&pe), GCL_OK);
  cr_assert_eq(pe, 1);
  finish(ctx);
}

Test(pe, bad_start_arguments_are_refused_by_name_and_call_nothing) {
  use_fakes();
  gcl_context *ctx = ctx0();
  gcl_pe_unique_id id;
  cr_assert_eq(gcl_pe_unique_id_create(&id), GCL_OK);
  cr_assert_eq(gcl_pe_start(NULL, &id, 0, 1), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("ctx is NULL");
  cr_assert_eq(gcl_pe_start(ctx, &id, 2, 2), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("rank 2 of count 2");
  cr_assert_eq(gcl_pe_start(ctx, &id, 0, 0), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl_pe_start(ctx, &id, -1, 2), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl_pe_start(ctx, NULL, 0, 2), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("id is NULL with count 2");
  gcl_pe_unique_id zero; /* a zeroed id: NVSHMEM would connect to no address and crash */
  memset(&zero, 0, sizeof zero);
  cr_assert_eq(gcl_pe_start(ctx, &zero, 0, 1), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("id is no unique id made by gcl_pe_unique_id_create (version word 0");
  gcl_pe_unique_id empty = id; /* the right version word, nothing else */
  memset(empty.bytes + sizeof(int), 0, sizeof empty.bytes - sizeof(int));
  cr_assert_eq(gcl_pe_start(ctx, &empty, 0, 1), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("0 of its 124 other bytes set");
  gcl_pe_unique_id other = id; /* another version of the id */
  other.bytes[0] ^= 1;
  cr_assert_eq(gcl_pe_start(ctx, &other, 0, 1), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(fakenvshmem_calls("nvshmemx_hostlib_init_attr"), 0);
  cr_assert_null(gcl_pe_context());
  finish(ctx);
}

Test(pe, one_PE_per_process_a_second_start_is_refused) {
  use_fakes();
  gcl_context *ctx = started(1);
  cr_assert_eq(gcl_pe_start(ctx, NULL, 0, 1), GCL_ERROR_NVSHMEM);
  assert_msg_has("already started");
  assert_msg_has("one PE per process");
  cr_assert_eq(fakenvshmem_calls("nvshmemx_hostlib_init_attr"), 1);
  finish(ctx);
}

Test(pe, a_failed_init_names_the_call_and_its_return_and_starts_nothing) {
  use_fakes();
  fakenvshmem_set(NULL, NULL, "nvshmemx_hostlib_init_attr:9");
  gcl_context *ctx = ctx0();
  cr_assert_eq(gcl_pe_start(ctx, NULL, 0, 1), GCL_ERROR_NVSHMEM);
  assert_msg_has("nvshmemx_hostlib_init_attr returned 9");
  int pe;
  cr_assert_eq(gcl_pe_id(&pe), GCL_ERROR_NVSHMEM);
  fakenvshmem_set(NULL, NULL, "");
  cr_assert_eq(gcl_pe_start(ctx, NULL, 0, 1), GCL_OK, "a failed start changed nothing: %s", gcl_last_error());
  finish(ctx);
}

Test(pe, queries_barrier_alloc_and_stop_before_start_are_refused) {
  use_fakes();
  int v;
  uint64_t a;
  cr_assert_eq(gcl_pe_id(&v), GCL_ERROR_NVSHMEM);
  assert_msg_has("no PE is started");
  cr_assert_eq(gcl_pe_count(&v), GCL_ERROR_NVSHMEM);
  cr_assert_eq(gcl_pe_barrier(NULL), GCL_ERROR_NVSHMEM);
  cr_assert_eq(gcl_symmetric_alloc(64, &a), GCL_ERROR_NVSHMEM);
  cr_assert_eq(gcl_symmetric_peer_address(0x1000, 0, &a), GCL_ERROR_NVSHMEM);
  cr_assert_eq(gcl_pe_stop(), GCL_ERROR_NVSHMEM);
  cr_assert_eq(fakenvshmem_calls("nvshmem_align"), 0);
}

Test(pe, the_barrier_runs_on_a_stream_of_the_PEs_context) {
  use_fakes();
  gcl_context *ctx = started(1);
  gcl_stream *s = NULL;
  cr_assert_eq(gcl_stream_create(ctx, 0, &s), GCL_OK);
  cr_assert_eq(gcl_pe_barrier(s), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_pe_barrier(NULL), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(fakenvshmem_calls("nvshmemx_barrier_all_on_stream"), 2);
  gcl_stream_destroy(s);
  finish(ctx);
}

/* --- Symmetric memory ------------------------------------------------------------------------ */

Test(symmetric, buffers_are_aligned_device_pointers_and_peers_get_their_own_copy) {
  use_fakes();
  gcl_context *ctx = started(2);
  uint64_t a = 0, self = 0, peer = 0, inside = 0;
  cr_assert_eq(gcl_symmetric_alloc(1000, &a), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(a % GCL_SYMMETRIC_ALIGN, 0);
  cr_assert_eq(gcl_symmetric_peer_address(a, 0, &self), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(self, a, "a PE's own copy is its address");
  cr_assert_eq(gcl_symmetric_peer_address(a, 1, &peer), GCL_OK);
  cr_assert_neq(peer, a);
  cr_assert_eq(gcl_symmetric_peer_address(a + 100, 1, &inside), GCL_OK);
  cr_assert_eq(inside, peer + 100, "an address inside the buffer maps to the same offset");
  ((volatile char *)(uintptr_t)peer)[999] = 7; /* the fake's peer copy is real host memory */
  cr_assert_eq(gcl_symmetric_free(a), GCL_OK);
  cr_assert_eq(fakenvshmem_allocations(), 0);
  finish(ctx);
}

Test(symmetric, foreign_addresses_and_bad_peers_are_refused_by_name) {
  use_fakes();
  gcl_context *ctx = started(2);
  uint64_t a = 0, out = 0xdead;
  cr_assert_eq(gcl_symmetric_alloc(0, &a), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl_symmetric_alloc(512, &a), GCL_OK);
  cr_assert_eq(gcl_symmetric_peer_address(a + 512, 0, &out), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("not in a symmetric buffer");
  cr_assert_eq(gcl_symmetric_peer_address(a, 2, &out), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("PE 2: expected 0 ... 1");
  cr_assert_eq(out, 0xdead, "untouched on failure");
  cr_assert_eq(gcl_symmetric_free(a + 16), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("not one gcl_symmetric_alloc returned");
  cr_assert_eq(gcl_symmetric_free(a), GCL_OK);
  cr_assert_eq(gcl_symmetric_free(a), GCL_ERROR_INVALID_ARGUMENT, "a second free");
  finish(ctx);
}

Test(symmetric, a_NULL_peer_address_is_GCL_ERROR_PEER_UNREACHABLE_naming_the_PE) {
  use_fakes();
  fakenvshmem_set(NULL, "1", NULL);
  gcl_context *ctx = started(3);
  uint64_t a = 0, out = 0;
  cr_assert_eq(gcl_symmetric_alloc(256, &a), GCL_OK);
  cr_assert_eq(gcl_symmetric_peer_address(a, 1, &out), GCL_ERROR_PEER_UNREACHABLE);
  assert_msg_has("PE 1's memory is not load/store reachable from PE 0");
  cr_assert_eq(gcl_symmetric_peer_address(a, 2, &out), GCL_OK);
  cr_assert_eq(gcl_symmetric_free(a), GCL_OK);
  finish(ctx);
}

Test(symmetric, a_full_heap_is_GCL_ERROR_OUT_OF_MEMORY) {
  use_fakes();
  gcl_context *ctx = started(1);
  fakenvshmem_set(NULL, NULL, "nvshmem_align");
  uint64_t a = 0;
  cr_assert_eq(gcl_symmetric_alloc(256, &a), GCL_ERROR_OUT_OF_MEMORY);
  assert_msg_has("nvshmem_align(256, 256) returned NULL");
  fakenvshmem_set(NULL, NULL, "");
  finish(ctx);
}

Test(symmetric, stop_frees_every_buffer_with_the_heap) {
  use_fakes();
  gcl_context *ctx = started(1);
  uint64_t a, b;
  cr_assert_eq(gcl_symmetric_alloc(256, &a), GCL_OK);
  cr_assert_eq(gcl_symmetric_alloc(256, &b), GCL_OK);
  cr_assert_eq(gcl_pe_stop(), GCL_OK);
  cr_assert_eq(fakenvshmem_allocations(), 0);
  cr_assert_eq(gcl_pe_start(ctx, NULL, 0, 1), GCL_OK, "a PE may start again: %s", gcl_last_error());
  cr_assert_eq(gcl_symmetric_free(a), GCL_ERROR_INVALID_ARGUMENT, "the old buffers are gone");
  finish(ctx);
}

/* --- Guards: sizes NVSHMEM would end the process for (issue 54) ----------------------------- */

/* The fake NVSHMEM ends the process (255) for any nvshmem_align above 1 GiB, as the real one does
 * when its heap cannot grow: each refusal below is proven to stop before it. */
Test(guards, one_TiB_and_2_63_minus_1_are_refused_by_name_and_1_MiB_works_after) {
  use_fakes();
  gcl_context *ctx = started(1);
  uint64_t a = 0xdead;
  cr_assert_eq(gcl_symmetric_alloc((size_t)1 << 40, &a), GCL_ERROR_OUT_OF_MEMORY);
  assert_msg_has("bytes 1099511627776 (1024.00 GiB) do not fit the symmetric heap: "
                 "NVSHMEM_MAX_MEMORY_PER_GPU is 137438953472 bytes (128.00 GiB, less one "
                 "536870912-byte grain kept for NVSHMEM's internal heap), 0 (0.00 GiB) are in use");
  cr_assert_eq(gcl_symmetric_alloc(((size_t)1 << 63) - 1, &a), GCL_ERROR_OUT_OF_MEMORY);
  assert_msg_has("bytes 9223372036854775807");
  cr_assert_eq(gcl_symmetric_alloc(SIZE_MAX, &a), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("overflows when rounded up");
  cr_assert_eq(gcl_symmetric_alloc(0, &a), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("bytes is 0");
  cr_assert_eq(a, 0xdead, "untouched on failure");
  cr_assert_eq(fakenvshmem_calls("nvshmem_align"), 0, "no refused size reached NVSHMEM");
  cr_assert_eq(gcl_symmetric_alloc((size_t)1 << 20, &a), GCL_OK, "%s", gcl_last_error());
  int pe = -1;
  cr_assert_eq(gcl_pe_id(&pe), GCL_OK, "the PE is still up");
  cr_assert_eq(gcl_symmetric_free(a), GCL_OK);
  finish(ctx);
}

Test(guards, a_size_beyond_the_free_device_memory_is_refused_with_both_numbers) {
  use_fakes();
  setenv("NVSHMEM_MAX_MEMORY_PER_GPU", "1T", 1); /* the device (141 GiB) is the limit now */
  gcl_context *ctx = started(1);
  uint64_t a = 0;
  cr_assert_eq(gcl_symmetric_alloc((size_t)150 << 30, &a), GCL_ERROR_OUT_OF_MEMORY);
  assert_msg_has("would grow NVSHMEM's heap by 161598144512 bytes (150.50 GiB");
  assert_msg_has("the device has 151397597184 bytes (141.00 GiB) free of 151397597184");
  setenv("FAKECUDA_MEM_FREE", "1048576", 1);
  cr_assert_eq(gcl_symmetric_alloc((size_t)100 << 20, &a), GCL_ERROR_OUT_OF_MEMORY);
  assert_msg_has("the device has 1048576 bytes (0.00 GiB) free");
  cr_assert_eq(fakenvshmem_calls("nvshmem_align"), 0);
  unsetenv("FAKECUDA_MEM_FREE");
  cr_assert_eq(gcl_symmetric_alloc((size_t)1 << 20, &a), GCL_OK, "%s", gcl_last_error());
  finish(ctx);
}

/* The heap grows by NVSHMEM_CUMEM_GRANULARITY and keeps what it mapped: a size that fits what
 * was mapped before needs no free device memory, one that does not fit needs a whole grain. */
Test(guards, memory_the_heap_mapped_before_is_reused_without_free_memory) {
  use_fakes();
  setenv("NVSHMEM_CUMEM_GRANULARITY", "2M", 1);
  setenv("FAKECUDA_MEM_FREE", "3145728", 1); /* 3 MiB */
  gcl_context *ctx = started(1);
  uint64_t a = 0, b = 0, c = 0;
  cr_assert_eq(gcl_symmetric_alloc((size_t)1 << 20, &a), GCL_OK, "%s", gcl_last_error());
  setenv("FAKECUDA_MEM_FREE", "1048576", 1); /* the heap took 2 MiB of the 3 */
  cr_assert_eq(gcl_symmetric_alloc((size_t)512 << 10, &b), GCL_OK, "fits the grain: %s", gcl_last_error());
  cr_assert_eq(gcl_symmetric_free(a), GCL_OK);
  cr_assert_eq(gcl_symmetric_free(b), GCL_OK);
  cr_assert_eq(gcl_symmetric_alloc((size_t)3 << 19, &c), GCL_OK, "reuses the grain: %s", gcl_last_error());
  cr_assert_eq(gcl_symmetric_alloc((size_t)1 << 20, &a), GCL_ERROR_OUT_OF_MEMORY);
  assert_msg_has("would grow NVSHMEM's heap by 2097152 bytes");
  cr_assert_eq(gcl_symmetric_free(c), GCL_OK);
  finish(ctx);
}

/* NVSHMEM's own variables, in NVSHMEM's size syntax, bound the heap exactly: the limit less one
 * grain (NVSHMEM's internal heap), each buffer with its alignment. */
Test(guards, the_heap_limit_is_NVSHMEM_MAX_MEMORY_PER_GPU_less_one_grain_exactly) {
  use_fakes();
  setenv("NVSHMEM_MAX_MEMORY_PER_GPU", "4m", 1);
  setenv("NVSHMEM_CUMEM_GRANULARITY", "1M", 1);
  gcl_context *ctx = started(1);
  uint64_t a = 0, b = 0;
  cr_assert_eq(gcl_symmetric_alloc((3u << 20) - 256, &a), GCL_OK, "fills the room: %s", gcl_last_error());
  cr_assert_eq(gcl_symmetric_alloc(1, &b), GCL_ERROR_OUT_OF_MEMORY);
  assert_msg_has("bytes 1 (0.00 GiB) do not fit the symmetric heap: NVSHMEM_MAX_MEMORY_PER_GPU is "
                 "4194304 bytes (0.00 GiB, less one 1048576-byte grain kept for NVSHMEM's internal "
                 "heap), 3145472 (0.00 GiB) are in use");
  cr_assert_eq(gcl_symmetric_free(a), GCL_OK);
  cr_assert_eq(gcl_symmetric_alloc(1, &b), GCL_OK, "room again after the free: %s", gcl_last_error());
  finish(ctx);
}

Test(guards, a_static_heap_is_NVSHMEM_SYMMETRIC_SIZE_and_counts_what_is_in_use) {
  use_fakes();
  setenv("NVSHMEM_DISABLE_CUDA_VMM", "1", 1);
  setenv("NVSHMEM_SYMMETRIC_SIZE", "1m", 1);
  setenv("FAKECUDA_MEM_FREE", "0", 1); /* allocated at start: free memory does not matter */
  gcl_context *ctx = started(1);
  uint64_t a = 0, b = 0;
  cr_assert_eq(gcl_symmetric_alloc((size_t)512 << 10, &a), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_symmetric_alloc((size_t)600 << 10, &b), GCL_ERROR_OUT_OF_MEMORY);
  assert_msg_has("NVSHMEM_SYMMETRIC_SIZE is 1048576 bytes (0.00 GiB), 524288 (0.00 GiB) are in use");
  cr_assert_eq(gcl_symmetric_free(a), GCL_OK);
  cr_assert_eq(gcl_symmetric_alloc((size_t)600 << 10, &b), GCL_OK, "freed space counts again: %s",
               gcl_last_error());
  finish(ctx);
}

Test(guards, stop_waits_for_the_PEs_work_and_a_failed_wait_stops_nothing) {
  use_fakes();
  gcl_context *ctx = started(1);
  long syncs = fakecuda_calls("cuCtxSynchronize");
  fakecuda_fail_once("cuCtxSynchronize", 800 /* CUDA_ERROR_NOT_PERMITTED */, 0);
  cr_assert_neq(gcl_pe_stop(), GCL_OK);
  assert_msg_has("the PE's work outstanding");
  assert_msg_has("the PE was not stopped");
  cr_assert_eq(fakenvshmem_initialized(), 1);
  int pe = -1;
  cr_assert_eq(gcl_pe_id(&pe), GCL_OK, "still started");
  cr_assert_eq(gcl_pe_stop(), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(fakecuda_calls("cuCtxSynchronize"), syncs + 2);
  finish(ctx);
}

Test(guards, after_a_kernel_fault_no_NVSHMEM_call_is_made) {
  use_fakes();
  gcl_context *ctx = started(1);
  fakecuda_fail_once("cuCtxSynchronize", 700 /* CUDA_ERROR_ILLEGAL_ADDRESS */, 0);
  cr_assert_eq(gcl_context_synchronize(ctx), GCL_ERROR_KERNEL_FAULT);
  uint64_t a = 0;
  cr_assert_eq(gcl_symmetric_alloc(256, &a), GCL_ERROR_KERNEL_FAULT);
  cr_assert_eq(gcl_pe_barrier(NULL), GCL_ERROR_KERNEL_FAULT);
  cr_assert_eq(fakenvshmem_calls("nvshmem_align"), 0);
  cr_assert_eq(fakenvshmem_calls("nvshmemx_barrier_all_on_stream"), 0);
}

/* --- Modules attached ------------------------------------------------------------------------ */

static const gcl_launch_config one_block = {.grid = {1}, .block = {32}};

static gcl_args *args_for(gcl_kernel *k, uint64_t out) {
  gcl_args *a = NULL;
  cr_assert_eq(gcl_args_create(gcl_kernel_layout(k), &a), GCL_OK);
  cr_assert_eq(gcl_args_set_ptr(a, 0, out), GCL_OK, "%s", gcl_last_error());
  return a;
}

Test(attach, the_CPU_reader_tells_an_NVSHMEM_module_from_a_plain_one) {
  use_fakes();
  gcl_context *ctx = ctx0();
  gcl_module *nv = load(ctx, "nvshmem_state.sm_90.cubin"), *plain = load(ctx, "smoke.sm_90.cubin");
  cr_assert_eq(gcl_module_uses_nvshmem(nv), 1);
  cr_assert_eq(gcl_module_uses_nvshmem(plain), 0);
  cr_assert_eq(gcl_module_uses_nvshmem(NULL), 0);
  void *data;
  size_t size;
  gcl_image *img = NULL;
  int v[3] = {0};
  cr_assert_eq(gcl_file_read(GCL_KERNEL("nvshmem_state_v390.sm_90.cubin"), &data, &size), GCL_OK);
  cr_assert_eq(gcl_image_parse(data, size, 0, &img), GCL_OK);
  cr_assert_eq(gcl_image_uses_nvshmem(img), 1);
  cr_assert_eq(gcl_image_nvshmem_version(img, &v[0], &v[1], &v[2]), GCL_OK, "%s", gcl_last_error());
  cr_assert(v[0] == 3 && v[1] == 9 && v[2] == 0, "%d.%d.%d", v[0], v[1], v[2]);
  gcl_image_destroy(img);
  gcl_file_free(data);
  gcl_module_destroy(nv);
  gcl_module_destroy(plain);
  finish(ctx);
}

Test(attach, an_unattached_NVSHMEM_kernel_is_refused_before_the_driver_naming_module_and_kernel) {
  use_fakes();
  gcl_context *ctx = ctx0();
  gcl_module *m = load(ctx, "nvshmem_state.sm_90.cubin");
  gcl_kernel *k = NULL;
  uint64_t out;
  cr_assert_eq(gcl_mem_alloc(ctx, 4096, &out), GCL_OK);
  cr_assert_eq(gcl_module_find_kernel(m, "put_self", NULL, &k), GCL_OK, "%s", gcl_last_error());
  gcl_args *a = args_for(k, out);
  long before = fakecuda_launch_count();
  cr_assert_eq(gcl_launch(k, &one_block, a), GCL_ERROR_NOT_ATTACHED);
  assert_msg_has("kernel 'put_self'");
  assert_msg_has("nvshmem_state.sm_90.cubin");
  assert_msg_has("not attached");
  cr_assert_eq(gcl_launch_check(k, &one_block, a), GCL_ERROR_NOT_ATTACHED);
  cr_assert_eq(fakecuda_launch_count(), before, "nothing reached the driver");
  cr_assert_eq(gcl_module_attach(m), GCL_ERROR_NVSHMEM, "attach before start");
  assert_msg_has("no PE is started");
  cr_assert_eq(fakenvshmem_calls("nvshmemx_culibrary_init"), 0);
  gcl_args_destroy(a);
  gcl_module_destroy(m);
  gcl_mem_free(ctx, out);
  finish(ctx);
}

Test(attach, an_attached_kernel_launches_and_a_detached_one_is_refused_again) {
  use_fakes();
  gcl_context *ctx = started(1);
  gcl_module *m = load(ctx, "nvshmem_state.sm_90.cubin");
  gcl_kernel *k = NULL, *later = NULL;
  uint64_t out;
  cr_assert_eq(gcl_mem_alloc(ctx, 4096, &out), GCL_OK);
  cr_assert_eq(gcl_module_find_kernel(m, "put_self", NULL, &k), GCL_OK);
  gcl_args *a = args_for(k, out);
  cr_assert_eq(gcl_module_attach(m), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(fakenvshmem_libraries(), 1);
  cr_assert_eq(gcl_module_attach(m), GCL_OK, "attaching again does nothing");
  cr_assert_eq(fakenvshmem_calls("nvshmemx_culibrary_init"), 1);
  long before = fakecuda_launch_count();
  cr_assert_eq(gcl_launch(k, &one_block, a), GCL_OK, "found before attach: %s", gcl_last_error());
  cr_assert_eq(gcl_module_find_kernel(m, "put_self", NULL, &later), GCL_OK);
  cr_assert_eq(gcl_launch(later, &one_block, a), GCL_OK, "found after attach: %s", gcl_last_error());
  cr_assert_eq(fakecuda_launch_count(), before + 2);
  cr_assert_eq(gcl_module_detach(m), GCL_OK);
  cr_assert_eq(fakenvshmem_libraries(), 0);
  cr_assert_eq(gcl_launch(k, &one_block, a), GCL_ERROR_NOT_ATTACHED);
  cr_assert_eq(gcl_module_detach(m), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("is not attached");
  gcl_args_destroy(a);
  gcl_module_destroy(m);
  gcl_mem_free(ctx, out);
  finish(ctx);
}

Test(attach, a_plain_module_needs_no_attach_and_cannot_be_attached) {
  use_fakes();
  gcl_context *ctx = started(1);
  gcl_module *plain = load(ctx, "smoke.sm_90.cubin");
  cr_assert_eq(gcl_module_attach(plain), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("does not use NVSHMEM");
  assert_msg_has("nvshmemi_device_state_d");
  cr_assert_eq(fakenvshmem_calls("nvshmemx_culibrary_init"), 0);
  gcl_module_destroy(plain);
  finish(ctx);
}

Test(attach, a_newer_device_library_than_the_host_library_is_refused_with_both_versions) {
  use_fakes();
  gcl_context *ctx = started(1);
  gcl_module *m = load(ctx, "nvshmem_state_v390.sm_90.cubin");
  cr_assert_eq(gcl_module_attach(m), GCL_ERROR_NVSHMEM_VERSION);
  assert_msg_has("NVSHMEM 3.9.0");
  assert_msg_has("is 3.4.5");
  cr_assert_eq(fakenvshmem_calls("nvshmemx_culibrary_init"), 0, "checked before the engine's init");
  gcl_module_destroy(m);
  finish(ctx);
}

Test(attach, a_module_of_another_devices_context_is_refused_and_its_kernels_too) {
  use_fakes();
  cr_assert_eq(fakecuda_set_devices(2), 0);
  gcl_context *ctx = started(1), *other = NULL;
  cr_assert_eq(gcl_context_create(1, &other), GCL_OK);
  fakecuda_set_params_on(-1, "put_self", 1, (const size_t[]){0}, (const size_t[]){8});
  gcl_module *far = load(other, "nvshmem_state.sm_90.cubin");
  cr_assert_eq(gcl_module_attach(far), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("loaded on device 1, the PE runs on device 0");
  gcl_module *m = load(ctx, "nvshmem_state.sm_90.cubin");
  cr_assert_eq(gcl_module_attach(m), GCL_OK, "%s", gcl_last_error());
  gcl_kernel *k = NULL;
  uint64_t out;
  cr_assert_eq(gcl_mem_alloc(other, 4096, &out), GCL_OK);
  cr_assert_eq(gcl_module_find_kernel_on(m, other, "put_self", NULL, &k), GCL_OK, "%s", gcl_last_error());
  gcl_args *a = args_for(k, out);
  cr_assert_eq(gcl_launch(k, &one_block, a), GCL_ERROR_NOT_ATTACHED);
  assert_msg_has("attached on device 0, the kernel was found on device 1");
  gcl_args_destroy(a);
  gcl_mem_free(other, out);
  gcl_module_destroy(m);
  gcl_module_destroy(far);
  gcl_context_destroy(other);
  finish(ctx);
}

Test(attach, stop_is_refused_while_modules_are_attached_and_destroy_detaches_first) {
  use_fakes();
  gcl_context *ctx = started(1);
  gcl_module *m = load(ctx, "nvshmem_state.sm_90.cubin");
  cr_assert_eq(gcl_module_attach(m), GCL_OK);
  cr_assert_eq(gcl_pe_stop(), GCL_ERROR_NVSHMEM);
  assert_msg_has("1 module(s) still attached");
  cr_assert_eq(fakenvshmem_initialized(), 1);
  gcl_module_destroy(m);
  cr_assert_eq(fakenvshmem_calls("nvshmemx_culibrary_finalize"), 1);
  cr_assert_eq(fakenvshmem_libraries(), 0);
  cr_assert_eq(gcl_pe_stop(), GCL_OK, "%s", gcl_last_error());
  finish(ctx);
}

Test(attach, a_failed_culibrary_init_leaves_the_module_unattached) {
  use_fakes();
  gcl_context *ctx = started(1);
  gcl_module *m = load(ctx, "nvshmem_state.sm_90.cubin");
  fakenvshmem_set(NULL, NULL, "nvshmemx_culibrary_init:7");
  cr_assert_eq(gcl_module_attach(m), GCL_ERROR_NVSHMEM);
  assert_msg_has("nvshmemx_culibrary_init returned 7");
  assert_msg_has("nvshmem_state.sm_90.cubin");
  fakenvshmem_set(NULL, NULL, "");
  cr_assert_eq(gcl_pe_stop(), GCL_OK, "nothing attached: %s", gcl_last_error());
  gcl_module_destroy(m);
  finish(ctx);
}

/* --- Peer tensor maps ------------------------------------------------------------------------ */

typedef struct peer_rig {
  gcl_context *ctx;
  gcl_args *args;
  gcl_layout *layout;
  uint64_t buf;
  fake_tensor f;
  gcl_tensormap_options o;
} peer_rig;

static void open_peers(peer_rig *r, int count) {
  memset(r, 0, sizeof *r);
  r->ctx = started(count);
  gcl_signature *sig = NULL;
  cr_assert_eq(gcl_signature_parse("grid_constant tensormap[4] peers, u32 n", &sig), GCL_OK);
  cr_assert_eq(gcl_layout_create(sig, 90, &r->layout), GCL_OK);
  gcl_signature_destroy(sig);
  cr_assert_eq(gcl_args_create(r->layout, &r->args), GCL_OK);
  cr_assert_eq(gcl_symmetric_alloc(64 * 64 * 4, &r->buf), GCL_OK);
  fake_tensor_init(&r->f, r->buf, 64, 64);
  r->f.t.byte_offset = 256;
  r->o = fake_tmap_options();
}

static void close_peers(peer_rig *r) {
  gcl_args_destroy(r->args);
  gcl_layout_destroy(r->layout);
  cr_assert_eq(gcl_symmetric_free(r->buf), GCL_OK);
  finish(r->ctx);
}

static gcl_field peers_field(const peer_rig *r, int element) {
  char path[32];
  gcl_field f;
  snprintf(path, sizeof path, "peers[%d]", element);
  cr_assert_eq(gcl_layout_field(r->layout, path, &f), GCL_OK, "%s", gcl_last_error());
  return f;
}

Test(peer_maps, each_element_is_the_encode_of_that_peers_copy) {
  peer_rig r;
  use_fakes();
  open_peers(&r, 3);
  const int pes[] = {2, 0, 1};
  gcl_field first = peers_field(&r, 0);
  cr_assert_eq(gcl_args_set_peer_tensormaps(r.args, &first, &r.f.t, pes, 3, &r.o, 0), GCL_OK,
               "%s", gcl_last_error());
  for (int i = 0; i < 3; i++) { /* the oracle: the driver's encode of the peer's address */
    uint64_t peer;
    cr_assert_eq(gcl_symmetric_peer_address(r.buf, pes[i], &peer), GCL_OK);
    fake_tensor g = r.f;
    g.t.shape = g.shape, g.t.strides = g.strides;
    g.t.data = (void *)(uintptr_t)peer;
    _Alignas(64) unsigned char want[128];
    cr_assert_eq(gcl_tensormap_encode(r.ctx, &g.t, &r.o, want), GCL_OK, "%s", gcl_last_error());
    gcl_field e = peers_field(&r, i);
    unsigned char got[128];
    cr_assert_eq(gcl_args_field_bytes(r.args, &e, got, sizeof got), GCL_OK, "%s", gcl_last_error());
    cr_assert_arr_eq(got, want, 128, "element %d (PE %d)", i, pes[i]);
  }
  close_peers(&r);
}

Test(peer_maps, an_unreachable_peer_is_refused_by_name_before_any_encode) {
  peer_rig r;
  use_fakes();
  fakenvshmem_set(NULL, "2", NULL);
  open_peers(&r, 3);
  const int pes[] = {0, 1, 2};
  gcl_field first = peers_field(&r, 0);
  cr_assert_eq(gcl_args_set_peer_tensormaps(r.args, &first, &r.f.t, pes, 3, &r.o, 0),
               GCL_ERROR_PEER_UNREACHABLE);
  assert_msg_has("PE 2's memory is not load/store reachable");
  assert_msg_has("pes[2]");
  cr_assert_eq(fakecuda_calls("cuTensorMapEncodeTiled"), 0, "no map was encoded");
  close_peers(&r);
}

Test(peer_maps, peer_maps_repoint_like_every_other_map_and_fill_tables_too) {
  peer_rig r;
  use_fakes();
  open_peers(&r, 2);
  const int pes[] = {0, 1};
  gcl_field first = peers_field(&r, 0);
  cr_assert_eq(gcl_args_set_peer_tensormaps(r.args, &first, &r.f.t, pes, 2, &r.o, 0), GCL_OK);
  uint64_t other = 0, peers[2];
  cr_assert_eq(gcl_symmetric_alloc(64 * 64 * 4, &other), GCL_OK);
  for (int i = 0; i < 2; i++)
    cr_assert_eq(gcl_symmetric_peer_address(other, pes[i], &peers[i]), GCL_OK);
  cr_assert_eq(gcl_args_repoint_tensormaps(r.args, r.ctx, &first, 2, peers), GCL_OK, "%s", gcl_last_error());
  gcl_tensormap_table *t = NULL;
  cr_assert_eq(gcl_tensormap_table_create(r.ctx, 4, &t), GCL_OK);
  cr_assert_eq(gcl_tensormap_table_set_peers(t, 1, &r.f.t, pes, 2, &r.o, 0), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_tensormap_table_dirty(t), 2);
  cr_assert_eq(gcl_tensormap_table_set_peers(t, 3, &r.f.t, pes, 2, &r.o, 0), GCL_ERROR_INVALID_ARGUMENT,
               "entries past the table");
  gcl_tensormap_table_destroy(t);
  cr_assert_eq(gcl_symmetric_free(other), GCL_OK);
  close_peers(&r);
}

/* issue 53: peers are a way to make sources -- gcl_symmetric_sources + gcl_tensormaps_set give
 * the bytes of the 0.3 peer call, into args and into a table; a read-only source under a store
 * map is refused there as everywhere (rule 28); an unreachable PE leaves storage untouched. */
Test(peer_maps, symmetric_sources_feed_the_one_set_like_the_peer_call) {
  peer_rig r;
  use_fakes();
  open_peers(&r, 3);
  const int pes[] = {2, 0, 1};
  gcl_field first = peers_field(&r, 0);
  cr_assert_eq(gcl_args_set_peer_tensormaps(r.args, &first, &r.f.t, pes, 3, &r.o, 0), GCL_OK,
               "%s", gcl_last_error());
  unsigned char want[3][128], got[128];
  for (int i = 0; i < 3; i++) {
    gcl_field e = peers_field(&r, i);
    cr_assert_eq(gcl_args_field_bytes(r.args, &e, want[i], 128), GCL_OK, "%s", gcl_last_error());
  }
  gcl_args *b = NULL;
  cr_assert_eq(gcl_args_create(r.layout, &b), GCL_OK);
  DLTensor storage[3];
  gcl_tensormap_source src[3];
  cr_assert_eq(gcl_symmetric_sources(&r.f.t, pes, 3, storage, src), GCL_OK, "%s", gcl_last_error());
  gcl_tensormap_slots at;
  cr_assert_eq(gcl_args_tensormap_slots(b, &first, 3, &at), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_tensormaps_set(gcl_pe_context(), &at, src, &r.o, 1), GCL_OK, "%s",
               gcl_last_error());
  for (int i = 0; i < 3; i++) {
    gcl_field e = peers_field(&r, i);
    cr_assert_eq(gcl_args_field_bytes(b, &e, got, 128), GCL_OK, "%s", gcl_last_error());
    cr_assert_arr_eq(got, want[i], 128, "element %d (PE %d)", i, pes[i]);
  }
  gcl_tensormap_table *t = NULL;
  cr_assert_eq(gcl_tensormap_table_create(r.ctx, 3, &t), GCL_OK);
  cr_assert_eq(gcl_tensormap_table_slots(t, 0, 3, &at), GCL_OK);
  gcl_tensormap_options store = r.o;
  store.store = 1;
  src[1].dlpack_flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  cr_assert_eq(gcl_tensormaps_set(NULL, &at, src, &store, 1), GCL_ERROR_TENSOR);
  assert_msg_has("gcl_tensormap_table entry 1: tensor is read-only (DLPack flags 0x1)");
  cr_assert_eq(gcl_tensormap_table_dirty(t), 0);
  cr_assert_eq(gcl_tensormaps_set(NULL, &at, src, &r.o, 1), GCL_OK, "%s", gcl_last_error());
  for (int i = 0; i < 3; i++)
    cr_assert_arr_eq(gcl_tensormap_table_map(t, (size_t)i), want[i], 128, "entry %d", i);
  gcl_tensormap_table_destroy(t);
  gcl_args_destroy(b);
  close_peers(&r);
}

Test(peer_maps, symmetric_sources_refuse_an_unreachable_peer_and_touch_nothing) {
  peer_rig r;
  use_fakes();
  fakenvshmem_set(NULL, "1", NULL);
  open_peers(&r, 3);
  DLTensor storage[2];
  memset(storage, 0x5c, sizeof storage);
  gcl_tensormap_source src[2];
  cr_assert_eq(gcl_symmetric_sources(&r.f.t, (const int[]){0, 1}, 2, storage, src),
               GCL_ERROR_PEER_UNREACHABLE);
  assert_msg_has("gcl_symmetric_sources");
  assert_msg_has("pes[1]");
  cr_assert_eq(((unsigned char *)storage)[0], 0x5c, "storage written on failure");
  cr_assert_eq(gcl_symmetric_sources(&r.f.t, (const int[]){0}, 0, storage, src),
               GCL_ERROR_INVALID_ARGUMENT);
  close_peers(&r);
}

Test(attach, a_captured_graph_takes_no_arguments_for_a_detached_kernel) {
  use_fakes();
  gcl_context *ctx = started(1);
  gcl_module *m = load(ctx, "nvshmem_state.sm_90.cubin");
  gcl_kernel *k = NULL;
  gcl_stream *s = NULL;
  gcl_graph *g = NULL;
  uint64_t out;
  cr_assert_eq(gcl_mem_alloc(ctx, 4096, &out), GCL_OK);
  cr_assert_eq(gcl_module_find_kernel(m, "put_self", NULL, &k), GCL_OK);
  cr_assert_eq(gcl_stream_create(ctx, 0, &s), GCL_OK);
  gcl_args *a = args_for(k, out);
  gcl_launch_config c = {.grid = {1}, .block = {32}, .stream = gcl_stream_handle(s)};
  cr_assert_eq(gcl_module_attach(m), GCL_OK);
  cr_assert_eq(gcl_graph_capture_begin(s), GCL_OK);
  cr_assert_eq(gcl_launch(k, &c, a), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_graph_capture_end(s, &g), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_graph_set_args(g, 0, k, a), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_module_detach(m), GCL_OK);
  cr_assert_eq(gcl_graph_set_args(g, 0, k, a), GCL_ERROR_NOT_ATTACHED);
  assert_msg_has("gcl_graph_set_args: kernel 'put_self'");
  gcl_graph_destroy(g);
  gcl_stream_destroy(s);
  gcl_args_destroy(a);
  gcl_module_destroy(m);
  gcl_mem_free(ctx, out);
  finish(ctx);
}
