/* gcl_nccl_devcomm_check: NCCL's rule for a device communicator against the headers a kernel was
 * built with (lib/core/nccl.c), on the CPU: equal versions before 2.31 (no version in the
 * struct), the magic and layout version from 2.31, every refusal naming both versions. */
#include <criterion/criterion.h>

#include "gclaunch/gclaunch.h"

#include <stdint.h>
#include <string.h>

#define msg_has(text) cr_assert(strstr(gcl_last_error(), text) != NULL, "message lacks \"%s\": %s", \
                                text, gcl_last_error())

Test(nccl_devcomm, before_2_31_the_runtime_must_be_the_headers_NCCL) {
  unsigned char comm[200];
  memset(comm, 0x5a, sizeof comm); /* 2.28.9's struct: no magic, nothing to read */
  cr_assert_eq(gcl_nccl_devcomm_check(comm, sizeof comm, 22809, 22809), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_nccl_devcomm_check(comm, sizeof comm, 22809, 22903), GCL_ERROR_TYPE_MISMATCH);
  msg_has("built with NCCL 2.28.9's headers, the communicator comes from the NCCL 2.29.3 library");
  cr_assert_eq(gcl_nccl_devcomm_check(comm, sizeof comm, 23004, 22809), GCL_ERROR_TYPE_MISMATCH);
  msg_has("NCCL 2.30.4's headers");
}

static void versioned(unsigned char *comm, size_t n, uint32_t magic, uint32_t version) {
  memset(comm, 0, n);
  memcpy(comm, &magic, 4);
  memcpy(comm + 4, &version, 4);
}

Test(nccl_devcomm, from_2_31_the_layout_version_in_the_struct_must_be_the_headers) {
  unsigned char comm[232];
  versioned(comm, sizeof comm, 0xcafebeefu, 23100);
  cr_assert_eq(gcl_nccl_devcomm_check(comm, sizeof comm, 23100, 23205), GCL_OK,
               "a newer runtime filling the headers' layout: %s", gcl_last_error());
  versioned(comm, sizeof comm, 0xcafebeefu, 23205);
  cr_assert_eq(gcl_nccl_devcomm_check(comm, sizeof comm, 23100, 23205), GCL_ERROR_TYPE_MISMATCH);
  msg_has("the communicator is in NCCL 2.32.5's layout (version 23205), the kernel was built with "
          "NCCL 2.31.0's headers (23100)");
  versioned(comm, sizeof comm, 0x12345678u, 23100);
  cr_assert_eq(gcl_nccl_devcomm_check(comm, sizeof comm, 23100, 23100), GCL_ERROR_TYPE_MISMATCH);
  msg_has("magic 0x12345678, expected 0xcafebeef");
  cr_assert_eq(gcl_nccl_devcomm_check(comm, 4, 23100, 23100), GCL_ERROR_TYPE_MISMATCH);
  msg_has("4 bytes cannot hold the magic and version");
}

Test(nccl_devcomm, bad_arguments_are_refused_by_name) {
  unsigned char comm[8] = {0};
  cr_assert_eq(gcl_nccl_devcomm_check(NULL, 8, 22809, 22809), GCL_ERROR_INVALID_ARGUMENT);
  msg_has("comm is NULL");
  cr_assert_eq(gcl_nccl_devcomm_check(comm, 0, 22809, 22809), GCL_ERROR_INVALID_ARGUMENT);
  msg_has("bytes is 0");
  cr_assert_eq(gcl_nccl_devcomm_check(comm, 8, 2704, 22809), GCL_ERROR_INVALID_ARGUMENT);
  msg_has("built_version 2704, runtime_version 22809: NCCL's device API starts at 2.28.0");
}
