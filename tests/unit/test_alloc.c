/* gcl_replace_allocator: with counting allocators installed, a representative workload (parse,
 * layout, args with an owned DLPack tensor, module load, kernel lookup and launch through the fake
 * driver, image parse) gives back every block it took, and only to the allocator that made it:
 * each block carries a header with a magic number, so the system free handed one of ours would
 * abort (glibc: "free(): invalid pointer"), and our free handed a system block fails the check. */
#include "fakecuda_test.h"

#include <stdint.h>

#include "internal.h"

#define MAGIC 0x6763636c616c6c6full /* "gclalloc" */
#define HEADER 16

static size_t allocs, frees, foreign;

static void *hook_malloc(size_t n) {
  unsigned char *p = malloc(n + HEADER);
  if (!p) return NULL;
  uint64_t m = MAGIC;
  memcpy(p, &m, sizeof m);
  allocs++;
  return p + HEADER;
}

static bool ours(void *ptr) {
  uint64_t m;
  memcpy(&m, (unsigned char *)ptr - HEADER, sizeof m);
  return m == MAGIC;
}

static void hook_free(void *ptr) {
  if (!ptr) return;
  if (!ours(ptr)) {
    foreign++; /* a block of another allocator: leak it rather than corrupt the heap */
    return;
  }
  memset((unsigned char *)ptr - HEADER, 0, sizeof(uint64_t));
  frees++;
  free((unsigned char *)ptr - HEADER);
}

static void *hook_calloc(size_t count, size_t size) {
  if (size && count > SIZE_MAX / size) return NULL;
  void *p = hook_malloc(count * size);
  if (p) memset(p, 0, count * size);
  return p;
}

static void *hook_realloc(void *ptr, size_t n) {
  if (!ptr) return hook_malloc(n);
  if (!ours(ptr)) {
    foreign++;
    return NULL;
  }
  unsigned char *p = realloc((unsigned char *)ptr - HEADER, n + HEADER);
  return p ? p + HEADER : NULL;
}

static void deleter(DLManagedTensorVersioned *t) { (void)t; }

static void workload(void) {
  gcl_signature *sig;
  gcl_layout *layout;
  gcl_args *args;
  cr_assert_eq(gcl_signature_parse("f32 a, const f32* x, struct{i32, f64[2]} s, u64 n", &sig), GCL_OK);
  cr_assert_eq(gcl_signature_parse("f32 a,", &(gcl_signature *){NULL}), GCL_ERROR_PARSE);
  cr_assert_eq(gcl_layout_create(sig, 90, &layout), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_args_create(layout, &args), GCL_OK);
  cr_assert_eq(gcl_args_set_f32(args, 0, 1.5f), GCL_OK);
  int64_t shape[1] = {4};
  DLManagedTensorVersioned mt = {.version = {DLPACK_MAJOR_VERSION, 0}, .deleter = deleter,
      .dl_tensor = {.data = (void *)(uintptr_t)0x1000, .device = {kDLCUDA, 0}, .ndim = 1,
                    .dtype = {kDLFloat, 32, 1}, .shape = shape}};
  cr_assert_eq(gcl_args_take_dlpack(args, 1, &mt), GCL_OK, "%s", gcl_last_error());
  gcl_args_destroy(args);
  gcl_layout_destroy(layout);
  gcl_signature_destroy(sig);

  gcl_context *ctx;
  gcl_module *mod;
  gcl_kernel *k;
  cr_assert_eq(gcl_context_create(0, &ctx), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_module_load_data(ctx, fake_ptx, sizeof fake_ptx, &mod), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_module_find_kernel(mod, "k", FAKE_K_SIGNATURE, &k), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_args_create(gcl_kernel_layout(k), &args), GCL_OK);
  unsigned char map[128] = {0};
  cr_assert_eq(gcl_args_set(args, 0, map, sizeof map), GCL_OK);
  cr_assert_eq(gcl_args_set(args, 1, "c", 1), GCL_OK);
  cr_assert_eq(gcl_args_set_ptr(args, 2, 0x2000), GCL_OK);
  gcl_launch_config cfg = {.grid = {1}, .block = {32}};
  cr_assert_eq(gcl_launch(k, &cfg, args), GCL_OK, "%s", gcl_last_error());
  gcl_args_destroy(args);
  gcl_module_destroy(mod);
  gcl_context_destroy(ctx);
}

Test(alloc, every_block_goes_back_to_its_allocator) {
  fake_use();
  cr_assert_eq(gcl_replace_allocator(hook_malloc, hook_realloc, hook_calloc, hook_free), GCL_OK,
               "%s", gcl_last_error());
  workload();
  cr_expect_gt(allocs, 10, "the workload allocated only %zu blocks through the hook", allocs);
  cr_expect_eq(allocs, frees, "%zu blocks allocated, %zu freed", allocs, frees);
  cr_expect_eq(foreign, 0, "the hooked free was handed %zu blocks it did not allocate", foreign);
  assert_nothing_live();
  cr_assert_eq(gcl_replace_allocator(NULL, NULL, NULL, NULL), GCL_OK, "%s", gcl_last_error());
  size_t before = allocs;
  workload(); /* the C library's allocator again: the hook sees nothing */
  cr_expect_eq(allocs, before);
}

Test(alloc, replacement_refused_while_blocks_live_or_incomplete) {
  fake_use();
  cr_assert_eq(gcl_replace_allocator(hook_malloc, NULL, hook_calloc, hook_free),
               GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("gcl_replace_allocator: realloc_fn is NULL");
  gcl_signature *sig;
  cr_assert_eq(gcl_signature_parse("f32 a", &sig), GCL_OK);
  cr_assert_eq(gcl_replace_allocator(hook_malloc, hook_realloc, hook_calloc, hook_free),
               GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("still live");
  gcl_signature_destroy(sig);
  cr_assert_eq(gcl_replace_allocator(hook_malloc, hook_realloc, hook_calloc, hook_free), GCL_OK,
               "%s", gcl_last_error());
  cr_assert_eq(gcl_replace_allocator(NULL, NULL, NULL, NULL), GCL_OK);
  cr_expect_eq(allocs, 0);
}
