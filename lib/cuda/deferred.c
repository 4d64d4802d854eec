/* Releases a capturing thread may not make, kept until it may. While a stream of a thread
 * captures (mode THREAD_LOCAL), that thread's cuMemFree is refused with
 * CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and the refusal invalidates the capture (driver 580,
 * docs/graphs.md). A Buffer dropped or closed inside a `with stream.capture()` block would then
 * leak its memory and break the capture. So gcl_mem_free, gcl_module_destroy and
 * gcl_graph_destroy (cuGraphExecDestroy, and a table's cuEventSynchronize and cuMemFreeHost) on a
 * capturing thread hand the release here (as a function and its argument) instead of calling
 * the driver; the next call on that context from
 * a thread that does not capture (an allocation, a free, a synchronize, the end of the capture,
 * the context's destroy) makes it. One list for the process under a lock: entries are rare and
 * few (one per release made during a capture). Calls the driver table only. */
#include "cuda_internal.h"

#include <pthread.h>
#include <stdatomic.h>

typedef struct pending {
  gcl_context *ctx;   /* whose release it is (borrowed: destroy drains it first) */
  void (*fn)(void *); /* the release: cuMemFree, cuLibraryUnload, a graph's, ... of arg */
  void *arg;
  struct pending *next;
} pending;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pending *head;
static atomic_size_t count; /* entries on the list: the drain's lock-free first look */

gcl_status gcl__defer_call(gcl_context *ctx, void (*fn)(void *), void *arg) {
  pending *p = gcl__calloc(1, sizeof *p);
  if (!p) return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "deferring a release during a capture");
  p->ctx = ctx, p->fn = fn, p->arg = arg;
  pthread_mutex_lock(&lock);
  p->next = head;
  head = p;
  atomic_fetch_add(&count, 1);
  pthread_mutex_unlock(&lock);
  return GCL_OK;
}

/* The entries of ctx, taken off the list (in the order they were made). */
static pending *take(const gcl_context *ctx) {
  pending *mine = NULL;
  pthread_mutex_lock(&lock);
  for (pending **p = &head; *p;) {
    pending *e = *p;
    if (e->ctx != ctx) {
      p = &e->next;
      continue;
    }
    *p = e->next;
    atomic_fetch_sub(&count, 1);
    e->next = mine;
    mine = e;
  }
  pthread_mutex_unlock(&lock);
  return mine;
}

/* Makes (run) or drops the releases of ctx, which is current. */
static void finish(pending *e, bool run) {
  while (e) {
    pending *next = e->next;
    /* ctx is current (the callers bind it); a failure here has no caller to tell, and
     * retrying a release the driver refused for another reason would not succeed later.
     * Unrun, what it holds is left: its driver calls would break the capture. */
    if (run) e->fn(e->arg);
    gcl__free(e);
    e = next;
  }
}

void gcl__deferred_drain(gcl_context *ctx) {
  if (atomic_load_explicit(&count, memory_order_relaxed) == 0 || gcl__capture_mine()) return;
  finish(take(ctx), true);
}

void gcl__deferred_destroy(gcl_context *ctx) {
  if (atomic_load_explicit(&count, memory_order_relaxed) == 0) return;
  /* Still capturing on this thread: the releases cannot be made; the context's memory and
   * libraries go with the primary context when its last holder releases it. */
  finish(take(ctx), !gcl__capture_mine());
}
