/* addresses.c -- L3: the addresses Args.repoint takes, as one array of uint64 for the C call.
 *
 *   an int                      one address
 *   a list or tuple             one address per item: an int, or a __dlpack__ tensor (its data +
 *                               byte_offset; the args keep it alive)
 *   a host array of addresses   a __dlpack__ tensor on the CPU (NumPy, torch CPU tensors) or any
 *                               object with the buffer protocol (array.array('Q'), memoryview)
 *                               holding 64-bit integers: copied as a block, no Python object per
 *                               address (negative values of a signed array are refused)
 *   any other __dlpack__ tensor one address: its data + byte_offset (kept alive)
 * A device tensor is one address to point at; a host tensor of 64-bit integers is the addresses. */
#include "gclpy.h"

#include <string.h>

#define KDL_INT 0
#define KDL_UINT 1

static int room(gclpy_addresses *a, size_t n) {
  a->n = n;
  a->at = n <= sizeof a->small / sizeof a->small[0] ? a->small : PyMem_Calloc(n ? n : 1, sizeof *a->at);
  return a->at ? 0 : (PyErr_NoMemory(), -1);
}

/* n 64-bit integers at src (signed: none may be negative) into a->at. */
static int copy_block(gclpy_state *st, gclpy_addresses *a, const void *src, size_t n, bool is_signed) {
  if (room(a, n) < 0) return -1;
  memcpy(a->at, src, n * sizeof *a->at);
  for (size_t i = 0; is_signed && i < n; i++)
    if ((int64_t)a->at[i] < 0)
      return gclpy_raise_range(st, "repoint: addresses[%zu] = %lld is out of range (0 ... 2**64-1)", i,
                               (long long)(int64_t)a->at[i]), -1;
  return 0;
}

/* A host tensor of 64-bit integers (1 when the tensor is no such array: one address). */
static int host_array(gclpy_state *st, gclpy_addresses *a, const DLTensor *t) {
  bool host = t->device.device_type == kDLCPU || t->device.device_type == kDLCUDAHost;
  bool ints = (t->dtype.code == KDL_INT || t->dtype.code == KDL_UINT) && t->dtype.bits == 64 &&
              t->dtype.lanes == 1;
  if (!host || !ints) return 1;
  size_t n = 1;
  int64_t expect = 1;
  for (int d = t->ndim - 1; d >= 0; d--) { /* compact, row-major */
    if (t->strides && t->shape[d] > 1 && t->strides[d] != expect)
      return gclpy_raise_msg(st, GCL_ERROR_TENSOR, "repoint: a host array of addresses must be "
                             "contiguous (dimension %d has stride %lld, expected %lld)", d,
                             (long long)t->strides[d], (long long)expect), -1;
    expect *= t->shape[d], n *= (size_t)t->shape[d];
  }
  return copy_block(st, a, (const char *)t->data + t->byte_offset, n, t->dtype.code == KDL_INT);
}

/* A __dlpack__ object: a host array of addresses, or one tensor to point at (a->items: itself). */
static int from_dlpack(gclpy_state *st, gclpy_addresses *a, PyObject *v) {
  gclpy_dlpack d;
  if (gclpy_dlpack_get(st, v, &d, true) < 0) return -1;
  int rc = host_array(st, a, d.tensor);
  if (rc == 1 && (rc = room(a, 1)) == 0) {
    a->at[0] = (uint64_t)(uintptr_t)d.tensor->data + d.tensor->byte_offset;
    a->device = d.tensor->device.device_type == kDLCUDA ? d.tensor->device.device_id : 0;
    a->items = PyTuple_Pack(1, v), a->tensors = 1;
    rc = a->items ? 0 : -1;
  }
  gclpy_dlpack_release(&d);
  return rc;
}

/* An object with the buffer protocol holding 64-bit integers (1: it has no buffer). */
static int from_buffer(gclpy_state *st, gclpy_addresses *a, PyObject *v) {
  PyObject *mv = PyMemoryView_FromObject(v);
  if (!mv) return PyErr_ExceptionMatches(PyExc_TypeError) ? (PyErr_Clear(), 1) : -1;
  PyObject *fmt = PyObject_GetAttrString(mv, "format"), *size = PyObject_GetAttrString(mv, "itemsize");
  const char *f = fmt ? PyUnicode_AsUTF8AndSize(fmt, NULL) : NULL;
  long itemsize = size ? PyLong_AsLong(size) : -1;
  int rc = -1;
  char last = f && *f ? f[strlen(f) - 1] : 0;
  bool ok = f && itemsize == 8 && strlen(f) <= 2 && strchr("QqLlNn", last) && (strlen(f) == 1 || strchr("@=<", f[0]));
  if (f && !ok)
    gclpy_raise_msg(st, GCL_ERROR_TYPE_MISMATCH, "repoint: a buffer of addresses must hold 64-bit "
                    "integers (format 'Q' or 'q'), got format '%s' of %ld bytes", f, itemsize);
  PyObject *raw = ok ? PyBytes_FromObject(mv) : NULL; /* C order, one copy */
  if (raw)
    rc = copy_block(st, a, PyBytes_AsString(raw), (size_t)PyBytes_Size(raw) / 8, strchr("qln", last) != NULL);
  Py_XDECREF(raw), Py_XDECREF(fmt), Py_XDECREF(size), Py_DECREF(mv);
  return rc;
}

static const gclpy_arg address_arg = {"address", 0, gclpy_to_address, 0, 0, 0};

/* A list or tuple: ints, or tensors (their addresses; a->items keeps the sequence). */
static int from_sequence(gclpy_state *st, gclpy_addresses *a, PyObject *v) {
  if (!(a->items = PySequence_Tuple(v)) || room(a, (size_t)PyTuple_Size(a->items)) < 0) return -1;
  for (size_t i = 0; i < a->n; i++) {
    PyObject *item = PyTuple_GetItem(a->items, (Py_ssize_t)i);
    if (PyLong_Check(item) && !PyBool_Check(item)) { /* an exact int: no call beyond reading it */
      if (gclpy_parse_one(st, "repoint", &address_arg, item, &a->at[i]) < 0) return -1;
      continue;
    }
    if (!gclpy_has_dlpack(st, item))
      return gclpy_type_error("repoint: addresses takes ints or __dlpack__ tensors", item), -1;
    gclpy_dlpack d;
    if (gclpy_dlpack_get(st, item, &d, true) < 0) return -1;
    a->at[i] = (uint64_t)(uintptr_t)d.tensor->data + d.tensor->byte_offset;
    a->device = d.tensor->device.device_type == kDLCUDA ? d.tensor->device.device_id : 0;
    a->tensors++;
    gclpy_dlpack_release(&d);
  }
  return 0;
}

int gclpy_addresses_get(gclpy_state *st, PyObject *v, gclpy_addresses *a) {
  a->at = NULL, a->n = 0, a->items = NULL, a->device = 0, a->tensors = 0;
  if (PyLong_Check(v) && !PyBool_Check(v))
    return room(a, 1) < 0 ? -1 : gclpy_parse_one(st, "repoint", &address_arg, v, &a->at[0]);
  if (PyList_Check(v) || PyTuple_Check(v)) return from_sequence(st, a, v);
  if (gclpy_has_dlpack(st, v)) return from_dlpack(st, a, v);
  int rc = PyBool_Check(v) || PyUnicode_Check(v) ? 1 : from_buffer(st, a, v);
  if (rc == 1)
    gclpy_type_error("repoint: addresses takes an int, a list of ints or __dlpack__ tensors, or a "
                     "host array of 64-bit addresses", v);
  return rc == 0 ? 0 : -1;
}

void gclpy_addresses_free(gclpy_addresses *a) {
  if (a->at && a->at != a->small) PyMem_Free(a->at);
  Py_CLEAR(a->items);
  a->at = NULL;
}
