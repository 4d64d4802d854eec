/* values.c -- L6: launches given a sequence of values (k.launch(grid, block, [a, b, p, n])).
 *
 * The values go into a gclaunch.Args the kernel keeps (its scratch), parameter by parameter.
 * The first time, and whenever a value is not plain, through convert.c's table: the library's
 * setters check and write it. A parameter whose last value was plain -- an exact int into an
 * integer or pointer parameter, an exact float or int into f32/f64, a bool into bool, a
 * gclaunch.Buffer into a pointer -- then takes the next plain value straight into the packed bytes
 * of the scratch Args, after the same checks the setter makes (the C type's range, a pointer's
 * alignment, an open Buffer): its leaf holds no tensor and no keep entry, and its set state does
 * not change, so writing the bytes is all the setter would do. Anything else (a value out of
 * range, another type, a tensor) goes through the table, which sets it or refuses it in the
 * library's words. No allocation, no attribute look-up, no Python call per value. And a plain
 * parameter given the very int or float object of its last launch (constants, the same pointer
 * ints: most of a relaunch's values) is not read again: its bytes already hold it (the plan keeps
 * that object alive, so its address names no other value). */
#include "gclpy.h"

#include <math.h>
#include <string.h>

enum { P_SLOW, P_SIGNED, P_UNSIGNED, P_BOOL, P_F32, P_F64, P_POINTER };

/* How parameter f takes a plain value (P_SLOW: always through the table). */
static void plan_param(gclpy_plain *p, const gclpy_fieldref *f) {
  p->offset = f->field.offset, p->size = (uint8_t)f->field.size, p->align = 1;
  switch (f->conv) {
  case GCLPY_CONV_I8: case GCLPY_CONV_I16: case GCLPY_CONV_I32: case GCLPY_CONV_I64:
    p->kind = P_SIGNED; break;
  case GCLPY_CONV_U8: case GCLPY_CONV_U16: case GCLPY_CONV_U32: case GCLPY_CONV_U64:
    p->kind = P_UNSIGNED; break;
  case GCLPY_CONV_BOOL: p->kind = P_BOOL; break;
  case GCLPY_CONV_F32: p->kind = P_F32; break;
  case GCLPY_CONV_F64: p->kind = P_F64; break;
  case GCLPY_CONV_POINTER:
    p->kind = f->field.size == 8 ? P_POINTER : P_SLOW;
    p->align = f->field.info.pointee_align > 1 ? f->field.info.pointee_align : 1;
    break;
  default: p->kind = P_SLOW;
  }
  if (p->kind != P_SLOW && p->kind != P_POINTER && p->size != gcl_scalar_size(f->field.info.scalar))
    p->kind = P_SLOW;
  unsigned bits = p->kind == P_SIGNED || p->kind == P_UNSIGNED || p->kind == P_POINTER ? 8u * p->size : 0;
  p->lo = p->kind == P_SIGNED ? (bits == 64 ? INT64_MIN : -(int64_t)(1ULL << (bits - 1))) : 0;
  p->hi = bits == 0 ? 0 : p->kind == P_SIGNED ? (bits == 64 ? INT64_MAX : (1ULL << (bits - 1)) - 1)
        : bits == 64 ? UINT64_MAX : (1ULL << bits) - 1;
  if ((p->align & (p->align - 1)) != 0) p->kind = P_SLOW; /* not a power of two: the table checks */
}

gclpy_values *gclpy_values_new(gclpy_layout *lay) {
  size_t n = lay->nparams;
  gclpy_values *v = PyMem_Calloc(1, sizeof *v + n * sizeof v->params[0]);
  if (!v) return (gclpy_values *)PyErr_NoMemory();
  v->count = n;
  for (size_t i = 0; i < n; i++) plan_param(&v->params[i], lay->params[i]);
  return v;
}

/* An integer in [p->lo, p->hi] from an exact int: 0, or 1 (out of range: the table raises). */
static int int_bits(PyObject *v, const gclpy_plain *p, uint64_t *out) {
  int overflow = 0;
  long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
  if (overflow == 0 && !(x == -1 && PyErr_Occurred())) {
    if (x < p->lo || (x > 0 && (uint64_t)x > p->hi)) return 1;
    return *out = (uint64_t)x, 0;
  }
  if (overflow == 0) PyErr_Clear();
  if (overflow <= 0 || p->hi <= INT64_MAX) return 1;
  unsigned long long u = PyLong_AsUnsignedLongLong(v); /* u64 and pointers past 2**63 */
  if (u == (unsigned long long)-1 && PyErr_Occurred()) return PyErr_Clear(), 1;
  return *out = u, 0;
}

static void put(uint8_t *bytes, const gclpy_plain *p, uint64_t bits) {
  uint8_t *at = bytes + p->offset;
  switch (p->size) {
  case 1: { uint8_t b = (uint8_t)bits; memcpy(at, &b, 1); break; }
  case 2: { uint16_t b = (uint16_t)bits; memcpy(at, &b, 2); break; }
  case 4: { uint32_t b = (uint32_t)bits; memcpy(at, &b, 4); break; }
  default: memcpy(at, &bits, 8);
  }
}

/* A float for an f32/f64 parameter: an exact float, or an exact int (rounded as float(v)). 0, or 1
 * (not plain, or finite and out of f32's range: the table raises). */
static int float_bits(PyObject *v, const gclpy_plain *p, uint64_t *out) {
  double d;
  if (PyFloat_CheckExact(v)) d = PyFloat_AsDouble(v);
  else if (!PyLong_CheckExact(v)) return 1;
  else if ((d = PyLong_AsDouble(v)) == -1.0 && PyErr_Occurred()) return PyErr_Clear(), 1;
  if (p->kind == P_F64) return memcpy(out, &d, sizeof d), 0;
  float f = (float)d;
  if (isinf(f) && isfinite(d)) return 1;
  uint32_t b;
  memcpy(&b, &f, sizeof b);
  return *out = b, 0;
}

/* The value's bytes when it is plain for p: 0, or 1 (through the table). */
static inline int plain_bits(gclpy_state *st, const gclpy_plain *p, PyObject *v, uint64_t *out) {
  switch (p->kind) {
  case P_SIGNED: case P_UNSIGNED:
    return PyLong_CheckExact(v) ? int_bits(v, p, out) : 1;
  case P_BOOL: return v == Py_True ? (*out = 1, 0) : v == Py_False ? (*out = 0, 0) : 1;
  case P_F32: case P_F64: return float_bits(v, p, out);
  case P_POINTER:
    if (PyLong_CheckExact(v)) {
      if (int_bits(v, p, out) != 0) return 1;
    } else if (Py_IS_TYPE(v, st->buffer_type)) {
      gclpy_buffer *b = (gclpy_buffer *)v, *owner = b->base ? (gclpy_buffer *)b->base : b;
      if (!b->ptr || !owner->ptr) return 1; /* closed: the table refuses it */
      *out = b->ptr;
    } else {
      return 1;
    }
    return *out & (p->align - 1) ? 1 : 0; /* alignments are powers of two */
  default: return 1;
  }
}

/* The bytes of the scratch Args, once every parameter was set (NULL before). */
static uint8_t *scratch_bytes(gclpy_args *a) {
  const void *data = NULL;
  size_t size = 0;
  if (gcl_args_buffer(a->args, &data, &size) != GCL_OK) return NULL; /* not all set yet */
  return (uint8_t *)(uintptr_t)data; /* the scratch's own buffer, private to this kernel */
}

/* p's bytes now hold v's value: an exact int or float (immutable, and free of references, so
 * holding it keeps nothing else alive) is remembered, anything else forgotten. */
static void remember(gclpy_plain *p, PyObject *v) {
  PyObject *old = p->last;
  p->last = v && (PyLong_CheckExact(v) || PyFloat_CheckExact(v)) ? Py_NewRef(v) : NULL;
  Py_XDECREF(old); /* an int or a float: no finalizer runs */
}

void gclpy_values_free(gclpy_values *plan) {
  for (size_t i = 0; plan && i < plan->count; i++) remember(&plan->params[i], NULL);
  PyMem_Free(plan);
}

int gclpy_values_set(gclpy_state *st, gclpy_values *plan, gclpy_args *a, gclpy_layout *lay,
                     PyObject *values, bool list) {
  for (size_t i = 0; i < plan->count; i++) {
    PyObject *v = list ? PyList_GetItem(values, (Py_ssize_t)i) : PyTuple_GetItem(values, (Py_ssize_t)i);
    gclpy_plain *p = &plan->params[i];
    uint64_t bits;
    if (v == p->last) continue; /* the same int or float object as the last launch: its bytes */
    if (plan->bytes && p->direct && plain_bits(st, p, v, &bits) == 0) {
      put(plan->bytes, p, bits);
      remember(p, v);
      continue;
    }
    remember(p, NULL);
    if (gclpy_convert_set(a, lay->params[i], v) < 0) return -1;
    p->direct = p->kind != P_SLOW && plain_bits(st, p, v, &bits) == 0; /* no tensor, no keep */
    if (p->direct) remember(p, v);
  }
  if (!plan->bytes) {
    plan->bytes = scratch_bytes(a);
    PyErr_Clear();
  }
  return 0;
}
