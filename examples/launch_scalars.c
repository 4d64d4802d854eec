/* Example: launch a kernel with scalars and device pointers.
 *   example_launch_scalars [smoke.sm_90.cubin]     (kernels/smoke.cu: y = a * x + y)
 * Needs a GPU; without one it prints the driver's message and exits 2. */
#include <gclaunch/gclaunch.h>
#include <stdio.h>

#define N 1024

static int check(gcl_status s, const char *what) {
  if (s != GCL_OK) fprintf(stderr, "%s: %s: %s\n", what, gcl_status_name(s), gcl_last_error());
  return s != GCL_OK;
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "build/kernels/smoke.sm_90.cubin";
  if (check(gcl_driver_init(), "driver")) return 2;
  gcl_context *ctx = NULL;
  gcl_module *mod = NULL;
  gcl_kernel *k = NULL;
  gcl_args *args = NULL;
  uint64_t x = 0, y = 0;
  float hx[N], hy[N];
  for (int i = 0; i < N; i++) hx[i] = (float)i, hy[i] = 1.0f;
  int bad = check(gcl_context_create(0, &ctx), "context") ||
            check(gcl_module_load_file(ctx, path, &mod), path) ||
            /* The signature is checked against the kernel's real layout before the first launch. */
            check(gcl_module_find_kernel(mod, "saxpy", "f32 a, const f32* x, f32* y, u64 n", &k), "saxpy") ||
            check(gcl_args_create(gcl_kernel_layout(k), &args), "args") ||
            check(gcl_mem_alloc(ctx, sizeof hx, &x), "alloc x") ||
            check(gcl_mem_alloc(ctx, sizeof hy, &y), "alloc y") ||
            check(gcl_mem_upload(ctx, x, hx, sizeof hx), "upload x") ||
            check(gcl_mem_upload(ctx, y, hy, sizeof hy), "upload y") ||
            check(gcl_args_set_f32(args, 0, 2.0f), "a") ||   /* typed setters check the type */
            check(gcl_args_set_ptr(args, 1, x), "x") ||
            check(gcl_args_set_ptr(args, 2, y), "y") ||
            check(gcl_args_set_u64(args, 3, N), "n");
  gcl_launch_config cfg = {.grid = {N / 256}, .block = {256}};
  bad = bad || check(gcl_launch(k, &cfg, args), "launch") ||
        check(gcl_context_synchronize(ctx), "kernel") ||
        check(gcl_mem_download(ctx, hy, y, sizeof hy), "download y");
  if (!bad) printf("y[10] = %g (expected 21)\n", hy[10]);
  if (y) gcl_mem_free(ctx, y);
  if (x) gcl_mem_free(ctx, x);
  gcl_args_destroy(args);
  gcl_module_destroy(mod); /* destroys k too */
  gcl_context_destroy(ctx);
  return bad;
}
