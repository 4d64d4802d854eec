/* Several GPUs on the CPU: gclaunch against libfakecuda.so with two devices of different
 * architectures (device 0 "Fake H200" sm_90, device 1 "Fake B200" sm_100). One module (one
 * context-independent library) serves both; each device has its own kernel handle, driver layout
 * and packed buffer, laid out by the engine for its sm; launches record their device; a
 * signature refused on one device leaves the other's kernel usable; a kernel fault on one device
 * stops both (it is process-wide). */
#include "fakecuda_test.h"

#include <stdio.h>
#include "../common/tmap_field.h"

#define SIG "grid_constant tensormap m, u8* out"

typedef struct device_side {
  gcl_context *ctx;
  gcl_kernel *kernel;
  gcl_args *args;
  uint64_t buf;
  fake_tensor tensor;
  size_t off[2], size[2], bytes; /* the engine's layout of SIG for this device's sm */
} device_side;

typedef struct world {
  device_side dev[2];
  gcl_module *mod;
} world;

static const gcl_launch_config one_block = {.grid = {1, 1, 1}, .block = {128, 1, 1}};

/* The engine's layout of sig for sm: offsets, sizes and the buffer size. */
static void engine_layout(const char *sig, int sm, size_t off[2], size_t size[2], size_t *bytes) {
  gcl_signature *s = NULL;
  gcl_layout *l = NULL;
  cr_assert_eq(gcl_signature_parse(sig, &s), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_layout_create(s, sm, &l), GCL_OK, "%s", gcl_last_error());
  for (size_t i = 0; i < 2; i++) cr_assert_eq(gcl_layout_param(l, i, &off[i], &size[i], NULL), GCL_OK);
  *bytes = gcl_layout_size(l);
  gcl_layout_destroy(l);
  gcl_signature_destroy(s);
}

static void two_devices(void) {
  fake_use();
  cr_assert_eq(fakecuda_set_devices(2), 0);
}

TestSuite(multidevice, .init = two_devices);

/* Contexts, buffers and the driver's per-device layouts of kernel "k2" (the engine's for each
 * device's sm, as a compiler for that sm would place them); one module loaded in device 0. */
static void world_open(world *w) {
  memset(w, 0, sizeof *w);
  for (int d = 0; d < 2; d++) {
    device_side *s = &w->dev[d];
    engine_layout(SIG, d ? 100 : 90, s->off, s->size, &s->bytes);
    cr_assert_eq(fakecuda_set_params_on(d, "k2", 2, s->off, s->size), 0);
    cr_assert_eq(gcl_context_create(d, &s->ctx), GCL_OK, "%s", gcl_last_error());
    cr_assert_eq(gcl_mem_alloc(s->ctx, 64 * 64 * 4, &s->buf), GCL_OK, "%s", gcl_last_error());
    fake_tensor_init(&s->tensor, s->buf, 64, 64);
    s->tensor.t.device.device_id = d;
  }
  cr_assert_eq(gcl_module_load_data(w->dev[0].ctx, fake_ptx, sizeof fake_ptx, &w->mod), GCL_OK,
               "%s", gcl_last_error());
}

/* Kernel and args on device d: the tensor map encoded in d's context, out = d's buffer + d. */
static void world_kernel(world *w, int d) {
  device_side *s = &w->dev[d];
  gcl_tensormap_options o = fake_tmap_options();
  cr_assert_eq(gcl_module_find_kernel_on(w->mod, s->ctx, "k2", SIG, &s->kernel), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_args_create(gcl_kernel_layout(s->kernel), &s->args), GCL_OK);
  cr_assert_eq(gcl_args_restrict_device(s->args, gcl_context_device(s->ctx)), GCL_OK);
  cr_assert_eq(gcl_args_set_tensormaps(s->args, s->ctx, TMAP_FIELD(s->args, 0, 0), 1, (const DLTensor *const[]){&s->tensor.t}, &o, 1, 0), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_args_set_ptr(s->args, 1, s->buf + (uint64_t)d), GCL_OK, "%s", gcl_last_error());
}

static void world_close(world *w) {
  for (int d = 0; d < 2; d++) gcl_args_destroy(w->dev[d].args);
  gcl_module_destroy(w->mod); /* frees the kernels of both devices */
  for (int d = 0; d < 2; d++) {
    if (w->dev[d].buf) gcl_mem_free(w->dev[d].ctx, w->dev[d].buf);
    gcl_context_destroy(w->dev[d].ctx);
  }
  assert_nothing_live();
}

Test(multidevice, two_devices_of_different_architectures) {
  int n = 0;
  cr_assert_eq(gcl_device_count(&n), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(n, 2);
  gcl_device_info a, b;
  cr_assert_eq(gcl_device_query(0, &a), GCL_OK);
  cr_assert_eq(gcl_device_query(1, &b), GCL_OK);
  cr_assert_str_eq(a.name, "Fake H200");
  cr_assert_eq(a.sm, 90);
  cr_assert_str_eq(b.name, "Fake B200");
  cr_assert_eq(b.sm, 100);
  gcl_context *c1 = NULL;
  cr_assert_eq(gcl_context_create(1, &c1), GCL_OK);
  cr_assert_eq(gcl_context_device(c1), 1);
  cr_assert_eq(gcl_context_sm(c1), 100);
  gcl_context *bad = (gcl_context *)0x1;
  cr_assert_eq(gcl_context_create(2, &bad), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("expected 0 ... 1, got 2");
  cr_assert_eq(bad, (gcl_context *)0x1);
  gcl_context_destroy(c1);
  assert_nothing_live();
}

Test(multidevice, the_engine_places_the_signature_differently_per_sm) {
  size_t off[2], size[2], bytes;
  engine_layout(SIG, 90, off, size, &bytes);
  cr_assert(off[0] == 112 && off[1] == 240 && bytes == 248, "sm_90: %zu %zu %zu", off[0], off[1], bytes);
  engine_layout(SIG, 100, off, size, &bytes);
  cr_assert(off[0] == 0 && off[1] == 128 && bytes == 136, "sm_100: %zu %zu %zu", off[0], off[1], bytes);
}

Test(multidevice, one_module_per_device_kernels_and_layouts) {
  world w;
  world_open(&w);
  world_kernel(&w, 0);
  world_kernel(&w, 1);
  cr_assert_eq(fakecuda_library_count(), 1, "one library load serves both devices");
  cr_assert_eq(fakecuda_live("library"), 1);
  for (int d = 0; d < 2; d++) {
    device_side *s = &w.dev[d];
    cr_assert_eq(gcl_kernel_context(s->kernel), s->ctx);
    const gcl_layout *l = gcl_kernel_layout(s->kernel);
    cr_assert_eq(gcl_layout_size(l), s->bytes, "device %d", d);
    for (size_t i = 0; i < 2; i++) {
      size_t off = 0, size = 0;
      cr_assert_eq(gcl_layout_param(l, i, &off, &size, NULL), GCL_OK);
      cr_assert(off == s->off[i] && size == s->size[i], "device %d parameter %zu: %zu/%zu", d, i, off, size);
    }
  }
  cr_assert_neq(w.dev[0].kernel, w.dev[1].kernel);
  cr_assert_eq(gcl_kernel_context(NULL), NULL);
  world_close(&w);
}

/* The packed buffer of device d: the fake's descriptor of d's tensor at the map's offset, d's
 * buffer address at the pointer's offset, exactly the engine's size. */
static void assert_packed(const device_side *s, const void *data, size_t size, int d) {
  cr_assert_eq(size, s->bytes, "device %d buffer: %zu bytes", d, size);
  uint64_t map_addr = 0, ptr = 0;
  memcpy(&map_addr, (const char *)data + s->off[0], 8); /* the fake map starts with the address */
  memcpy(&ptr, (const char *)data + s->off[1], 8);
  cr_assert_eq(map_addr, s->buf, "device %d: tensor map at offset %zu", d, s->off[0]);
  cr_assert_eq(ptr, s->buf + (uint64_t)d, "device %d: pointer at offset %zu", d, s->off[1]);
}

Test(multidevice, packed_buffers_and_launches_are_per_device) {
  world w;
  world_open(&w);
  world_kernel(&w, 0);
  world_kernel(&w, 1);
  const void *data[2];
  size_t size[2];
  for (int d = 0; d < 2; d++) {
    cr_assert_eq(gcl_args_buffer(w.dev[d].args, &data[d], &size[d]), GCL_OK);
    assert_packed(&w.dev[d], data[d], size[d], d);
  }
  for (int d = 1; d >= 0; d--) { /* device 1 first: the launch must bind the kernel's context */
    cr_assert_eq(gcl_launch(w.dev[d].kernel, &one_block, w.dev[d].args), GCL_OK, "%s", gcl_last_error());
    fakecuda_launch rec;
    cr_assert_eq(fakecuda_last_launch_on(d, &rec), 0);
    cr_assert_eq(rec.device, d);
    cr_assert_str_eq(rec.kernel, "k2");
    cr_assert_eq(rec.param_bytes, size[d]);
    cr_assert_eq(memcmp(rec.params, data[d], size[d]), 0, "device %d received other bytes", d);
    cr_assert_eq(fakecuda_launch_count_on(d), 1);
  }
  cr_assert_eq(fakecuda_launch_count(), 2);
  world_close(&w);
}

/* The launch runs in the kernel's context, as the real driver decides it (docs/facts.md
 * "Contexts"): on a stream of that context whatever context is current -- gcl_launch then leaves
 * the current one alone -- and on the default stream only with it current, which gcl_launch
 * arranges when the driver refuses. */
/* A stream of device d's context and one_block on it in *cfg. */
static gcl_stream *stream_on(world *w, int d, gcl_launch_config *cfg) {
  gcl_stream *s = NULL;
  cr_assert_eq(gcl_stream_create(w->dev[d].ctx, 0, &s), GCL_OK, "%s", gcl_last_error());
  *cfg = one_block;
  cfg->stream = gcl_stream_handle(s);
  return s;
}

/* current: -1 none, else device current's context. */
static void make_current(world *w, int current) {
  if (current < 0) fakecuda_unbind();
  else cr_assert_eq(gcl_context_bind(w->dev[current].ctx), GCL_OK);
}

Test(multidevice, a_launch_on_the_kernels_stream_leaves_the_current_context_alone) {
  world w;
  world_open(&w);
  world_kernel(&w, 1);
  gcl_launch_config on_s1;
  gcl_stream *s1 = stream_on(&w, 1, &on_s1);
  for (int current = -1; current < 2; current++) { /* none, device 0's, device 1's */
    make_current(&w, current);
    long before = fakecuda_launch_count_on(1), sets = fakecuda_calls("cuCtxSetCurrent");
    cr_assert_eq(gcl_launch(w.dev[1].kernel, &on_s1, w.dev[1].args), GCL_OK, "%s", gcl_last_error());
    cr_assert_eq(fakecuda_launch_count_on(1), before + 1, "the launch ran on device 1");
    cr_assert_eq(fakecuda_current_device(), current, "the current context was changed");
    cr_assert_eq(fakecuda_calls("cuCtxSetCurrent"), sets);
  }
  gcl_stream_destroy(s1);
  world_close(&w);
}

Test(multidevice, a_launch_on_the_default_stream_binds_the_kernels_context) {
  world w;
  world_open(&w);
  world_kernel(&w, 1);
  for (int current = -1; current < 1; current++) { /* none, device 0's */
    make_current(&w, current);
    cr_assert_eq(gcl_launch(w.dev[1].kernel, &one_block, w.dev[1].args), GCL_OK, "%s", gcl_last_error());
    fakecuda_launch rec;
    cr_assert_eq(fakecuda_last_launch(&rec), 0);
    cr_assert_eq(rec.device, 1);
    cr_assert_eq(fakecuda_current_device(), 1, "the kernel's context is current after the launch");
  }
  world_close(&w);
}

/* The retry after a refused launch binds the kernel's context even when the current one cannot
 * be queried (cuCtxGetCurrent failing), and then cannot restore it: the kernel's stays current. */
Test(multidevice, a_refused_launch_binds_even_when_the_current_context_is_unknown) {
  world w;
  world_open(&w);
  world_kernel(&w, 1);
  make_current(&w, 0);
  fakecuda_fail_once("cuCtxGetCurrent", 709, 0); /* CONTEXT_IS_DESTROYED, once */
  cr_assert_eq(gcl_launch(w.dev[1].kernel, &one_block, w.dev[1].args), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(fakecuda_launch_count_on(1), 1);
  cr_assert_eq(fakecuda_current_device(), 1);
  world_close(&w);
}

/* A stream of another device: the driver's error, and the context that was current before is
 * current again -- the failed call changed nothing. */
Test(multidevice, a_stream_of_another_device_fails_and_changes_nothing) {
  world w;
  world_open(&w);
  world_kernel(&w, 1);
  gcl_launch_config on_s0;
  gcl_stream *s0 = stream_on(&w, 0, &on_s0);
  for (int current = -1; current < 2; current++) {
    make_current(&w, current);
    cr_assert_neq(gcl_launch(w.dev[1].kernel, &on_s0, w.dev[1].args), GCL_OK);
    assert_msg_has("cuLaunchKernelEx(kernel 'k2'");
    assert_msg_has("CUDA_ERROR_INVALID_HANDLE");
    cr_assert_eq(fakecuda_current_device(), current, "the current context was changed");
  }
  cr_assert_eq(fakecuda_launch_count(), 0);
  gcl_stream_destroy(s0);
  world_close(&w);
}

Test(multidevice, args_of_one_device_are_refused_by_the_other) {
  world w;
  world_open(&w);
  world_kernel(&w, 0);
  world_kernel(&w, 1);
  cr_assert_eq(gcl_launch(w.dev[1].kernel, &one_block, w.dev[0].args), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("parameter 0 'm' has offset 112 size 128, kernel 'k2' has offset 0 size 128");
  cr_assert_eq(fakecuda_launch_count(), 0);
  /* A tensor of device 0 into args restricted to device 1. */
  cr_assert_neq(gcl_args_set_dltensor(w.dev[1].args, 1, &w.dev[0].tensor.t), GCL_OK);
  assert_msg_has("parameter 1 'out'");
  world_close(&w);
}

Test(multidevice, signature_refused_on_device_1_only) {
  world w;
  world_open(&w);
  /* Device 1's driver reports what sm_90 places (not what the engine says for sm_100). */
  cr_assert_eq(fakecuda_set_params_on(1, "k2", 2, w.dev[0].off, w.dev[0].size), 0);
  gcl_kernel *k1 = (gcl_kernel *)0x1;
  cr_assert_eq(gcl_module_find_kernel_on(w.mod, w.dev[1].ctx, "k2", SIG, &k1), GCL_ERROR_SIGNATURE_MISMATCH);
  cr_assert_eq(k1, (gcl_kernel *)0x1, "a failed call must not write its output");
  assert_msg_has("kernel 'k2' on device 1 (sm_100)");
  assert_msg_has("parameter 0 'm': declared offset 0 size 128, kernel has offset 112 size 128");
  world_kernel(&w, 0); /* device 0 accepts the same signature, and launches */
  cr_assert_eq(gcl_launch(w.dev[0].kernel, &one_block, w.dev[0].args), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(fakecuda_launch_count_on(0), 1);
  /* Without a signature device 1's kernel takes the driver's layout. */
  cr_assert_eq(gcl_module_find_kernel_on(w.mod, w.dev[1].ctx, "k2", NULL, &k1), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_layout_size(gcl_kernel_layout(k1)), 248);
  world_close(&w);
}

/* A kernel built with CUDA 12 headers (64-aligned tensor maps) declared with CUDA 13's: sm_90
 * places the map at 48 instead of 112, sm_100 at 0 either way -- refused on device 0 only. */
Test(multidevice, cuda12_tensormap_refused_on_sm90_only) {
  world w;
  world_open(&w);
  for (int d = 0; d < 2; d++) {
    size_t off[2], size[2], bytes;
    engine_layout("grid_constant tensormap align(64) m, u8* out", d ? 100 : 90, off, size, &bytes);
    cr_assert_eq(fakecuda_set_params_on(d, "k12", 2, off, size), 0);
  }
  gcl_kernel *k = NULL;
  cr_assert_eq(gcl_module_find_kernel_on(w.mod, w.dev[0].ctx, "k12", SIG, &k), GCL_ERROR_SIGNATURE_MISMATCH);
  assert_msg_has("on device 0 (sm_90)");
  assert_msg_has("declared offset 112 size 128, kernel has offset 48 size 128");
  assert_msg_has("tensormap align(64)");
  cr_assert_eq(gcl_module_find_kernel_on(w.mod, w.dev[1].ctx, "k12", SIG, &k), GCL_OK, "%s", gcl_last_error());
  world_close(&w);
}

Test(multidevice, null_arguments) {
  world w;
  world_open(&w);
  gcl_kernel *k = (gcl_kernel *)0x1;
  cr_assert_eq(gcl_module_find_kernel_on(w.mod, NULL, "k2", SIG, &k), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("ctx");
  cr_assert_eq(gcl_module_find_kernel_on(NULL, w.dev[1].ctx, "k2", SIG, &k), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("mod");
  cr_assert_eq(gcl_module_find_kernel_on(w.mod, w.dev[1].ctx, NULL, SIG, &k), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("name");
  cr_assert_eq(gcl_module_find_kernel_on(w.mod, w.dev[1].ctx, "k2", SIG, NULL), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("out");
  cr_assert_eq(k, (gcl_kernel *)0x1);
  world_close(&w);
}

Test(multidevice, destroying_the_module_releases_both_devices_kernels) {
  world w;
  world_open(&w);
  world_kernel(&w, 0);
  world_kernel(&w, 1);
  for (int d = 0; d < 2; d++) gcl_args_destroy(w.dev[d].args); /* they borrow the layouts */
  w.dev[0].args = w.dev[1].args = NULL;
  cr_assert_eq(fakecuda_live("library"), 1);
  gcl_module_destroy(w.mod); /* frees both kernels (LeakSanitizer would see one left) */
  w.mod = NULL;
  cr_assert_eq(fakecuda_live("library"), 0);
  for (int d = 0; d < 2; d++) /* the contexts stay usable */
    cr_assert_eq(gcl_context_synchronize(w.dev[d].ctx), GCL_OK, "%s", gcl_last_error());
  world_close(&w);
}

/* A kernel fault is process-wide (cuda.h: "the process must be terminated and relaunched"):
 * after device 1 faulted, device 0 is refused too, without a call to the driver; releases work. */
Test(multidevice, a_fault_on_device_1_stops_device_0_too) {
  world w;
  world_open(&w);
  world_kernel(&w, 0);
  world_kernel(&w, 1);
  fakecuda_fail_once("cuLaunchKernelEx", 700, 0);
  cr_assert_eq(gcl_launch(w.dev[1].kernel, &one_block, w.dev[1].args), GCL_ERROR_KERNEL_FAULT);
  assert_msg_has("CUDA_ERROR_ILLEGAL_ADDRESS");
  cr_assert_eq(fakecuda_lost_on(1), 700);
  cr_assert_eq(fakecuda_lost_on(0), 0);
  cr_assert_eq(gcl_context_synchronize(w.dev[1].ctx), GCL_ERROR_KERNEL_FAULT, "device 1 stays lost");
  cr_assert_eq(gcl_launch(w.dev[0].kernel, &one_block, w.dev[0].args), GCL_ERROR_KERNEL_FAULT);
  assert_msg_has("kernel 'k2'"); /* the first fault's message */
  cr_assert_eq(fakecuda_launch_count_on(0), 0);
  cr_assert_eq(fakecuda_launch_count_on(1), 0);
  world_close(&w); /* releases still work */
  fakecuda_restore();
}

/* Runs the gclaunch CLI against the fake with two devices; its output into out. */
static void cli_env(const char *params, const char *args, char *out, size_t cap) {
  char build[1024], cmd[4096];
  snprintf(build, sizeof build, "%s", FAKECUDA_PATH);
  for (int up = 0; up < 3; up++) *strrchr(build, '/') = 0; /* build/tests/fakecuda/libfakecuda.so */
  snprintf(cmd, sizeof cmd, "cd '%s' && GCL_LIBCUDA='%s' FAKECUDA_DEVICES=2 "
           "FAKECUDA_PARAMS='%s' tools/gclaunch %s 2>&1; echo \"exit $?\"",
           build, FAKECUDA_PATH, params, args);
  FILE *p = popen(cmd, "r");
  cr_assert(p != NULL);
  size_t n = fread(out, 1, cap - 1, p);
  out[n] = 0;
  pclose(p);
}

static void cli(const char *args, char *out, size_t cap) {
  cli_env("saxpy=0/4,8/8,16/8,24/8", args, out, cap);
}

/* The fatbin: its compute_90 PTX runs on the sm_100 device (an sm_90 cubin would be refused). */
#define RUN_SAXPY "run kernels/smoke.fatbin saxpy --grid 4 --block 256 --arg f32:2 " \
                  "--arg buf:f32:1024=iota --arg y=buf:f32:1024 --arg u64:1024 "

Test(multidevice, cli_run_on_every_device) {
  char out[16384];
  cli(RUN_SAXPY "--devices all", out, sizeof out);
  cr_assert(strstr(out, "exit 0"), "%s", out);
  char *d0 = strstr(out, "on device 0, sm_90"), *d1 = strstr(out, "on device 1, sm_100");
  cr_assert(d0 && d1 && d0 < d1, "one report per device, in order: %s", out);
  cr_assert(strstr(d1, "sum 523776"), "device 1's own iota buffer: %s", out);
  cr_assert(strstr(d1, "kernel time: median ") && strstr(d1, "; CUDA events)") &&
            strstr(d1, "host time:   median "), "both times per device: %s", out);
  cli(RUN_SAXPY "--devices 1 --json", out, sizeof out);
  cr_assert(strstr(out, "\"device\": 1, \"sm\": 100") && !strstr(out, "\"device\": 0"), "%s", out);
  cr_assert(strstr(out, "\"kernel_us\": {\"median\": ") && strstr(out, "\"time_us\": {\"median\": "),
            "%s", out);
  cli(RUN_SAXPY "--devices 0,2", out, sizeof out);
  cr_assert(strstr(out, "device 2 does not exist (2 devices: 0 ... 1)") && strstr(out, "exit 2"), "%s", out);
  cli(RUN_SAXPY "--devices all --out y=/dev/null", out, sizeof out);
  cr_assert(strstr(out, "--out with 2 devices") && strstr(out, "exit 2"), "%s", out);
}

/* The demo on two fake devices: each gets its kernel from the one module with its own layout
 * (sm_90: the globals struct at 112; sm_100: at 0), half the tensors, its own descriptors and work; the fake
 * copies nothing, so verification fails -- naming device 0's first tensor. */
Test(multidevice, cli_demo_splits_the_tensors) {
  char out[32768];
  cli_env("megakernel_globals_ring_16@0=112/2176;megakernel_globals_ring_16@1=0/2176",
          "demo --tensors 8 --mib 8 --iters 1 --devices all", out, sizeof out);
  cr_assert(strstr(out, "devices:  2, tensor j on the (j mod 2)-th"), "%s", out);
  cr_assert(strstr(out, "device 1: Fake B200, sm_100"), "%s", out);
  cr_assert(strstr(out, "(the first device's, shared)"), "%s", out);
  cr_assert(strstr(out, "device 0: 16 descriptors") && strstr(out, "device 1: 16 descriptors"), "%s", out);
  cr_assert(strstr(out, "4 tensors, "), "%s", out);
  cr_assert(strstr(out, "demo: device 0 tensor 0 (f32"), "%s", out);
  cr_assert(strstr(out, "exit 1"), "%s", out);
  cli_env("", "demo --tensors 8 --mib 8 --devices 0,3", out, sizeof out);
  cr_assert(strstr(out, "device 3 does not exist (2 devices: 0 ... 1)") && strstr(out, "exit 1"), "%s", out);
}
