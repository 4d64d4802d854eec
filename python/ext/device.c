/* device.c -- L2: devices (gclaunch.device_count, gclaunch.device_info), occupancy and kernel
 * attributes (Kernel.occupancy, max_cooperative_grid, active_clusters, persistent_config,
 * attributes, attribute, set_attribute): each mirrors one C call, inputs and outputs. */
#include "gclpy.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

const char gclpy_doc_device_count[] =
    "device_count()\n--\n\nThe number of CUDA devices (gclaunch.Error without a driver).";
const char gclpy_doc_device_info[] =
    "_device_info(device=0)\n--\n\nThe fields of gcl_device_info as a dict (gclaunch.device_info\n"
    "wraps them in a DeviceInfo).";

PyObject *gclpy_device_count(PyObject *self, PyObject *unused) {
  (void)unused;
  gclpy_state *st = gclpy_module_state(self);
  int n = 0;
  gcl_status s = gcl_device_count(&n);
  return s == GCL_OK ? PyLong_FromLong(n) : gclpy_raise(st, s);
}

struct device_in { int device; };
static const gclpy_arg device_args[] = {GCLPY_ARG(struct device_in, device, gclpy_to_int, 0, INT_MAX)};
static const gclpy_params device_params = {"device_info", device_args, 1, 1, 0};

PyObject *gclpy_device_info(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                            PyObject *kwnames) {
  gclpy_state *st = gclpy_module_state(self);
  struct device_in in = {0};
  if (gclpy_parse(st, &device_params, NULL, argv, nargs, kwnames, &in) < 0) return NULL;
  int d = in.device;
  gcl_device_info info;
  gcl_status s = gcl_device_query(d, &info);
  if (s != GCL_OK) return gclpy_raise(st, s);
  return Py_BuildValue("{s:i,s:s,s:i,s:i,s:n,s:i,s:i}", "device", d, "name", info.name, "sm",
                       info.sm, "multiprocessors", info.multiprocessors, "total_memory",
                       (Py_ssize_t)info.total_memory, "max_threads_per_block",
                       info.max_threads_per_block, "max_shared_per_block_optin",
                       info.max_shared_per_block_optin);
}

/* --- occupancy ---------------------------------------------------------------------------------- */

/* block (threads: argkinds.c's dims, as their product), shared (bytes). */
struct block_in { unsigned block; size_t shared; };
static const gclpy_arg block_args[] = {
  GCLPY_ARG(struct block_in, block, gclpy_to_threads),
  GCLPY_ARG(struct block_in, shared, gclpy_to_shared),
};

static int kernel_block_args(gclpy_state *st, const char *fn, PyObject *const *argv,
                             Py_ssize_t nargs, PyObject *kwnames, unsigned *threads, size_t *bytes) {
  const gclpy_params params = {fn, block_args, 2, 2, 1};
  struct block_in in = {0, 0};
  if (gclpy_parse(st, &params, NULL, argv, nargs, kwnames, &in) < 0) return -1;
  *threads = in.block, *bytes = in.shared;
  return 0;
}

PyObject *gclpy_kernel_occupancy(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                                 PyObject *kwnames) {
  gclpy_state *st = GCLPY_ST(self);
  unsigned threads;
  size_t bytes;
  if (kernel_block_args(st, "occupancy", argv, nargs, kwnames, &threads, &bytes) < 0) return NULL;
  int blocks = 0;
  gcl_status s = gcl_kernel_occupancy(((gclpy_kernel *)self)->kernel, threads, bytes, &blocks);
  return s == GCL_OK ? PyLong_FromLong(blocks) : gclpy_raise(st, s);
}

PyObject *gclpy_kernel_max_cooperative_grid(PyObject *self, PyObject *const *argv,
                                            Py_ssize_t nargs, PyObject *kwnames) {
  gclpy_state *st = GCLPY_ST(self);
  unsigned threads, blocks = 0;
  size_t bytes;
  if (kernel_block_args(st, "max_cooperative_grid", argv, nargs, kwnames, &threads, &bytes) < 0)
    return NULL;
  gcl_status s = gcl_kernel_max_cooperative_grid(((gclpy_kernel *)self)->kernel, threads, bytes,
                                                 &blocks);
  return s == GCL_OK ? PyLong_FromUnsignedLong(blocks) : gclpy_raise(st, s);
}

static PyObject *dims3(const unsigned d[3]) {
  return Py_BuildValue("(III)", d[0] ? d[0] : 1, d[1] ? d[1] : 1, d[2] ? d[2] : 1);
}

PyObject *gclpy_kernel_persistent_config(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                                         PyObject *kwnames) {
  gclpy_state *st = GCLPY_ST(self);
  unsigned threads;
  size_t bytes;
  if (kernel_block_args(st, "persistent_config", argv, nargs, kwnames, &threads, &bytes) < 0)
    return NULL;
  gcl_launch_config cfg = {0};
  gcl_status s = gcl_kernel_persistent_config(((gclpy_kernel *)self)->kernel, threads, bytes, &cfg);
  if (s != GCL_OK) return gclpy_raise(st, s);
  return Py_BuildValue("{s:N,s:N,s:n}", "grid", dims3(cfg.grid), "block", dims3(cfg.block),
                       "shared", (Py_ssize_t)cfg.shared_bytes);
}

#define CL(field, ...) GCLPY_ARGN(#field, gcl_launch_config, field, __VA_ARGS__)
static const gclpy_arg clusters_args[] = {
  CL(cluster, gclpy_to_dims, 0, 0, GCLPY_ONES), /* every dimension given to the C call */
  CL(block, gclpy_to_dims),
  GCLPY_ARGN("shared", gcl_launch_config, shared_bytes, gclpy_to_shared),
};
#undef CL
static const gclpy_params clusters_params = {"active_clusters", clusters_args, 3, 3, 2};

PyObject *gclpy_kernel_active_clusters(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                                       PyObject *kwnames) {
  gclpy_state *st = GCLPY_ST(self);
  gcl_launch_config cfg = {0};
  if (gclpy_parse(st, &clusters_params, NULL, argv, nargs, kwnames, &cfg) < 0) return NULL;
  cfg.grid[0] = cfg.cluster[0]; /* ignored by the C call; a valid value for its checks */
  int clusters = 0;
  gcl_status s = gcl_kernel_active_clusters(((gclpy_kernel *)self)->kernel, &cfg, &clusters);
  return s == GCL_OK ? PyLong_FromLong(clusters) : gclpy_raise(st, s);
}

/* --- attributes ---------------------------------------------------------------------------------- */

static const struct { const char *name; gcl_kernel_attr attr; } attrs[] = {
  {"max_threads_per_block", GCL_KERNEL_MAX_THREADS_PER_BLOCK},
  {"static_shared_bytes", GCL_KERNEL_STATIC_SHARED_BYTES},
  {"registers", GCL_KERNEL_REGISTERS},
  {"max_dynamic_shared_bytes", GCL_KERNEL_MAX_DYNAMIC_SHARED_BYTES},
  {"local_bytes", GCL_KERNEL_LOCAL_BYTES},
  {"preferred_carveout", GCL_KERNEL_PREFERRED_CARVEOUT},
  {"cluster_scheduling_policy", GCL_KERNEL_CLUSTER_SCHEDULING_POLICY},
  {"nonportable_cluster_size_allowed", GCL_KERNEL_NONPORTABLE_CLUSTER_SIZE_ALLOWED}};
enum { NATTRS = sizeof attrs / sizeof *attrs };

static const gclpy_arg attr_name = {"name", 0, gclpy_to_str, 0, 0, 0};

/* The attribute a name (converted by gclpy_to_str) names. */
static int attr_of(gclpy_state *st, const char *s, const char *fn, gcl_kernel_attr *out) {
  for (int i = 0; i < NATTRS; i++)
    if (strcmp(s, attrs[i].name) == 0) return *out = attrs[i].attr, 0;
  gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "%s: name: expected one of max_threads_per_block, "
                  "static_shared_bytes, registers, max_dynamic_shared_bytes, local_bytes, "
                  "preferred_carveout, cluster_scheduling_policy, "
                  "nonportable_cluster_size_allowed; got '%s'", fn, s);
  return -1;
}

PyObject *gclpy_kernel_attribute(PyObject *self, PyObject *name) {
  gclpy_state *st = GCLPY_ST(self);
  gcl_kernel_attr a;
  const char *text;
  if (gclpy_parse_one(st, "attribute", &attr_name, name, &text) < 0 ||
      attr_of(st, text, "attribute", &a) < 0)
    return NULL;
  int value = 0;
  gcl_status s = gcl_kernel_attribute(((gclpy_kernel *)self)->kernel, a, &value);
  return s == GCL_OK ? PyLong_FromLong(value) : gclpy_raise(st, s);
}

PyObject *gclpy_kernel_attributes(PyObject *self, void *closure) {
  gclpy_state *st = GCLPY_ST(self);
  (void)closure;
  PyObject *d = PyDict_New();
  for (int i = 0; d && i < NATTRS; i++) {
    int value = 0;
    gcl_status s = gcl_kernel_attribute(((gclpy_kernel *)self)->kernel, attrs[i].attr, &value);
    if (s != GCL_OK) return Py_DECREF(d), gclpy_raise(st, s);
    PyObject *v = PyLong_FromLong(value);
    if (!v || PyDict_SetItemString(d, attrs[i].name, v) < 0) Py_CLEAR(d);
    Py_XDECREF(v);
  }
  return d;
}

struct set_attr_in { const char *name; int value; };
static const gclpy_arg set_attr_args[] = {
  GCLPY_ARG(struct set_attr_in, name, gclpy_to_str),
  GCLPY_ARG(struct set_attr_in, value, gclpy_to_int, INT_MIN, INT_MAX),
};
static const gclpy_params set_attr_params = {"set_attribute", set_attr_args, 2, 2, 2};

PyObject *gclpy_kernel_set_attribute(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                                     PyObject *kwnames) {
  gclpy_state *st = GCLPY_ST(self);
  struct set_attr_in in = {NULL, 0};
  gcl_kernel_attr a;
  if (gclpy_parse(st, &set_attr_params, NULL, argv, nargs, kwnames, &in) < 0 ||
      attr_of(st, in.name, "set_attribute", &a) < 0)
    return NULL;
  gcl_status s = gcl_kernel_set_attribute(((gclpy_kernel *)self)->kernel, a, in.value);
  if (s != GCL_OK) return gclpy_raise(st, s);
  Py_RETURN_NONE;
}

const char gclpy_doc_occupancy[] =
    "occupancy($self, /, block, shared=0)\n--\n\n-> int. How many blocks of `block` threads (an int or a tuple)\n"
    "with `shared` bytes of dynamic shared memory fit on one SM at once (0 when none does):\n"
    "gcl_kernel_occupancy. A shared over the kernel's limit raises it as a launch would.";
const char gclpy_doc_max_cooperative_grid[] =
    "max_cooperative_grid($self, /, block, shared=0)\n--\n\n-> int. The largest cooperative (or persistent)\n"
    "grid: blocks per SM x the device's SMs (gclaunch.Error GCL_ERROR_INVALID_CONFIG when not one\n"
    "block fits).";
const char gclpy_doc_active_clusters[] =
    "active_clusters($self, /, cluster, block, shared=0)\n--\n\n-> int. How many clusters of `cluster` blocks\n"
    "(int or tuple; missing dimensions are 1) with `block` threads and `shared` bytes can be\n"
    "active at once (cuOccupancyMaxActiveClusters). More than 8 blocks per cluster need\n"
    "set_attribute('nonportable_cluster_size_allowed', 1) first.";
const char gclpy_doc_persistent_config[] =
    "persistent_config($self, /, block, shared=0)\n--\n\n-> dict. The launch of a persistent kernel:\n"
    "{'grid': (SMs x blocks per SM, 1, 1), 'block': (block, 1, 1), 'shared': shared}\n"
    "(gcl_kernel_persistent_config), ready for k.launch(args=..., **cfg).";
const char gclpy_doc_attribute[] =
    "attribute($self, name, /)\n--\n\n-> int. One attribute of the kernel on its device (see attributes).";
const char gclpy_doc_set_attribute[] =
    "set_attribute($self, /, name, value)\n--\n\nSets what persistent kernels set before their first launch\n"
    "(gcl_kernel_set_attribute): 'max_dynamic_shared_bytes' (0 ... the device's opt-in limit minus\n"
    "the static shared memory), 'preferred_carveout' (-1 ... 100), 'cluster_scheduling_policy'\n"
    "(0 ... 2), 'nonportable_cluster_size_allowed' (0 or 1). A read-only attribute or a value out\n"
    "of range raises gclaunch.Error naming the range.";
const char gclpy_doc_attributes[] =
    "dict of every attribute: max_threads_per_block, static_shared_bytes, registers,\n"
    "max_dynamic_shared_bytes, local_bytes, preferred_carveout, cluster_scheduling_policy,\n"
    "nonportable_cluster_size_allowed";
