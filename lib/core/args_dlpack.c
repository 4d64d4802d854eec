/* DLPack tensors into pointer fields (a pointer parameter is a field too): borrowed
 * (set_dltensor) or taken (take_dlpack*).
 *
 * Ownership rule: a taken tensor's deleter runs exactly once. On success the field's owner slot
 * owns it and args.c releases it when the field (or anything containing it) is overwritten or the
 * args are destroyed; on any failure -- NULL args, a bad index or field, an unknown major version,
 * a rejected tensor -- it runs before the call returns. A failed call leaves the field's value and
 * its previous owner untouched. */
#include "args_internal.h"
#include "layout_internal.h"

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

/* Checks t for field f and, when every check passed, stores it with its owner. */
static gcl_status set_tensor(gcl_args *args, const gcl_field *f, const DLTensor *t, uint64_t flags,
                             gcl__release_fn release, void *owner, const char *fn) {
  gcl_param_info info;
  int device_id = -1;
  uint64_t address = 0;
  char who[512];
  gcl_status s = gcl__args_pointer_field(args, f, fn, &info, &device_id);
  if (s != GCL_OK) return s;
  if (!t) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: t is NULL", fn);
  s = gcl__dltensor_check_as(t, flags, &info, gcl__field_label(f, who, sizeof who), device_id,
                             &address);
  if (s != GCL_OK) return s;
  gcl__args_store_field_pointer(args, f, address, release, owner);
  return GCL_OK;
}

gcl_status gcl_args_set_field_dltensor_flags(gcl_args *args, const gcl_field *field,
                                             const DLTensor *t, uint64_t dlpack_flags) {
  return set_tensor(args, field, t, dlpack_flags, NULL, NULL, "gcl_args_set_field_dltensor_flags");
}

/* An unknown major version: only the fields up to flags are stable, so read nothing else and
 * hand the tensor back to its producer. who names the target. */
static gcl_status refuse_version(DLManagedTensorVersioned *t, const char *who) {
  gcl__fail(GCL_ERROR_TENSOR_VERSION, "%s: DLPack version %u.%u, expected major version %d", who,
            (unsigned)t->version.major, (unsigned)t->version.minor, DLPACK_MAJOR_VERSION);
  return release_after_failure(GCL_ERROR_TENSOR_VERSION, release_versioned, t);
}

static gcl_status take_versioned(gcl_args *args, const gcl_field *f, DLManagedTensorVersioned *t,
                                 const char *fn) {
  if (!f) return release_after_failure(GCL_ERROR_INVALID_ARGUMENT, release_versioned, t);
  gcl_status s = set_tensor(args, f, &t->dl_tensor, t->flags, release_versioned, t, fn);
  if (s != GCL_OK) return release_after_failure(s, release_versioned, t);
  return GCL_OK;
}

/* The legacy struct cannot say read-only: it is taken as writable. */
static gcl_status take_legacy(gcl_args *args, const gcl_field *f, DLManagedTensor *t, const char *fn) {
  if (!t) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: t is NULL", fn);
  if (!f) return release_after_failure(GCL_ERROR_INVALID_ARGUMENT, release_legacy, t);
  gcl_status s = set_tensor(args, f, &t->dl_tensor, 0, release_legacy, t, fn);
  if (s != GCL_OK) return release_after_failure(s, release_legacy, t);
  return GCL_OK;
}

gcl_status gcl_args_take_field_dlpack(gcl_args *args, const gcl_field *field,
                                      DLManagedTensorVersioned *t) {
  const char *fn = "gcl_args_take_field_dlpack";
  if (!t) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: t is NULL", fn);
  if (t->version.major != DLPACK_MAJOR_VERSION) {
    char who[512];
    bool ok = args && field && gcl__f_layout(field) == gcl_args_layout(args) &&
              field->param < gcl_layout_count(gcl_args_layout(args));
    return refuse_version(t, ok ? gcl__field_label(field, who, sizeof who) : fn);
  }
  if (!args || !field) {
    gcl__fail_null(fn, 2, "args", (const void *)args, "field", (const void *)field);
    return release_after_failure(GCL_ERROR_INVALID_ARGUMENT, release_versioned, t);
  }
  return take_versioned(args, field, t, fn);
}

gcl_status gcl_args_take_field_dlpack_legacy(gcl_args *args, const gcl_field *field,
                                             DLManagedTensor *t) {
  if (t && (!args || !field)) {
    gcl__fail_null("gcl_args_take_field_dlpack_legacy", 2, "args", (const void *)args, "field",
                   (const void *)field);
    return release_after_failure(GCL_ERROR_INVALID_ARGUMENT, release_legacy, t);
  }
  return take_legacy(args, field, t, "gcl_args_take_field_dlpack_legacy");
}
