/* bench_nvshmem_bw's command line (see bench/nvshmem_bw.c for what it measures). */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvshmem_bw.h"

static const char usage[] =
    "usage: bench_nvshmem_bw --cubin FILE [--pes N] [--bytes SIZE] [--chunk SIZE] [--reps N]\n"
    "                        [--iters N] [--warmup N] [--blocks N] [--launches N]\n"
    "                        [--launch-reps N] [--methods LIST] [--signatures]\n"
    "  --cubin FILE      bench/nvshmem_bw.cu device-linked with NVSHMEM (bench/nvshmem_bw.sh builds it)\n"
    "  --pes N           PEs, one process each, PE r on GPU r %% GPUs (1 ... 16; default: every\n"
    "                    GPU, at most 16, and 2 on one GPU: two processes time-sliced on it, whose\n"
    "                    numbers are on-device copies between processes, not a link);\n"
    "                    1 PE reads itself: the numbers are then local bandwidth\n"
    "  --bytes SIZE      bytes per peer, a multiple of 8K and of --chunk (default 64M; K, M, G)\n"
    "  --chunk SIZE      bytes per nvshmemx_getmem_block / putmem_block call (default 64K)\n"
    "  --reps N          timed samples per method, median reported (default 50)\n"
    "  --iters N         runs of the method per sample, back to back (default 4)\n"
    "  --warmup N        untimed samples before them (default 3)\n"
    "  --blocks N        grid of the kernels (default 0: 2 per multiprocessor)\n"
    "  --launches N      launch-cost check: launches per sample (default 2000)\n"
    "  --launch-reps N   launch-cost check: samples per path, 0 skips the check (default 51)\n"
    "  --methods LIST    comma-separated, of tma, get, put, copy (default: all; the ratios need copy)\n"
    "  --signatures      print 'kernel|signature' for every kernel it launches, then exit\n";

static int bad(const char *opt, const char *value, const char *expected) {
  fprintf(stderr, "bench_nvshmem_bw: %s %s: expected %s\n%s", opt, value ? value : "(missing)",
          expected, usage);
  return 2;
}

/* A decimal count with an optional binary suffix K, M or G; 0 on anything else. */
static size_t size_value(const char *s) {
  char *end = NULL;
  errno = 0;
  if (!s || *s < '0' || *s > '9') return 0;
  unsigned long long v = strtoull(s, &end, 10);
  unsigned shift = 0;
  if (*end == 'K' || *end == 'k') shift = 10, end++;
  else if (*end == 'M' || *end == 'm') shift = 20, end++;
  else if (*end == 'G' || *end == 'g') shift = 30, end++;
  if (errno || *end || v > (SIZE_MAX >> shift)) return 0;
  return (size_t)(v << shift);
}

/* "tma,copy" -> bits 0 and 3 (the order of BW_METHODS); 0 on anything else. */
static unsigned methods_value(const char *s) {
  static const char *names[BW_METHODS] = {"tma", "get", "put", "copy"};
  unsigned bits = 0;
  while (s && *s) {
    size_t n = strcspn(s, ","), m = 0;
    while (m < BW_METHODS && !(strlen(names[m]) == n && strncmp(s, names[m], n) == 0)) m++;
    if (m == BW_METHODS || bits & (1u << m)) return 0;
    bits |= 1u << m;
    s += n + (s[n] == ',');
    if (s[-1] == ',' && !*s) return 0;
  }
  return bits;
}

/* An int in [lo, hi], else returns 0 with *ok = 0. */
static int int_value(const char *s, int lo, int hi, int *ok) {
  char *end = NULL;
  errno = 0;
  long v = s ? strtol(s, &end, 10) : 0;
  *ok = s && *s && !*end && !errno && v >= lo && v <= hi;
  return *ok ? (int)v : 0;
}

static int checks(const bw_options *o) {
  char v[32];
  snprintf(v, sizeof v, "%zu", o->bytes);
  if (!o->cubin && !o->signatures) return bad("--cubin", NULL, "the device-linked cubin (bench/nvshmem_bw.sh)");
  if (o->bytes % BW_TILE_BYTES || o->bytes % o->chunk)
    return bad("--bytes", v, "a multiple of 8K (one TMA tile) and of --chunk");
  if (o->bytes / BW_TILE_BYTES * BW_MAX_PES > INT_MAX)
    return bad("--bytes", v, "less than 1T (16 peers x tiles of 8K must count below 2^31)");
  return -1;
}

int bw_parse(int argc, char **argv, bw_options *o) {
  *o = (bw_options){.bytes = 64u << 20, .chunk = 64u << 10, .reps = 50, .iters = 4, .warmup = 3,
                    .launches = 2000, .launch_reps = 51, .methods = (1u << BW_METHODS) - 1};
  static const struct { const char *name; int lo, hi; size_t field; } ints[] = {
      {"--pes", 1, BW_MAX_PES, offsetof(bw_options, pes)},
      {"--reps", 1, 100000, offsetof(bw_options, reps)},
      {"--iters", 1, 1000, offsetof(bw_options, iters)},
      {"--warmup", 0, 100000, offsetof(bw_options, warmup)},
      {"--blocks", 0, 1 << 20, offsetof(bw_options, blocks)},
      {"--launches", 1, 10000000, offsetof(bw_options, launches)},
      {"--launch-reps", 0, 100000, offsetof(bw_options, launch_reps)}};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(usage, stdout);
      return 0;
    }
    int done = 0, ok = 1;
    if (strcmp(a, "--signatures") == 0) {
      o->signatures = 1;
      continue;
    }
    for (size_t j = 0; !done && j < sizeof ints / sizeof *ints; j++)
      if (strcmp(a, ints[j].name) == 0) {
        char range[64];
        snprintf(range, sizeof range, "an integer in %d ... %d", ints[j].lo, ints[j].hi);
        *(int *)((char *)o + ints[j].field) = int_value(v, ints[j].lo, ints[j].hi, &ok);
        if (!ok) return bad(a, v, range);
        done = 1;
      }
    if (!done && (strcmp(a, "--bytes") == 0 || strcmp(a, "--chunk") == 0)) {
      size_t s = size_value(v);
      if (s == 0) return bad(a, v, "a positive size: digits with an optional K, M or G");
      *(a[2] == 'b' ? &o->bytes : &o->chunk) = s;
      done = 1;
    } else if (!done && strcmp(a, "--methods") == 0) {
      if (!(o->methods = methods_value(v)))
        return bad(a, v, "tma, get, put or copy, comma-separated, each once");
      done = 1;
    } else if (!done && strcmp(a, "--cubin") == 0) {
      if (!v) return bad(a, v, "a file");
      o->cubin = v, done = 1;
    }
    if (!done) return bad("argument", a, "one of the options below");
    i++;
  }
  return checks(o);
}
