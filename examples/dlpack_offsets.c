/* Example: pass DLPack tensors, one of them a view at a non-zero byte_offset.
 *   example_dlpack_offsets [smoke.sm_90.cubin]
 * The view x starts 16 elements into its allocation. gclaunch passes data + byte_offset after
 * checking the device, dtype against the pointer's element type, shape/strides and the
 * alignment the kernel assumes (align(16) here). Borrowed tensors stay the caller's. */
#include <gclaunch/gclaunch.h>
#include <stdio.h>

#define N 1024
#define OFFSET 16 /* elements before the view */

static int check(gcl_status s, const char *what) {
  if (s != GCL_OK) fprintf(stderr, "%s: %s: %s\n", what, gcl_status_name(s), gcl_last_error());
  return s != GCL_OK;
}

/* A 1-D float32 CUDA tensor of n elements starting byte_offset bytes into base. */
static DLTensor tensor(uint64_t base, uint64_t byte_offset, int64_t *shape, int64_t *strides) {
  DLTensor t = {0};
  t.data = (void *)(uintptr_t)base;
  t.device.device_type = kDLCUDA;
  t.device.device_id = 0;
  t.ndim = 1;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = shape;
  t.strides = strides;
  t.byte_offset = byte_offset;
  return t;
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "build/kernels/smoke.sm_90.cubin";
  if (check(gcl_driver_init(), "driver")) return 2;
  gcl_context *ctx = NULL;
  gcl_module *mod = NULL;
  gcl_kernel *k = NULL;
  gcl_args *args = NULL;
  uint64_t xs = 0, y = 0;
  int64_t shape[1] = {N}, strides[1] = {1};
  float host[OFFSET + N];
  for (int i = 0; i < OFFSET + N; i++) host[i] = (float)(i - OFFSET);
  int bad = check(gcl_context_create(0, &ctx), "context") ||
            check(gcl_module_load_file(ctx, path, &mod), path) ||
            check(gcl_module_find_kernel(mod, "saxpy", "f32 a, const f32* align(16) x, f32* y, u64 n", &k),
                  "saxpy") ||
            check(gcl_args_create(gcl_kernel_layout(k), &args), "args") ||
            check(gcl_mem_alloc(ctx, sizeof host, &xs), "alloc x") ||
            check(gcl_mem_alloc(ctx, N * sizeof(float), &y), "alloc y") ||
            check(gcl_mem_upload(ctx, xs, host, sizeof host), "upload x") ||
            check(gcl_mem_fill_u8(ctx, y, 0, N * sizeof(float)), "zero y");
  DLTensor x_view = tensor(xs, OFFSET * sizeof(float), shape, strides); /* x[i] = i */
  DLTensor y_t = tensor(y, 0, shape, strides);
  bad = bad || check(gcl_args_set_f32(args, 0, 1.0f), "a") ||
        check(gcl_args_set_dltensor(args, 1, &x_view), "x") ||
        check(gcl_args_set_dltensor(args, 2, &y_t), "y") ||
        check(gcl_args_set_u64(args, 3, N), "n");
  gcl_launch_config cfg = {.grid = {N / 256}, .block = {256}};
  bad = bad || check(gcl_launch(k, &cfg, args), "launch") ||
        check(gcl_context_synchronize(ctx), "kernel") ||
        check(gcl_mem_download(ctx, host, y, N * sizeof(float)), "download y");
  if (!bad) printf("y[5] = %g (expected 5: the view skipped %d elements)\n", host[5], OFFSET);
  if (y) gcl_mem_free(ctx, y);
  if (xs) gcl_mem_free(ctx, xs);
  gcl_args_destroy(args);
  gcl_module_destroy(mod);
  gcl_context_destroy(ctx);
  return bad;
}
