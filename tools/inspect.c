/* gclaunch inspect: a module's kernels and their parameter layout, read on the CPU (no GPU).
 * --json prints the one object DESIGN.md fixes; the default is a table for people. */
#include "cli.h"

#include <gclaunch/gclaunch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct options {
  const char *file, *kernel;
  int sm;
  bool json;
} options;

static void inspect_usage(FILE *f) {
  fprintf(f, "usage: gclaunch inspect FILE [--arch sm_NN] [--kernel NAME] [--json]\n\n"
             "Reads a cubin, fatbin or PTX file and prints each kernel's parameter offsets,\n"
             "sizes and alignments as the device lays them out. --arch picks the fatbin entry\n"
             "and the architecture PTX is laid out for (default: a cubin's own, sm_90 for PTX).\n");
}

/* "sm_90", "compute_90", "90" (a trailing a/f suffix is accepted) -> 90; 0 if malformed. */
static int parse_arch(const char *s) {
  if (!strncmp(s, "sm_", 3)) s += 3;
  else if (!strncmp(s, "compute_", 8)) s += 8;
  char *end;
  long v = strtol(s, &end, 10);
  if (end == s || (*end && strcmp(end, "a") && strcmp(end, "f")) || v < 10 || v > 255) return 0;
  return (int)v;
}

/* Returns 0 on success, 2 on a usage error (message printed). */
static int parse_options(int argc, char **argv, options *o) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--json")) o->json = true;
    else if ((!strcmp(a, "--arch") || !strcmp(a, "--kernel")) && i + 1 < argc) {
      if (a[2] == 'k') o->kernel = argv[++i];
      else if ((o->sm = parse_arch(argv[++i])) == 0) {
        fprintf(stderr, "gclaunch inspect: --arch '%s' is not like sm_90\n", argv[i]);
        return 2;
      }
    } else if (a[0] == '-' && a[1] != '\0') {
      fprintf(stderr, "gclaunch inspect: unknown or incomplete option '%s'\n", a);
      return 2;
    } else if (o->file) {
      fprintf(stderr, "gclaunch inspect: more than one FILE ('%s', '%s')\n", o->file, a);
      return 2;
    } else
      o->file = a;
  }
  if (o->file) return 0;
  inspect_usage(stderr);
  return 2;
}

static void json_string(const char *s) {
  putchar('"');
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') printf("\\%c", c);
    else if (c < 0x20) printf("\\u%04x", c);
    else putchar(c);
  }
  putchar('"');
}

static void json_kernel(const gcl_image *img, size_t k, const gcl_image_kernel *info) {
  printf("{\"name\": ");
  json_string(info->name);
  printf(", \"param_bytes\": %zu, \"params\": [", info->param_bytes);
  for (size_t p = 0; p < info->param_count; p++) {
    size_t off = 0, size = 0, align = 0;
    gcl_image_param(img, k, p, &off, &size, &align);
    printf("%s{\"index\": %zu, \"offset\": %zu, \"size\": %zu", p ? ", " : "", p, off, size);
    if (align) printf(", \"align\": %zu", align);
    putchar('}');
  }
  printf("]}");
}

static void table_kernel(const gcl_image *img, size_t k, const gcl_image_kernel *info) {
  printf("\nkernel %s: %zu parameter%s, %zu bytes", info->name, info->param_count,
         info->param_count == 1 ? "" : "s", info->param_bytes);
  if (info->registers >= 0) printf(", %d registers", info->registers);
  if (info->shared_bytes > 0) printf(", %ld bytes static shared", info->shared_bytes);
  if (info->max_threads > 0) printf(", max %d threads", info->max_threads);
  if (info->reqntid[0] > 0)
    printf(", requires %dx%dx%d threads", info->reqntid[0], info->reqntid[1], info->reqntid[2]);
  printf("\n");
  if (info->param_count) printf("  %5s %8s %8s %6s  %s\n", "index", "offset", "size", "align", "kind");
  for (size_t p = 0; p < info->param_count; p++) {
    size_t off = 0, size = 0, align = 0;
    gcl_image_param(img, k, p, &off, &size, &align);
    const char *kind = gcl_image_param_kind(img, k, p);
    char a[24] = "-";
    if (align) snprintf(a, sizeof a, "%zu", align);
    printf("  %5zu %8zu %8zu %6s  %s\n", p, off, size, a, *kind ? kind : "-");
  }
}

static void print_image(const gcl_image *img, const options *o, size_t only) {
  const char *format = gcl_image_format_name(gcl_image_get_format(img));
  if (o->json) {
    printf("{\"file\": ");
    json_string(o->file);
    printf(", \"format\": \"%s\", \"arch\": \"sm_%d\", \"kernels\": [", format, gcl_image_sm(img));
  } else
    printf("%s: %s, offsets for sm_%d, %zu kernel%s\n", o->file, format, gcl_image_sm(img),
           gcl_image_kernel_count(img), gcl_image_kernel_count(img) == 1 ? "" : "s");
  bool first = true;
  for (size_t k = 0; k < gcl_image_kernel_count(img); k++) {
    gcl_image_kernel info;
    if ((only != (size_t)-1 && k != only) || gcl_image_get_kernel(img, k, &info) != GCL_OK)
      continue;
    if (o->json) {
      printf("%s", first ? "" : ", ");
      json_kernel(img, k, &info);
    } else
      table_kernel(img, k, &info);
    first = false;
  }
  if (o->json) printf("]}\n");
}

int gcl_cmd_inspect(int argc, char **argv) {
  options o = {0};
  if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
    inspect_usage(stdout);
    return 0;
  }
  int rc = parse_options(argc, argv, &o);
  if (rc) return rc;
  size_t size = 0, only = (size_t)-1;
  void *data = NULL;
  if (gcl_file_read(o.file, &data, &size) != GCL_OK) {
    fprintf(stderr, "gclaunch inspect: %s\n", gcl_last_error());
    return 1;
  }
  gcl_image *img = NULL;
  gcl_status s = gcl_image_parse(data, size, o.sm, &img);
  gcl_file_free(data);
  if (s == GCL_OK && o.kernel) s = gcl_image_find_kernel(img, o.kernel, &only);
  if (s != GCL_OK) {
    fprintf(stderr, "gclaunch inspect: %s: %s: %s\n", o.file, gcl_status_name(s), gcl_last_error());
    gcl_image_destroy(img);
    return 1;
  }
  if (o.sm && gcl_image_get_format(img) == GCL_IMAGE_CUBIN && gcl_image_sm(img) != o.sm)
    fprintf(stderr, "gclaunch inspect: note: %s is a cubin for sm_%d; its own offsets are shown "
            "(--arch picks fatbin entries and lays out PTX)\n", o.file, gcl_image_sm(img));
  print_image(img, &o, only);
  gcl_image_destroy(img);
  return 0;
}
