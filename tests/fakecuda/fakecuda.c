/* libfakecuda.so, part 1: its state, fault injection and the control API tests call (see
 * fakecuda.h). The driver entry points are in fakecuda_entries.c. */
#include "fakecuda_internal.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *const fake_entry_names[E_COUNT] = {
#define X_NAME(name, version) #name,
    FAKE_ENTRIES(X_NAME)
#undef X_NAME
};

pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;
atomic_long fake_calls[E_COUNT + 1];
atomic_long fake_failed[E_COUNT + 1];
fault fake_faults[E_COUNT], fake_fault_all;
int fake_hidden[E_COUNT];
atomic_int fake_lost_error[FAKE_MAX_DEVICES];
atomic_int fake_device_count = 1;
long fake_retains[FAKE_MAX_DEVICES];
atomic_int fake_initialized;
atomic_int fake_driver_version = 13000;
atomic_int fake_tmap_bit85;
atomic_int fake_tmap_layout;

FAKE_API void fakecuda_set_driver_version(int version) { atomic_store(&fake_driver_version, version); }
FAKE_API void fakecuda_set_tmap_bit85(int mode) { atomic_store(&fake_tmap_bit85, mode); }
FAKE_API void fakecuda_set_tmap_layout(int mode) { atomic_store(&fake_tmap_layout, mode); }
kernel_table *fake_tables;
size_t fake_table_count;
int fake_default_attrs[CU_FUNC_ATTRIBUTE_MAX];
long fake_live[LIVE_COUNT];
fake_alloc *fake_allocs;
long fake_launches, fake_libraries;
long fake_programmatic_edges;
uint64_t fake_digest_sum;
fakecuda_launch fake_last_launch, fake_last_launch_dev[FAKE_MAX_DEVICES];
long fake_launches_dev[FAKE_MAX_DEVICES];
fakecuda_library fake_last_lib;
int fake_primary_context[FAKE_MAX_DEVICES];
_Thread_local CUcontext fake_current;

int fake_lookup_entry(const char *name) {
  for (int i = 0; name && i < E_COUNT; i++)
    if (strcmp(fake_entry_names[i], name) == 0) return i;
  return -1;
}

/* The errors after which a real context is unusable until the process exits. */
static int is_sticky(int e) { return e == 700 || (e >= 714 && e <= 719); }

/* Entry points that give something back: they keep working in the lost state, so that a test
 * can still see every retain, allocation and library released. */
static int is_release(int e) {
  return e == E_cuDevicePrimaryCtxRelease || e == E_cuMemFree || e == E_cuLibraryUnload ||
         e == E_cuStreamDestroy || e == E_cuEventDestroy || e == E_cuGraphDestroy ||
         e == E_cuGraphExecDestroy || e == E_cuMemFreeHost;
}

/* One fault slot: the error to return now, or 0. Called under fake_lock. */
static int fire(fault *f) {
  if (!f->error) return 0;
  if (f->after > 0) {
    f->after--;
    return 0;
  }
  int e = f->error;
  if (f->once) f->error = 0;
  return e;
}

int fake_context_device(CUcontext c) {
  for (int d = 0; c && d < FAKE_MAX_DEVICES; d++)
    if (c == (CUcontext)&fake_primary_context[d]) return d;
  return -1;
}

int fake_device_valid(CUdevice d) { return d >= 0 && d < atomic_load(&fake_device_count); }

/* The sticky error of device (-1: of the first lost device), 0 if none. */
static int lost_error(int device) {
  for (int d = 0; d < FAKE_MAX_DEVICES; d++) {
    int err = atomic_load(&fake_lost_error[d]);
    if (err && (device < 0 || device == d)) return err;
  }
  return 0;
}

static void lose(int device, int err) {
  for (int d = 0; d < FAKE_MAX_DEVICES; d++)
    if (device < 0 || device == d) atomic_store(&fake_lost_error[d], err);
}

static atomic_int gate_entry = -1; /* fakecuda_gate's entry, -1: none */
static atomic_bool gate_open;
static atomic_int gate_timeouts; /* calls that left the gate by its 10 s, not by opening */

/* A call of the gated entry waits here (no lock held) until the gate opens or 10 s pass. */
static void gate_wait(int e) {
  if (atomic_load(&gate_entry) != e) return;
  struct timespec ms = {0, 1000000};
  for (int i = 0; i < 10000 && !atomic_load(&gate_open); i++) nanosleep(&ms, NULL);
  if (!atomic_load(&gate_open)) atomic_fetch_add(&gate_timeouts, 1);
}

FAKE_API int fakecuda_gate(const char *entry) {
  int e = entry ? fake_lookup_entry(entry) : -1;
  if (entry && e < 0) return -1;
  atomic_store(&gate_open, false);
  atomic_store(&gate_timeouts, 0);
  atomic_store(&gate_entry, e);
  return 0;
}

FAKE_API int fakecuda_gate_open(void) {
  atomic_store(&gate_open, true);
  return atomic_load(&gate_timeouts);
}

CUresult fake_enter(int e, int device) {
  atomic_fetch_add(&fake_calls[e], 1);
  gate_wait(e);
  if (e == E_cuGetErrorName || e == E_cuGetErrorString) return CUDA_SUCCESS;
  if (device == FAKE_DEV_CURRENT) device = fake_context_device(fake_current);
  int err = lost_error(device);
  if (err && !is_release(e)) return (CUresult)err;
  pthread_mutex_lock(&fake_lock);
  err = fire(&fake_faults[e]);
  if (!err) err = fire(&fake_fault_all);
  if (is_sticky(err)) lose(device, err);
  pthread_mutex_unlock(&fake_lock);
  /* Like the real driver: nothing but cuInit and cuDriverGetVersion before cuInit. */
  if (!err && !atomic_load(&fake_initialized) && e != E_cuInit && e != E_cuDriverGetVersion)
    err = CUDA_ERROR_NOT_INITIALIZED;
  return fake_result(e, (CUresult)err);
}

/* --- control API ----------------------------------------------------------------------------- */

static void set_fault(const char *entry, int error, int after, int once) {
  fault f = {error, after > 0 ? after : 0, once};
  int e = fake_lookup_entry(entry);
  bool all = entry && strcmp(entry, "*") == 0;
  if (!all && e < 0) {
    fprintf(stderr, "fakecuda: no entry point '%s' to fail\n", entry ? entry : "(null)");
    return;
  }
  pthread_mutex_lock(&fake_lock);
  if (all) fake_fault_all = f;
  else fake_faults[e] = f;
  pthread_mutex_unlock(&fake_lock);
}

FAKE_API void fakecuda_fail(const char *entry, int err, int after) { set_fault(entry, err, after, 0); }
FAKE_API void fakecuda_fail_once(const char *entry, int err, int after) { set_fault(entry, err, after, 1); }
FAKE_API void fakecuda_restore(void) { lose(-1, 0); }
FAKE_API int fakecuda_lost(void) { return lost_error(-1); }
FAKE_API int fakecuda_lost_on(int device) {
  return device >= 0 && device < FAKE_MAX_DEVICES ? lost_error(device) : 0;
}

FAKE_API int fakecuda_set_devices(int count) {
  if (count < 1 || count > FAKE_MAX_DEVICES) return -1;
  atomic_store(&fake_device_count, count);
  return 0;
}

FAKE_API void fakecuda_hide(const char *entry, int hide) {
  int e = fake_lookup_entry(entry);
  pthread_mutex_lock(&fake_lock);
  if (e >= 0) fake_hidden[e] = hide;
  pthread_mutex_unlock(&fake_lock);
}

static void default_attributes(void) {
  memset(fake_default_attrs, 0, sizeof fake_default_attrs);
  fake_default_attrs[CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK] = 1024;
  fake_default_attrs[CU_FUNC_ATTRIBUTE_NUM_REGS] = 32;
  fake_default_attrs[CU_FUNC_ATTRIBUTE_PTX_VERSION] = 90;
  fake_default_attrs[CU_FUNC_ATTRIBUTE_BINARY_VERSION] = 90;
  fake_default_attrs[CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES] = 48 * 1024;
}

FAKE_API void fakecuda_reset(void) {
  pthread_mutex_lock(&fake_lock);
  memset(fake_faults, 0, sizeof fake_faults);
  memset(&fake_fault_all, 0, sizeof fake_fault_all);
  memset(fake_hidden, 0, sizeof fake_hidden);
  free(fake_tables);
  fake_tables = NULL;
  fake_table_count = 0;
  default_attributes();
  fake_launches = fake_libraries = fake_programmatic_edges = 0;
  memset(fake_launches_dev, 0, sizeof fake_launches_dev);
  fake_digest_sum = 0;
  for (int i = 0; i <= E_COUNT; i++) atomic_store(&fake_calls[i], 0);
  for (int i = 0; i <= E_COUNT; i++) atomic_store(&fake_failed[i], 0);
  pthread_mutex_unlock(&fake_lock);
}

/* The table called name for device (-1: all), appended when missing. NULL when out of memory.
 * Under fake_lock. */
static kernel_table *table_slot(const char *name, int device) {
  for (size_t i = 0; i < fake_table_count; i++)
    if (strcmp(fake_tables[i].name, name) == 0 && fake_tables[i].device == device)
      return &fake_tables[i];
  kernel_table *grown = realloc(fake_tables, (fake_table_count + 1) * sizeof *fake_tables);
  if (!grown) return NULL;
  fake_tables = grown;
  kernel_table *t = &fake_tables[fake_table_count++];
  snprintf(t->name, sizeof t->name, "%s", name);
  t->device = device;
  return t;
}

FAKE_API int fakecuda_set_params_on(int device, const char *name, size_t count,
                                    const size_t *offsets, const size_t *sizes) {
  if (!name || strlen(name) >= sizeof fake_tables->name || count > FAKECUDA_MAX_PARAMS) return -1;
  if ((count && (!offsets || !sizes)) || device < -1 || device >= FAKE_MAX_DEVICES) return -1;
  pthread_mutex_lock(&fake_lock);
  kernel_table *t = table_slot(name, device);
  if (t) {
    t->count = count;
    for (size_t i = 0; i < count; i++) {
      t->offsets[i] = offsets[i];
      t->sizes[i] = sizes[i];
    }
  }
  pthread_mutex_unlock(&fake_lock);
  return t ? 0 : -1;
}

FAKE_API int fakecuda_set_params(const char *name, size_t count, const size_t *offsets,
                                 const size_t *sizes) {
  return fakecuda_set_params_on(-1, name, count, offsets, sizes);
}

FAKE_API void fakecuda_set_func_attribute(int attr, int value) {
  pthread_mutex_lock(&fake_lock);
  if (attr >= 0 && attr < CU_FUNC_ATTRIBUTE_MAX) fake_default_attrs[attr] = value;
  pthread_mutex_unlock(&fake_lock);
}

FAKE_API long fakecuda_calls(const char *entry) {
  if (entry && strcmp(entry, "cuGetProcAddress_v2") == 0) return atomic_load(&fake_calls[E_COUNT]);
  if (entry && strcmp(entry, "*") == 0) { /* the calls a "*" fault counts */
    long n = 0;
    for (int i = 0; i < E_COUNT; i++)
      if (i != E_cuGetErrorName && i != E_cuGetErrorString) n += atomic_load(&fake_calls[i]);
    return n;
  }
  int e = fake_lookup_entry(entry);
  return e < 0 ? -1 : atomic_load(&fake_calls[e]);
}

FAKE_API long fakecuda_failed_calls(const char *entry) {
  if (entry && strcmp(entry, "*") == 0) {
    long n = 0;
    for (int i = 0; i < E_COUNT; i++) n += atomic_load(&fake_failed[i]);
    return n;
  }
  int e = fake_lookup_entry(entry);
  return e < 0 ? -1 : atomic_load(&fake_failed[e]);
}

FAKE_API long fakecuda_live(const char *kind) {
  static const char *const names[LIVE_COUNT] = {"retain", "memory", "library", "stream",
                                                "event", "host", "graph", "exec"};
  long v = -1;
  pthread_mutex_lock(&fake_lock);
  for (int i = 0; kind && i < LIVE_COUNT; i++)
    if (strcmp(kind, names[i]) == 0) v = fake_live[i];
  pthread_mutex_unlock(&fake_lock);
  return v;
}

FAKE_API int fakecuda_current_device(void) { return fake_context_device(fake_current); }

FAKE_API void fakecuda_unbind(void) { fake_current = NULL; }

FAKE_API long fakecuda_programmatic_edges(void) {
  pthread_mutex_lock(&fake_lock);
  long n = fake_programmatic_edges;
  pthread_mutex_unlock(&fake_lock);
  return n;
}

FAKE_API long fakecuda_launch_count(void) {
  pthread_mutex_lock(&fake_lock);
  long n = fake_launches;
  pthread_mutex_unlock(&fake_lock);
  return n;
}

FAKE_API int fakecuda_last_launch(fakecuda_launch *out) {
  pthread_mutex_lock(&fake_lock);
  int rc = fake_launches ? 0 : -1;
  if (fake_launches && out) *out = fake_last_launch;
  pthread_mutex_unlock(&fake_lock);
  return rc;
}

FAKE_API long fakecuda_launch_count_on(int device) {
  if (device < 0 || device >= FAKE_MAX_DEVICES) return -1;
  pthread_mutex_lock(&fake_lock);
  long n = fake_launches_dev[device];
  pthread_mutex_unlock(&fake_lock);
  return n;
}

FAKE_API int fakecuda_last_launch_on(int device, fakecuda_launch *out) {
  if (device < 0 || device >= FAKE_MAX_DEVICES) return -1;
  pthread_mutex_lock(&fake_lock);
  int rc = fake_launches_dev[device] ? 0 : -1;
  if (rc == 0 && out) *out = fake_last_launch_dev[device];
  pthread_mutex_unlock(&fake_lock);
  return rc;
}

FAKE_API uint64_t fakecuda_digest(const void *data, size_t n) {
  const unsigned char *p = data;
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

FAKE_API uint64_t fakecuda_launch_digest(void) {
  pthread_mutex_lock(&fake_lock);
  uint64_t d = fake_digest_sum;
  pthread_mutex_unlock(&fake_lock);
  return d;
}

FAKE_API long fakecuda_library_count(void) {
  pthread_mutex_lock(&fake_lock);
  long n = fake_libraries;
  pthread_mutex_unlock(&fake_lock);
  return n;
}

FAKE_API int fakecuda_last_library(fakecuda_library *out) {
  pthread_mutex_lock(&fake_lock);
  int rc = fake_libraries ? 0 : -1;
  if (fake_libraries && out) *out = fake_last_lib;
  pthread_mutex_unlock(&fake_lock);
  return rc;
}

/* FAKECUDA_PARAMS="name[@D]=off/size,off/size,...[;...]": kernel tables for every device (or
 * device D only), for programs that cannot call fakecuda_set_params (the CLI). */
static void params_from_env(void) {
  const char *env = getenv("FAKECUDA_PARAMS");
  char buf[4096];
  snprintf(buf, sizeof buf, "%s", env ? env : "");
  char *save = NULL;
  for (char *item = strtok_r(buf, ";", &save); item; item = strtok_r(NULL, ";", &save)) {
    char *eq = strchr(item, '=');
    if (!eq) continue;
    *eq = 0;
    size_t off[64], size[64], n = 0;
    for (char *p = eq + 1; *p && n < 64; n++) {
      off[n] = strtoul(p, &p, 10);
      size[n] = *p == '/' ? strtoul(p + 1, &p, 10) : 0;
      if (*p == ',') p++;
    }
    char *at = strchr(item, '@'); /* name@D: device D only */
    int device = at ? atoi(at + 1) : -1;
    if (at) *at = 0;
    fakecuda_set_params_on(device, item, n, off, size);
  }
}

/* FAKECUDA_FAIL="entry:error[:after],...": faults from the first call on, for programs that
 * cannot call fakecuda_fail themselves (the CLI). */
__attribute__((constructor)) static void fake_load(void) {
  default_attributes();
  const char *devices = getenv("FAKECUDA_DEVICES"); /* FAKECUDA_DEVICES=2: two devices */
  if (devices && fakecuda_set_devices(atoi(devices)) != 0)
    fprintf(stderr, "fakecuda: FAKECUDA_DEVICES=%s ignored (1 or %d)\n", devices, FAKE_MAX_DEVICES);
  params_from_env();
  const char *version = getenv("FAKECUDA_DRIVER_VERSION");
  if (version) atomic_store(&fake_driver_version, atoi(version));
  const char *env = getenv("FAKECUDA_FAIL");
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", env ? env : "");
  char *save = NULL;
  for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
    char *colon = strchr(item, ':');
    if (!colon) continue;
    *colon = 0;
    char *rest = NULL;
    int err = (int)strtol(colon + 1, &rest, 10);
    int after = rest && *rest == ':' ? atoi(rest + 1) : 0;
    set_fault(item, err, after, 0);
  }
}
