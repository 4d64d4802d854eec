/* gclaunch inspect: a module's kernels and their parameter layout, read on the CPU (no GPU).
 * --json prints the one object docs/cli.md ("gclaunch inspect") fixes; the default is a table for people. */
#include "cli.h"
#include "climodule.h"
#include "cliopts.h"

#include <gclaunch/gclaunch.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct options {
  const char *file, *kernel, *signature;
  const char *signature_arg; /* as given: TEXT or @FILE (messages name it) */
  char *signature_text;      /* what @FILE held (freed with gcl_file_free) */
  int sm;
  bool json;
} options;

typedef enum inspect_option {
  INSPECT_ARCH, INSPECT_KERNEL, INSPECT_SIGNATURE, INSPECT_JSON
} inspect_option;
#define INSPECT_OPTION_COUNT (INSPECT_JSON + 1)
static const cli_option inspect_options[INSPECT_OPTION_COUNT] = {
    [INSPECT_ARCH] = {"--arch", "sm_NN",
                      "the fatbin entry and the architecture PTX and CUDA source are laid out for\n"
                      "(default: a cubin's own, a fatbin's highest cubin, a PTX's .target, sm_90)"},
    [INSPECT_KERNEL] = {"--kernel", "GLOB",
                        "only kernels whose name or demangled name matches GLOB (fnmatch: * ? [])"},
    [INSPECT_SIGNATURE] = {"--signature", "TEXT",
                           "check a declared signature against every kernel shown: exit 1 naming\n"
                           "the parameter and both offsets and sizes when one differs; without\n"
                           "FILE, print every leaf of TEXT by path; @PATH reads TEXT from the\n"
                           "regular file PATH (at most 16 MiB)"},
    [INSPECT_JSON] = {"--json", NULL,
                      "one JSON object: file, format, arch, kernels (name, demangled, params)"},
};

void inspect_usage(FILE *f) {
  fprintf(f, "usage: gclaunch inspect FILE [--arch sm_NN] [--kernel GLOB] [--signature TEXT] [--json]\n"
             "       gclaunch inspect --signature TEXT [--arch sm_NN] [--json]   (every leaf, no file)\n\n"
             "Reads a cubin, fatbin, PTX or host ELF file (an executable, shared library or object\n"
             "whose .nv_fatbin holds fatbin containers: every container is read), or CUDA source\n"
             "(.cu, compiled with NVRTC), and prints each kernel's parameter offsets, sizes and\n"
             "alignments as the device lays them out, with demangled names. No GPU is needed.\n");
  cli_options_print(f, "inspect", inspect_options, INSPECT_OPTION_COUNT);
  fprintf(f, "\nA kernel whose parameters end past 32,764 bytes on the device gets a warning: the\n"
             "driver refuses to load such a module.\n");
}

/* Returns -1 to go on, else the exit status (0 for --help, 2 on a usage error). */
static int parse_options(int argc, char **argv, options *o) {
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return inspect_usage(stdout), 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v;
    int id = cli_option_next("inspect", inspect_options, INSPECT_OPTION_COUNT, argc, argv, &i, &v);
    if (id == CLI_OPERAND && o->file)
      return cli_error("inspect", "more than one FILE ('%s', '%s')", o->file, a), 2;
    if (id == CLI_OPERAND) o->file = a;
    if (id < 0) {
      if (id == CLI_OPERAND) continue;
      return 2; /* CLI_REFUSED said why; CLI_HELP was handled above */
    }
    switch ((inspect_option)id) {
    case INSPECT_JSON: o->json = true; break;
    case INSPECT_KERNEL: o->kernel = v; break;
    case INSPECT_SIGNATURE: o->signature = o->signature_arg = v; break;
    case INSPECT_ARCH:
      if ((o->sm = cli_parse_arch(v)) == 0)
        return cli_error("inspect", "--arch '%s': expected an architecture such as sm_90", v), 2;
      break;
    }
  }
  if (o->file || o->signature) return -1;
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

static void json_kernel(const gcl_image *img, size_t k, const gcl_image_kernel_info *info) {
  printf("{\"name\": ");
  json_string(info->name);
  char *d = cli_demangle(info->name, true);
  if (d) printf(", \"demangled\": "), json_string(d);
  free(d);
  printf(", \"param_bytes\": %zu, \"params\": [", info->param_bytes);
  for (size_t p = 0; p < info->param_count; p++) {
    size_t off = 0, size = 0, align = 0;
    gcl_image_param(img, k, p, &off, &size, &align);
    printf("%s{\"index\": %zu, \"offset\": %zu, \"size\": %zu", p ? ", " : "", p, off, size);
    if (align) printf(", \"align\": %zu", align);
    putchar('}');
  }
  int waits = gcl_image_kernel_waits(img, k); /* griddepcontrol.wait: for PDL launches */
  printf("], \"waits\": %s}", waits > 0 ? "true" : waits == 0 ? "false" : "null");
}

/* What the image says parameter p is, as signature text ("u32", "ptr", "bytes(2048) align(128)");
 * "-" when the image gives no types (cubins). */
static const char *param_type_text(const gcl_image *img, size_t k, size_t p, size_t size,
                                   size_t align, char *buf, size_t cap) {
  gcl_param_kind kind;
  gcl_scalar scalar;
  if (gcl_image_param_type(img, k, p, &kind, &scalar) != GCL_OK) return "-";
  if (kind == GCL_PARAM_POINTER) return "ptr";
  if (kind == GCL_PARAM_SCALAR) return gcl_scalar_name(scalar);
  snprintf(buf, cap, "bytes(%zu) align(%zu)", size, align);
  return buf;
}

static void table_kernel(const gcl_image *img, size_t k, const gcl_image_kernel_info *info) {
  printf("\nkernel %s: %zu parameter%s, %zu bytes", info->name, info->param_count,
         info->param_count == 1 ? "" : "s", info->param_bytes);
  if (info->registers >= 0) printf(", %d registers", info->registers);
  if (info->shared_bytes > 0) printf(", %ld bytes static shared", info->shared_bytes);
  if (info->max_threads > 0) printf(", max %d threads", info->max_threads);
  if (info->reqntid[0] > 0)
    printf(", requires %dx%dx%d threads", info->reqntid[0], info->reqntid[1], info->reqntid[2]);
  int waits = gcl_image_kernel_waits(img, k);
  printf(", %s", waits > 0 ? "waits (griddepcontrol.wait)"
                 : waits == 0 ? "never waits (no griddepcontrol.wait: PDL launches refused)"
                              : "wait unknown");
  printf("\n");
  char *d = cli_demangle(info->name, true);
  if (d) printf("  %s\n", d);
  free(d);
  if (info->param_count) printf("  %5s %8s %8s %6s  %s\n", "index", "offset", "size", "align", "kind");
  for (size_t p = 0; p < info->param_count; p++) {
    size_t off = 0, size = 0, align = 0;
    gcl_image_param(img, k, p, &off, &size, &align);
    char a[24] = "-", t[64];
    if (align) snprintf(a, sizeof a, "%zu", align);
    printf("  %5zu %8zu %8zu %6s  %s\n", p, off, size, a,
           param_type_text(img, k, p, size, align, t, sizeof t));
  }
}

/* --kernel GLOB against the mangled name and the demangled one without parameters. */
static bool selected(const options *o, const char *name) {
  if (!o->kernel || fnmatch(o->kernel, name, 0) == 0) return true;
  char *d = cli_demangle(name, false);
  bool hit = d && fnmatch(o->kernel, d, 0) == 0;
  free(d);
  return hit;
}

static void header(const gcl_image *img, const options *o, size_t shown) {
  const char *format = gcl_format_name(gcl_image_format(img));
  if (o->json) {
    printf("{\"file\": ");
    json_string(o->file);
    printf(", \"format\": \"%s\", \"arch\": \"sm_%d\", ", format, gcl_image_sm(img));
  } else
    printf("%s: %s, offsets for sm_%d, %zu kernel%s", o->file, format, gcl_image_sm(img),
           gcl_image_kernel_count(img), gcl_image_kernel_count(img) == 1 ? "" : "s");
  if (!o->json && shown != gcl_image_kernel_count(img)) printf(", %zu shown", shown);
  if (!o->json) printf("\n");
  int v[3];
  bool version = gcl_image_nvshmem_version(img, &v[0], &v[1], &v[2]) == GCL_OK;
  if (o->json) {
    printf("\"nvshmem\": %s, \"nvshmem_version\": ", gcl_image_uses_nvshmem(img) ? "true" : "false");
    if (version) printf("\"%d.%d.%d\", ", v[0], v[1], v[2]);
    else printf("null, ");
    printf("\"kernels\": [");
  } else if (gcl_image_uses_nvshmem(img)) {
    printf("nvshmem: device-linked with NVSHMEM");
    if (version) printf(" (device library %d.%d.%d)", v[0], v[1], v[2]);
    printf(": attach it to a PE (gcl_module_attach) before any launch\n");
  }
}

/* The parameters end past what the driver loads (docs/facts.md "Parameter limit":
 * CUDA_ERROR_INVALID_IMAGE). */
static void warn_limit(const gcl_image *img, const options *o, const gcl_image_kernel_info *info) {
  if (info->param_bytes <= GCL_PARAM_LIMIT) return;
  fprintf(stderr, "gclaunch inspect: warning: %s: kernel '%s': its parameters end at byte %zu on "
          "sm_%d, past the %d bytes the driver accepts: loading this module fails "
          "(CUDA_ERROR_INVALID_IMAGE)\n", o->file, info->name, info->param_bytes,
          gcl_image_sm(img), GCL_PARAM_LIMIT);
}

/* Prints the selected kernels; returns how many there were. */
static size_t print_image(const gcl_image *img, const options *o) {
  size_t n = gcl_image_kernel_count(img), shown = 0;
  gcl_image_kernel_info info;
  for (size_t k = 0; k < n; k++)
    if (gcl_image_kernel(img, k, &info) == GCL_OK && selected(o, info.name)) shown++;
  header(img, o, shown);
  for (size_t k = 0, first = 1; k < n; k++) {
    if (gcl_image_kernel(img, k, &info) != GCL_OK || !selected(o, info.name)) continue;
    warn_limit(img, o, &info);
    if (o->json) printf("%s", first ? "" : ", "), json_kernel(img, k, &info);
    else table_kernel(img, k, &info);
    first = 0;
  }
  if (o->json) printf("]}\n");
  return shown;
}

/* --signature against every selected kernel, laid out for the image's architecture. */
static int check_signature(const gcl_image *img, const options *o) {
  gcl_signature *sig = NULL;
  gcl_layout *layout = NULL;
  if (gcl_signature_parse(o->signature, &sig) != GCL_OK)
    return cli_error("inspect", "--signature '%.200s': %s", o->signature_arg, gcl_last_error()), 2;
  gcl_status s = gcl_layout_create(sig, gcl_image_sm(img), &layout);
  gcl_signature_destroy(sig);
  if (s != GCL_OK)
    return cli_error("inspect", "--signature '%.200s' on sm_%d: %s", o->signature_arg, gcl_image_sm(img),
                     gcl_last_error()), 1;
  size_t matched = 0, checked = 0;
  for (size_t k = 0; k < gcl_image_kernel_count(img); k++) {
    gcl_image_kernel_info info;
    if (gcl_image_kernel(img, k, &info) != GCL_OK || !selected(o, info.name)) continue;
    checked++;
    matched += cli_signature_check("inspect", img, k, layout, o->file);
  }
  gcl_layout_destroy(layout);
  if (matched == checked)
    fprintf(stderr, "gclaunch inspect: --signature matches %zu kernel%s on sm_%d\n", matched,
            matched == 1 ? "" : "s", gcl_image_sm(img));
  return matched == checked ? 0 : 1;
}

/* --- a signature's fields, with no file: every leaf by path -------------------------------- */

static const char *leaf_kind(const gcl_param_info *p, char *buf, size_t cap) {
  const char *sc = gcl_scalar_name(p->scalar);
  switch (p->kind) {
  case GCL_PARAM_SCALAR: snprintf(buf, cap, "%s", sc); break;
  case GCL_PARAM_POINTER: snprintf(buf, cap, "%s%s*", p->is_const ? "const " : "", sc); break;
  case GCL_PARAM_TENSORMAP: snprintf(buf, cap, "tensormap"); break;
  default: snprintf(buf, cap, "bytes(%zu)", p->size); break;
  }
  return buf;
}

typedef struct leaf_print { bool json; size_t n; } leaf_print;

static int print_leaf(const gcl_field *f, const char *path, void *user) {
  leaf_print *lp = user;
  char kind[64];
  leaf_kind(&f->info, kind, sizeof kind);
  if (lp->json) {
    printf("%s{\"path\": ", lp->n ? ", " : "");
    json_string(path);
    printf(", \"param\": %zu, \"offset\": %zu, \"size\": %zu, \"align\": %zu, \"kind\": ",
           f->param, f->offset, f->size, f->align);
    json_string(kind);
    putchar('}');
  } else {
    printf("  %-32s %7zu %6zu %6zu  %s\n", path, f->offset, f->size, f->align, kind);
  }
  lp->n++;
  return 0;
}

/* gclaunch inspect --signature TEXT [--arch sm_NN] [--json]: the parameters as the device lays
 * them out, and every leaf of every parameter (path, offset in the packed buffer, size, align,
 * kind), from the signature alone. */
static int print_signature(const options *o) {
  gcl_signature *sig = NULL;
  gcl_layout *l = NULL;
  int sm = o->sm ? o->sm : 90;
  if (gcl_signature_parse(o->signature, &sig) != GCL_OK)
    return cli_error("inspect", "--signature '%.200s': %s", o->signature_arg, gcl_last_error()), 2;
  gcl_status s = gcl_layout_create(sig, sm, &l);
  gcl_signature_destroy(sig);
  if (s != GCL_OK)
    return cli_error("inspect", "--signature '%.200s' on sm_%d: %s", o->signature_arg, sm, gcl_last_error()), 1;
  if (o->json) {
    printf("{\"signature\": ");
    json_string(o->signature);
    printf(", \"arch\": \"sm_%d\", \"param_bytes\": %zu, \"params\": [", sm, gcl_layout_size(l));
  } else {
    printf("signature: %s\narch:      sm_%d, %zu parameter bytes\n", o->signature, sm, gcl_layout_size(l));
  }
  for (size_t i = 0; i < gcl_layout_count(l); i++) {
    size_t off, size, align;
    gcl_field f;
    gcl_layout_param(l, i, &off, &size, &align);
    gcl_layout_param_field(l, i, &f);
    const gcl_param_info p = f.info;
    if (o->json) {
      printf("%s{\"index\": %zu, \"name\": ", i ? ", " : "", i);
      if (p.name) json_string(p.name);
      else printf("null");
      printf(", \"offset\": %zu, \"size\": %zu, \"align\": %zu}", off, size, align);
    } else {
      printf("  param %zu%s%s%s: offset %zu size %zu align %zu\n", i, p.name ? " '" : "",
             p.name ? p.name : "", p.name ? "'" : "", off, size, align);
    }
  }
  leaf_print lp = {o->json, 0};
  if (o->json) printf("], \"leaves\": [");
  else printf("  %-32s %7s %6s %6s  %s\n", "leaf", "offset", "size", "align", "kind");
  gcl_layout_visit_leaves(l, print_leaf, &lp);
  if (o->json) printf("]}\n");
  gcl_layout_destroy(l);
  return 0;
}

/* --signature @PATH: the text from the file, bounded and judged before it is read. Whitespace
 * around it (the file's last newline) is dropped: @FILE prints what the same text inline does. */
static bool read_signature_file(options *o) {
  size_t size = 0;
  if (!o->signature || o->signature[0] != '@') return true;
  o->signature_text = cli_read_text("inspect", "--signature", o->signature + 1, 16u << 20, &size);
  if (!o->signature_text) return false;
  char *t = o->signature_text;
  while (size && strchr(" \t\r\n", t[size - 1])) t[--size] = 0;
  while (*t && strchr(" \t\r\n", *t)) t++;
  o->signature = t;
  return true;
}

static int inspect_file(options *o) {
  gcl_image *img = NULL;
  if (!cli_module_read("inspect", o->file, o->sm, &img)) return 1;
  if (o->sm && gcl_image_format(img) == GCL_IMAGE_CUBIN && gcl_image_sm(img) != o->sm)
    fprintf(stderr, "gclaunch inspect: note: %s is a cubin for sm_%d; its own offsets are shown "
            "(--arch picks fatbin entries and lays out PTX)\n", o->file, gcl_image_sm(img));
  size_t index;
  int rc;
  bool glob = o->kernel && strpbrk(o->kernel, "*?[");
  if (o->kernel && !glob && !cli_kernel_find("inspect", img, o->file, o->kernel, &index)) rc = 1;
  else if (print_image(img, o) == 0 && o->kernel)
    rc = 1, cli_error("inspect", "%s: no kernel matches '%s'", o->file, o->kernel);
  else rc = o->signature ? check_signature(img, o) : 0;
  gcl_image_destroy(img);
  return rc;
}

int cmd_inspect(int argc, char **argv) {
  options o = {0};
  int rc = parse_options(argc, argv, &o);
  if (rc >= 0) return rc;
  if (!read_signature_file(&o)) return 2;
  rc = o.file ? inspect_file(&o) : print_signature(&o);
  gcl_file_free(o.signature_text);
  return rc;
}
