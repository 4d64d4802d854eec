/* DLPack tensors into pointer slots: borrowed (set_dltensor) or taken (take_dlpack*).
 *
 * Ownership rule: a taken tensor's deleter runs exactly once. On success the slot owns it and
 * args.c releases it when the slot is overwritten or the args are destroyed; on any failure --
 * NULL args, a bad index, an unknown major version, a rejected tensor -- it runs before the call
 * returns. A failed call leaves the slot's value and its previous owner untouched. */
#include "args_internal.h"

#include <stdio.h>

static void release_versioned(void *owner) {
  DLManagedTensorVersioned *m = owner;
  if (m->deleter) m->deleter(m);
}

static void release_legacy(void *owner) {
  DLManagedTensor *m = owner;
  if (m->deleter) m->deleter(m);
}

/* Runs a failed take's deleter and returns s. The deleter may call back into gclaunch (and fail
 * there), so this thread's message is kept across it. */
static gcl_status release_after_failure(gcl_status s, gcl__release_fn release, void *owner) {
  char saved[GCL__MESSAGE_MAX];
  snprintf(saved, sizeof saved, "%s", gcl_last_error());
  release(owner);
  return gcl__fail(s, "%s", saved);
}

/* "parameter 2 'src'" when args knows index, else "parameter 2". */
static const char *label(char *buf, size_t cap, const gcl_args *args, size_t index) {
  gcl_param_info info;
  const gcl_layout *layout = args ? gcl_args_layout(args) : NULL;
  bool named = layout && index < gcl_layout_count(layout) &&
               gcl_layout_param_info(layout, index, &info) == GCL_OK;
  return gcl__param_label(buf, cap, index, named ? info.name : NULL);
}

/* Checks t for slot index and, when every check passed, stores it with its owner. */
static gcl_status set_tensor(gcl_args *args, size_t index, const DLTensor *t, uint64_t flags,
                             gcl__release_fn release, void *owner, const char *fn) {
  gcl_param_info info;
  int device_id = -1;
  uint64_t address = 0;
  gcl_status s = gcl__args_pointer_param(args, index, &info, &device_id, fn);
  if (s != GCL_OK) return s;
  if (!t) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: t is NULL", fn);
  s = gcl__dltensor_check(t, flags, &info, index, device_id, &address);
  if (s != GCL_OK) return s;
  gcl__args_store_pointer(args, index, address, release, owner);
  return GCL_OK;
}

gcl_status gcl_args_set_dltensor(gcl_args *args, size_t index, const DLTensor *t) {
  return set_tensor(args, index, t, 0, NULL, NULL, "gcl_args_set_dltensor");
}

gcl_status gcl_args_set_dltensor_flags(gcl_args *args, size_t index, const DLTensor *t,
                                       uint64_t dlpack_flags) {
  return set_tensor(args, index, t, dlpack_flags, NULL, NULL, "gcl_args_set_dltensor_flags");
}

gcl_status gcl_args_take_dlpack(gcl_args *args, size_t index, DLManagedTensorVersioned *t) {
  char where[96];
  if (!t) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_args_take_dlpack: t is NULL");
  /* Past a major version we do not know only the fields up to flags are stable: read nothing
   * else, just hand the tensor back to its producer. */
  if (t->version.major != DLPACK_MAJOR_VERSION) {
    gcl__fail(GCL_ERROR_TENSOR_VERSION, "%s: DLPack version %u.%u, expected major version %d",
              label(where, sizeof where, args, index), (unsigned)t->version.major,
              (unsigned)t->version.minor, DLPACK_MAJOR_VERSION);
    return release_after_failure(GCL_ERROR_TENSOR_VERSION, release_versioned, t);
  }
  gcl_status s = set_tensor(args, index, &t->dl_tensor, t->flags, release_versioned, t, "gcl_args_take_dlpack");
  if (s != GCL_OK) return release_after_failure(s, release_versioned, t);
  return GCL_OK;
}

/* The legacy struct cannot say read-only: it is taken as writable. */
gcl_status gcl_args_take_dlpack_legacy(gcl_args *args, size_t index, DLManagedTensor *t) {
  if (!t) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_args_take_dlpack_legacy: t is NULL");
  gcl_status s = set_tensor(args, index, &t->dl_tensor, 0, release_legacy, t, "gcl_args_take_dlpack_legacy");
  if (s != GCL_OK) return release_after_failure(s, release_legacy, t);
  return GCL_OK;
}
