/* libfakenvshmem.so: see fakenvshmem.h. The NVSHMEM entry points take the host structs as
 * NVSHMEM 3.x lays them out (declared here from its headers' documented sizes, independently of
 * gclaunch's own mirror, so that a wrong mirror fails these checks). */
#include "fakenvshmem.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define API __attribute__((visibility("default")))

typedef struct { int version; char internal[124]; } uid_t_;
typedef struct { int version; uid_t_ *id; int myrank; int nranks; } uid_args_t;
typedef struct { int version; uid_args_t uid_args; int cuda_device_id; char content[92]; } init_args_t;
typedef struct { int version; void *mpi_comm; init_args_t args; } init_attr_t;

#define N_NAMES 16
static const char *const names[N_NAMES] = {
    "nvshmemx_vendor_get_version_info", "nvshmemx_get_uniqueid", "nvshmemx_set_attr_uniqueid_args",
    "nvshmemx_hostlib_init_attr", "nvshmemx_hostlib_finalize", "nvshmem_my_pe", "nvshmem_n_pes",
    "nvshmem_align", "nvshmem_free", "nvshmem_ptr", "nvshmemx_barrier_all_on_stream",
    "nvshmemx_culibrary_init", "nvshmemx_culibrary_finalize", "", "", ""};
enum { VERSION, GET_UID, SET_UID, INIT, FINALIZE, MY_PE, N_PES, ALIGN, FREE, PTR, BARRIER,
       LIB_INIT, LIB_FINALIZE };

typedef struct block { struct block *next; char *base; size_t stride; } block;

static struct {
  int version[3];
  char unreachable[64];  /* 1 for each unreachable PE */
  int fail, fail_rc;     /* entry index, -1 for none */
  int calls[N_NAMES];
  int initialized, device, rank, count, libraries;
  void *libs[64];
  block *blocks;
  int uid_serial;
} st = {.fail = -1, .device = -1, .rank = -1, .count = -1};

static void parse_version(const char *v) {
  if (v && sscanf(v, "%d.%d.%d", &st.version[0], &st.version[1], &st.version[2]) == 3) return;
  st.version[0] = 3, st.version[1] = 4, st.version[2] = 5;
}

static void parse_unreachable(const char *list) {
  memset(st.unreachable, 0, sizeof st.unreachable);
  for (const char *p = list; p && *p;) {
    int pe = atoi(p);
    if (pe >= 0 && pe < 64) st.unreachable[pe] = 1;
    p = strchr(p, ',');
    if (p) p++;
  }
}

static void parse_fail(const char *spec) {
  st.fail = -1;
  st.fail_rc = 7;
  if (!spec || !*spec) return;
  size_t n = strcspn(spec, ":");
  for (int i = 0; i < N_NAMES; i++)
    if (names[i][0] && strlen(names[i]) == n && strncmp(names[i], spec, n) == 0) st.fail = i;
  if (spec[n] == ':') st.fail_rc = atoi(spec + n + 1);
}

API void fakenvshmem_set(const char *version, const char *unreachable, const char *fail) {
  if (version) parse_version(version);
  if (unreachable) parse_unreachable(unreachable);
  if (fail) parse_fail(fail);
}

API void fakenvshmem_reset(void) {
  memset(st.calls, 0, sizeof st.calls);
  parse_version(getenv("FAKENVSHMEM_VERSION"));
  parse_unreachable(getenv("FAKENVSHMEM_UNREACHABLE"));
  parse_fail(getenv("FAKENVSHMEM_FAIL"));
}

__attribute__((constructor)) static void at_load(void) { fakenvshmem_reset(); }

API int fakenvshmem_initialized(void) { return st.initialized; }
API int fakenvshmem_device(void) { return st.device; }
API int fakenvshmem_rank(void) { return st.rank; }
API int fakenvshmem_count(void) { return st.count; }
API int fakenvshmem_libraries(void) { return st.libraries; }
API int fakenvshmem_calls(const char *name) {
  for (int i = 0; i < N_NAMES; i++)
    if (names[i][0] && strcmp(names[i], name) == 0) return st.calls[i];
  return -1;
}
API int fakenvshmem_allocations(void) {
  int n = 0;
  for (block *b = st.blocks; b; b = b->next) n++;
  return n;
}

/* Counts the call; true when it is to fail. */
static int enter(int i) {
  st.calls[i]++;
  return st.fail == i;
}

/* A call before init: the real library aborts or misbehaves; the fake says so loudly. */
static void need_init(const char *name) {
  if (st.initialized) return;
  fprintf(stderr, "fakenvshmem: %s called before nvshmemx_hostlib_init_attr\n", name);
  abort();
}

API void nvshmemx_vendor_get_version_info(int *major, int *minor, int *patch) {
  enter(VERSION);
  if (major) *major = st.version[0];
  if (minor) *minor = st.version[1];
  if (patch) *patch = st.version[2];
}

API int nvshmemx_get_uniqueid(uid_t_ *id) {
  if (enter(GET_UID)) return st.fail_rc;
  if (!id || id->version != (1 << 16) + (int)sizeof(uid_t_)) return 2;
  memset(id->internal, 0, sizeof id->internal);
  snprintf(id->internal, sizeof id->internal, "fake-uid-%d", ++st.uid_serial);
  return 0;
}

API int nvshmemx_set_attr_uniqueid_args(int rank, int nranks, const uid_t_ *id, init_attr_t *attr) {
  if (enter(SET_UID)) return st.fail_rc;
  if (!id || !attr) return 2;
  attr->args.uid_args.id = (uid_t_ *)id;
  attr->args.uid_args.myrank = rank;
  attr->args.uid_args.nranks = nranks;
  return 0;
}

static int attr_ok(const init_attr_t *a) {
  return a && a->version == (2 << 16) + (int)sizeof(init_attr_t) &&
         a->args.version == (2 << 16) + (int)sizeof(init_args_t) &&
         a->args.uid_args.version == (1 << 16) + (int)sizeof(uid_args_t) && a->args.uid_args.id &&
         a->args.uid_args.id->version == (1 << 16) + (int)sizeof(uid_t_) &&
         strncmp(a->args.uid_args.id->internal, "fake-uid-", 9) == 0 &&
         a->args.uid_args.nranks >= 1 && a->args.uid_args.myrank >= 0 &&
         a->args.uid_args.myrank < a->args.uid_args.nranks && a->args.cuda_device_id >= 0;
}

API int nvshmemx_hostlib_init_attr(unsigned flags, init_attr_t *attr) {
  if (enter(INIT)) return st.fail_rc;
  if (st.initialized || flags != (1u << 3) || !attr_ok(attr)) return 3;
  st.initialized = 1;
  st.device = attr->args.cuda_device_id;
  st.rank = attr->args.uid_args.myrank;
  st.count = attr->args.uid_args.nranks;
  return 0;
}

API void nvshmemx_hostlib_finalize(void) {
  enter(FINALIZE);
  need_init("nvshmemx_hostlib_finalize");
  while (st.blocks) { /* finalize frees the symmetric heap */
    block *b = st.blocks;
    st.blocks = b->next;
    free(b->base);
    free(b);
  }
  st.initialized = 0;
}

API int nvshmem_my_pe(void) { enter(MY_PE); need_init("nvshmem_my_pe"); return st.rank; }
API int nvshmem_n_pes(void) { enter(N_PES); need_init("nvshmem_n_pes"); return st.count; }

/* What NVSHMEM 3.4.5 does with a size its heap cannot grow to (measured on an H100): it prints
 * this, faults in its own barrier and exits the process with 255. gclaunch must never get here. */
static void heap_death(size_t size) {
  const char *v = getenv("FAKENVSHMEM_HEAP_MAX");
  size_t max = v && *v ? (size_t)strtoull(v, NULL, 0) : (size_t)1 << 30;
  if (size <= max) return;
  fprintf(stderr, "fakenvshmem: nvshmem_align(%zu): allocate_physical_memory_to_heap failed "
          "(the real library then exits with 255)\n", size);
  fflush(stderr);
  _Exit(255);
}

API void *nvshmem_align(size_t align, size_t size) {
  if (enter(ALIGN)) return NULL;
  need_init("nvshmem_align");
  heap_death(size);
  size_t stride = (size + align - 1) / align * align;
  block *b = malloc(sizeof *b);
  char *base = b ? aligned_alloc(align, stride * (size_t)st.count) : NULL;
  if (!base) {
    free(b);
    return NULL;
  }
  memset(base, 0, stride * (size_t)st.count);
  *b = (block){st.blocks, base, stride};
  st.blocks = b;
  return base + stride * (size_t)st.rank;
}

static block *block_of(const void *p, size_t *offset) {
  for (block *b = st.blocks; b; b = b->next) {
    const char *mine = b->base + b->stride * (size_t)st.rank;
    if ((const char *)p >= mine && (const char *)p < mine + b->stride) {
      *offset = (size_t)((const char *)p - mine);
      return b;
    }
  }
  return NULL;
}

API void nvshmem_free(void *p) {
  enter(FREE);
  need_init("nvshmem_free");
  for (block **link = &st.blocks; *link; link = &(*link)->next)
    if ((*link)->base + (*link)->stride * (size_t)st.rank == p) {
      block *b = *link;
      *link = b->next;
      free(b->base);
      free(b);
      return;
    }
  fprintf(stderr, "fakenvshmem: nvshmem_free of %p, not a symmetric allocation\n", p);
  abort();
}

API void *nvshmem_ptr(const void *p, int pe) {
  size_t off = 0;
  if (enter(PTR)) return NULL;
  need_init("nvshmem_ptr");
  block *b = block_of(p, &off);
  if (!b || pe < 0 || pe >= st.count || (pe < 64 && st.unreachable[pe])) return NULL;
  return b->base + b->stride * (size_t)pe + off;
}

API void nvshmemx_barrier_all_on_stream(void *stream) {
  (void)stream;
  enter(BARRIER);
  need_init("nvshmemx_barrier_all_on_stream");
}

API int nvshmemx_culibrary_init(void *lib) {
  if (enter(LIB_INIT)) return st.fail_rc;
  if (!st.initialized) return 5; /* "NVSHMEM is not initialized. Unable to initialize" */
  for (int i = 0; i < st.libraries; i++)
    if (st.libs[i] == lib) return 4;
  if (!lib || st.libraries == 64) return 2;
  st.libs[st.libraries++] = lib;
  return 0;
}

API int nvshmemx_culibrary_finalize(void *lib) {
  if (enter(LIB_FINALIZE)) return st.fail_rc;
  for (int i = 0; i < st.libraries; i++)
    if (st.libs[i] == lib) {
      st.libs[i] = st.libs[--st.libraries];
      return 0;
    }
  return 2;
}
