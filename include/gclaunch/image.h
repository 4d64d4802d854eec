/* gclaunch/image.h -- module images read on the CPU, no driver: cubin, fatbin, PTX and host ELF,
 * their kernels and parameters, and file reading. Included by gclaunch/core.h; the conventions
 * are written in gclaunch.h. */
#ifndef GCLAUNCH_IMAGE_H
#define GCLAUNCH_IMAGE_H

#include "gclaunch/field.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Module images read on the CPU (no driver): cubin, fatbin, PTX.
 * ------------------------------------------------------------------------------------------- */

typedef struct gcl_image gcl_image;

/* The image's container format (gcl_image_format); gcl_format_name spells it. */
typedef enum gcl_format {
  GCL_IMAGE_CUBIN = 1, GCL_IMAGE_FATBIN = 2, GCL_IMAGE_PTX = 3,
  GCL_IMAGE_ELF = 4 /* a host executable, library or object: every container of its fatbin sections */
} gcl_format;

typedef struct gcl_image_kernel_info {
  const char *name;
  size_t param_count;
  size_t param_bytes;      /* exact parameter buffer bytes */
  int max_threads;         /* 0 when the image does not say */
  int reqntid[3];          /* 0 when the image does not say */
  int registers;           /* -1 when the image does not say */
  long shared_bytes;       /* static shared memory, -1 when the image does not say */
} gcl_image_kernel_info;

/* Parses an image; the format is found from the content. sm picks the fatbin entry and the
 * architecture PTX offsets are computed for (0: the image's own; for PTX its `.target sm_NN`, 90
 * without one). A host ELF (executable, library, object) gives every kernel of every fatbin
 * container in its .nv_fatbin and __nv_relfatbin sections (GCL_IMAGE_ELF). The image keeps
 * a copy of what it needs. GCL_ERROR_BAD_IMAGE for truncated or malformed data. Thread-safe. */
GCL_API gcl_status gcl_image_parse(const void *data, size_t size, int sm, gcl_image **out);
GCL_API void gcl_image_destroy(gcl_image *img);
/* The image's format; 0 (no format) for NULL. Reads. */
GCL_API gcl_format gcl_image_format(const gcl_image *img);
/* "cubin", "fatbin", "ptx", "elf"; "unknown" outside the enum. Never NULL. Thread-safe. */
GCL_API const char *gcl_format_name(gcl_format f);
/* The architecture the offsets are for (90 for sm_90). */
GCL_API int gcl_image_sm(const gcl_image *img);
GCL_API size_t gcl_image_kernel_count(const gcl_image *img);
/* Describes kernel k (0 ... gcl_image_kernel_count - 1); its name lives as long as img.
 * GCL_ERROR_INVALID_ARGUMENT for NULL img or info, or k out of range. Reads. */
GCL_API gcl_status gcl_image_kernel(const gcl_image *img, size_t k, gcl_image_kernel_info *info);
/* offset/size of kernel k's parameter p; align 0 when the image does not tell it. */
GCL_API gcl_status gcl_image_param(const gcl_image *img, size_t k, size_t p, size_t *offset,
                                   size_t *size, size_t *align);
/* What the image says kernel k's parameter p is, from its PTX .param type: *kind is
 * GCL_PARAM_SCALAR (with *scalar its type: .u32 is GCL_SCALAR_U32), GCL_PARAM_POINTER (a .u64
 * .ptr; *scalar GCL_SCALAR_VOID) or GCL_PARAM_BYTES (arrays and over-aligned values: their size
 * and alignment are gcl_image_param's; *scalar GCL_SCALAR_VOID). As signature text that is the
 * scalar's name, "ptr", or "bytes(SIZE) align(ALIGN)". GCL_ERROR_NOT_FOUND when the image gives
 * no types (a cubin's records do not), GCL_ERROR_INVALID_ARGUMENT for NULL img or an index out
 * of range. Either output may be NULL; both untouched on failure. Reads. */
GCL_API gcl_status gcl_image_param_type(const gcl_image *img, size_t k, size_t p,
                                        gcl_param_kind *kind, gcl_scalar *scalar);
/* Index of the kernel called name. GCL_ERROR_NOT_FOUND if none. Reads. */
GCL_API gcl_status gcl_image_find_kernel(const gcl_image *img, const char *name, size_t *index);
/* Whether kernel k of img executes griddepcontrol.wait (what a programmatic dependent launch
 * needs; runtime.h, "Launch-safety checks"): 1 it does, 0 it never does, -1 unknown (the image
 * does not tell; also for NULL img or k out of range). Reads. */
GCL_API int gcl_image_kernel_waits(const gcl_image *img, size_t k);
/* Whether img is device-linked with NVSHMEM (a cubin, or a fatbin's picked cubin, defining
 * NVSHMEM's device state `nvshmemi_device_state_d`): 1 it is, 0 it is not (also for NULL img and
 * for PTX, which is never device-linked). Such a module must be attached (gcl_module_attach)
 * before any of its kernels is launched. Reads. */
GCL_API int gcl_image_uses_nvshmem(const gcl_image *img);
/* The NVSHMEM device-library version img was linked with (its `nvshmemi_device_lib_version_d`:
 * major, minor, patch). GCL_ERROR_NOT_FOUND when img does not use NVSHMEM or its version bytes are
 * not in the image; GCL_ERROR_INVALID_ARGUMENT for NULLs. Outputs untouched on failure. Reads. */
GCL_API gcl_status gcl_image_nvshmem_version(const gcl_image *img, int *major, int *minor,
                                             int *patch);

/* Reads the whole file at path (the gclaunch tools use it for data files): *data gets the bytes
 * plus a terminating NUL (not counted in *size), to be freed with gcl_file_free. Only a regular
 * file is read: a FIFO, a device, a socket or a directory is refused at once, without waiting
 * for a writer (the file is opened with O_NONBLOCK and judged by fstat before any read).
 * GCL_ERROR_IO naming the path and the system's reason (missing, not a regular file -- and what
 * it is --, short read); GCL_ERROR_OUT_OF_MEMORY; GCL_ERROR_INVALID_ARGUMENT for NULL arguments.
 * Outputs untouched on failure. Thread-safe. */
GCL_API gcl_status gcl_file_read(const char *path, void **data, size_t *size);
/* The most bytes of a module file that is not a cubin or fatbin by its first bytes (PTX, CUDA
 * source) gcl_image_file_read reads: 256 MiB. */
#define GCL_IMAGE_TEXT_MAX ((unsigned long long)256 << 20)
/* Reads a module image file (the reader gcl_module_load_file, gclaunch inspect and run and the
 * Python package use): as gcl_file_read (the same refusal of a file that is not a regular one),
 * but the file is judged by its first bytes before any large read, and only what its format
 * says it spans is read -- an ELF (cubin, host program) up to the end of its furthest header
 * table or section body, a fatbin its containers one after another, anything else (PTX, CUDA
 * source) whole, up to GCL_IMAGE_TEXT_MAX bytes. Bytes after that extent are not read.
 * GCL_ERROR_BAD_IMAGE naming the path when the headers describe more bytes than the file has
 * (with both numbers) or text is over GCL_IMAGE_TEXT_MAX; otherwise as gcl_file_read. What is
 * read is not checked further: gcl_image_parse or the module loader does that. Thread-safe. */
GCL_API gcl_status gcl_image_file_read(const char *path, void **data, size_t *size);
/* Frees what gcl_file_read or gcl_nvrtc_compile returned (through the allocator of
 * gcl_replace_allocator). NULL is fine. */
GCL_API void gcl_file_free(void *data);

#ifdef __cplusplus
}
#endif
#endif /* GCLAUNCH_IMAGE_H */
