/* The PTX reader against ptxas (tests/unit/test_ptx_ptxas.c, tests/fuzz/fuzz_ptx_ptxas.c):
 * a generator of PTX modules whose entries declare random parameters (every .param type of the
 * PTX ISA, arrays, .align, .ptr with state spaces and alignment), with comments, whitespace and
 * directives around them, and token mutations of it; and the oracle that reads a module with
 * gcl_image_parse (sm_90) and compiles it with `ptxas -arch=sm_90`, whose cubin is read by the
 * cubin reader. */
#ifndef GCL_PTX_ORACLE_H
#define GCL_PTX_ORACLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The outcome of one module. */
typedef enum ptx_verdict {
  PTX_AGREE,            /* both accept: the same kernels, parameter offsets and sizes */
  PTX_BOTH_REFUSE,      /* ptxas and the reader refuse */
  PTX_REFUSED_ELSEWHERE,/* ptxas refuses on a line outside every entry declaration the reader
                           accepted (a body, a directive): the reader does not read there */
  PTX_DIFFERENT,        /* both accept, the kernels differ: a disagreement */
  PTX_READER_REFUSES,   /* ptxas accepts, the reader refuses: a disagreement */
  PTX_READER_ACCEPTS,   /* ptxas refuses a line inside an entry declaration the reader
                           accepted: a disagreement */
  PTX_NO_PTXAS,         /* ptxas could not be run */
} ptx_verdict;

/* ptxas: $GCL_PTXAS, else $CUDA_HOME/bin/ptxas, else /usr/local/cuda/bin/ptxas, else ptxas on
 * PATH; NULL when none is executable. */
const char *ptx_oracle_ptxas(void);
/* Judges text[0, n). why (cap bytes) says what differed, for the disagreements. dir is a scratch
 * directory for the files ptxas reads and writes. */
ptx_verdict ptx_oracle_judge(const char *text, size_t n, const char *dir, char *why, size_t cap);
/* True for the verdicts that are disagreements. */
bool ptx_oracle_disagrees(ptx_verdict v);
const char *ptx_verdict_name(ptx_verdict v);

/* A generated module: text (malloc'd, NUL-terminated) from seed; mutations token edits on top
 * (0: the module as generated, which ptxas must accept). */
char *ptx_gen_module(uint64_t seed, int mutations);

#endif
