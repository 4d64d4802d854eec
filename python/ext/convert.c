/* convert.c -- Python values into fields: one table, keyed by the field's kind.
 *
 * What every kind takes:
 *   any kind       bytes, bytearray or memoryview (any buffer) of the field's exact size: raw bytes
 *                  (gcl_args_set_field; the library checks the size)
 *   bool .. u64    an int (or bool, or an object with __index__), range-checked against the C type
 *   f16 .. f64     a float, an int, or an object with __float__ (f16/bf16 rounded to nearest even
 *                  from float32; float32 from the double as C converts it)
 *   pointer        an int address (gcl_args_set_field_ptr), or any __dlpack__ object
 *                  (gcl_args_take_field_dlpack: the library owns the tensor from then on)
 *   tensormap      a gclaunch.TensorMap, or a list of them starting at this element
 *   tensormap[N]   a list (or tuple) of N TensorMaps (one batch)
 *   scalar[N]      a list (or tuple) of N values (all parsed before any is set)
 *   struct, array, bytes(N): bytes-like only (untyped 1/2/4/8-byte parameters of a kernel looked
 *                  up without a signature also take an int of that width)
 * The range check of ints is the only check made here: the C setters take fixed-width values, so
 * a Python int must fit before it can be passed. Everything else is checked by the C call. */
#include "gclpy.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef int (*conv_fn)(gclpy_args *a, gclpy_fieldref *f, PyObject *v);
typedef struct conv_entry {
  const char *expects;  /* for TypeError messages */
  conv_fn fn;
  int64_t lo;           /* int range (signed kinds) */
  uint64_t hi;
} conv_entry;

/* 0, or -1 with gclaunch.Error for s (the module state is looked up only then). */
static int status_rc(gclpy_args *a, gcl_status s) { return s == GCL_OK ? 0 : (gclpy_raise(GCLPY_ST(a), s), -1); }
#define status_to_rc(s) status_rc(a, (s))

void gclpy_field_label(gclpy_args *a, gclpy_fieldref *f, char *buf, size_t cap) {
  gcl_field pf;
  const char *pname = gcl_layout_param_field(a->layout->layout, f->field.param, &pf) == GCL_OK &&
                              pf.info.name ? pf.info.name : "";
  const char *path = f->path ? PyUnicode_AsUTF8AndSize(f->path, NULL) : NULL;
  if (!path) PyErr_Clear();
  if (path && strcmp(path, pname) != 0)
    snprintf(buf, cap, "parameter %zu '%s' field '%s'", f->field.param, pname, path);
  else snprintf(buf, cap, "parameter %zu '%s'", f->field.param, pname);
}

static const conv_entry table[GCLPY_CONV_COUNT];
static int type_error_only(gclpy_args *a, gclpy_fieldref *f, PyObject *v);

static int set_raw(gclpy_args *a, gclpy_fieldref *f, PyObject *raw) {
  gcl_status s = gcl_args_set_field(a->args, &f->field, PyBytes_AsString(raw), (size_t)PyBytes_Size(raw));
  Py_DECREF(raw);
  if (s != GCL_OK) return status_to_rc(s);
  return gclpy_keep_set(a, f->field.offset, f->field.size, NULL); /* raw bytes point into nothing kept */
}

/* A value the kind does not take: raw bytes when it has the buffer protocol (a NumPy array of
 * the field's size into a struct), else TypeError naming the field and what it takes. */
static int type_error(gclpy_args *a, gclpy_fieldref *f, PyObject *v) {
  bool number = PyLong_Check(v) || PyFloat_Check(v) || PyUnicode_Check(v) ||
                (f->field.info.kind == GCL_PARAM_SCALAR && PyNumber_Check(v));
  PyObject *mv = number ? NULL : PyMemoryView_FromObject(v);
  if (mv) {
    PyObject *raw = PyBytes_FromObject(mv);
    Py_DECREF(mv);
    return raw ? set_raw(a, f, raw) : -1;
  }
  PyErr_Clear();
  return type_error_only(a, f, v);
}

/* TypeError naming the field and what it takes. */
static int type_error_only(gclpy_args *a, gclpy_fieldref *f, PyObject *v) {
  char label[400], what[600];
  gclpy_field_label(a, f, label, sizeof label);
  snprintf(what, sizeof what, "%s (%s): expected %s", label,
           f->field.info.kind == GCL_PARAM_SCALAR ? gclpy_scalar_name(f->field.info.scalar)
                                                  : gclpy_kind_name(f->field.info.kind),
           table[f->conv].expects);
  gclpy_type_error(what, v);
  return -1;
}

/* --- scalars: parsed first (type and range), then set -- so a list into an array of scalars is
 * all or nothing ---------------------------------------------------------------------------- */

typedef union scalar_value { uint64_t u; double d; } scalar_value;

static bool is_float_conv(int conv) { return conv >= GCLPY_CONV_F16 && conv <= GCLPY_CONV_F64; }

/* v as an int of the field's type (bits, two's complement for signed kinds). 0; -1 with an
 * exception (range); 1 when v is no int (no exception set). */
static int int_value(gclpy_args *a, gclpy_fieldref *f, PyObject *v, uint64_t *out) {
  const conv_entry *e = &table[f->conv];
  PyObject *n;
  int rc = gclpy_int_value(v, true, e->lo, e->hi, out, &n); /* argkinds.c: the one reading */
  if (rc == -1 && PyErr_ExceptionMatches(PyExc_TypeError)) return PyErr_Clear(), 1; /* __index__ */
  if (rc != 2) return rc;
  char label[400];
  gclpy_field_label(a, f, label, sizeof label);
  gclpy_raise_range(GCLPY_ST(a), "%s: %R is out of range for %s (%lld ... %llu)", label, n,
                    gclpy_scalar_name(f->field.info.scalar), (long long)e->lo,
                    (unsigned long long)e->hi);
  Py_DECREF(n);
  return -1;
}

/* v as a float: a float, an int, or an object with __float__ / __index__. 0, -1, 1 as above. */
static int float_value(PyObject *v, double *out) {
  if (PyFloat_Check(v)) return *out = PyFloat_AsDouble(v), 0;
  if (PyUnicode_Check(v) || PyBytes_Check(v)) return 1;
  *out = PyFloat_AsDouble(v);
  if (*out == -1.0 && PyErr_Occurred())
    return PyErr_ExceptionMatches(PyExc_TypeError) ? (PyErr_Clear(), 1) : -1;
  return 0;
}

/* A finite value that the field's type rounds to infinity is out of its range (inf and nan given
 * as such are kept). */
static int float_range(gclpy_args *a, gclpy_fieldref *f, double d) {
  if (!isfinite(d) || f->conv == GCLPY_CONV_F64) return 0;
  float x = (float)d;
  bool inf = isinf(x) || (f->conv == GCLPY_CONV_F16 && isinf(gcl_f16_to_f32(gcl_f16_from_f32(x)))) ||
             (f->conv == GCLPY_CONV_BF16 && isinf(gcl_bf16_to_f32(gcl_bf16_from_f32(x))));
  if (!inf) return 0;
  char label[400];
  gclpy_field_label(a, f, label, sizeof label);
  PyObject *v = PyFloat_FromDouble(d);
  if (v) gclpy_raise_range(GCLPY_ST(a), "%s: %R is out of range for %s (it would become inf)", label, v,
                           gclpy_scalar_name(f->field.info.scalar));
  Py_XDECREF(v);
  return -1;
}

static int scalar_parse(gclpy_args *a, gclpy_fieldref *f, PyObject *v, scalar_value *out) {
  if (!is_float_conv(f->conv)) return int_value(a, f, v, &out->u);
  int rc = float_value(v, &out->d);
  if (rc == -1 && PyErr_ExceptionMatches(PyExc_OverflowError)) { /* an int too large for a double */
    PyErr_Clear();
    char label[400];
    gclpy_field_label(a, f, label, sizeof label);
    gclpy_raise_range(GCLPY_ST(a), "%s: %R is out of range for %s", label, v,
                      gclpy_scalar_name(f->field.info.scalar));
    return -1;
  }
  return rc == 0 ? float_range(a, f, out->d) : rc;
}

static int scalar_apply(gclpy_args *a, const gcl_field *fd, int conv, scalar_value x) {
  gcl_args *g = a->args;
  switch (conv) {
  case GCLPY_CONV_BOOL: return status_to_rc(gcl_args_set_field_bool(g, fd, x.u != 0));
  case GCLPY_CONV_I8: return status_to_rc(gcl_args_set_field_i8(g, fd, (int8_t)x.u));
  case GCLPY_CONV_U8: return status_to_rc(gcl_args_set_field_u8(g, fd, (uint8_t)x.u));
  case GCLPY_CONV_I16: return status_to_rc(gcl_args_set_field_i16(g, fd, (int16_t)x.u));
  case GCLPY_CONV_U16: return status_to_rc(gcl_args_set_field_u16(g, fd, (uint16_t)x.u));
  case GCLPY_CONV_I32: return status_to_rc(gcl_args_set_field_i32(g, fd, (int32_t)x.u));
  case GCLPY_CONV_U32: return status_to_rc(gcl_args_set_field_u32(g, fd, (uint32_t)x.u));
  case GCLPY_CONV_I64: return status_to_rc(gcl_args_set_field_i64(g, fd, (int64_t)x.u));
  case GCLPY_CONV_U64: return status_to_rc(gcl_args_set_field_u64(g, fd, x.u));
  case GCLPY_CONV_F16: return status_to_rc(gcl_args_set_field_f16_from_f32(g, fd, (float)x.d));
  case GCLPY_CONV_BF16: return status_to_rc(gcl_args_set_field_bf16_from_f32(g, fd, (float)x.d));
  case GCLPY_CONV_F32: return status_to_rc(gcl_args_set_field_f32(g, fd, (float)x.d));
  default: return status_to_rc(gcl_args_set_field_f64(g, fd, x.d));
  }
}

static int set_scalar(gclpy_args *a, gclpy_fieldref *f, PyObject *v) {
  scalar_value x;
  int rc = scalar_parse(a, f, v, &x);
  if (rc == 1) return type_error(a, f, v);
  return rc < 0 ? -1 : scalar_apply(a, &f->field, f->conv, x);
}

/* A list (or tuple) of N values into an array of N scalars: every value is parsed first, then
 * all are set (nothing changes when one is refused). */
static int set_scalar_array(gclpy_args *a, gclpy_fieldref *f, PyObject *v) {
  size_t n = f->field.info.count;
  if (!PyList_Check(v) && !PyTuple_Check(v)) return type_error(a, f, v);
  if ((size_t)PySequence_Size(v) != n) {
    char label[400];
    gclpy_field_label(a, f, label, sizeof label);
    gclpy_raise_msg(GCLPY_ST(a), GCL_ERROR_INVALID_ARGUMENT, "%s: an array of %zu takes %zu values, got %zd",
                    label, n, n, PySequence_Size(v));
    return -1;
  }
  gcl_field *el = PyMem_Calloc(n, sizeof *el);
  scalar_value *x = PyMem_Calloc(n, sizeof *x);
  gclpy_fieldref tmp = *f; /* a stack copy for the element's conversion and messages */
  int rc = el && x ? 0 : (PyErr_NoMemory(), -1);
  for (size_t i = 0; rc == 0 && i < n; i++) {
    gcl_status s = gcl_layout_element_field(a->layout->layout, &f->field, i, &el[i]);
    if (s != GCL_OK) { rc = (gclpy_raise(GCLPY_ST(a), s), -1); break; }
    tmp.field = el[i], tmp.conv = gclpy_conv_of(&el[i]);
    PyObject *item = PySequence_GetItem(v, (Py_ssize_t)i);
    rc = item ? scalar_parse(a, &tmp, item, &x[i]) : -1;
    if (rc == 1) rc = (type_error_only(a, &tmp, item), -1);
    Py_XDECREF(item);
  }
  for (size_t i = 0; rc == 0 && i < n; i++) rc = scalar_apply(a, &el[i], gclpy_conv_of(&el[i]), x[i]);
  PyMem_Free(el), PyMem_Free(x);
  return rc;
}

/* --- pointers, tensor maps, raw bytes -------------------------------------------------------- */

/* A tensor's pointer: the library owns the managed tensor (its deleter runs once, when the field
 * is overwritten or the args go); the args also keep the producer object, so a clone of the args
 * (which does not own the tensor) still points into live memory. An int address keeps nothing. */
/* The field already holds this Buffer, set by the branch below (its keep entry is the buffer,
 * which raw setters over the field would have dropped) at the address it still has: nothing to
 * do. Launches of values on the same buffers then cost no allocation. */
static bool buffer_in_place(gclpy_args *a, gclpy_fieldref *f, gclpy_buffer *b) {
  if (!a->keep || !b->ptr) return false;
  PyObject *key = PyLong_FromSize_t(f->field.offset);
  PyObject *held = key ? PyDict_GetItemWithError(a->keep, key) : NULL;
  Py_XDECREF(key);
  PyErr_Clear();
  const void *data = NULL;
  size_t size = 0;
  uint64_t now = 0;
  if (held != (PyObject *)b || !gcl_args_field_is_set(a->args, &f->field) ||
      gcl_args_buffer(a->args, &data, &size) != GCL_OK)
    return false;
  memcpy(&now, (const char *)data + f->field.offset, sizeof now);
  return now == b->ptr;
}

/* A tensor in a kernel's buffer for launches of values: its address only, checked as a taken
 * one is (dtype, device, the read-only flag) and the tensor released at once, as a Buffer there
 * is. The driver copies the parameters at the launch, so nothing the user cannot see keeps the
 * tensor -- or a gclaunch.Buffer it was made from -- alive after the call (issue 50: the kernel
 * kept the last tensor until its next launch, and Buffer.close() was refused). Keeping the
 * memory alive while the kernel runs is the caller's, as for an int address. A versioned tensor
 * of another major version goes the taken way, which refuses it. */
static int scratch_tensor(gclpy_args *a, gclpy_fieldref *f, PyObject *v) {
  gclpy_state *st = GCLPY_ST(a);
  gclpy_dlpack d; /* owned, not a view: a view of the exchange API carries no flags */
  if (gclpy_dlpack_get(st, v, &d, false) < 0) return -1;
  if (d.versioned && ((DLManagedTensorVersioned *)d.managed)->version.major != DLPACK_MAJOR_VERSION)
    return status_to_rc(gclpy_dlpack_take(&d, a->args, &f->field)) < 0 ? -1 : 0;
  gcl_status s = gcl_args_set_field_dltensor_flags(a->args, &f->field, d.tensor, d.flags);
  gclpy_dlpack_release(&d);
  if (status_to_rc(s) < 0) return -1;
  return gclpy_keep_set(a, f->field.offset, f->field.size, NULL);
}

static int set_pointer(gclpy_args *a, gclpy_fieldref *f, PyObject *v) {
  gclpy_state *st = GCLPY_ST(a);
  if (PyLong_Check(v) && !PyBool_Check(v)) {
    uint64_t x;
    if (int_value(a, f, v, &x) != 0) return -1; /* an int: 1 cannot happen */
    if (status_to_rc(gcl_args_set_field_ptr(a->args, &f->field, x)) < 0) return -1;
    return gclpy_keep_set(a, f->field.offset, f->field.size, NULL);
  }
  if (Py_IS_TYPE(v, st->buffer_type)) { /* a gclaunch.Buffer: no capsule, no Python call */
    gclpy_buffer *b = (gclpy_buffer *)v;
    if (a->scratch) { /* its address only: a launch of values does not stop close() after it */
      if (gclpy_buffer_open(st, b, "Buffer") < 0 ||
          status_to_rc(gcl_args_set_field_ptr(a->args, &f->field, b->ptr)) < 0)
        return -1;
      return gclpy_keep_set(a, f->field.offset, f->field.size, NULL);
    }
    if (buffer_in_place(a, f, b)) return 0; /* relaunch of Args on the same buffer */
    if (gclpy_buffer_take(st, a->args, &f->field, b) < 0) return -1;
    return gclpy_keep_set(a, f->field.offset, f->field.size, v);
  }
  if (!gclpy_has_dlpack(st, v)) return type_error(a, f, v);
  if (a->scratch) return scratch_tensor(a, f, v);
  gclpy_dlpack d;
  if (gclpy_dlpack_get(st, v, &d, false) < 0) return -1;
  if (status_to_rc(gclpy_dlpack_take(&d, a->args, &f->field)) < 0) return -1;
  return gclpy_keep_set(a, f->field.offset, f->field.size, v);
}

static int set_tensormap(gclpy_args *a, gclpy_fieldref *f, PyObject *v) {
  if (!PyObject_TypeCheck(v, GCLPY_ST(a)->tensormap_type) && !PyList_Check(v) && !PyTuple_Check(v))
    return type_error(a, f, v);
  const gclpy_maps_at at = {.args = a, .first = f};
  return gclpy_tensormaps_set(&at, v);
}

static int set_tensormaps(gclpy_args *a, gclpy_fieldref *f, PyObject *v) {
  if (!PyList_Check(v) && !PyTuple_Check(v)) return type_error(a, f, v);
  Py_ssize_t n = PySequence_Size(v);
  if (n < 0) return -1;
  if ((size_t)n != f->field.info.count) {
    char label[400];
    gclpy_field_label(a, f, label, sizeof label);
    gclpy_raise_msg(GCLPY_ST(a), GCL_ERROR_INVALID_ARGUMENT, "%s: tensormap[%zu] takes a list of %zu TensorMaps, "
                    "got %zd (assign a shorter list to element '[i]' to set some of them)", label,
                    f->field.info.count, f->field.info.count, n);
    return -1;
  }
  gclpy_fieldref *first = gclpy_layout_element0(a->layout, f);
  if (!first) return -1;
  const gclpy_maps_at at = {.args = a, .first = first};
  int rc = gclpy_tensormaps_set(&at, v);
  Py_DECREF(first);
  return rc;
}

/* Untyped parameters (a kernel looked up without a signature) of 1, 2, 4 or 8 bytes take an int
 * as the C integer of that width (signed or unsigned: -2^(8n-1) ... 2^(8n)-1), through the typed
 * setter of that size (the library lets untyped bytes of the same size take any). */
static int set_raw_int(gclpy_args *a, gclpy_fieldref *f, PyObject *v) {
  if (!PyLong_Check(v) || PyBool_Check(v)) return type_error(a, f, v);
  size_t bits = 8 * f->field.size;
  int64_t lo = bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1));
  uint64_t hi = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1, x = 0;
  PyObject *n;
  int rc = gclpy_int_value(v, false, lo, hi, &x, &n); /* argkinds.c: the one reading */
  if (rc == -1) return -1;
  if (rc == 2) {
    char label[400];
    gclpy_field_label(a, f, label, sizeof label);
    gclpy_raise_range(GCLPY_ST(a), "%s: %R does not fit the untyped %zu-byte parameter", label, n, f->field.size);
    Py_DECREF(n);
    return -1;
  }
  const gcl_field *fd = &f->field;
  switch (f->field.size) {
  case 1: return status_to_rc(gcl_args_set_field_u8(a->args, fd, (uint8_t)x));
  case 2: return status_to_rc(gcl_args_set_field_u16(a->args, fd, (uint16_t)x));
  case 4: return status_to_rc(gcl_args_set_field_u32(a->args, fd, (uint32_t)x));
  default: return status_to_rc(gcl_args_set_field_u64(a->args, fd, x));
  }
}

static int set_bytes_only(gclpy_args *a, gclpy_fieldref *f, PyObject *v) { return type_error(a, f, v); }

#define INT_ENTRY(lo, hi) {"an int", set_scalar, lo, hi}
static const conv_entry table[GCLPY_CONV_COUNT] = {
  [GCLPY_CONV_BOOL] = {"a bool or an int 0 or 1", set_scalar, 0, 1},
  [GCLPY_CONV_I8] = INT_ENTRY(INT8_MIN, INT8_MAX),
  [GCLPY_CONV_U8] = INT_ENTRY(0, UINT8_MAX),
  [GCLPY_CONV_I16] = INT_ENTRY(INT16_MIN, INT16_MAX),
  [GCLPY_CONV_U16] = INT_ENTRY(0, UINT16_MAX),
  [GCLPY_CONV_I32] = INT_ENTRY(INT32_MIN, INT32_MAX),
  [GCLPY_CONV_U32] = INT_ENTRY(0, UINT32_MAX),
  [GCLPY_CONV_I64] = INT_ENTRY(INT64_MIN, INT64_MAX),
  [GCLPY_CONV_U64] = INT_ENTRY(0, UINT64_MAX),
  [GCLPY_CONV_F16] = {"a float", set_scalar, 0, 0},
  [GCLPY_CONV_BF16] = {"a float", set_scalar, 0, 0},
  [GCLPY_CONV_F32] = {"a float", set_scalar, 0, 0},
  [GCLPY_CONV_F64] = {"a float", set_scalar, 0, 0},
  [GCLPY_CONV_POINTER] = {"an int address or a __dlpack__ tensor", set_pointer, 0, UINT64_MAX},
  [GCLPY_CONV_TENSORMAP] = {"a gclaunch.TensorMap (or 128 bytes)", set_tensormap, 0, 0},
  [GCLPY_CONV_TENSORMAPS] = {"a list of gclaunch.TensorMap (or bytes of its size)", set_tensormaps, 0, 0},
  [GCLPY_CONV_BYTES] = {"bytes of its size", set_bytes_only, 0, 0},
  [GCLPY_CONV_SCALARS] = {"a list of its values, or bytes of its size", set_scalar_array, 0, 0},
  [GCLPY_CONV_RAW] = {"an int or bytes of its size (untyped: give the kernel a signature)",
                      set_raw_int, 0, 0},
};

int gclpy_convert_set(gclpy_args *a, gclpy_fieldref *f, PyObject *value) {
  const conv_entry *e = &table[f->conv];
  if (e->fn == set_scalar && (PyLong_Check(value) || PyFloat_Check(value)))
    return set_scalar(a, f, value); /* the common case */
  if (PyBytes_Check(value)) return set_raw(a, f, Py_NewRef(value));
  if (PyByteArray_Check(value) || PyMemoryView_Check(value)) {
    PyObject *raw = PyBytes_FromObject(value);
    return raw ? set_raw(a, f, raw) : -1;
  }
  return e->fn(a, f, value); /* other buffers: through type_error when the kind does not take them */
}

/* --- reading back: args[key] ------------------------------------------------------------------- */

static PyObject *scalar_value_of(gclpy_args *a, const gcl_field *fd, int conv, const unsigned char *b) {
  (void)a;
  switch (conv) {
  case GCLPY_CONV_BOOL: return PyBool_FromLong(b[0] != 0);
  case GCLPY_CONV_I8: { int8_t x; memcpy(&x, b, 1); return PyLong_FromLong(x); }
  case GCLPY_CONV_U8: return PyLong_FromLong(b[0]);
  case GCLPY_CONV_I16: { int16_t x; memcpy(&x, b, 2); return PyLong_FromLong(x); }
  case GCLPY_CONV_U16: { uint16_t x; memcpy(&x, b, 2); return PyLong_FromLong(x); }
  case GCLPY_CONV_I32: { int32_t x; memcpy(&x, b, 4); return PyLong_FromLong(x); }
  case GCLPY_CONV_U32: { uint32_t x; memcpy(&x, b, 4); return PyLong_FromUnsignedLong(x); }
  case GCLPY_CONV_I64: { int64_t x; memcpy(&x, b, 8); return PyLong_FromLongLong(x); }
  case GCLPY_CONV_U64: case GCLPY_CONV_POINTER: {
    uint64_t x = 0;
    memcpy(&x, b, fd->size < 8 ? fd->size : 8);
    return PyLong_FromUnsignedLongLong(x);
  }
  case GCLPY_CONV_F16: { uint16_t x; memcpy(&x, b, 2); return PyFloat_FromDouble(gcl_f16_to_f32(x)); }
  case GCLPY_CONV_BF16: { uint16_t x; memcpy(&x, b, 2); return PyFloat_FromDouble(gcl_bf16_to_f32(x)); }
  case GCLPY_CONV_F32: { float x; memcpy(&x, b, 4); return PyFloat_FromDouble(x); }
  case GCLPY_CONV_F64: { double x; memcpy(&x, b, 8); return PyFloat_FromDouble(x); }
  default: return PyBytes_FromStringAndSize((const char *)b, (Py_ssize_t)fd->size);
  }
}

PyObject *gclpy_convert_get(gclpy_args *a, gclpy_fieldref *f) {
  gclpy_state *st = GCLPY_ST(a);
  size_t n = f->field.size;
  unsigned char small[128], *b = n <= sizeof small ? small : PyMem_Malloc(n);
  if (!b) return PyErr_NoMemory();
  gcl_status s = gcl_args_field_bytes(a->args, &f->field, b, n);
  PyObject *r = NULL;
  if (s != GCL_OK) {
    r = gclpy_raise(st, s);
  } else if (f->conv == GCLPY_CONV_SCALARS || f->conv == GCLPY_CONV_TENSORMAPS) {
    size_t count = f->field.info.count;
    r = PyList_New((Py_ssize_t)count);
    for (size_t i = 0; r && i < count; i++) {
      gcl_field el;
      s = gcl_layout_element_field(a->layout->layout, &f->field, i, &el);
      PyObject *x = s != GCL_OK ? gclpy_raise(st, s)
                                : scalar_value_of(a, &el, f->conv == GCLPY_CONV_TENSORMAPS
                                                              ? GCLPY_CONV_BYTES : gclpy_conv_of(&el),
                                                  b + (el.offset - f->field.offset));
      if (!x) Py_CLEAR(r);
      else PyList_SetItem(r, (Py_ssize_t)i, x);
    }
  } else {
    r = scalar_value_of(a, &f->field, f->conv, b);
  }
  if (b != small) PyMem_Free(b);
  return r;
}
