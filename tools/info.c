/* gclaunch info: what this machine offers -- driver, devices, NVRTC, NVSHMEM -- and why not if not.
 * --json prints the same as one JSON object (also when there is no driver). */
#include "cli.h"
#include "cliopts.h"

#include <gclaunch/gclaunch.h>
#include <stdio.h>
#include <string.h>

typedef enum info_option { INFO_JSON } info_option;
#define INFO_OPTION_COUNT (INFO_JSON + 1)
static const cli_option info_options[INFO_OPTION_COUNT] = {
    [INFO_JSON] = {"--json", NULL,
                   "one JSON object {gclaunch, driver, devices, nvrtc, nvshmem}; a part that is missing\n"
                   "has \"found\": false with the status and the message"},
};

void info_usage(FILE *f) {
  fprintf(f, "usage: gclaunch info [--json]\n\n"
             "Says whether the CUDA driver, devices, NVRTC and NVSHMEM's host library were found,\n"
             "and why not if not.\n");
  cli_options_print(f, "info", info_options, INFO_OPTION_COUNT);
}

/* How re-points of tensor maps reach device d's maps (gcl_tensormap_repoint_path): 1 and *p
 * filled, or 0 when the device has no tensor maps or no context could be made (*p's reason
 * says which). */
static int repoint_path(int d, int sm, gcl_tensormap_path *p) {
  memset(p, 0, sizeof *p);
  if (sm < 90) {
    snprintf(p->reason, sizeof p->reason, "sm_%d has no tensor maps", sm);
    return 0;
  }
  gcl_context *ctx = NULL;
  gcl_status s = gcl_context_create(d, &ctx);
  if (s == GCL_OK) s = gcl_tensormap_repoint_path(ctx, p);
  if (s != GCL_OK) snprintf(p->reason, sizeof p->reason, "%s", gcl_last_error());
  gcl_context_destroy(ctx);
  return s == GCL_OK;
}

/* "patch (interleave none, 16B, 32B)" or "driver": what re-points use. */
static const char *path_name(const gcl_tensormap_path *p, char *buf, size_t cap) {
  static const char *const names[] = {"none", "16B", "32B"};
  if (!p->patched) return "driver (cuTensorMapReplaceAddress)";
  size_t n = (size_t)snprintf(buf, cap, "patch (interleave");
  for (int i = 0; i < 3 && n < cap; i++)
    if (p->patched >> i & 1u)
      n += (size_t)snprintf(buf + n, cap - n, "%s %s", n > 17 ? "," : "", names[i]);
  if (n < cap) snprintf(buf + n, cap - n, "%s)", p->patched == 7u ? "" : "; the rest: driver");
  return buf;
}

static void print_devices(void) {
  int count = 0;
  if (gcl_device_count(&count) != GCL_OK) {
    printf("devices:  none (%s)\n", gcl_last_error());
    return;
  }
  printf("devices:  %d\n", count);
  for (int d = 0; d < count; d++) {
    gcl_device_info info;
    if (gcl_device_query(d, &info) != GCL_OK) {
      printf("  [%d] %s\n", d, gcl_last_error());
      continue;
    }
    printf("  [%d] %s, sm_%d, %d multiprocessors, %.1f GiB, max parameter bytes %d, "
           "max dynamic shared memory %d bytes\n",
           d, info.name, info.sm, info.multiprocessors,
           (double)info.total_memory / (1024.0 * 1024.0 * 1024.0), GCL_PARAM_LIMIT,
           info.max_shared_per_block_optin);
    gcl_tensormap_path p;
    char name[96];
    if (repoint_path(d, info.sm, &p))
      printf("      tensor-map re-points: %s -- %s\n", path_name(&p, name, sizeof name), p.reason);
    else
      printf("      tensor-map re-points: none (%s)\n", p.reason);
  }
}

static void print_driver(void) {
  gcl_status s = gcl_driver_init();
  int version = 0;
  if (gcl_driver_version(&version) == GCL_OK)
    printf("driver:   %s, CUDA %d.%d\n", gcl_driver_path(), version / 1000, (version % 1000) / 10);
  if (s != GCL_OK) {
    if (s == GCL_ERROR_NO_DRIVER)
      printf("driver:   not found -- there is no CUDA driver on this machine (looked for '%s').\n"
             "          GPU features are unavailable; everything on the CPU works.\n",
             gcl_driver_path());
    printf("          %s: %s\n", gcl_status_name(s), gcl_last_error());
    return;
  }
  print_devices();
}

static void print_nvrtc(void) {
  int major = 0, minor = 0;
  if (gcl_nvrtc_version(&major, &minor) != GCL_OK) {
    printf("nvrtc:    not found (%s)\n", gcl_last_error());
    return;
  }
  printf("nvrtc:    %s, version %d.%d\n", gcl_nvrtc_path(), major, minor);
  int archs[64];
  size_t n = 0;
  if (gcl_nvrtc_archs(archs, 64, &n) != GCL_OK) {
    printf("          architectures unknown (%s)\n", gcl_last_error());
    return;
  }
  printf("          architectures:");
  for (size_t i = 0; i < n && i < 64; i++) printf(" sm_%d", archs[i]);
  printf("\n");
}

static void json_string(const char *s) {
  putchar('"');
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') printf("\\%c", c);
    else if (c < 0x20) printf("\\u%04x", c);
    else putchar(c);
  }
  putchar('"');
}

/* "found": false, "status": ..., "error": ... (the message of the call that failed). */
static void json_missing(gcl_status s) {
  printf("\"found\": false, \"status\": \"%s\", \"error\": ", gcl_status_name(s));
  json_string(gcl_last_error());
}

static void json_devices(void) {
  int count = 0;
  if (gcl_device_count(&count) != GCL_OK) count = 0;
  printf(", \"devices\": [");
  for (int d = 0; d < count; d++) {
    gcl_device_info info;
    printf("%s{\"index\": %d", d ? ", " : "", d);
    if (gcl_device_query(d, &info) == GCL_OK) {
      printf(", \"name\": ");
      json_string(info.name);
      printf(", \"sm\": %d, \"multiprocessors\": %d, \"memory_bytes\": %zu, "
             "\"max_threads_per_block\": %d, \"max_shared_per_block_optin\": %d",
             info.sm, info.multiprocessors, info.total_memory, info.max_threads_per_block,
             info.max_shared_per_block_optin);
      gcl_tensormap_path p;
      int ok = repoint_path(d, info.sm, &p);
      printf(", \"tensormap_repoint\": {\"path\": \"%s\", \"patched_interleaves\": %u, "
             "\"checks\": %d, \"mismatches\": %d, \"reason\": ",
             !ok ? "none" : p.patched ? "patch" : "driver", p.patched, p.checks, p.mismatches);
      json_string(p.reason);
      putchar('}');
    } else
      printf(", \"error\": "), json_string(gcl_last_error());
    putchar('}');
  }
  putchar(']');
}

static void json_driver(void) {
  gcl_status s = gcl_driver_init();
  int version = 0;
  printf(", \"driver\": {\"path\": ");
  json_string(gcl_driver_path());
  printf(", ");
  if (s != GCL_OK) json_missing(s);
  else if (gcl_driver_version(&version) == GCL_OK)
    printf("\"found\": true, \"cuda_version\": \"%d.%d\"", version / 1000, (version % 1000) / 10);
  else printf("\"found\": true");
  putchar('}');
  if (s == GCL_OK) json_devices();
  else printf(", \"devices\": []");
}

static void json_nvrtc(void) {
  int major = 0, minor = 0, archs[64];
  size_t n = 0;
  printf(", \"nvrtc\": {");
  gcl_status s = gcl_nvrtc_version(&major, &minor);
  if (s != GCL_OK) {
    json_missing(s);
    printf("}");
    return;
  }
  printf("\"found\": true, \"path\": ");
  json_string(gcl_nvrtc_path());
  printf(", \"version\": \"%d.%d\", \"archs\": [", major, minor);
  if (gcl_nvrtc_archs(archs, 64, &n) != GCL_OK) n = 0;
  for (size_t i = 0; i < n && i < 64; i++) printf("%s\"sm_%d\"", i ? ", " : "", archs[i]);
  printf("]}");
}

/* NVSHMEM's host library (multi-GPU): where, which version, or why not (too old: both). */
static void print_nvshmem(void) {
  gcl_status s = gcl_nvshmem_init();
  int v[3];
  bool versioned = gcl_nvshmem_version(&v[0], &v[1], &v[2]) == GCL_OK;
  if (s == GCL_OK) printf("nvshmem:  %s, version %d.%d.%d\n", gcl_nvshmem_path(), v[0], v[1], v[2]);
  else if (versioned) printf("nvshmem:  unusable (%s)\n", (gcl_nvshmem_init(), gcl_last_error()));
  else printf("nvshmem:  not found (%s)\n", (gcl_nvshmem_init(), gcl_last_error()));
}

static void json_nvshmem(void) {
  gcl_status s = gcl_nvshmem_init();
  int v[3];
  printf(", \"nvshmem\": {");
  if (s != GCL_OK) {
    json_missing(s);
    if (gcl_nvshmem_version(&v[0], &v[1], &v[2]) == GCL_OK) {
      printf(", \"path\": ");
      json_string(gcl_nvshmem_path());
      printf(", \"version\": \"%d.%d.%d\"", v[0], v[1], v[2]);
    }
    printf("}");
    return;
  }
  gcl_nvshmem_version(&v[0], &v[1], &v[2]);
  printf("\"found\": true, \"path\": ");
  json_string(gcl_nvshmem_path());
  printf(", \"version\": \"%d.%d.%d\"}", v[0], v[1], v[2]);
}

int cmd_info(int argc, char **argv) {
  bool json = false;
  for (int i = 1; i < argc; i++) {
    const char *value;
    int id = cli_option_next("info", info_options, INFO_OPTION_COUNT, argc, argv, &i, &value);
    if (id == CLI_HELP) return info_usage(stdout), 0;
    if (id == CLI_OPERAND) fprintf(stderr, "gclaunch info: unknown argument '%s'\n", argv[i]);
    if (id < 0) return info_usage(stderr), 2;
    switch ((info_option)id) {
    case INFO_JSON: json = true; break;
    }
  }
  if (json) {
    printf("{\"gclaunch\": ");
    json_string(gcl_version());
    json_driver();
    json_nvrtc();
    json_nvshmem();
    printf("}\n");
    return 0;
  }
  printf("gclaunch: %s\n", gcl_version());
  print_driver();
  print_nvrtc();
  print_nvshmem();
  return 0;
}
