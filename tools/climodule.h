/* Shared by `gclaunch run` and `gclaunch inspect`: a module file read on the CPU into a gcl_image
 * (cubin, fatbin, PTX, host ELF, or CUDA source compiled with NVRTC, which needs no GPU), a kernel
 * found by name (a missing one lists the kernels there, closest names first), demangled names,
 * and a declared signature checked against what the image records. Every failure is printed as
 * "gclaunch CMD: ..." naming the option, the parameter and both values. */
#ifndef TOOLS_CLIMODULE_H
#define TOOLS_CLIMODULE_H

#include <gclaunch/gclaunch.h>
#include <stdbool.h>
#include <stddef.h>

/* Prints "gclaunch CMD: " and the message to stderr. */
void cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "sm_90", "compute_90", "90" (a trailing a/f accepted) -> 90; 0 if malformed. */
int cli_parse_arch(const char *text);
/* The whole file, malloc'd (one spare NUL byte after size); NULL with a message on failure. */
unsigned char *cli_read_file(const char *cmd, const char *what, const char *path, size_t *size);
/* A text file's contents (NUL-terminated; free with gcl_file_free) for an option's @PATH: a
 * regular file of at most max bytes holding no NUL byte; NULL after a message naming what. */
char *cli_read_text(const char *cmd, const char *what, const char *path, size_t max, size_t *size);
/* True if path names CUDA source (.cu). */
bool cli_is_source(const char *path);
/* Reads path into *img for sm (0: the image's own; CUDA source: sm_90) on the CPU. CUDA source is
 * compiled with NVRTC for sm_SM as gcl_module_compile does. False with a message on failure. */
bool cli_module_read(const char *cmd, const char *path, int sm, gcl_image **img);
/* Demangled name (malloc'd), with the parameter list when params; NULL if name is not a mangled
 * C++ name or no demangler was built in. */
char *cli_demangle(const char *name, bool params);
/* Index of the kernel called name (its mangled name, or a unique demangled name without the
 * parameter list, e.g. "saxpy"). False with a message listing the kernels there, closest first. */
bool cli_kernel_find(const char *cmd, const gcl_image *img, const char *path, const char *name,
                     size_t *index);
/* Kernel k of img against layout (a signature laid out for the image's architecture): the count,
 * then each parameter's offset and size. False with a message naming the first difference. */
bool cli_signature_check(const char *cmd, const gcl_image *img, size_t k, const gcl_layout *layout,
                         const char *path);

#endif
