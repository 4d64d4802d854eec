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

/* Positionals 0 ... nargs-1 into vals; the mask of them, or -1. vals[i] is read only where the
 * mask has bit i (nothing is cleared per call). */
static int positional(const gclpy_params *p, Py_ssize_t nargs) {
  if (nargs > p->npos)
    return PyErr_Format(PyExc_TypeError, "%s() takes at most %d positional argument%s (%zd given)",
                        p->fn, p->npos, p->npos == 1 ? "" : "s", nargs), -1;
  return (int)((1u << nargs) - 1);
}

/* A keyword into vals; the mask with its bit, or -1. */
static int keyword(const gclpy_params *p, PyObject *const *keys, PyObject *key, PyObject *value,
                   PyObject **vals, int given) {
  int i = name_index(p, keys, key);
  if (i < 0)
    return PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument %R", p->fn, key), -1;
  if (given & (1 << i))
    return PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", p->fn,
                        p->args[i].name), -1;
  vals[i] = value;
  return given | 1 << i;
}

/* The arguments matched (given: their mask): each converted into out in the table's order, only
 * those given (a launch of 3 arguments converts 3, whatever the table's length); None leaves
 * the default where the entry says GCLPY_NONE. On a refusal the ones converted before it are
 * released. The mask of the converted ones, or -1. */
static inline int convert_all(gclpy_state *st, const gclpy_params *p, PyObject **vals, int given,
                              void *out) {
  int required = (1 << p->required) - 1;
  if ((given & required) != required) {
    int i = __builtin_ctz((unsigned)(~given & required));
    return PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s' (pos %d)", p->fn,
                        p->args[i].name, i + 1), -1;
  }
  int done = 0;
  PyObject *none = Py_None;
  for (unsigned m = (unsigned)given; m; m &= m - 1) {
    int i = __builtin_ctz(m);
    const gclpy_arg *a = &p->args[i];
    char *at = (char *)out + a->at;
    if (vals[i] == none && (a->flags & GCLPY_NONE)) continue;
    if (a->conv == gclpy_to_object) *(PyObject **)at = vals[i]; /* no call for "no conversion" */
    else if (a->conv(st, p->fn, a, vals[i], at) < 0) return gclpy_release(st, p, done, out), -1;
    done |= 1 << i;
  }
  return done;
}

int gclpy_parse(gclpy_state *st, const gclpy_params *p, PyObject *const *keys,
                PyObject *const *argv, Py_ssize_t nargs, PyObject *kwnames, void *out) {
  PyObject *vals[GCLPY_MAX_ARGS];
  int given = positional(p, nargs);
  for (Py_ssize_t i = 0; given >= 0 && i < nargs; i++) vals[i] = argv[i];
  Py_ssize_t nkw = kwnames ? PyTuple_Size(kwnames) : 0;
  for (Py_ssize_t j = 0; given >= 0 && j < nkw; j++)
    given = keyword(p, keys, PyTuple_GetItem(kwnames, j), argv[nargs + j], vals, given);
  return given < 0 ? -1 : convert_all(st, p, vals, given, out);
}

int gclpy_parse_tuple(gclpy_state *st, const gclpy_params *p, PyObject *args, PyObject *kwds,
                      void *out) {
  PyObject *vals[GCLPY_MAX_ARGS];
  Py_ssize_t nargs = PyTuple_Size(args);
  int given = positional(p, nargs);
  for (Py_ssize_t i = 0; given >= 0 && i < nargs; i++) vals[i] = PyTuple_GetItem(args, i);
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (given >= 0 && kwds && PyDict_Next(kwds, &pos, &key, &value))
    given = keyword(p, NULL, key, value, vals, given);
  return given < 0 ? -1 : convert_all(st, p, vals, given, out);
}

int gclpy_parse_one(gclpy_state *st, const char *fn, const gclpy_arg *a, PyObject *v, void *out) {
  return a->conv(st, fn, a, v, out);
}

void gclpy_release(gclpy_state *st, const gclpy_params *p, int given, void *out) {
  for (unsigned m = (unsigned)given; m; m &= m - 1) {
    int i = __builtin_ctz(m);
    p->args[i].conv(st, p->fn, &p->args[i], NULL, (char *)out + p->args[i].at);
  }
}
