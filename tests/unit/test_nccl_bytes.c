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
