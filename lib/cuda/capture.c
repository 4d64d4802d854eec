/* The captures of each thread: which gclaunch streams are between gcl_graph_capture_begin and
 * _end, and on which thread each began. gclaunch captures in mode THREAD_LOCAL: while a stream
 * of a thread captures, that thread's cuMemAlloc, cuEventQuery, cuEventSynchronize,
 * cuStreamSynchronize and graph instantiation fail with CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
 * (driver 580, docs/graphs.md). A driver failure of that kind (gcl__cu_fail) then names the
 * streams this thread captures on and how to end them, instead of a bare CUresult. One list for
 * the process under a lock: begin, end and destroy are rare, and a failure's message reads it.
 * A leaf: it reads the streams' fields and calls no other file. */
#include "cuda_internal.h"

#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static gcl_stream *head;        /* capturing streams, linked through capture_next */
static _Thread_local char self; /* its address names the calling thread */

void gcl__capture_note(gcl_stream *s) {
  pthread_mutex_lock(&lock);
  s->capture_thread = &self;
  s->capture_next = head;
  head = s;
  pthread_mutex_unlock(&lock);
}

void gcl__capture_forget(gcl_stream *s) {
  pthread_mutex_lock(&lock);
  for (gcl_stream **p = &head; *p; p = &(*p)->capture_next)
    if (*p == s) {
      *p = s->capture_next;
      break;
    }
  s->capture_next = NULL, s->capture_thread = NULL;
  pthread_mutex_unlock(&lock);
}

bool gcl__capture_mine(void) {
  bool mine = false;
  pthread_mutex_lock(&lock);
  for (gcl_stream *s = head; s && !mine; s = s->capture_next) mine = s->capture_thread == &self;
  pthread_mutex_unlock(&lock);
  return mine;
}

/* Up to 4 of this thread's capturing streams into out ("gcl_stream 0x.. (CUstream 0x.., device
 * 0)"); how many there are. */
static size_t list_mine(char *out, size_t n) {
  size_t count = 0, used = 0;
  out[0] = 0;
  pthread_mutex_lock(&lock);
  for (gcl_stream *s = head; s; s = s->capture_next) {
    if (s->capture_thread != &self) continue;
    if (count++ < 4 && used < n)
      used += (size_t)snprintf(out + used, n - used, "%sgcl_stream %p (CUstream %p, device %d)",
                               count > 1 ? ", " : "", (void *)s, (void *)s->stream, s->ctx->device);
  }
  pthread_mutex_unlock(&lock);
  return count;
}

void gcl__capture_hint(CUresult r, char *out, size_t n) {
  out[0] = 0;
  bool capture_error = (int)r >= 900 && (int)r <= 908;
  if (!capture_error || n == 0) return;
  char streams[512];
  size_t mine = list_mine(streams, sizeof streams);
  if (mine)
    snprintf(out, n, ". This thread is capturing a graph on %zu gclaunch stream%s: %s%s; end the "
             "capture first (gcl_graph_capture_end; Python: stream.end_capture() or leave the "
             "`with stream.capture()` block). While a stream of this thread captures, this thread "
             "may not allocate device memory, query or synchronize events or streams, or "
             "instantiate graphs (capture mode THREAD_LOCAL, docs/graphs.md)",
             mine, mine > 1 ? "s" : "", streams, mine > 4 ? ", ..." : "");
  else if (r == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED || r == CUDA_ERROR_STREAM_CAPTURE_IMPLICIT)
    snprintf(out, n, ". No gclaunch stream of this thread is capturing: a capture begun outside "
             "gclaunch on this thread (or one in global mode on another thread) refuses the call");
}
