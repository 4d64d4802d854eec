/* context.c -- L2: making contexts, the default context of each device (kept by the module for
 * tensor maps of Args made on the CPU), and the context a layout's tensor maps are encoded in.
 * The Context type's methods (load, compile) are driver.c's. */
#include "gclpy.h"

gclpy_context *gclpy_context_new(gclpy_state *st, int device) {
  gcl_context *ctx = NULL;
  gcl_status s = gcl_context_create(device, &ctx);
  if (s != GCL_OK) return (gclpy_context *)gclpy_raise(st, s);
  gclpy_context *c = (gclpy_context *)gclpy_alloc(st->context_type);
  if (!c) return gcl_context_destroy(ctx), NULL;
  c->ctx = ctx, c->device = device;
  return c;
}

gclpy_context *gclpy_default_context(gclpy_state *st, int device) {
  PyObject *key = PyLong_FromLong(device);
  if (!key) return NULL;
  PyObject *c = PyDict_GetItemWithError(st->contexts, key);
  if (!c && !PyErr_Occurred() && (c = (PyObject *)gclpy_context_new(st, device))) {
    int rc = PyDict_SetItem(st->contexts, key, c);
    Py_DECREF(c); /* the dict keeps it for the module's life */
    if (rc < 0) c = NULL;
  }
  Py_DECREF(key);
  return (gclpy_context *)c;
}

gcl_context *gclpy_layout_context(gclpy_state *st, gclpy_layout *lay, int device) {
  if (lay->context) return ((gclpy_context *)lay->context)->ctx;
  gclpy_context *c = gclpy_default_context(st, device < 0 ? 0 : device);
  return c ? c->ctx : NULL;
}

gclpy_context *gclpy_context_or_default(gclpy_state *st, gclpy_context *c) {
  return c ? c : gclpy_default_context(st, 0);
}
