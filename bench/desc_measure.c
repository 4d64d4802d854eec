/* bench_descriptors: verifying a runner's copy and timing it (and cuMemcpyDtoD, the ceiling). */
#include <string.h>

#include "bench_util.h"
#include "desc.h"
#include "test_rng.h"

/* 16 sampled rows of the destination against the source, on the host. The destination is a
 * byte-exact copy of the sources (row block i = source i). */
static int check_rows(runner *r) {
  size_t row_bytes = (size_t)desc_cols(&r->c) * (r->c.bits / 8), rows = r->bytes / row_bytes;
  unsigned char *x = malloc(row_bytes), *y = malloc(row_bytes);
  int bad = 0;
  for (int probe = 0; probe < 16 && !bad; probe++) {
    size_t off = (size_t)(rng() % rows) * row_bytes;
    CHECK(gcl_mem_download(r->b->ctx, x, r->src + off, row_bytes));
    CHECK(gcl_mem_download(r->b->ctx, y, r->dst + off, row_bytes));
    if (memcmp(x, y, row_bytes)) {
      fprintf(stderr, "bench_descriptors: MISMATCH %s K=%u row %zu (sampled)\n",
              placement_names[r->pl], r->c.k, off / row_bytes);
      bad = 1;
    }
  }
  free(x);
  free(y);
  return bad;
}

/* Every byte, on the device: desc_compare counts the 16-byte words that differ. */
static uint64_t count_wrong(runner *r) {
  bench *b = r->b;
  gcl_args *a;
  CHECK(gcl_args_create(gcl_kernel_layout(b->compare), &a));
  uint64_t n = r->bytes / 16, wrong = 0;
  CHECK(gcl_args_set_ptr(a, 0, r->src));
  CHECK(gcl_args_set_ptr(a, 1, r->dst));
  CHECK(gcl_args_set(a, 2, &n, sizeof n));
  CHECK(gcl_args_set_ptr(a, 3, b->bad));
  CHECK(gcl_mem_upload(b->ctx, b->bad, &wrong, sizeof wrong));
  gcl_launch_config lc = {.grid = {(unsigned)b->sms * 8, 1, 1}, .block = {256, 1, 1},
                          .stream = gcl_stream_handle(b->stream)};
  CHECK(gcl_launch(b->compare, &lc, a));
  CHECK(gcl_stream_synchronize(b->stream));
  CHECK(gcl_mem_download(b->ctx, &wrong, b->bad, sizeof wrong));
  gcl_args_destroy(a);
  return wrong;
}

/* The runner's last copy (src -> dst) against its sources: 0 when right. */
int runner_check(runner *r) {
  CHECK(gcl_stream_synchronize(r->b->stream));
  int bad = check_rows(r);
  uint64_t wrong = count_wrong(r);
  if (wrong) {
    fprintf(stderr, "bench_descriptors: MISMATCH %s K=%u: %llu of %zu 16-byte words differ\n",
            placement_names[r->pl], r->c.k, (unsigned long long)wrong, r->bytes / 16);
    bad = 1;
  }
  return bad;
}

/* Poisons the destination, launches once, checks. */
int runner_verify(runner *r) {
  CHECK(gcl_mem_fill_u8(r->b->ctx, r->dst, 0xA5, r->bytes));
  CHECK(gcl_context_synchronize(r->b->ctx));
  runner_launch(r);
  return runner_check(r);
}

/* Seconds per launch: the median over reps of `launches` back-to-back launches + synchronize. */
double runner_time(runner *r) {
  bench *b = r->b;
  double t[64];
  runner_launch(r);
  CHECK(gcl_stream_synchronize(b->stream));
  for (int rep = 0; rep < b->reps; rep++) {
    double t0 = desc_now_s();
    for (int l = 0; l < b->launches; l++) runner_launch(r);
    CHECK(gcl_stream_synchronize(b->stream));
    t[rep] = (desc_now_s() - t0) / b->launches;
  }
  return bench_median(t, b->reps);
}

/* cuMemcpyDtoD of the same bytes, timed the same way. */
double desc_time_memcpy(bench *b, size_t bytes) {
  double t[64];
  CHECK(gcl_mem_copy(b->ctx, b->dst, b->src, bytes));
  CHECK(gcl_context_synchronize(b->ctx));
  for (int rep = 0; rep < b->reps; rep++) {
    double t0 = desc_now_s();
    for (int l = 0; l < b->launches; l++) CHECK(gcl_mem_copy(b->ctx, b->dst, b->src, bytes));
    CHECK(gcl_context_synchronize(b->ctx));
    t[rep] = (desc_now_s() - t0) / b->launches;
  }
  return bench_median(t, b->reps);
}
