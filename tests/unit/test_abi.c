/* The structs callers allocate keep their size and field offsets (x86-64 / aarch64 LP64): new
 * fields take reserved slots (include/gclaunch/gclaunch.h, "How the structs the caller fills
 * grow"), and nonzero reserved members are refused so that callers zero-initialise them. */
#include <criterion/criterion.h>
#include <stddef.h>
#include <string.h>

#include "gclaunch/gclaunch.h"

Test(abi, launch_config_layout_is_pinned) {
  cr_expect_eq(sizeof(gcl_launch_config), 112);
  cr_expect_eq(offsetof(gcl_launch_config, grid), 0);
  cr_expect_eq(offsetof(gcl_launch_config, block), 12);
  cr_expect_eq(offsetof(gcl_launch_config, cluster), 24);
  cr_expect_eq(offsetof(gcl_launch_config, shared_bytes), 40);
  cr_expect_eq(offsetof(gcl_launch_config, stream), 48);
  cr_expect_eq(offsetof(gcl_launch_config, cooperative), 56);
  cr_expect_eq(offsetof(gcl_launch_config, programmatic_dependent_launch), 57);
  cr_expect_eq(offsetof(gcl_launch_config, priority), 60);
  cr_expect_eq(offsetof(gcl_launch_config, flags), 64);
  cr_expect_eq(offsetof(gcl_launch_config, reserved), 72);
}

Test(abi, tensormap_options_layout_is_pinned) {
  cr_expect_eq(sizeof(gcl_tensormap_options), 124);
  cr_expect_eq(offsetof(gcl_tensormap_options, box), 0);
  cr_expect_eq(offsetof(gcl_tensormap_options, element_strides), 20);
  cr_expect_eq(offsetof(gcl_tensormap_options, interleave), 40);
  cr_expect_eq(offsetof(gcl_tensormap_options, store), 56);
  cr_expect_eq(offsetof(gcl_tensormap_options, im2col), 60);
  cr_expect_eq(sizeof(gcl_tensormap_im2col), 32);
  cr_expect_eq(offsetof(gcl_tensormap_options, reserved), 92);
}

Test(abi, nonzero_reserved_options_are_refused) {
  int64_t shape[2] = {64, 64};
  DLTensor t = {.data = (void *)(uintptr_t)0x10000, .device = {kDLCUDA, 0}, .ndim = 2, .dtype = {kDLFloat, 32, 1},
                .shape = shape};
  gcl_tensormap_options o = {0};
  o.box[0] = 16, o.box[1] = 16;
  gcl_tensormap_desc d;
  cr_assert_eq(gcl_tensormap_check(&t, &o, &d), GCL_OK, "%s", gcl_last_error());
  o.reserved[3] = 7;
  cr_assert_eq(gcl_tensormap_check(&t, &o, &d), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_str_eq(gcl_last_error(), "tensor: options.reserved[3] is 7, expected 0 (zero-initialise the options)");
}
