/* parse.c -- L1: the one parser (gclpy.h: gclpy_arg, gclpy_params). A call's parameters are a
 * static table: each entry names the keyword, the converter (argkinds.c's gclpy_to_*) and where
 * the result goes (offsetof in the call's struct of results, which holds the defaults).
 * Positionals and keywords are matched first (keywords by identity against interned names when
 * the caller has them, as launch does), missing ones refused, then each argument given is
 * converted in the table's order; when one is refused, the converters of the ones before it
 * are called again with v NULL to release what they made (CPython's O& with
 * Py_CLEANUP_SUPPORTED). The parser calls converters only through the table, so it sits beside
 * argkinds.c on the same level. */
#include "gclpy.h"

static int name_index(const gclpy_params *p, PyObject *const *keys, PyObject *key) {
  if (keys)
    for (int i = 0; i < p->count; i++)
      if (key == keys[i]) return i;
  for (int i = 0; i < p->count; i++)
    if (PyUnicode_CompareWithASCIIString(key, p->args[i].name) == 0) return i;
  return -1;
}

static int positional(const gclpy_params *p, Py_ssize_t nargs, PyObject **vals) {
  for (int i = 0; i < p->count; i++) vals[i] = NULL;
  if (nargs > p->npos)
    return PyErr_Format(PyExc_TypeError, "%s() takes at most %d positional argument%s (%zd given)",
                        p->fn, p->npos, p->npos == 1 ? "" : "s", nargs), -1;
  return 0;
}

static int keyword(const gclpy_params *p, PyObject *const *keys, PyObject *key, PyObject *value,
                   PyObject **vals) {
  int i = name_index(p, keys, key);
  if (i < 0)
    return PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument %R", p->fn, key), -1;
  if (vals[i])
    return PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", p->fn,
                        p->args[i].name), -1;
  vals[i] = value;
  return 0;
}

/* The arguments matched: each converted into out in the table's order; on a refusal the ones
 * converted before it are released. The mask of the given ones, or -1. */
static int convert_all(gclpy_state *st, const gclpy_params *p, PyObject **vals, void *out) {
  for (int i = 0; i < p->required; i++)
    if (!vals[i])
      return PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s' (pos %d)", p->fn,
                          p->args[i].name, i + 1), -1;
  int given = 0;
  for (int i = 0; i < p->count; i++) {
    const gclpy_arg *a = &p->args[i];
    PyObject *v = vals[i];
    if (!v && (a->flags & GCLPY_ABSENT)) v = Py_None;
    if (!v || (v == Py_None && (a->flags & GCLPY_NONE))) continue;
    if (a->conv(st, p->fn, a, v, (char *)out + a->at) < 0) return gclpy_release(st, p, given, out), -1;
    given |= 1 << i;
  }
  return given;
}

int gclpy_parse(gclpy_state *st, const gclpy_params *p, PyObject *const *keys,
                PyObject *const *argv, Py_ssize_t nargs, PyObject *kwnames, void *out) {
  PyObject *vals[GCLPY_MAX_ARGS];
  if (positional(p, nargs, vals) < 0) return -1;
  for (Py_ssize_t i = 0; i < nargs; i++) vals[i] = argv[i];
  Py_ssize_t nkw = kwnames ? PyTuple_Size(kwnames) : 0;
  for (Py_ssize_t j = 0; j < nkw; j++)
    if (keyword(p, keys, PyTuple_GetItem(kwnames, j), argv[nargs + j], vals) < 0) return -1;
  return convert_all(st, p, vals, out);
}

int gclpy_parse_tuple(gclpy_state *st, const gclpy_params *p, PyObject *args, PyObject *kwds,
                      void *out) {
  PyObject *vals[GCLPY_MAX_ARGS];
  Py_ssize_t nargs = PyTuple_Size(args);
  if (positional(p, nargs, vals) < 0) return -1;
  for (Py_ssize_t i = 0; i < nargs; i++) vals[i] = PyTuple_GetItem(args, i);
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (kwds && PyDict_Next(kwds, &pos, &key, &value))
    if (keyword(p, NULL, key, value, vals) < 0) return -1;
  return convert_all(st, p, vals, out);
}

int gclpy_parse_one(gclpy_state *st, const char *fn, const gclpy_arg *a, PyObject *v, void *out) {
  return a->conv(st, fn, a, v, out);
}

void gclpy_release(gclpy_state *st, const gclpy_params *p, int given, void *out) {
  for (int i = 0; i < p->count; i++)
    if (given & (1 << i)) p->args[i].conv(st, p->fn, &p->args[i], NULL, (char *)out + p->args[i].at);
}
