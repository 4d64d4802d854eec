/* Driver errors: a failed CUresult named and turned into a gcl_status (gcl__cu_fail), and sticky
 * kernel faults. After a kernel fault the driver fails every later call of the process with the
 * same error -- launches, allocations, new events, even a new primary context (docs/facts.md
 * "Sticky faults") -- so gclaunch records the first one process-wide and answers every later
 * call with it, without going back to the driver. Reads the driver's function table
 * (driver_api.c), never calls driver.c: the loader calls this file, not the reverse. */
#include "cuda_internal.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

/* 0 until a fault; then 1 while the message is being written, 2 once it is readable. */
atomic_int gcl__fault_state;
static int fault_code;
static char fault_message[GCL__MESSAGE_MAX];
static atomic_bool uses_tensormaps;

/* The CUresults after which the process's CUDA state is lost: cuda.h says of each "this leaves
 * the process in an inconsistent state ... the process must be terminated and relaunched"
 * (CONTAINED, ILLEGAL_ADDRESS, LAUNCH_TIMEOUT, HARDWARE_STACK_ERROR, ILLEGAL_INSTRUCTION,
 * MISALIGNED_ADDRESS, INVALID_ADDRESS_SPACE, INVALID_PC, LAUNCH_FAILED, EXTERNAL_DEVICE), or
 * that the context "cannot be used anymore" (ASSERT). */
bool gcl__cu_sticky(CUresult r) {
  switch ((int)r) {
  case 226: case 700: case 702: case 710: case 714: case 715: case 716: case 717: case 718:
  case 719: case 911:
    return true;
  default:
    return false;
  }
}

void gcl__fault_note_tensormaps(void) {
  if (!atomic_load_explicit(&uses_tensormaps, memory_order_relaxed))
    atomic_store_explicit(&uses_tensormaps, true, memory_order_relaxed);
}

/* The TMA rule (docs/facts.md "TMA on the device"): the host cannot see device-side coordinates,
 * so name it. */
static const char *hint(CUresult r) {
  if (r != CUDA_ERROR_ILLEGAL_INSTRUCTION || !atomic_load(&uses_tensormaps)) return "";
  return ". This process uses tensor maps; likely cause: a TMA load/store whose innermost "
         "coordinate x element size is not a multiple of 16 bytes ends the kernel with "
         "CUDA_ERROR_ILLEGAL_INSTRUCTION (the maps themselves may be valid; the host cannot "
         "see device-side coordinates)";
}

gcl_status gcl__fault_record(CUresult r, const char *what) {
  int expected = 0;
  if (atomic_compare_exchange_strong(&gcl__fault_state, &expected, 1)) {
    const char *text = NULL;
    if (gcl__cu.cuGetErrorString) gcl__cu.cuGetErrorString(r, &text);
    fault_code = (int)r;
    snprintf(fault_message, sizeof fault_message,
             "%s: %s (%s): a kernel faulted; the process's CUDA state is lost (every later "
             "CUDA call fails), only a new process recovers%s",
             what, gcl__cu_error_name(r), text ? text : "no description", hint(r));
    atomic_store(&gcl__fault_state, 2);
  }
  while (atomic_load(&gcl__fault_state) != 2) {} /* another thread is writing the message */
  return gcl__fault_check();
}

gcl_status gcl__fault_check(void) {
  if (atomic_load_explicit(&gcl__fault_state, memory_order_relaxed) == 0) return GCL_OK;
  while (atomic_load(&gcl__fault_state) != 2) {}
  gcl__fail(GCL_ERROR_KERNEL_FAULT, "%s", fault_message);
  gcl__set_last_cuda_error(fault_code);
  return GCL_ERROR_KERNEL_FAULT;
}

const char *gcl__cu_error_name(CUresult r) {
  static _Thread_local char fallback[32];
  const char *name = NULL;
  if (gcl__cu.cuGetErrorName && gcl__cu.cuGetErrorName(r, &name) == CUDA_SUCCESS && name)
    return name;
  if (r == CUDA_ERROR_STUB_LIBRARY) return "CUDA_ERROR_STUB_LIBRARY";
  if (r == CUDA_ERROR_NO_DEVICE) return "CUDA_ERROR_NO_DEVICE";
  snprintf(fallback, sizeof fallback, "CUresult %d", (int)r);
  return fallback;
}

gcl_status gcl__cu_fail(CUresult r, const char *what_fmt, ...) {
  char what[1024];
  va_list ap;
  va_start(ap, what_fmt);
  vsnprintf(what, sizeof what, what_fmt, ap);
  va_end(ap);
  const char *text = NULL;
  if (gcl__cu.cuGetErrorString) gcl__cu.cuGetErrorString(r, &text);
  if (gcl__cu_sticky(r)) return gcl__fault_record(r, what);
  gcl_status s = GCL_ERROR_DRIVER;
  if (r == CUDA_ERROR_STUB_LIBRARY) s = GCL_ERROR_STUB_DRIVER;
  if (r == CUDA_ERROR_NO_DEVICE) s = GCL_ERROR_NO_DEVICE;
  if (r == CUDA_ERROR_OUT_OF_MEMORY) s = GCL_ERROR_OUT_OF_MEMORY;
  char capture[1024];
  gcl__capture_hint(r, capture, sizeof capture);
  gcl__fail(s, "%s: %s (%s)%s", what, gcl__cu_error_name(r), text ? text : "no description", capture);
  gcl__set_last_cuda_error((int)r);
  return s;
}
