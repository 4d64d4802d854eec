/* The PTX reader checked against ptxas (no GPU): generated modules (ptx_oracle.c: every .param
 * type, arrays, .align, .ptr with state spaces, several entries, comments, whitespace,
 * directives before and between entries) and token mutations of them, each read by
 * gcl_image_parse for sm_90 and compiled by `ptxas -arch=sm_90`. Where ptxas accepts, the reader
 * must give the kernels of ptxas's cubin (read by the cubin reader) with the same parameter
 * offsets and sizes; where ptxas refuses a line of an entry declaration, the reader must refuse
 * too. The modules as generated (no mutation) must be accepted by both (or, past the 4352
 * parameter bytes of PTX ISA 8.0, refused by both).
 * Seeded: GCL_PTX_SEED (printed), GCL_PTX_CASES (default 300). Skipped when ptxas is missing
 * (GCL_PTXAS names it; GCL_REQUIRE_PTXAS=1 makes that a failure). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../common/ptx_oracle.h"
#include "../common/suite.h"

static unsigned long long env_ull(const char *name, unsigned long long fallback) {
  const char *v = getenv(name);
  return v && *v ? strtoull(v, NULL, 0) : fallback;
}

Test(ptx_ptxas, generated_and_mutated_modules_agree_with_ptxas, .timeout = 900) {
  if (!ptx_oracle_ptxas())
    GCL_SKIP_UNLESS_REQUIRED("GCL_REQUIRE_PTXAS", "ptxas not found (GCL_PTXAS, $CUDA_HOME/bin, "
                             "/usr/local/cuda/bin, PATH): the PTX reader is not checked against it");
  unsigned long long seed = env_ull("GCL_PTX_SEED", (unsigned long long)time(NULL) ^ (unsigned long long)getpid());
  unsigned long long cases = env_ull("GCL_PTX_CASES", 300);
  fprintf(stderr, "ptx_ptxas: seed %llu, %llu cases (GCL_PTX_SEED=%llu GCL_PTX_CASES=%llu to "
          "repeat), ptxas %s\n", seed, cases, seed, cases, ptx_oracle_ptxas());
  char dir[] = "/tmp/gcl-ptxas-XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  unsigned long counts[PTX_NO_PTXAS + 1] = {0}, generated_bad = 0;
  for (unsigned long long i = 0; i < cases; i++) {
    int mutations = i % 4 == 0 ? 0 : (int)(1 + i % 3);
    char *text = ptx_gen_module(seed + i, mutations), why[1024];
    ptx_verdict v = ptx_oracle_judge(text, strlen(text), dir, why, sizeof why);
    cr_assert_neq(v, PTX_NO_PTXAS, "case %llu: %s", i, why);
    counts[v]++;
    /* As generated, both must accept -- or both refuse (a PTX ISA 8.0 module past 4352 bytes of
     * parameters, the generator does not avoid it). */
    bool bad_generated = mutations == 0 && v != PTX_AGREE && v != PTX_BOTH_REFUSE;
    generated_bad += bad_generated;
    if (ptx_oracle_disagrees(v) || bad_generated)
      fprintf(stderr, "case %llu (seed %llu, %d mutations): %s: %s\n--- module ---\n%s--- end ---\n",
              i, seed + i, mutations, ptx_verdict_name(v), why, text);
    free(text);
  }
  fprintf(stderr, "ptx_ptxas: %llu cases: %lu agree, %lu both refuse, %lu ptxas refuses "
          "outside a declaration, %lu different kernels, %lu reader refuses what ptxas accepts, "
          "%lu reader accepts a declaration ptxas refuses; %lu generated modules not agreed\n",
          cases, counts[PTX_AGREE], counts[PTX_BOTH_REFUSE], counts[PTX_REFUSED_ELSEWHERE],
          counts[PTX_DIFFERENT], counts[PTX_READER_REFUSES], counts[PTX_READER_ACCEPTS],
          generated_bad);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  cr_expect_eq(system(cmd), 0);
  cr_expect_eq(counts[PTX_DIFFERENT], 0);
  cr_expect_eq(counts[PTX_READER_REFUSES], 0);
  cr_expect_eq(counts[PTX_READER_ACCEPTS], 0);
  cr_expect_eq(generated_bad, 0);
  cr_expect_gt(counts[PTX_AGREE], cases / 5, "too few modules both accept: the generator drifted");
}
