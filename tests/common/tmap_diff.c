/* The tensor-map differential against the driver (tmap_diff.h). */
#include "tmap_diff.h"

#include <cuda.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef CUresult (*get_proc_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
typedef CUresult (*tiled_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                             const cuuint64_t *, const cuuint32_t *, const cuuint32_t *,
                             CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion,
                             CUtensorMapFloatOOBfill);
typedef CUresult (*im2col_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                              const cuuint64_t *, const cuuint64_t *, const int *, const int *,
                              cuuint32_t, cuuint32_t, const cuuint32_t *, CUtensorMapInterleave,
                              CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

static tiled_fn tiled;
static im2col_fn im2col;

static int resolve(FILE *out) {
  if (tiled && im2col) return 0;
  const char *path = getenv("GCL_LIBCUDA");
  void *lib = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  get_proc_fn get = lib ? (get_proc_fn)dlsym(lib, "cuGetProcAddress_v2") : NULL;
  CUdriverProcAddressQueryResult q1 = 0, q2 = 0;
  void *p1 = NULL, *p2 = NULL;
  if (get) get("cuTensorMapEncodeTiled", &p1, 12000, 0, &q1), get("cuTensorMapEncodeIm2col", &p2, 12000, 0, &q2);
  if (!p1 || !p2) {
    fprintf(out, "tmap_diff: no cuTensorMapEncodeTiled/Im2col in %s\n", path ? path : "libcuda.so.1");
    return -1;
  }
  tiled = (tiled_fn)p1, im2col = (im2col_fn)p2;
  return 0;
}

static CUresult driver_encode(const tmap_raw *r) {
  _Alignas(128) CUtensorMap m;
  if (r->im2col)
    return im2col(&m, (CUtensorMapDataType)r->type, r->rank, (void *)(uintptr_t)r->address,
                  (const cuuint64_t *)r->dims, (const cuuint64_t *)r->strides, (const int *)r->lower,
                  (const int *)r->upper, r->channels, r->pixels,
                  (const cuuint32_t *)r->element_strides, (CUtensorMapInterleave)r->interleave,
                  (CUtensorMapSwizzle)r->swizzle, (CUtensorMapL2promotion)r->l2_promotion,
                  (CUtensorMapFloatOOBfill)r->oob_fill);
  return tiled(&m, (CUtensorMapDataType)r->type, r->rank, (void *)(uintptr_t)r->address,
               (const cuuint64_t *)r->dims, (const cuuint64_t *)r->strides,
               (const cuuint32_t *)r->box, (const cuuint32_t *)r->element_strides,
               (CUtensorMapInterleave)r->interleave, (CUtensorMapSwizzle)r->swizzle,
               (CUtensorMapL2promotion)r->l2_promotion, (CUtensorMapFloatOOBfill)r->oob_fill);
}

enum { MAX_AIMS = 32, MAX_RULES = 64 };

/* B by the rule gclaunch named: its message after "tensor: ", numbers as N, cut at 56 bytes. */
typedef struct rule_tally { char key[64]; long n; } rule_tally;
static void count_rule(rule_tally *r, int *nr, const char *msg) {
  const char *p = strstr(msg, "tensor: ");
  p = p ? p + 8 : msg;
  char key[64];
  size_t k = 0;
  for (; *p && k < 56; p++) {
    if (*p >= '0' && *p <= '9') {
      if (k == 0 || key[k - 1] != 'N') key[k++] = 'N';
    } else key[k++] = *p;
  }
  key[k] = 0;
  for (int i = 0; i < *nr; i++)
    if (!strcmp(r[i].key, key)) return (void)r[i].n++;
  if (*nr < MAX_RULES) snprintf(r[*nr].key, sizeof r[*nr].key, "%s", key), r[(*nr)++].n = 1;
}
typedef struct tally { long cases, agree, a, b; } tally;

/* One run's state: the tallies per aim and mode, the disagreements shown, the rules named. */
typedef struct diff_run {
  const tmap_diff_options *o;
  FILE *out;
  tmap_diff_result *res;
  const char *const *aims;
  size_t naims;
  tally by[MAX_AIMS + 2][2]; /* [aim or valid][tiled, im2col] */
  int shown_a, shown_b, nrules;
  rule_tally rules[MAX_RULES];
} diff_run;

static void dump_header(FILE *d) {
  fprintf(d, "n,aim,im2col,gcl_ok,driver_rc,rank,address,type,d0,d1,d2,d3,d4,s0,s1,s2,s3,"
          "b0,b1,b2,b3,b4,e0,e1,e2,e3,e4,interleave,swizzle,l2,oob,lo0,lo1,lo2,up0,up1,up2,"
          "channels,pixels,why\n");
}

/* One compared description as a CSV line of the dump. */
static void dump_case(FILE *d, long n, const char *aim, const tmap_raw *r, gcl_status s, CUresult rc,
                      const char *why) {
  fprintf(d, "%ld,%s,%d,%d,%d,%u,%llu", n, aim, r->im2col, s == GCL_OK, (int)rc, r->rank,
          (unsigned long long)r->address);
  fprintf(d, ",%d", r->type);
  for (int i = 0; i < 5; i++) fprintf(d, ",%llu", (unsigned long long)r->dims[i]);
  for (int i = 0; i < 4; i++) fprintf(d, ",%llu", (unsigned long long)r->strides[i]);
  for (int i = 0; i < 5; i++) fprintf(d, ",%u", r->box[i]);
  for (int i = 0; i < 5; i++) fprintf(d, ",%u", r->element_strides[i]);
  fprintf(d, ",%d,%d,%d,%d", r->interleave, r->swizzle, r->l2_promotion, r->oob_fill);
  for (int i = 0; i < 3; i++) fprintf(d, ",%d", r->lower[i]);
  for (int i = 0; i < 3; i++) fprintf(d, ",%d", r->upper[i]);
  fprintf(d, ",%u,%u,\"", r->channels, r->pixels);
  for (const char *m = why; *m; m++) if (*m != '"' && *m != '\n') fputc(*m, d);
  fprintf(d, "\"\n");
}

/* The next description (valid, interleave-32 or at an edge) into c; its aim's index (naims:
 * valid). */
static size_t next_case(diff_run *w, tmap_gen *g, tmap_case *c, uint64_t mem) {
  const tmap_diff_options *o = w->o;
  int share = o->valid_share > 0 ? o->valid_share : 4;
  if (o->interleave32_share > 0 && tmap_gen_below(g, (uint32_t)o->interleave32_share) == 0)
    tmap_gen_interleave32(g, c, mem, tmap_gen_below(g, 3) == 0);
  else if (tmap_gen_below(g, (uint32_t)share) == 0)
    tmap_gen_valid(g, c, mem, tmap_gen_below(g, 3) == 0);
  else {
    tmap_gen_edge(g, c, mem);
    size_t aim = 0;
    for (; aim < w->naims && strcmp(w->aims[aim], c->aim); aim++) {}
    return aim;
  }
  return w->naims;
}

/* The two verdicts on c counted; a disagreement shown (up to o->show of each kind). */
static void count_verdicts(diff_run *w, const tmap_case *c, tally *t, gcl_status s, CUresult rc,
                           const char *why) {
  t->cases++;
  bool gok = s == GCL_OK, dok = rc == CUDA_SUCCESS;
  if (gok == dok) {
    t->agree++;
    if (gok) w->res->both_accept++; else w->res->both_refuse++;
    return;
  }
  char line[1024];
  tmap_case_format(c, line, sizeof line);
  if (gok) {
    t->a++, w->res->a++;
    if (w->shown_a++ < w->o->show) fprintf(w->out, "A (gclaunch accepts, driver %d): %s\n", (int)rc, line);
  } else {
    t->b++, w->res->b++;
    count_rule(w->rules, &w->nrules, why);
    if (w->shown_b++ < w->o->show) fprintf(w->out, "B (driver encodes, gclaunch: %s): %s\n", why, line);
  }
}

static void report(const diff_run *w) {
  FILE *out = w->out;
  const tmap_diff_result *res = w->res;
  fprintf(out, "%-16s %-7s %9s %9s %7s %7s\n", "aim", "mode", "compared", "agree", "A", "B");
  for (size_t k = 0; k <= w->naims; k++)
    for (int m = 0; m < 2; m++) {
      const tally *t = &w->by[k][m];
      if (!t->cases) continue;
      fprintf(out, "%-16s %-7s %9ld %9ld %7ld %7ld\n", k < w->naims ? w->aims[k] : "valid",
              m ? "im2col" : "tiled", t->cases, t->agree, t->a, t->b);
    }
  if (w->nrules) fprintf(out, "B by the rule gclaunch named:\n");
  for (int i = 0; i < w->nrules; i++) fprintf(out, "  %7ld  %s\n", w->rules[i].n, w->rules[i].key);
  fprintf(out, "tmap_diff: seed %llu, %ld descriptions, %ld without driver arguments (rules only "
          "gclaunch can apply), %ld both accept, %ld both refuse; A (accepted by gclaunch, refused "
          "by the driver) = %ld, B (refused by gclaunch, encoded by the driver) = %ld\n",
          (unsigned long long)w->o->seed, res->cases, res->no_arguments, res->both_accept,
          res->both_refuse, res->a, res->b);
}

int tmap_diff_run(gcl_context *ctx, const tmap_diff_options *o, FILE *out, tmap_diff_result *res) {
  memset(res, 0, sizeof *res);
  if (resolve(out)) return -1;
  if (gcl_context_bind(ctx) != GCL_OK) {
    fprintf(out, "tmap_diff: %s\n", gcl_last_error());
    return -1;
  }
  static diff_run w; /* the rules' table is large: not on the stack */
  memset(&w, 0, sizeof w);
  w.o = o, w.out = out, w.res = res, w.aims = tmap_gen_aims(&w.naims);
  tmap_gen g;
  tmap_gen_seed(&g, o->seed);
  uint64_t mem = 0x7f1200000000ull;
  if (o->dump) dump_header(o->dump);
  for (long n = 0; n < o->count; n++) {
    tmap_case c;
    size_t aim = next_case(&w, &g, &c, mem);
    res->cases++;
    tmap_raw r;
    if (tmap_gen_raw(&c, &r)) {
      res->no_arguments++;
      continue;
    }
    gcl_status s = gcl_tensormap_check(&c.t, &c.o, NULL);
    char why[512];
    snprintf(why, sizeof why, "%s", s == GCL_OK ? "" : gcl_last_error());
    CUresult rc = driver_encode(&r);
    if (o->dump) dump_case(o->dump, n, aim < w.naims ? w.aims[aim] : "valid", &r, s, rc, why);
    count_verdicts(&w, &c, &w.by[aim][r.im2col], s, rc, why);
  }
  report(&w);
  return 0;
}
