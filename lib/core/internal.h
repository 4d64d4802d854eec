/* Internal declarations shared by lib/core and lib/cuda. Not installed. */
#ifndef GCL_INTERNAL_H
#define GCL_INTERNAL_H

#include "gclaunch/gclaunch.h"

#include <stdarg.h>

#if defined(__GNUC__)
#define GCL__PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define GCL__PRINTF(a, b)
#endif

#define GCL__MESSAGE_MAX 2048

/* Records a failure: formats this thread's message and returns s. Never call it on success. */
gcl_status gcl__fail(gcl_status s, const char *fmt, ...) GCL__PRINTF(2, 3);
/* s, a refusal's status, told to the compiler as one: never GCL_OK. Wrapped around a cold
 * refusal a hot path returns (return gcl__refused(refuse(...))), it lets the call be a tail call:
 * with no way to go on after it, the hot path keeps no registers alive across it and needs no
 * frame (a one-map re-point saved and restored six of them for refusals that cannot return
 * GCL_OK). Only for functions that never return GCL_OK. */
static inline gcl_status gcl__refused(gcl_status s) {
#if defined(__GNUC__)
  if (s == GCL_OK || s >= GCL_STATUS_COUNT) __builtin_unreachable(); /* a status of the table */
#endif
  return s;
}
/* x, a refusal's status: gcl__refused(x) where k is a compile-time constant -- a one-map call's
 * count or index once inlined -- else x as it is (in a batch's loop the hint made each map
 * longer: 3 instructions of 42 for re-points). GCC's __builtin_constant_p, else x. */
#if defined(__GNUC__)
#define GCL__REFUSED_IF_CONST(k, x) (__builtin_constant_p(k) ? gcl__refused(x) : (x))
#else
#define GCL__REFUSED_IF_CONST(k, x) (x)
#endif
/* GCL_ERROR_INVALID_ARGUMENT naming the first NULL among n (const char *name, const void *value)
 * pairs: "fn: name is NULL" (the one style for NULL arguments). Call it only when one of them is NULL. */
gcl_status gcl__fail_null(const char *fn, int n, ...);
/* Sets what gcl_last_cuda_error returns; call it right after gcl__fail for a driver failure. */
void gcl__set_last_cuda_error(int cuda_error);
/* Adds text to the end of this thread's message (for logs), truncating at GCL__MESSAGE_MAX. */
void gcl__fail_append(const char *text);

/* Messages are valid UTF-8 whatever the input (issue 38): gcl__fail and gcl__fail_append end by
 * rewriting the message so that a byte starting no valid UTF-8 sequence reads "\xNN" and a cut
 * never splits a character. Excerpts of user text are cut with gcl__utf8_cut. */
/* Length of the valid UTF-8 sequence at s (1 ... 4; n bytes available), 0 when the bytes there
 * are none (a stray continuation, an overlong form, a surrogate, past U+10FFFF, truncated). */
size_t gcl__utf8_len(const unsigned char *s, size_t n);
/* The longest m <= n such that s[0 .. m) does not end inside a UTF-8 sequence that would
 * continue past n (s holds at least n bytes, or a NUL before them). */
size_t gcl__utf8_cut(const char *s, size_t n);

/* Allocation through the allocator of gcl_replace_allocator (alloc.c): every block lib/ allocates
 * comes from these and goes back through gcl__free. Blocks handed to callers (gcl__read_file,
 * gcl__nvrtc_compile) must be freed with gcl__free too. */
void *gcl__malloc(size_t size);
void *gcl__calloc(size_t count, size_t size);
void *gcl__realloc(void *ptr, size_t size);
void gcl__free(void *ptr);
char *gcl__strdup(const char *s);
char *gcl__strndup(const char *s, size_t n);

/* "parameter 2 'src'" or "parameter 2" into buf; returns buf. */
const char *gcl__param_label(char *buf, size_t cap, size_t index, const char *name);

/* The format of a module image from its content (lib/core/image.c: the one detector, shared by
 * gcl_image_parse and the module loader): the ELF header and section table of a cubin, the
 * containers of a fatbin, or PTX (.version first after whitespace and comments). GCL_ERROR_BAD_IMAGE
 * saying what is wrong; *format untouched on failure. */
gcl_status gcl__image_format(const void *data, size_t size, gcl_format *format);
/* Reads the whole file at path into *data (NUL-terminated; free with gcl__free) and *size.
 * GCL_ERROR_IO naming the path and the errno text, or what the file is when it is not a
 * regular file (never blocks on a FIFO); GCL_ERROR_OUT_OF_MEMORY. (file.c) */
gcl_status gcl__read_file(const char *path, void **data, size_t *size);
/* As gcl__read_file for a module image (gcl_image_file_read): the format judged from the first
 * bytes, then only the bytes it spans read; GCL_ERROR_BAD_IMAGE when its headers reach past the
 * end of the file or text is over GCL_IMAGE_TEXT_MAX bytes. (file.c) */
gcl_status gcl__read_image_file(const char *path, void **data, size_t *size);

/* Parameter base in constant bank 0 for architecture sm and a parameter area of area bytes.
 * 0 for an unknown sm. (docs/facts.md "Parameter bases": 0x160 on sm_75-89, 0x1a80 there when
 * the area exceeds 4352 bytes, 0x210 on sm_90, 0x380 on sm_100 and later.) */
size_t gcl__param_base(int sm, size_t area_bytes);
/* True for the architectures the layout engine knows. */
bool gcl__sm_known(int sm);

/* Validates tensor t for pointer parameter `index` described by p; device_id -1 accepts any.
 * On success *address = data + byte_offset. flags are DLPack flags (READ_ONLY). Reads nothing
 * but t. */
gcl_status gcl__dltensor_check(const DLTensor *t, uint64_t flags, const gcl_param_info *p,
                               size_t index, int device_id, uint64_t *address);
/* The same, naming the value in messages by label ("parameter 0 'g' field 'g.src'"). */
gcl_status gcl__dltensor_check_as(const DLTensor *t, uint64_t flags, const gcl_param_info *p,
                                  const char *label, int device_id, uint64_t *address);

#endif
