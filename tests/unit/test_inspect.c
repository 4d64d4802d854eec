/* `gclaunch inspect` as users run it: the JSON contract (docs/cli.md, `gclaunch inspect`) byte for byte, the table, and
 * errors (stderr naming the file, exit status 1). Runs the built program. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gclaunch/gclaunch.h"

/* The tool next to the kernels: BUILD/tools/gclaunch (or the test kit's). */
#define GCLAUNCH GCL_KERNEL("../tools/gclaunch")

/* Runs `gclaunch inspect args` with stderr joined to stdout; returns the exit status. */
static int run_inspect(const char *args, char *out, size_t cap) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "'%s' inspect %s 2>&1", GCLAUNCH, args);
  FILE *p = popen(cmd, "r");
  cr_assert_not_null(p, "cannot run %s", cmd);
  size_t n = fread(out, 1, cap - 1, p);
  out[n] = 0;
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Test(inspect, json_contract_for_a_cubin) {
  char out[8192], want[2048];
  const char *file = GCL_KERNEL("params.sm_90.cubin");
  char args[1024];
  snprintf(args, sizeof args, "'%s' --kernel k_one --json", file);
  cr_assert_eq(run_inspect(args, out, sizeof out), 0, "%s", out);
  snprintf(want, sizeof want,
           "{\"file\": \"%s\", \"format\": \"cubin\", \"arch\": \"sm_90\", \"nvshmem\": false, \"nvshmem_version\": null, \"kernels\": "
           "[{\"name\": \"k_one\", \"param_bytes\": 256, \"params\": ["
           "{\"index\": 0, \"offset\": 112, \"size\": 128}, "
           "{\"index\": 1, \"offset\": 240, \"size\": 1}, "
           "{\"index\": 2, \"offset\": 248, \"size\": 8}], \"waits\": false}]}\n",
           file);
  cr_assert_str_eq(out, want);
}

Test(inspect, json_for_ptx_has_alignments) {
  char out[16384], args[1024];
  snprintf(args, sizeof args, "--json --arch sm_80 '%s/params.compute_90.ptx'", GCL_KERNEL_DIR);
  cr_assert_eq(run_inspect(args, out, sizeof out), 0, "%s", out);
  cr_assert(strstr(out, "\"format\": \"ptx\", \"arch\": \"sm_80\""), "%s", out);
  cr_assert(strstr(out, "{\"name\": \"k_one\", \"param_bytes\": 176, \"params\": ["
                        "{\"index\": 0, \"offset\": 32, \"size\": 128, \"align\": 128}, "
                        "{\"index\": 1, \"offset\": 160, \"size\": 1, \"align\": 1}, "
                        "{\"index\": 2, \"offset\": 168, \"size\": 8, \"align\": 8}], "
                        "\"waits\": false}"),
            "%s", out);
}

/* Every kernel of the fatbin, in symbol-table order, with the values the library reads. */
Test(inspect, json_lists_every_kernel_of_a_fatbin) {
  char out[16384], args[1024], want[16384];
  const char *file = GCL_KERNEL("params.fatbin");
  snprintf(args, sizeof args, "'%s' --json --arch sm_90", file);
  cr_assert_eq(run_inspect(args, out, sizeof out), 0, "%s", out);
  FILE *f = fopen(file, "rb");
  cr_assert_not_null(f);
  static unsigned char data[1 << 20];
  size_t n = fread(data, 1, sizeof data, f);
  fclose(f);
  gcl_image *img = NULL;
  cr_assert_eq(gcl_image_parse(data, n, 90, &img), GCL_OK, "%s", gcl_last_error());
  size_t used = (size_t)snprintf(want, sizeof want, "{\"file\": \"%s\", \"format\": \"fatbin\", "
                                 "\"arch\": \"sm_90\", \"nvshmem\": false, \"nvshmem_version\": null, \"kernels\": [", file);
  for (size_t k = 0; k < gcl_image_kernel_count(img); k++) {
    gcl_image_kernel_info info;
    cr_assert_eq(gcl_image_kernel(img, k, &info), GCL_OK);
    used += (size_t)snprintf(want + used, sizeof want - used,
                             "%s{\"name\": \"%s\", \"param_bytes\": %zu, \"params\": [",
                             k ? ", " : "", info.name, info.param_bytes);
    for (size_t p = 0; p < info.param_count; p++) {
      size_t off, size;
      gcl_image_param(img, k, p, &off, &size, NULL);
      used += (size_t)snprintf(want + used, sizeof want - used,
                               "%s{\"index\": %zu, \"offset\": %zu, \"size\": %zu}",
                               p ? ", " : "", p, off, size);
    }
    int waits = gcl_image_kernel_waits(img, k);
    used += (size_t)snprintf(want + used, sizeof want - used, "], \"waits\": %s}",
                             waits > 0 ? "true" : waits == 0 ? "false" : "null");
  }
  snprintf(want + used, sizeof want - used, "]}\n");
  cr_assert_str_eq(out, want);
  gcl_image_destroy(img);
}

Test(inspect, table_for_people) {
  char out[16384], args[1024];
  snprintf(args, sizeof args, "'%s/params.sm_90.cubin'", GCL_KERNEL_DIR);
  cr_assert_eq(run_inspect(args, out, sizeof out), 0, "%s", out);
  cr_assert(strstr(out, "cubin, offsets for sm_90, 6 kernels"), "%s", out);
  cr_assert(strstr(out, "kernel k_one: 3 parameters, 256 bytes"), "%s", out);
  cr_assert(strstr(out, "never waits (no griddepcontrol.wait: PDL launches refused)\n"), "%s", out);
  cr_assert(strstr(out, "index   offset     size  align  kind"), "%s", out);
  cr_assert(strstr(out, "      0      112      128      -  -\n"), "%s", out);
  snprintf(args, sizeof args, "'%s/params.compute_90.ptx' --kernel k_maps", GCL_KERNEL_DIR);
  cr_assert_eq(run_inspect(args, out, sizeof out), 0, "%s", out);
  cr_assert(strstr(out, "      0      112     2048    128  bytes(2048) align(128)\n"), "%s", out);
  cr_assert_null(strstr(out, "k_one"), "--kernel shows one kernel: %s", out);
}

Test(inspect, errors_name_the_file) {
  char out[4096], args[1024];
  cr_assert_eq(run_inspect("/nonexistent/k.cubin", out, sizeof out), 1);
  cr_assert(strstr(out, "/nonexistent/k.cubin"), "%s", out);
  snprintf(args, sizeof args, "'%s'", GCL_SOURCE("kernels/meson.build")); /* not CUDA */
  cr_assert_eq(run_inspect(args, out, sizeof out), 1);
  cr_assert(strstr(out, "meson.build") && strstr(out, "not a cubin"), "%s", out);
  snprintf(args, sizeof args, "'%s/params.sm_90.cubin' --kernel nope", GCL_KERNEL_DIR);
  cr_assert_eq(run_inspect(args, out, sizeof out), 1);
  cr_assert(strstr(out, "nope"), "%s", out);
  snprintf(args, sizeof args, "'%s/params.multi.fatbin' --arch sm_75", GCL_KERNEL_DIR);
  cr_assert_eq(run_inspect(args, out, sizeof out), 1);
  cr_assert(strstr(out, "sm_75"), "%s", out);
  cr_assert_eq(run_inspect("x.cubin --arch banana", out, sizeof out), 2);
  cr_assert_eq(run_inspect("", out, sizeof out), 2);
}

Test(inspect, options_and_help) {
  char out[8192];
  cr_assert_eq(run_inspect("x.cubin --frobnicate", out, sizeof out), 2);
  cr_assert(strstr(out, "unknown option '--frobnicate'"), "%s", out);
  cr_assert_eq(run_inspect("x.cubin --kernel", out, sizeof out), 2);
  cr_assert(strstr(out, "option '--kernel' needs a value"), "%s", out);
  cr_assert_eq(run_inspect("--help", out, sizeof out), 0);
  cr_assert(strstr(out, "usage: gclaunch inspect FILE"), "%s", out);
  cr_assert_eq(run_inspect("x.cubin --json --help", out, sizeof out), 0);
}

/* CUDA source through NVRTC; C++ names demangled beside the mangled ones. */
Test(inspect, cuda_source_and_demangled_names) {
  char out[16384], args[1024];
  snprintf(args, sizeof args, "'%s' --json", GCL_SOURCE("kernels/smoke.cu"));
  cr_assert_eq(run_inspect(args, out, sizeof out), 0, "%s", out);
  cr_assert(strstr(out, "{\"name\": \"saxpy\", \"param_bytes\": 32"), "%s", out);
  char src[] = "/tmp/gcl-inspect-XXXXXX.cu";
  int fd = mkstemps(src, 3);
  cr_assert_geq(fd, 0);
  const char *text = "namespace ns { template <int N> __global__ void k(float *p, int n) {} }\n"
                     "template __global__ void ns::k<7>(float *, int);\n";
  cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
  close(fd);
  snprintf(args, sizeof args, "'%s' --json", src);
  int rc = run_inspect(args, out, sizeof out);
  snprintf(args, sizeof args, "'%s' --kernel 'ns::k<*>'", src);
  char table[4096];
  int rc2 = run_inspect(args, table, sizeof table);
  unlink(src);
  cr_assert_eq(rc, 0, "%s", out);
  cr_assert(strstr(out, "\"name\": \"_ZN2ns1kILi7EEEvPfi\", \"demangled\": \"void ns::k<7>(float*, int)\""), "%s", out);
  cr_assert_eq(rc2, 0, "%s", table);
  cr_assert(strstr(table, "1 kernel") && strstr(table, "  void ns::k<7>(float*, int)\n"), "%s", table);
}

Test(inspect, kernel_globs) {
  char out[16384], args[1024];
  snprintf(args, sizeof args, "'%s/launchcfg.sm_90.cubin' --kernel 'cfg_*' --json", GCL_KERNEL_DIR);
  cr_assert_eq(run_inspect(args, out, sizeof out), 0, "%s", out);
  size_t n = 0;
  for (const char *p = out; (p = strstr(p, "\"name\": ")); p++) n++;
  cr_assert_eq(n, 5, "cfg_bounded, cfg_smem, cfg_cluster, cfg_add, cfg_noparams: %s", out);
  cr_assert(!strstr(out, "bench_"), "%s", out);
  snprintf(args, sizeof args, "'%s/launchcfg.sm_90.cubin' --kernel 'zz*'", GCL_KERNEL_DIR);
  cr_assert_eq(run_inspect(args, out, sizeof out), 1);
  cr_assert(strstr(out, "no kernel matches 'zz*'"), "%s", out);
  snprintf(args, sizeof args, "'%s/launchcfg.sm_90.cubin' --kernel cfg_ad", GCL_KERNEL_DIR);
  cr_assert_eq(run_inspect(args, out, sizeof out), 1);
  cr_assert(strstr(out, "no kernel 'cfg_ad' (9 kernels)\n  kernels there:\n    cfg_add\n"), "%s", out);
}

Test(inspect, signature_checked_offline) {
  char out[8192], args[1024];
  snprintf(args, sizeof args, "'%s/smoke.sm_90.cubin' --signature 'f32 a, const f32* x, f32* y, u64 n'",
           GCL_KERNEL_DIR);
  cr_assert_eq(run_inspect(args, out, sizeof out), 0, "%s", out);
  cr_assert(strstr(out, "--signature matches 1 kernel on sm_90"), "%s", out);
  snprintf(args, sizeof args, "'%s/smoke.sm_90.cubin' --signature 'f32 a, const f32* x, f32* y, u32 n'",
           GCL_KERNEL_DIR);
  cr_assert_eq(run_inspect(args, out, sizeof out), 1, "%s", out);
  char want[2048];
  snprintf(want, sizeof want, "kernel 'saxpy' in '%s' (sm_90): parameter 3 "
           "'n': declared offset 24 size 4, kernel has offset 24 size 8", GCL_KERNEL("smoke.sm_90.cubin"));
  cr_assert(strstr(out, want), "%s", out);
  snprintf(args, sizeof args, "'%s/echo.fatbin' --kernel echo_maps4 --signature "
           "'grid_constant tensormap[4] m, f32 f, u8* out'", GCL_KERNEL_DIR);
  cr_assert_eq(run_inspect(args, out, sizeof out), 0, "%s", out);
}

/* k_maps255's device placement on sm_90 ends at 32,768 (ptxas accepts it, the driver does not). */
Test(inspect, warns_past_the_parameter_limit) {
  char out[8192], args[1024];
  snprintf(args, sizeof args, "'%s/params_limit.sm_90.cubin' --json", GCL_KERNEL_DIR);
  cr_assert_eq(run_inspect(args, out, sizeof out), 0, "%s", out);
  char want[2048];
  snprintf(want, sizeof want, "warning: %s: kernel 'k_maps255': "
           "its parameters end at byte 32768 on sm_90, past the 32764 bytes", GCL_KERNEL("params_limit.sm_90.cubin"));
  cr_assert(strstr(out, want), "%s", out);
}

/* --signature alone: every leaf by path, at device offsets, without a file. */
Test(inspect, signature_fields_without_a_file) {
  char out[8192];
  int rc = run_inspect("--signature 'u32 k, grid_constant struct{tensormap[2] loads, "
                       "struct{ptr p, u32 n}[2] segs, f32 x} g'", out, sizeof out);
  cr_assert_eq(rc, 0, "%s", out);
  cr_assert(strstr(out, "param 1 'g': offset 112 size 384 align 128"), "%s", out);
  cr_assert(strstr(out, "g.loads[1]                           240    128    128  tensormap"), "%s", out);
  cr_assert(strstr(out, "g.segs[1].n                          392      4      4  u32"), "%s", out);
  rc = run_inspect("--signature 'struct{u8, f64 d} s' --arch sm_100 --json", out, sizeof out);
  cr_assert_eq(rc, 0, "%s", out);
  cr_assert(strstr(out, "{\"path\": \"s.0\", \"param\": 0, \"offset\": 0, \"size\": 1, \"align\": 1, "
                        "\"kind\": \"u8\"}"), "%s", out);
  cr_assert(strstr(out, "{\"path\": \"s.d\", \"param\": 0, \"offset\": 8, \"size\": 8"), "%s", out);
  rc = run_inspect("--signature 'struct{u32 n, u32 n} s'", out, sizeof out);
  cr_assert_eq(rc, 2, "%s", out);
  cr_assert(strstr(out, "duplicate member name 'n'"), "%s", out);
}

/* "waits" (griddepcontrol.wait, for PDL launches): true, false and null from the image. */
Test(inspect, waits_for_pdl) {
  char out[16384], args[1024];
  snprintf(args, sizeof args, "'%s/pdl.check.sm_90.cubin' --json --kernel 'pdl_*wait*'", GCL_KERNEL_DIR);
  cr_assert_eq(run_inspect(args, out, sizeof out), 0, "%s", out);
  cr_assert(strstr(out, "{\"name\": \"pdl_waits\", \"param_bytes\": 20, \"params\": ["), "%s", out);
  cr_assert(strstr(out, "{\"index\": 2, \"offset\": 16, \"size\": 4}], \"waits\": true}"), "%s", out);
  cr_assert(strstr(out, "\"name\": \"pdl_nowait\"") && strstr(out, "], \"waits\": false}"), "%s", out);
  snprintf(args, sizeof args, "'%s/pdl.check.sm_90.cubin' --kernel pdl_waits", GCL_KERNEL_DIR);
  cr_assert_eq(run_inspect(args, out, sizeof out), 0, "%s", out);
  cr_assert(strstr(out, "kernel pdl_waits: 3 parameters, 20 bytes") &&
            strstr(out, ", waits (griddepcontrol.wait)\n"), "%s", out);
  char ptx[] = "/tmp/gcl-inspect-XXXXXX.ptx";
  int fd = mkstemps(ptx, 4);
  cr_assert_geq(fd, 0);
  const char *text = ".version 8.0\n.target sm_90\n.address_size 64\n"
                     ".func w() { griddepcontrol.wait; ret; }\n"
                     ".visible .entry u(.param .u64 p) { call w; ret; }\n";
  cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
  close(fd);
  snprintf(args, sizeof args, "'%s' --json", ptx);
  cr_assert_eq(run_inspect(args, out, sizeof out), 0, "%s", out);
  cr_assert(strstr(out, "\"waits\": null}"), "%s", out);
  snprintf(args, sizeof args, "'%s'", ptx);
  cr_assert_eq(run_inspect(args, out, sizeof out), 0, "%s", out);
  cr_assert(strstr(out, ", wait unknown\n"), "%s", out);
  unlink(ptx);
}
