/* libFuzzer target: the PTX reader against ptxas (issue 38). Every input the reader accepts
 * with at least one kernel is, on a sample, also compiled by `ptxas -arch=sm_90`
 * (tests/common/ptx_oracle.c): where ptxas accepts, the reader's kernels must be the cubin's with
 * the same parameter offsets and sizes; where ptxas refuses a line of an entry declaration the
 * reader accepted, that is a disagreement too. A disagreement traps, after printing the input
 * and the reason. Bounded in time: ptxas runs for one accepted input in GCL_FUZZ_PTXAS_EVERY
 * (default 4, by the input's hash) and never twice for the same input (a cache of 65536
 * hashes). Without ptxas only the reader runs (as fuzz_ptx). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ptx_oracle.c"

static uint64_t fnv(const uint8_t *p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

enum { CACHE = 65536 };
static uint64_t seen[CACHE];

static unsigned long judged[PTX_NO_PTXAS + 1];

#ifndef LLVMFuzzerTestOneInput
static void report(void) {
  unsigned long total = 0;
  for (int v = 0; v <= PTX_NO_PTXAS; v++) total += judged[v];
  fprintf(stderr, "fuzz_ptx_ptxas: %lu accepted inputs judged by ptxas:", total);
  for (int v = 0; v <= PTX_NO_PTXAS; v++) fprintf(stderr, " %s %lu;", ptx_verdict_name((ptx_verdict)v), judged[v]);
  fprintf(stderr, "\n");
}
#endif

static bool first_time(uint64_t h) {
  uint64_t *slot = &seen[h % CACHE];
  if (*slot == h) return false;
  *slot = h;
  return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static char dir[64];
  static unsigned every;
  static bool have_ptxas;
  if (!every) {
    const char *e = getenv("GCL_FUZZ_PTXAS_EVERY");
    every = e && atoi(e) > 0 ? (unsigned)atoi(e) : 4;
#ifdef LLVMFuzzerTestOneInput
    every = 1; /* the unit suite's replay (test_fuzz_regressions.c): every seed is judged */
#endif
    have_ptxas = ptx_oracle_ptxas() != NULL;
    snprintf(dir, sizeof dir, "/tmp/gcl-fuzz-ptxas-XXXXXX");
    if (have_ptxas && !mkdtemp(dir)) have_ptxas = false;
#ifndef LLVMFuzzerTestOneInput
    atexit(report);
#endif
  }
  char *text = malloc(size + 1); /* the reader stops at a NUL; ptxas gets the same text */
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = 0;
  size_t n = strlen(text);
  gcl_image *img = NULL;
  bool accepted = gcl_image_parse(text, n, 90, &img) == GCL_OK && gcl_image_kernel_count(img) > 0;
  gcl_image_destroy(img);
  uint64_t h = fnv((const uint8_t *)text, n);
  if (accepted && have_ptxas && h % every == 0 && first_time(h)) {
    char why[1024];
    ptx_verdict v = ptx_oracle_judge(text, n, dir, why, sizeof why);
    judged[v]++;
    if (v == PTX_NO_PTXAS && judged[v] <= 5) /* ptxas did not run, or wrote a cubin we refuse */
      fprintf(stderr, "fuzz_ptx_ptxas: not judged: %s\n", why);
    if (ptx_oracle_disagrees(v)) {
      fprintf(stderr, "fuzz_ptx_ptxas: %s: %s\n--- input ---\n%s\n--- end ---\n",
              ptx_verdict_name(v), why, text);
      __builtin_trap();
    }
  }
  free(text);
  return 0;
}
