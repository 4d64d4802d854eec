/* Modules attached to the PE: a module device-linked with NVSHMEM (it defines
 * nvshmemi_device_state_d) gets NVSHMEM's device state written into it by
 * nvshmemx_culibrary_init, in the PE's context, before any of its kernels may launch; each
 * kernel carries the answer (gcl_kernel.unattached), which kernel.c sets at lookup and launch.c
 * and graph.c read. The module floor: it calls the PE (pe.c) only through gcl__pe_hold and
 * gcl__pe_release, which hold the PE's lock around every NVSHMEM call made here and every write
 * of a module's `attached` and its kernels' marks, so that gcl_pe_stop cannot run in between
 * (it refuses while modules are attached: NVSHMEM would write into their memory). */
#include "nvshmem.h"

int gcl_module_uses_nvshmem(const gcl_module *mod) { return mod && mod->nvshmem ? 1 : 0; }

bool gcl__kernel_attached(const gcl_module *m, const gcl_context *ctx) {
  return !m->nvshmem || (m->attached && ctx == m->ctx);
}

gcl_status gcl__kernel_unattached(const gcl_kernel *k, const char *fn) {
  const gcl_module *m = k->mod;
  if (m->attached)
    return gcl__fail(GCL_ERROR_NOT_ATTACHED, "%s: kernel '%s' of module '%s' uses NVSHMEM: the "
                     "module is attached on device %d, the kernel was found on device %d (NVSHMEM's "
                     "state lives in the PE's context only)", fn, k->name, m->name,
                     m->ctx->device, k->ctx->device);
  return gcl__fail(GCL_ERROR_NOT_ATTACHED, "%s: kernel '%s' of module '%s' uses NVSHMEM and the "
                   "module is not attached (gcl_module_attach after gcl_pe_start); launched so it "
                   "would read NVSHMEM's unset device state (an illegal address)", fn, k->name,
                   m->name);
}

/* A failed NVSHMEM call: its name and return value. */
static gcl_status call_failed(const char *fn, const char *call, int rc) {
  return gcl__fail(GCL_ERROR_NVSHMEM, "%s: %s returned %d", fn, call, rc);
}

/* Marks the kernels of m found in its context attached or not. The PE held. */
static void mark_kernels(gcl_module *m) {
  for (gcl_kernel *k = m->kernels; k; k = k->next) k->unattached = !gcl__kernel_attached(m, k->ctx);
}

/* NVSHMEM's own rule: equal majors, the module's minor at most the host's. */
static gcl_status check_versions(const gcl_module *m) {
  int v[3];
  if (gcl_image_nvshmem_version(m->records, &v[0], &v[1], &v[2]) != GCL_OK) return GCL_OK;
  const int *h = gcl__nvshmem.version;
  if (v[0] == h[0] && v[1] <= h[1]) return GCL_OK;
  return gcl__fail(GCL_ERROR_NVSHMEM_VERSION, "gcl_module_attach: module '%s' was device-linked "
                   "with NVSHMEM %d.%d.%d, the host library '%s' is %d.%d.%d (the majors must be "
                   "equal and the module's minor at most the host's): rebuild it against the "
                   "host library's libnvshmem_device", m->name, v[0], v[1], v[2], gcl_nvshmem_path(),
                   h[0], h[1], h[2]);
}

/* pe: the PE's context (held), NULL when no PE is started. */
static gcl_status check_attach(const gcl_module *m, const gcl_context *pe) {
  if (!pe) return gcl__pe_not_started("gcl_module_attach");
  if (!m->nvshmem)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_module_attach: module '%s' does not use "
                     "NVSHMEM (it defines no nvshmemi_device_state_d: not device-linked with "
                     "libnvshmem_device)", m->name);
  if (m->ctx != pe)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_module_attach: module '%s' was loaded on "
                     "device %d, the PE runs on device %d: load it in the PE's context",
                     m->name, m->ctx->device, pe->device);
  return check_versions(m);
}

gcl_status gcl_module_attach(gcl_module *mod) {
  if (!mod) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_module_attach: mod is NULL");
  gcl_context *pe = gcl__pe_hold();
  gcl_status s = mod->attached ? GCL_OK : check_attach(mod, pe);
  if (s == GCL_OK && !mod->attached) s = gcl__context_bind(mod->ctx);
  if (s == GCL_OK && !mod->attached) {
    int rc = gcl__nvshmem.nvshmemx_culibrary_init(mod->lib);
    if (rc != 0) s = call_failed("gcl_module_attach", "nvshmemx_culibrary_init", rc);
    if (rc != 0) gcl__fail_append(" (module '"), gcl__fail_append(mod->name), gcl__fail_append("')");
  }
  int attached = 0;
  if (s == GCL_OK && !mod->attached) {
    mod->attached = true;
    attached = 1;
    mark_kernels(mod);
  }
  gcl__pe_release(attached);
  return s;
}

/* The PE held, mod attached (so a PE is started: gcl_pe_stop refuses while modules are). */
static gcl_status detach(gcl_module *mod) {
  gcl_status s = gcl__context_bind(mod->ctx);
  int rc = s == GCL_OK ? gcl__nvshmem.nvshmemx_culibrary_finalize(mod->lib) : 0;
  mod->attached = false; /* unattached either way: no launch may trust its state now */
  mark_kernels(mod);
  if (s == GCL_OK && rc != 0) s = call_failed("gcl_module_detach", "nvshmemx_culibrary_finalize", rc);
  return s;
}

gcl_status gcl_module_detach(gcl_module *mod) {
  if (!mod) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_module_detach: mod is NULL");
  gcl__pe_hold();
  gcl_status s = GCL_OK;
  int attached = 0;
  if (!mod->attached)
    s = gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_module_detach: module '%s' is not attached",
                  mod->name);
  else s = detach(mod), attached = -1;
  gcl__pe_release(attached);
  return s;
}

void gcl__module_detach_quiet(gcl_module *m) {
  gcl__pe_hold();
  int attached = 0;
  if (m->attached) detach(m), attached = -1;
  gcl__pe_release(attached);
}
