/* NCCL's device API needs no new launch call: the communicator (ncclDevComm, what
 * ncclDevCommCreate fills) rides by value as a bytes(N) parameter whose size is checked against
 * the kernel, windows are plain pointers. Against libfakecuda.so with kernels/nccl_lsa.cu's cubin
 * (built with the toolkit's nccl_device.h); N comes from the host's sizeof(ncclDevComm) through
 * the same headers (tests/unit/nccl_devcomm_size.sh), and the cubin's records must agree. */
#include "fakecuda_test.h"
#include "nccl_devcomm_size.h"

#include <stdio.h>

#define N GCL_TEST_NCCL_DEVCOMM_BYTES
#define STR_(x) #x
#define STR(x) STR_(x)
#define SIG_OF(n) "bytes(" STR(n) ") align(" STR(GCL_TEST_NCCL_DEVCOMM_ALIGN) ") comm, ptr win, u64 offset, i32* out"

typedef struct rig {
  gcl_context *ctx;
  gcl_module *mod;
} rig;

/* Declares lsa_put to the fake with the cubin's own records (the oracle), then loads it. */
static void open_rig(rig *r) {
  fake_use();
  void *data;
  size_t size, k, off[4], sz[4];
  gcl_image *img = NULL;
  cr_assert_eq(gcl_file_read(GCL_KERNEL("nccl_lsa.sm_90.cubin"), &data, &size), GCL_OK);
  cr_assert_eq(gcl_image_parse(data, size, 0, &img), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_image_find_kernel(img, "lsa_put", &k), GCL_OK);
  for (size_t p = 0; p < 4; p++)
    cr_assert_eq(gcl_image_param(img, k, p, &off[p], &sz[p], NULL), GCL_OK);
  cr_assert_eq(sz[0], (size_t)N, "the device's ncclDevComm is %zu bytes, the host's (NCCL %s) %d",
               sz[0], GCL_TEST_NCCL_VERSION, N);
  cr_assert_eq(fakecuda_set_params("lsa_put", 4, off, sz), 0);
  gcl_image_destroy(img);
  gcl_file_free(data);
  cr_assert_eq(gcl_context_create(0, &r->ctx), GCL_OK);
  cr_assert_eq(gcl_module_load_file(r->ctx, GCL_KERNEL("nccl_lsa.sm_90.cubin"), &r->mod), GCL_OK);
}

static void close_rig(rig *r) {
  gcl_module_destroy(r->mod);
  gcl_context_destroy(r->ctx);
  assert_nothing_live();
}

Test(nccl_bytes, the_communicator_by_value_is_bytes_of_sizeof_ncclDevComm) {
  rig r;
  open_rig(&r);
  gcl_kernel *k = NULL;
  cr_assert_eq(gcl_module_find_kernel(r.mod, "lsa_put", SIG_OF(N), &k), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_module_uses_nvshmem(r.mod), 0, "an NCCL module needs no attach");
  gcl_args *a = NULL;
  unsigned char comm[N];
  memset(comm, 0x5a, sizeof comm); /* stands for ncclDevCommCreate's output */
  cr_assert_eq(gcl_args_create(gcl_kernel_layout(k), &a), GCL_OK);
  cr_assert_eq(gcl_args_set(a, 0, comm, sizeof comm), GCL_OK, "%s", gcl_last_error());
  cr_assert_neq(gcl_args_set(a, 0, comm, sizeof comm - 8), GCL_OK, "a communicator of another size");
  cr_assert(strstr(gcl_last_error(), "comm") != NULL, "%s", gcl_last_error());
  cr_assert_eq(gcl_args_set_ptr(a, 1, 0x100000), GCL_OK);
  cr_assert_eq(gcl_args_set_u64(a, 2, 0), GCL_OK);
  cr_assert_eq(gcl_args_set_ptr(a, 3, 0x200000), GCL_OK);
  const void *buf;
  size_t size;
  cr_assert_eq(gcl_args_buffer(a, &buf, &size), GCL_OK);
  cr_assert_eq(memcmp(buf, comm, N), 0, "the communicator's bytes lie at offset 0 as given");
  gcl_args_destroy(a);
  close_rig(&r);
}

Test(nccl_bytes, a_communicator_size_other_than_the_kernels_is_refused_naming_it) {
  rig r;
  open_rig(&r);
  gcl_kernel *k = NULL;
  cr_assert_eq(gcl_module_find_kernel(r.mod, "lsa_put", SIG_OF(192), &k), GCL_ERROR_SIGNATURE_MISMATCH);
  cr_assert(strstr(gcl_last_error(), "'comm'") != NULL, "%s", gcl_last_error());
  char want[64];
  snprintf(want, sizeof want, "declared offset 0 size 192, kernel has offset 0 size %d", N);
  cr_assert(strstr(gcl_last_error(), want) != NULL, "%s", gcl_last_error());
  close_rig(&r);
}

/* --- gcl_args_set_nccl_devcomm: the communicator's layout against the kernel's NCCL ----------- */

/* Args of lsa_put with a communicator of N bytes; head (magic, version) written when magic. */
typedef struct dc_case {
  rig r;
  gcl_kernel *k;
  gcl_args *a;
  unsigned char comm[N];
} dc_case;

static void dc_open(dc_case *c) {
  open_rig(&c->r);
  cr_assert_eq(gcl_module_find_kernel(c->r.mod, "lsa_put", SIG_OF(N), &c->k), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_args_create(gcl_kernel_layout(c->k), &c->a), GCL_OK);
  memset(c->comm, 0x5a, sizeof c->comm);
}

static void dc_close(dc_case *c) {
  gcl_args_destroy(c->a);
  close_rig(&c->r);
}

static void dc_versioned(dc_case *c, uint32_t version) {
  uint32_t head[2] = {GCL_NCCL_API_MAGIC, version};
  memcpy(c->comm, head, sizeof head);
}

static gcl_status dc_set(dc_case *c, int runtime, int kernel) {
  gcl_nccl_devcomm d = {.bytes = c->comm, .size = sizeof c->comm, .runtime_version = runtime,
                        .kernel_version = kernel};
  return gcl_args_set_nccl_devcomm_param(c->a, 0, &d);
}

/* The communicator's bytes at the parameter's offset in the packed buffer equal want. */
static void dc_assert_bytes(dc_case *c, const unsigned char *want) {
  const void *buf;
  size_t size;
  cr_assert_eq(gcl_args_set_ptr(c->a, 1, 0x100000), GCL_OK);
  cr_assert_eq(gcl_args_set_u64(c->a, 2, 0), GCL_OK);
  cr_assert_eq(gcl_args_set_ptr(c->a, 3, 0x200000), GCL_OK);
  cr_assert_eq(gcl_args_buffer(c->a, &buf, &size), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(memcmp(buf, want, N), 0);
}

static void assert_says(const char *a, const char *b, const char *c) {
  const char *e = gcl_last_error();
  cr_assert(strstr(e, a) && strstr(e, b) && (!c || strstr(e, c)), "%s", e);
}

Test(nccl_devcomm, the_same_layout_generation_is_set_and_packed_as_given) {
  dc_case c;
  dc_open(&c);
  cr_assert_eq(dc_set(&c, 22809, 22809), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(dc_set(&c, 22807, 22809), GCL_OK, "2.28.7 and 2.28.9 share the layout: %s", gcl_last_error());
  dc_assert_bytes(&c, c.comm);
  dc_close(&c);
}

Test(nccl_devcomm, a_runtime_of_another_layout_is_refused_naming_both_and_nothing_changes) {
  dc_case c;
  dc_open(&c);
  unsigned char first[N];
  cr_assert_eq(dc_set(&c, 22809, 22809), GCL_OK, "%s", gcl_last_error());
  memcpy(first, c.comm, N);
  memset(c.comm, 0x33, sizeof c.comm);
  /* DeepEP#687's case: a kernel built with one NCCL, the communicator made by another. */
  cr_assert_eq(dc_set(&c, 22803, 22809), GCL_ERROR_TYPE_MISMATCH);
  assert_says("'comm'", "NCCL 2.28.9", "NCCL 2.28.3");
  cr_assert_eq(dc_set(&c, 22907, 22902), GCL_ERROR_TYPE_MISMATCH);
  assert_says("2.29.7", "2.29.2", "layout of 2.29.5");
  dc_assert_bytes(&c, first);
  dc_close(&c);
}

Test(nccl_devcomm, versioned_communicators_are_read_by_their_version_field) {
  dc_case c;
  dc_open(&c);
  dc_versioned(&c, 23004);
  cr_assert_eq(dc_set(&c, 23007, 23000), GCL_OK, "2.30.x share one layout: %s", gcl_last_error());
  cr_assert_eq(dc_set(&c, 23007, 22809), GCL_ERROR_TYPE_MISMATCH, "a 2.28 kernel, a 2.30 communicator");
  assert_says("NCCL 2.28.9", "2.30.4", "its version field");
  dc_versioned(&c, 23104);
  cr_assert_eq(dc_set(&c, 23104, 23104), GCL_OK, "an unknown version equal to the kernel's: %s", gcl_last_error());
  cr_assert_eq(dc_set(&c, 23104, 23105), GCL_ERROR_TYPE_MISMATCH, "unknown versions share a layout only if equal");
  dc_versioned(&c, 7);
  cr_assert_eq(dc_set(&c, 23007, 23007), GCL_ERROR_TYPE_MISMATCH);
  assert_says("version field is 7", "'comm'", NULL);
  dc_close(&c);
}

Test(nccl_devcomm, a_versioned_kernel_refuses_an_unversioned_communicator) {
  dc_case c;
  dc_open(&c);
  cr_assert_eq(dc_set(&c, 22809, 23007), GCL_ERROR_TYPE_MISMATCH);
  assert_says("magic 0xcafebeef", "NCCL 2.28.9", "NCCL 2.30.7");
  /* A 2.30 library writing an older host's layout: the bytes do not say which; the size is all. */
  cr_assert_eq(dc_set(&c, 23007, 22809), GCL_OK, "%s", gcl_last_error());
  dc_close(&c);
}

Test(nccl_devcomm, bad_inputs_are_named) {
  dc_case c;
  dc_open(&c);
  cr_assert_eq(dc_set(&c, 22809, 0), GCL_ERROR_INVALID_ARGUMENT);
  assert_says("kernel_version is 0", "22803", NULL);
  cr_assert_eq(dc_set(&c, 2280, 22809), GCL_ERROR_INVALID_ARGUMENT);
  assert_says("runtime_version is 2280", "2.28.3", NULL);
  gcl_nccl_devcomm d = {.bytes = c.comm, .size = N - 8, .runtime_version = 22809, .kernel_version = 22809};
  cr_assert_eq(gcl_args_set_nccl_devcomm_param(c.a, 0, &d), GCL_ERROR_TYPE_MISMATCH);
  assert_says("'comm'", "is bytes(", "other NCCL headers");
  d.size = N;
  cr_assert_eq(gcl_args_set_nccl_devcomm_param(c.a, 1, &d), GCL_ERROR_TYPE_MISMATCH, "a pointer parameter");
  assert_says("'win'", "is not bytes(N)", NULL);
  d.bytes = NULL;
  cr_assert_eq(gcl_args_set_nccl_devcomm_param(c.a, 0, &d), GCL_ERROR_INVALID_ARGUMENT);
  assert_says("comm->bytes", "NULL", NULL);
  cr_assert_eq(gcl_args_set_nccl_devcomm_param(c.a, 0, NULL), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl_nccl_layout_generation(22809), 22807);
  cr_assert_eq(gcl_nccl_layout_generation(22906), 22905);
  cr_assert_eq(gcl_nccl_layout_generation(22700), 0);
  cr_assert_eq(gcl_nccl_layout_generation(23007), 23000);
  cr_assert_eq(gcl_nccl_layout_generation(23100), 23100);
  dc_close(&c);
}
