/* Occupancy queries and the persistent launch config against libfakecuda.so (its formula is in
 * fakecuda.h: for the default 32 registers, 256 threads give 8 blocks per SM, and 100000 bytes of
 * dynamic shared memory 2), and the launch config's refusal of a grid or block of 0. */
#include "fakecuda_test.h"

TestSuite(occupancy, .init = fake_use);

typedef struct world {
  gcl_context *ctx;
  gcl_module *mod;
  gcl_kernel *k;
  gcl_args *args;
} world;

static void open_world(world *w) {
  unsigned char map[128] = {0};
  int8_t c = 1;
  cr_assert_eq(gcl_context_create(0, &w->ctx), GCL_OK);
  cr_assert_eq(gcl_module_load_data(w->ctx, fake_ptx, sizeof fake_ptx, &w->mod), GCL_OK);
  cr_assert_eq(gcl_module_find_kernel(w->mod, "k", FAKE_K_SIGNATURE, &w->k), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_args_create(gcl_kernel_layout(w->k), &w->args), GCL_OK);
  cr_assert_eq(gcl_args_set(w->args, 0, map, 128), GCL_OK);
  cr_assert_eq(gcl_args_set(w->args, 1, &c, 1), GCL_OK);
  cr_assert_eq(gcl_args_set_ptr(w->args, 2, 0), GCL_OK);
}

static void close_world(world *w) {
  gcl_args_destroy(w->args);
  gcl_module_destroy(w->mod);
  gcl_context_destroy(w->ctx);
  assert_nothing_live();
}

Test(occupancy, blocks_per_sm_and_cooperative_grid) {
  world w;
  open_world(&w);
  int per_sm = -1;
  cr_assert_eq(gcl_kernel_occupancy(w.k, 256, 0, &per_sm), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(per_sm, 8);
  cr_assert_eq(gcl_kernel_occupancy(w.k, 1024, 0, &per_sm), GCL_OK);
  cr_assert_eq(per_sm, 2);
  long opt_ins = fakecuda_calls("cuFuncSetAttribute");
  cr_assert_eq(gcl_kernel_occupancy(w.k, 256, 100000, &per_sm), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(per_sm, 2);
  cr_assert_eq(fakecuda_calls("cuFuncSetAttribute"), opt_ins + 1, "100000 bytes opted in, as a launch would");
  unsigned grid = 0;
  cr_assert_eq(gcl_kernel_max_cooperative_grid(w.k, 256, 100000, &grid), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(grid, 132u * 2u);
  close_world(&w);
}

Test(occupancy, persistent_config_fills_grid_block_and_shared) {
  world w;
  open_world(&w);
  gcl_launch_config cfg = {.grid = {7, 7, 7}, .block = {9, 9, 9}, .cooperative = true, .priority = -1};
  cr_assert_eq(gcl_kernel_persistent_config(w.k, 128, 50000, &cfg), GCL_OK, "%s", gcl_last_error());
  /* 128 threads: 16 by threads and registers; 233472 / 51024 = 4 by shared memory */
  cr_assert_eq(cfg.grid[0], 132u * 4u);
  cr_assert_eq(cfg.grid[1], 1);
  cr_assert_eq(cfg.grid[2], 1);
  cr_assert_eq(cfg.block[0], 128);
  cr_assert_eq(cfg.block[1], 1);
  cr_assert_eq(cfg.shared_bytes, 50000);
  cr_assert(cfg.cooperative, "the caller's fields stay");
  cr_assert_eq(cfg.priority, -1);
  cr_assert_eq(gcl_launch(w.k, &cfg, w.args), GCL_OK, "%s", gcl_last_error());
  fakecuda_launch last;
  cr_assert_eq(fakecuda_last_launch(&last), 0);
  cr_assert_eq(last.grid[0], 528);
  cr_assert_eq(last.cooperative, 1);
  close_world(&w);
}

Test(occupancy, active_clusters) {
  world w;
  open_world(&w);
  gcl_launch_config cfg = {.block = {256}, .cluster = {2, 2, 1}};
  int n = -1;
  cr_assert_eq(gcl_kernel_active_clusters(w.k, &cfg, &n), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(n, 132 * 8 / 4);
  cfg.cluster[0] = 16, cfg.cluster[1] = 1;
  cr_assert_eq(gcl_kernel_active_clusters(w.k, &cfg, &n), GCL_ERROR_DRIVER);
  assert_msg_has("cuOccupancyMaxActiveClusters(kernel 'k', cluster 16x1x1, block 256x1x1): "
                 "CUDA_ERROR_INVALID_CLUSTER_SIZE");
  cr_assert_eq(n, 264, "unchanged on failure");
  cr_assert_eq(gcl_kernel_set_attribute(w.k, GCL_KERNEL_NONPORTABLE_CLUSTER_SIZE_ALLOWED, 1), GCL_OK);
  cr_assert_eq(gcl_kernel_active_clusters(w.k, &cfg, &n), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(n, 132 * 8 / 16);
  close_world(&w);
}

Test(occupancy, bad_input_is_named_and_changes_nothing) {
  world w;
  open_world(&w);
  int n = -3;
  unsigned grid = 5;
  cr_assert_eq(gcl_kernel_occupancy(NULL, 256, 0, &n), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("k: expected a kernel");
  cr_assert_eq(gcl_kernel_occupancy(w.k, 256, 0, NULL), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("blocks_per_sm");
  cr_assert_eq(gcl_kernel_occupancy(w.k, 0, 0, &n), GCL_ERROR_INVALID_CONFIG);
  assert_msg_has("block_threads: expected 1 ... 1024 (kernel 'k'), got 0");
  cr_assert_eq(gcl_kernel_occupancy(w.k, 1025, 0, &n), GCL_ERROR_INVALID_CONFIG);
  cr_assert_eq(gcl_kernel_occupancy(w.k, 32, 300000, &n), GCL_ERROR_INVALID_CONFIG);
  assert_msg_has("dynamic_smem: 300000 bytes, kernel 'k' can have at most 232448");
  cr_assert_eq(n, -3);
  cr_assert_eq(gcl_kernel_max_cooperative_grid(w.k, 256, 0, NULL), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl_kernel_max_cooperative_grid(NULL, 256, 0, &grid), GCL_ERROR_INVALID_ARGUMENT);
  /* 128 registers x 1024 threads: no block fits */
  gcl_module *m2;
  gcl_kernel *fat;
  fakecuda_set_func_attribute(4 /* CU_FUNC_ATTRIBUTE_NUM_REGS */, 128);
  cr_assert_eq(gcl_module_load_data(w.ctx, fake_ptx, sizeof fake_ptx, &m2), GCL_OK);
  cr_assert_eq(gcl_module_find_kernel(m2, "k", NULL, &fat), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_kernel_max_cooperative_grid(fat, 1024, 0, &grid), GCL_ERROR_INVALID_CONFIG);
  assert_msg_has("not one block of 1024 threads with 0 bytes of dynamic shared memory fits on an SM");
  cr_assert_eq(grid, 5);
  gcl_launch_config cfg = {.grid = {3}};
  cr_assert_eq(gcl_kernel_persistent_config(fat, 1024, 0, &cfg), GCL_ERROR_INVALID_CONFIG);
  cr_assert_eq(cfg.grid[0], 3, "config untouched on failure");
  cr_assert_eq(gcl_kernel_persistent_config(w.k, 64, 0, NULL), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl_kernel_active_clusters(w.k, NULL, &n), GCL_ERROR_INVALID_ARGUMENT);
  gcl_launch_config nocl = {.block = {32}};
  cr_assert_eq(gcl_kernel_active_clusters(w.k, &nocl, &n), GCL_ERROR_INVALID_CONFIG);
  assert_msg_has("config.cluster[0]: expected at least 1, got 0");
  fakecuda_fail_once("cuOccupancyMaxActiveBlocksPerMultiprocessor", 999, 0);
  cr_assert_eq(gcl_kernel_occupancy(w.k, 32, 0, &n), GCL_ERROR_DRIVER);
  assert_msg_has("cuOccupancyMaxActiveBlocksPerMultiprocessor(kernel 'k', 32 threads, 0 bytes shared): CUDA_ERROR_UNKNOWN");
  cr_assert_eq(n, -3);
  gcl_module_destroy(m2);
  close_world(&w);
}

/* A grid or block of 0 is an error naming the field; trailing zeros are 1. */
Test(occupancy, launch_refuses_a_zero_grid_or_block) {
  world w;
  open_world(&w);
  const struct { gcl_launch_config c; const char *msg; } bad[] = {
      {{.grid = {0}, .block = {32}}, "config.grid[0]: expected at least 1, got 0 (grid 0x0x0)"},
      {{.grid = {4}, .block = {0}}, "config.block[0]: expected at least 1, got 0"},
      {{.grid = {4, 0, 2}, .block = {32}}, "config.grid[1]: expected at least 1, got 0 (grid 4x0x2)"},
      {{.grid = {4}, .block = {32, 0, 1}}, "config.block[1]"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    cr_assert_eq(gcl_launch(w.k, &bad[i].c, w.args), GCL_ERROR_INVALID_CONFIG, "case %zu", i);
    assert_msg_has(bad[i].msg);
  }
  cr_assert_eq(fakecuda_launch_count(), 0);
  gcl_launch_config ok = {.grid = {4, 3}, .block = {32}};
  cr_assert_eq(gcl_launch(w.k, &ok, w.args), GCL_OK, "%s", gcl_last_error());
  fakecuda_launch last;
  cr_assert_eq(fakecuda_last_launch(&last), 0);
  cr_assert_eq(last.grid[0], 4);
  cr_assert_eq(last.grid[1], 3);
  cr_assert_eq(last.grid[2], 1);
  cr_assert_eq(last.block[1], 1);
  close_world(&w);
}
