/* gclaunch/core.h -- the CPU model: status, version, allocator, scalars, signatures, layouts,
 * fields, argument buffers, module images and their readers, tensor-map checks and options.
 * Nothing here needs a driver or a GPU (lib/core implements it). Include <gclaunch/gclaunch.h>
 * (the umbrella) or this header alone; the conventions are written in gclaunch.h.
 */
#ifndef GCLAUNCH_CORE_H
#define GCLAUNCH_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gclaunch/dlpack.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(GCL_STATIC)
#  define GCL_API
#elif defined(GCL_BUILDING)
#  define GCL_API __attribute__((visibility("default")))
#else
#  define GCL_API
#endif

#define GCL_VERSION_MAJOR 0
#define GCL_VERSION_MINOR 4
#define GCL_VERSION_PATCH 0
#define GCL_VERSION_STRING "0.4.0"
/* 10000 * major + 100 * minor + patch (zstd's ZSTD_VERSION_NUMBER): 0.4.0 is 400. Compare it
 * with gcl_version_number() to see whether the library loaded at run time is older than the
 * header a program was built with. */
#define GCL_VERSION_NUMBER (10000 * GCL_VERSION_MAJOR + 100 * GCL_VERSION_MINOR + GCL_VERSION_PATCH)

/* Runtime version, "MAJOR.MINOR.PATCH". Never NULL. Thread-safe. */
GCL_API const char *gcl_version(void);
/* Runtime version as GCL_VERSION_NUMBER of the library's own build. Thread-safe. */
GCL_API unsigned gcl_version_number(void);


/* ---------------------------------------------------------------------------------------------
 * Status
 * ------------------------------------------------------------------------------------------- */

/* One table: enum name, value, default text. The values are part of the ABI: they never change;
 * new statuses are appended with the next number (tests/unit/test_status.c pins every one). */
#define GCL_STATUS_LIST(X)                                                                         \
  X(GCL_OK, 0, "success")                                                                          \
  X(GCL_ERROR_INVALID_ARGUMENT, 1, "invalid argument")                                             \
  X(GCL_ERROR_OUT_OF_MEMORY, 2, "out of memory (host, or device: the message says which)")         \
  X(GCL_ERROR_PARSE, 3, "malformed signature")                                                     \
  X(GCL_ERROR_LAYOUT_TOO_LARGE, 4, "parameters exceed the 32764-byte limit")                       \
  X(GCL_ERROR_UNSET_ARGUMENT, 5, "a parameter was never set")                                      \
  X(GCL_ERROR_TYPE_MISMATCH, 6, "value does not match the parameter's type")                       \
  X(GCL_ERROR_TENSOR, 7, "tensor rejected")                                                        \
  X(GCL_ERROR_TENSOR_VERSION, 8, "unsupported DLPack major version")                               \
  X(GCL_ERROR_BAD_IMAGE, 9, "malformed or unsupported module image")                               \
  X(GCL_ERROR_NOT_FOUND, 10, "not found")                                                          \
  X(GCL_ERROR_SIGNATURE_MISMATCH, 11, "declared signature disagrees with the kernel")              \
  X(GCL_ERROR_NO_DRIVER, 12, "no CUDA driver library")                                             \
  X(GCL_ERROR_STUB_DRIVER, 13, "the CUDA driver is the toolkit's stub library")                    \
  X(GCL_ERROR_NO_DEVICE, 14, "no CUDA device")                                                     \
  X(GCL_ERROR_DRIVER_TOO_OLD, 15, "the CUDA driver lacks a needed entry point")                    \
  X(GCL_ERROR_DRIVER, 16, "a CUDA driver call failed")                                             \
  X(GCL_ERROR_NO_NVRTC, 17, "NVRTC library not found")                                             \
  X(GCL_ERROR_COMPILE, 18, "compilation failed")                                                   \
  X(GCL_ERROR_INVALID_CONFIG, 19, "invalid launch configuration")                                  \
  X(GCL_ERROR_IO, 20, "file could not be read")                                                    \
  X(GCL_ERROR_KERNEL_FAULT, 21, "a kernel faulted: the process's CUDA state is lost; "             \
                               "only a new process recovers")                                      \
  X(GCL_ERROR_NO_NVSHMEM, 22, "NVSHMEM host library not found or too old")                          \
  X(GCL_ERROR_NVSHMEM, 23, "an NVSHMEM call failed or is not allowed in this state")                \
  X(GCL_ERROR_NVSHMEM_VERSION, 24, "the module's NVSHMEM device library does not match the host's") \
  X(GCL_ERROR_NOT_ATTACHED, 25, "the kernel's module uses NVSHMEM and is not attached")            \
  X(GCL_ERROR_PEER_UNREACHABLE, 26, "the peer's memory is not load/store reachable from this PE")

typedef enum gcl_status {
#define GCL_X_ENUM(name, value, text) name = value,
  GCL_STATUS_LIST(GCL_X_ENUM)
#undef GCL_X_ENUM
  GCL_STATUS_COUNT /* one past the largest value today; it grows when a status is appended: do
                      not store it or compile it into a program that must run with later versions */
} gcl_status;

/* "GCL_OK", "GCL_ERROR_PARSE", ...; "GCL_STATUS_UNKNOWN" for values outside the enum.
 * Never NULL. Thread-safe. */
GCL_API const char *gcl_status_name(gcl_status s);
/* The default one-line text of a status ("malformed signature"). Never NULL. Thread-safe. */
GCL_API const char *gcl_status_text(gcl_status s);
/* Detail of this thread's last failure ("" if none yet). Written only when a call fails; a
 * successful call leaves it as it was. Never NULL; valid until this thread's next failing call. */
GCL_API const char *gcl_last_error(void);
/* The CUresult (as an int: 700 is CUDA_ERROR_ILLEGAL_ADDRESS) of this thread's last failure,
 * or 0 when that failure was not a driver call (a bad argument, a layout check, ...). Written
 * with gcl_last_error, only on failure. Thread-safe (per thread). */
GCL_API int gcl_last_cuda_error(void);

/* ---------------------------------------------------------------------------------------------
 * Allocator (libuv's uv_replace_allocator)
 * ------------------------------------------------------------------------------------------- */

typedef void *(*gcl_malloc_fn)(size_t size);
typedef void *(*gcl_realloc_fn)(void *ptr, size_t size);
typedef void *(*gcl_calloc_fn)(size_t count, size_t size);
typedef void (*gcl_free_fn)(void *ptr);

/* Makes every host allocation of the library go through these four functions (they must behave
 * as the C library's; sizes passed are never 0, free_fn is never given NULL). All four NULL
 * restore the C library's. GCL_ERROR_INVALID_ARGUMENT when only some are NULL, or while blocks
 * of the current allocator are still live (objects not destroyed): a block must go back to the
 * allocator that made it. Not thread-safe: call it before any other gclaunch call and before
 * starting threads that use gclaunch. Memory the driver and NVRTC allocate is theirs and does
 * not go through it. */
GCL_API gcl_status gcl_replace_allocator(gcl_malloc_fn malloc_fn, gcl_realloc_fn realloc_fn,
                                         gcl_calloc_fn calloc_fn, gcl_free_fn free_fn);

/* ---------------------------------------------------------------------------------------------
 * Signatures (CPU only)
 *
 *   signature = [ param { "," param } ]
 *   param     = [ "grid_constant" ] type [ name ]
 *   type      = base [ "align" "(" N ")" ] [ "[" N "]" ]
 *   base      = scalar | pointer | "tensormap" | "bytes" "(" N ")" | "struct" "{" member {"," member} "}"
 *   member    = type [ name ]          (names optional, unique per struct; nest to any depth;
 *                                        arrays of structs: struct{ptr p, u32 n}[8] segs)
 *   scalar    = bool i8 u8 i16 u16 i32 u32 i64 u64 f16 bf16 f32 f64
 *   pointer   = [ "const" ] ( scalar | "void" ) "*"  |  "ptr"
 * ------------------------------------------------------------------------------------------- */

typedef struct gcl_signature gcl_signature;

typedef enum gcl_scalar {
  GCL_SCALAR_VOID = 0, /* only as a pointer's element type */
  GCL_SCALAR_BOOL, GCL_SCALAR_I8, GCL_SCALAR_U8, GCL_SCALAR_I16, GCL_SCALAR_U16,
  GCL_SCALAR_I32, GCL_SCALAR_U32, GCL_SCALAR_I64, GCL_SCALAR_U64,
  GCL_SCALAR_F16, GCL_SCALAR_BF16, GCL_SCALAR_F32, GCL_SCALAR_F64
} gcl_scalar;

/* The scalar's name as the grammar spells it ("f32", "bf16"; "void" for VOID); "?" outside the
 * enum. Never NULL. Thread-safe. */
GCL_API const char *gcl_scalar_name(gcl_scalar s);
/* The scalar's C-ABI size in bytes (1, 2, 4 or 8; equal to its alignment); 0 for VOID and for
 * values outside the enum. Thread-safe. */
GCL_API size_t gcl_scalar_size(gcl_scalar s);
/* float -> IEEE binary16 / bfloat16 bits, rounded to nearest even (NaN stays a NaN, values past
 * the largest finite one become infinities), and back (exact). Thread-safe. */
GCL_API uint16_t gcl_f16_from_f32(float value);
GCL_API uint16_t gcl_bf16_from_f32(float value);
GCL_API float gcl_f16_to_f32(uint16_t bits);
GCL_API float gcl_bf16_to_f32(uint16_t bits);

typedef enum gcl_param_kind {
  GCL_PARAM_SCALAR,    /* a scalar by value */
  GCL_PARAM_POINTER,   /* a device pointer (8 bytes) */
  GCL_PARAM_TENSORMAP, /* one CUtensorMap by value */
  GCL_PARAM_BYTES,     /* bytes(N) */
  GCL_PARAM_STRUCT,    /* struct{...} by value */
  GCL_PARAM_ARRAY      /* T[N] by value; see elem_kind */
} gcl_param_kind;

/* "scalar", "pointer", "tensormap", "bytes", "struct", "array"; "unknown" outside the enum.
 * Never NULL. Thread-safe. */
GCL_API const char *gcl_param_kind_name(gcl_param_kind kind);

typedef struct gcl_param_info {
  const char *name;        /* NULL when the parameter has no name */
  gcl_param_kind kind;
  gcl_param_kind elem_kind;/* for GCL_PARAM_ARRAY: the element's kind; otherwise == kind */
  gcl_scalar scalar;       /* scalar's type, or a pointer's element type (VOID for void* and ptr) */
  bool is_const;           /* pointer to const */
  bool grid_constant;      /* marked grid_constant */
  size_t size;             /* bytes by value (8 for pointers) */
  size_t align;            /* alignment by value */
  size_t count;            /* array element count; 0 when not an array */
  size_t elem_size;        /* array element size (== size when not an array) */
  size_t pointee_align;    /* pointers: the alignment the kernel assumes for the data */
} gcl_param_info;

/* Parses text. GCL_ERROR_PARSE with "col N: expected ..." on malformed text; GCL_ERROR_INVALID_ARGUMENT
 * for NULL text or out. The signature is independent of the text. Thread-safe. */
GCL_API gcl_status gcl_signature_parse(const char *text, gcl_signature **out);
GCL_API void gcl_signature_destroy(gcl_signature *sig);
/* Number of parameters; 0 for NULL. Reads. */
GCL_API size_t gcl_signature_count(const gcl_signature *sig);
/* Describes parameter index. GCL_ERROR_INVALID_ARGUMENT for NULL or an index out of range. Reads. */
GCL_API gcl_status gcl_signature_param(const gcl_signature *sig, size_t index, gcl_param_info *info);
/* Canonical text of the signature (parses back to an equal signature), with snprintf's
 * contract: writes what fits of it into buf, cap bytes at most including the terminating NUL
 * (always written when cap > 0; buf may be NULL when cap is 0), and the full length (without
 * NUL) into *needed if needed is not NULL. The text was cut when *needed >= cap: that is not a
 * failure (asking with cap 0 for the size returns GCL_OK and leaves gcl_last_error alone).
 * GCL_ERROR_INVALID_ARGUMENT only for NULL sig, or NULL buf with cap > 0. Reads. */
GCL_API gcl_status gcl_signature_format(const gcl_signature *sig, char *buf, size_t cap,
                                        size_t *needed);

/* ---------------------------------------------------------------------------------------------
 * Layout (CPU only): where each parameter sits in the kernel's parameter buffer on one SM arch.
 * ------------------------------------------------------------------------------------------- */

typedef struct gcl_layout gcl_layout;

#define GCL_PARAM_LIMIT 32764 /* bytes of parameters per kernel (CUDA >= 12.1, driver >= R530) */

/* Device-side parameter offsets for architecture sm: exactly the architectures nvcc/NVRTC 13.0
 * build (75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121; unit_differential checks every
 * one against NVRTC's cubins with alignments up to 4096, and that the list equals NVRTC's). The
 * placement rule depends on the architecture's parameter base (docs/facts.md, lib/core/layout.c):
 * from 0x160 (sm_75-89) and 0x210 (sm_90) the absolute constant-bank address is aligned, from
 * 0x380 (sm_100 and later) and 0x1a80 (sm_75-89 past 4352 bytes) the offset; they differ only
 * for alignments above 128. GCL_ERROR_LAYOUT_TOO_LARGE
 * when the parameters exceed GCL_PARAM_LIMIT laid out from offset 0 (what ptxas checks) or as
 * placed on the device for sm (what the driver checks when it loads the image: on sm_90 a layout
 * may fit the first and not the second); the message says by how many bytes;
 * GCL_ERROR_INVALID_ARGUMENT for an unknown sm. The layout copies what it needs from sig.
 * Thread-safe. */
GCL_API gcl_status gcl_layout_create(const gcl_signature *sig, int sm, gcl_layout **out);
/* A layout of untyped byte parameters at given offsets (as the driver reports them). Parameters
 * must not overlap and must end within GCL_PARAM_LIMIT. Thread-safe. */
GCL_API gcl_status gcl_layout_create_raw(size_t count, const size_t *offsets, const size_t *sizes,
                                         int sm, gcl_layout **out);
GCL_API void gcl_layout_destroy(gcl_layout *layout);
GCL_API size_t gcl_layout_count(const gcl_layout *layout);
GCL_API int gcl_layout_sm(const gcl_layout *layout);
/* Offset, size and alignment of parameter index; any output pointer may be NULL. Reads.
 * Everything else about a parameter (name, kind, element type, ...) is in its field:
 * gcl_layout_param_field(layout, index, &f) and f.info; a parameter by name is
 * gcl_layout_field(layout, name, &f), its index f.param. */
GCL_API gcl_status gcl_layout_param(const gcl_layout *layout, size_t index, size_t *offset,
                                    size_t *size, size_t *align);
/* Exact buffer bytes: max(offset + size); 0 for NULL or no parameters. Reads. */
GCL_API size_t gcl_layout_size(const gcl_layout *layout);

/* ---------------------------------------------------------------------------------------------
 * Argument buffers (CPU only until launch)
 *
 * One address for every parameter byte: a field (below). Every setter takes a gcl_field -- a
 * whole parameter (gcl_layout_param_field), a struct member, an array element, a whole
 * sub-aggregate -- resolved once and then set as fast as a parameter of its size. The
 * index-addressed forms further down (gcl_args_set_u32(args, index, v), ...) are static inline
 * conveniences over the field setters, kept because most kernels take a few plain parameters
 * and an index is what a C caller has at hand; they cost one gcl_layout_param_field more.
 * ------------------------------------------------------------------------------------------- */

typedef struct gcl_args gcl_args;

/* Creates a zeroed buffer with every parameter unset (one allocation: the buffer, set-tracking,
 * an owner slot per pointer leaf and a cache slot per tensor-map leaf). The layout must outlive
 * the args. */
GCL_API gcl_status gcl_args_create(const gcl_layout *layout, gcl_args **out);
/* Releases owned tensors (their deleters run once). NULL is fine. */
GCL_API void gcl_args_destroy(gcl_args *args);
/* The layout the args were created from (NULL for NULL). Reads. */
GCL_API const gcl_layout *gcl_args_layout(const gcl_args *args);
/* A copy of args: same layout, same bytes, same set state, same device restriction, the same
 * tensor-map descriptions (the copy's maps can be re-pointed). Tensors the original took
 * (take_dlpack) stay owned by the original: the copy holds their addresses borrowed, so the
 * original must outlive every launch of the copy that uses them. Allocates once.
 * Args may be changed (or destroyed) as soon as gcl_launch returns: the driver copies the
 * parameter buffer at launch. */
GCL_API gcl_status gcl_args_clone(const gcl_args *args, gcl_args **out);
/* Restricts the tensors later set into args to those on device_id (CUDA device ordinal); -1 (the
 * default) accepts any. Not a parameter setter: it changes what the DLPack setters accept. With
 * several GPUs, pass the kernel's device: gcl_context_device(gcl_kernel_context(k)).
 * GCL_ERROR_INVALID_ARGUMENT for NULL args or device_id < -1. */
GCL_API gcl_status gcl_args_restrict_device(gcl_args *args, int device_id);
/* The packed buffer and its exact size. GCL_ERROR_UNSET_ARGUMENT naming the first leaf never set
 * ("parameter 0 'g': field 'g.stores[2]' was never set"). The data pointer stays valid until
 * args is destroyed. Reads. */
GCL_API gcl_status gcl_args_buffer(const gcl_args *args, const void **data, size_t *size);

/* ---------------------------------------------------------------------------------------------
 * Fields: paths into by-value aggregates (CPU only)
 *
 *   path = ( name | index ) { "." ( name | index ) | "[" index "]" }
 *
 * The first component names a parameter (by name, or by its index); ".name" picks a struct
 * member by name and ".N" member N (named or not); "[N]" an array element. Examples:
 * "g.loads[3]", "g.segs[2].n", "g.2", "0", "maps[17]". Member offsets are the C ABI's for the
 * same struct (what nvcc places on the device inside the parameter); the parameter itself sits
 * where the layout engine placed it.
 *
 * A field is resolved once (gcl_layout_field) and then set as fast as a parameter of its size:
 * the setters below do no parsing and allocate nothing. Any field may be set -- a leaf (scalar,
 * pointer, tensormap, bytes) or a whole sub-struct or array (raw bytes of its size). A parameter
 * counts as set once every leaf byte was set (by leaves, sub-aggregates or the whole parameter).
 * Every check a parameter of the same kind gets applies to a field (pointer align(N), DLPack
 * dtype/device/read-only rules, tensor-map rules and `store`), and messages name the parameter
 * and the field's path.
 * ------------------------------------------------------------------------------------------- */

typedef struct gcl_field {
  size_t param;          /* the parameter the field lies in */
  size_t offset;         /* byte offset in the packed buffer (the parameter's offset + the field's) */
  size_t size, align;    /* of the field as laid out */
  gcl_param_info info;   /* what it is; info.name is the member's name (NULL if unnamed), or the
                            parameter's for a whole parameter; info.grid_constant the parameter's */
  uint64_t opaque[8];    /* private to gclaunch: filled by the resolvers, read by the setters;
                            its size is fixed, its contents are not. Treat the struct as a value. */
} gcl_field;

/* Resolves path in layout into *out. GCL_ERROR_NOT_FOUND for an unknown parameter or member name,
 * ".name" on something that is no struct included (the message lists the names there);
 * GCL_ERROR_INVALID_ARGUMENT for a malformed path, an index out of range, "[N]" on a non-array,
 * ".N" on a non-struct or ".x" on an array (index it with [N]) -- each message quotes the path
 * and the 1-based column. Raw layouts (no signature) have only whole parameters ("0", "1", ...).
 * Costs time proportional to the path's components (and the members searched). Reads. */
GCL_API gcl_status gcl_layout_field(const gcl_layout *layout, const char *path, gcl_field *out);
/* The whole parameter index as a field. GCL_ERROR_INVALID_ARGUMENT for an index out of range.
 * Reads. */
GCL_API gcl_status gcl_layout_param_field(const gcl_layout *layout, size_t index, gcl_field *out);
/* Element `element` of the array field `array` (of this layout) as a field: the resolver of
 * "path[element]" without text. GCL_ERROR_INVALID_ARGUMENT when array is no array or element is
 * out of range. Reads. */
GCL_API gcl_status gcl_layout_element_field(const gcl_layout *layout, const gcl_field *array,
                                            size_t element, gcl_field *out);
/* The path of field ("g.loads[3]"; members without a name by index) into buf, with
 * gcl_signature_format's (snprintf's) contract. GCL_ERROR_INVALID_ARGUMENT for NULL layout or
 * field, NULL buf with cap > 0, or a field of another layout. Reads. */
GCL_API gcl_status gcl_layout_field_path(const gcl_layout *layout, const gcl_field *field,
                                         char *buf, size_t cap, size_t *needed);

/* Calls fn once per leaf of every parameter, in buffer order (parameter by parameter; a raw
 * layout's parameters are leaves of kind BYTES), with the leaf as a field and its path (valid
 * during the call). Stops early when fn returns nonzero. Allocates one path buffer; no table
 * of leaves is built. GCL_ERROR_INVALID_ARGUMENT for NULL layout or fn. Reads. */
typedef int (*gcl_leaf_fn)(const gcl_field *leaf, const char *path, void *user);
GCL_API gcl_status gcl_layout_visit_leaves(const gcl_layout *layout, gcl_leaf_fn fn, void *user);

/* Raw bytes into field (size must equal field->size): a leaf, a sub-struct, a whole array or a
 * whole parameter. GCL_ERROR_INVALID_ARGUMENT for a field of another layout, NULLs, or a wrong
 * size. Taken tensors owned by pointers inside the field are released after the copy; tensor
 * maps inside it are no longer gclaunch's (gcl_args_repoint_tensormaps refuses them until they
 * are encoded again). No allocation. */
GCL_API gcl_status gcl_args_set_field(gcl_args *args, const gcl_field *field, const void *value,
                                      size_t size);
/* A scalar of type `type` into field: *value is a C value of that type (bool; int8_t ... uint64_t;
 * the 16 bits of an f16 or bf16 as uint16_t; float; double). GCL_ERROR_TYPE_MISMATCH unless
 * the field is a scalar of that type or untyped bytes of its size; GCL_ERROR_INVALID_ARGUMENT
 * for a type outside gcl_scalar or GCL_SCALAR_VOID. bool stores 0 or 1 in one byte. The typed
 * gcl_args_set_field_<type> below are inline forms of it. */
GCL_API gcl_status gcl_args_set_field_scalar(gcl_args *args, const gcl_field *field,
                                             gcl_scalar type, const void *value);
/* A device address into a pointer field, checked against the pointer's align(N). */
GCL_API gcl_status gcl_args_set_field_ptr(gcl_args *args, const gcl_field *field,
                                          uint64_t address);
/* A borrowed tensor into a pointer field: the field gets data + byte_offset after the checks
 * (device type, dtype against the element type, shape and strides, extent overflow, the
 * pointer's alignment, the device id where the args know it; with DLPACK_FLAG_BITMASK_READ_ONLY
 * in dlpack_flags, that the pointer is const). The tensor stays the caller's. GCL_ERROR_TENSOR
 * with a message naming the parameter, the field and the offending value. */
GCL_API gcl_status gcl_args_set_field_dltensor_flags(gcl_args *args, const gcl_field *field,
                                                     const DLTensor *t, uint64_t dlpack_flags);
/* Takes ownership of t from the call on: its deleter (may be NULL) runs exactly once -- when the
 * field is overwritten, when the args are destroyed, or before this call returns if it fails.
 * An unknown major version: the deleter runs, nothing else is read, GCL_ERROR_TENSOR_VERSION. */
GCL_API gcl_status gcl_args_take_field_dlpack(gcl_args *args, const gcl_field *field,
                                              DLManagedTensorVersioned *t);
GCL_API gcl_status gcl_args_take_field_dlpack_legacy(gcl_args *args, const gcl_field *field,
                                                     DLManagedTensor *t);
/* True when every leaf byte of field was set. Reads. */
GCL_API bool gcl_args_field_is_set(const gcl_args *args, const gcl_field *field);
/* Copies the field's bytes (size must equal field->size) into out, as the device will read them.
 * GCL_ERROR_UNSET_ARGUMENT when a leaf byte of it was never set; GCL_ERROR_INVALID_ARGUMENT
 * for a field of another layout or a wrong size. Reads. */
GCL_API gcl_status gcl_args_field_bytes(const gcl_args *args, const gcl_field *field, void *out,
                                        size_t size);

/* Typed field setters (gcl_args_set_field_scalar with the type spelled in the name). */
#define GCL_ARGS_FIELD_SETTER_(suffix, ctype, type)                                                \
  static inline gcl_status gcl_args_set_field_##suffix(gcl_args *args, const gcl_field *field,     \
                                                       ctype value) {                             \
    return gcl_args_set_field_scalar(args, field, type, &value);                                   \
  }
GCL_ARGS_FIELD_SETTER_(bool, bool, GCL_SCALAR_BOOL)
GCL_ARGS_FIELD_SETTER_(i8, int8_t, GCL_SCALAR_I8)
GCL_ARGS_FIELD_SETTER_(u8, uint8_t, GCL_SCALAR_U8)
GCL_ARGS_FIELD_SETTER_(i16, int16_t, GCL_SCALAR_I16)
GCL_ARGS_FIELD_SETTER_(u16, uint16_t, GCL_SCALAR_U16)
GCL_ARGS_FIELD_SETTER_(i32, int32_t, GCL_SCALAR_I32)
GCL_ARGS_FIELD_SETTER_(u32, uint32_t, GCL_SCALAR_U32)
GCL_ARGS_FIELD_SETTER_(i64, int64_t, GCL_SCALAR_I64)
GCL_ARGS_FIELD_SETTER_(u64, uint64_t, GCL_SCALAR_U64)
GCL_ARGS_FIELD_SETTER_(f16, uint16_t, GCL_SCALAR_F16)   /* the half's bits */
GCL_ARGS_FIELD_SETTER_(bf16, uint16_t, GCL_SCALAR_BF16) /* the bfloat16's bits */
GCL_ARGS_FIELD_SETTER_(f32, float, GCL_SCALAR_F32)
GCL_ARGS_FIELD_SETTER_(f64, double, GCL_SCALAR_F64)
#undef GCL_ARGS_FIELD_SETTER_
/* f16 / bf16 from a float, rounded to nearest even. */
static inline gcl_status gcl_args_set_field_f16_from_f32(gcl_args *args, const gcl_field *field,
                                                         float value) {
  uint16_t bits = gcl_f16_from_f32(value);
  return gcl_args_set_field_scalar(args, field, GCL_SCALAR_F16, &bits);
}
static inline gcl_status gcl_args_set_field_bf16_from_f32(gcl_args *args, const gcl_field *field,
                                                          float value) {
  uint16_t bits = gcl_bf16_from_f32(value);
  return gcl_args_set_field_scalar(args, field, GCL_SCALAR_BF16, &bits);
}
static inline gcl_status gcl_args_set_field_dltensor(gcl_args *args, const gcl_field *field,
                                                     const DLTensor *t) {
  return gcl_args_set_field_dltensor_flags(args, field, t, 0);
}

/* --- Index-addressed conveniences: parameter `index` as a field (gcl_layout_param_field of the
 * args' layout), then the field setter. Their failures are those two calls' (and name them);
 * NULL args is the field setter's "args is NULL". ------------------------------------------- */

#define GCL_ARGS_PARAM_(index)                                                                     \
  gcl_field f_;                                                                                    \
  if (args) {                                                                                      \
    gcl_status s_ = gcl_layout_param_field(gcl_args_layout(args), (index), &f_);                   \
    if (s_ != GCL_OK) return s_;                                                                   \
  }                                                                                                \
  const gcl_field *fp_ = args ? &f_ : NULL
/* Raw bytes into parameter index (size must equal its size). */
static inline gcl_status gcl_args_set(gcl_args *args, size_t index, const void *value,
                                      size_t size) {
  GCL_ARGS_PARAM_(index);
  return gcl_args_set_field(args, fp_, value, size);
}
/* Element `element` of a by-value array parameter T[N]; size must equal the element's size. */
static inline gcl_status gcl_args_set_element(gcl_args *args, size_t index, size_t element,
                                              const void *value, size_t size) {
  gcl_field f_, e_;
  if (args) {
    gcl_status s_ = gcl_layout_param_field(gcl_args_layout(args), index, &f_);
    if (s_ == GCL_OK) s_ = gcl_layout_element_field(gcl_args_layout(args), &f_, element, &e_);
    if (s_ != GCL_OK) return s_;
  }
  return gcl_args_set_field(args, args ? &e_ : NULL, value, size);
}
/* Raw bytes into the parameter (or field: any path) called name. */
static inline gcl_status gcl_args_set_by_name(gcl_args *args, const char *name,
                                              const void *value, size_t size) {
  gcl_field f_;
  if (args) {
    gcl_status s_ = gcl_layout_field(gcl_args_layout(args), name, &f_);
    if (s_ != GCL_OK) return s_;
  }
  return gcl_args_set_field(args, args ? &f_ : NULL, value, size);
}
#define GCL_ARGS_INDEX_SETTER_(suffix, ctype)                                                      \
  static inline gcl_status gcl_args_set_##suffix(gcl_args *args, size_t index, ctype value) {     \
    GCL_ARGS_PARAM_(index);                                                                        \
    return gcl_args_set_field_##suffix(args, fp_, value);                                          \
  }
GCL_ARGS_INDEX_SETTER_(bool, bool)
GCL_ARGS_INDEX_SETTER_(i8, int8_t)
GCL_ARGS_INDEX_SETTER_(u8, uint8_t)
GCL_ARGS_INDEX_SETTER_(i16, int16_t)
GCL_ARGS_INDEX_SETTER_(u16, uint16_t)
GCL_ARGS_INDEX_SETTER_(i32, int32_t)
GCL_ARGS_INDEX_SETTER_(u32, uint32_t)
GCL_ARGS_INDEX_SETTER_(i64, int64_t)
GCL_ARGS_INDEX_SETTER_(u64, uint64_t)
GCL_ARGS_INDEX_SETTER_(f16, uint16_t)
GCL_ARGS_INDEX_SETTER_(bf16, uint16_t)
GCL_ARGS_INDEX_SETTER_(f16_from_f32, float)
GCL_ARGS_INDEX_SETTER_(bf16_from_f32, float)
GCL_ARGS_INDEX_SETTER_(f32, float)
GCL_ARGS_INDEX_SETTER_(f64, double)
GCL_ARGS_INDEX_SETTER_(ptr, uint64_t)
GCL_ARGS_INDEX_SETTER_(dltensor, const DLTensor *)
#undef GCL_ARGS_INDEX_SETTER_
static inline gcl_status gcl_args_set_dltensor_flags(gcl_args *args, size_t index,
                                                     const DLTensor *t, uint64_t dlpack_flags) {
  GCL_ARGS_PARAM_(index);
  return gcl_args_set_field_dltensor_flags(args, fp_, t, dlpack_flags);
}
/* The take forms own t from the call on, also when the index is out of range (the deleter runs
 * before the call returns, as for every failure). */
static inline gcl_status gcl_args_take_dlpack(gcl_args *args, size_t index,
                                              DLManagedTensorVersioned *t) {
  gcl_field f_;
  gcl_status s_ = args ? gcl_layout_param_field(gcl_args_layout(args), index, &f_) : GCL_OK;
  if (s_ == GCL_OK || (t && t->version.major != DLPACK_MAJOR_VERSION)) /* the version first */
    return gcl_args_take_field_dlpack(args, s_ == GCL_OK && args ? &f_ : NULL, t);
  if (t && t->deleter) t->deleter(t);
  return s_;
}
static inline gcl_status gcl_args_take_dlpack_legacy(gcl_args *args, size_t index,
                                                     DLManagedTensor *t) {
  gcl_field f_;
  gcl_status s_ = args ? gcl_layout_param_field(gcl_args_layout(args), index, &f_) : GCL_OK;
  if (s_ != GCL_OK && t && t->deleter) t->deleter(t);
  return s_ != GCL_OK ? s_ : gcl_args_take_field_dlpack_legacy(args, args ? &f_ : NULL, t);
}
/* True if parameter index was set (false for NULL args or an index out of range). */
static inline bool gcl_args_is_set(const gcl_args *args, size_t index) {
  gcl_field f_;
  return args && index < gcl_layout_count(gcl_args_layout(args)) &&
         gcl_layout_param_field(gcl_args_layout(args), index, &f_) == GCL_OK &&
         gcl_args_field_is_set(args, &f_);
}
#undef GCL_ARGS_PARAM_

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
/* ---------------------------------------------------------------------------------------------
 * Tensor maps (TMA descriptors) encoded from DLPack tensors
 *
 * A tensor map is 128 opaque bytes that cuTensorMapEncodeTiled writes. gclaunch encodes it from a
 * DLPack tensor straight into one element of a by-value `tensormap[N]` parameter (or into a plain
 * `tensormap` parameter), so a megakernel's descriptors are set one by one, none copied twice.
 * Dimension order: TMA counts dimensions innermost first, DLPack outermost first; TMA dimension i
 * is DLPack dimension ndim-1-i. Options are given in TMA order (box[0] goes with the last, i.e.
 * contiguous, DLPack dimension).
 * ------------------------------------------------------------------------------------------- */

#define GCL_TENSORMAP_BYTES 128
#define GCL_TENSORMAP_MAX_RANK 5

/* Element types; the values are CUtensorMapDataType's (checked against cuda.h at build time).
 * DLPack dtypes map by width: int8/uint8/bool/float8 -> U8, int16/uint16 -> U16 (TMA moves bytes;
 * only the NaN fill cares about floats), int32 -> I32, uint32 -> U32, int64 -> I64,
 * uint64 -> U64, float16 -> F16, bfloat16 -> BF16, float32 -> F32, float64 -> F64. */
typedef enum gcl_tensormap_type {
  GCL_TENSORMAP_U8 = 0, GCL_TENSORMAP_U16 = 1, GCL_TENSORMAP_U32 = 2, GCL_TENSORMAP_I32 = 3,
  GCL_TENSORMAP_U64 = 4, GCL_TENSORMAP_I64 = 5, GCL_TENSORMAP_F16 = 6, GCL_TENSORMAP_F32 = 7,
  GCL_TENSORMAP_F64 = 8, GCL_TENSORMAP_BF16 = 9
} gcl_tensormap_type;

/* CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill. */
enum { GCL_TENSORMAP_INTERLEAVE_NONE = 0, GCL_TENSORMAP_INTERLEAVE_16B = 1,
       GCL_TENSORMAP_INTERLEAVE_32B = 2 };
enum { GCL_TENSORMAP_SWIZZLE_NONE = 0, GCL_TENSORMAP_SWIZZLE_32B = 1, GCL_TENSORMAP_SWIZZLE_64B = 2,
       GCL_TENSORMAP_SWIZZLE_128B = 3 };
enum { GCL_TENSORMAP_L2_NONE = 0, GCL_TENSORMAP_L2_64B = 1, GCL_TENSORMAP_L2_128B = 2,
       GCL_TENSORMAP_L2_256B = 3 };
enum { GCL_TENSORMAP_OOB_ZERO = 0, GCL_TENSORMAP_OOB_NAN = 1 /* NAN_REQUEST_ZERO_FMA, floats */ };

/* im2col mode (cuTensorMapEncodeIm2col), for convolutions over a channels-last tensor: DLPack
 * shape [N, W, C] (rank 3), [N, H, W, C] (rank 4) or [N, D, H, W, C] (rank 5), i.e. TMA order
 * C, W, H, D, N. One load (cp.async.bulk.tensor...im2col) fetches `pixels` pixels of `channels`
 * channels each, walking W, then H, D and N inside the bounding box whose corners are `lower` and
 * `upper` (offsets from the tensor's first and last pixel of each spatial dimension, innermost
 * first: W, H, D; for a convolution lower = -padding and upper = padding - (filter - 1) *
 * dilation), shifted by the load's im2col offsets (the filter tap); pixels outside the tensor
 * read as the out-of-bounds fill. */
typedef struct gcl_tensormap_im2col {
  uint32_t pixels;    /* pixelsPerColumn: 1 ... 1024; 0 = tiled mode (the default) */
  uint32_t channels;  /* channelsPerPixel: 1 ... 256 */
  int32_t lower[3];   /* pixelBoxLowerCorner per spatial dimension (W, H, D); entries past the
                         tensor's rank - 2 spatial dimensions are ignored. Range: +-2^15 for rank
                         3, [-128, 127] for rank 4, [-16, 15] for rank 5. The box must hold a
                         pixel: lower[i] < size + upper[i], the sum in 32 bits signed, as the
                         driver computes it (measured); with interleave the driver takes the
                         size of the dimension one further in (TMA dimension i, not i + 1) */
  int32_t upper[3];   /* pixelBoxUpperCorner, same ranges */
} gcl_tensormap_im2col;

typedef struct gcl_tensormap_options {
  uint32_t box[GCL_TENSORMAP_MAX_RANK];  /* box size per TMA dimension, 1 ... 256; required.
                                            Entries at or beyond the tensor's rank are ignored. */
  uint32_t element_strides[GCL_TENSORMAP_MAX_RANK]; /* 1 ... 8; 0 is taken as 1 */
  int interleave;                        /* GCL_TENSORMAP_INTERLEAVE_* */
  int swizzle;                           /* GCL_TENSORMAP_SWIZZLE_* */
  int l2_promotion;                      /* GCL_TENSORMAP_L2_* */
  int oob_fill;                          /* GCL_TENSORMAP_OOB_* */
  int store;    /* nonzero: the map will be a TMA store destination (cp.async.bulk.tensor
                   global.shared). TMA stores write whole 16-byte chunks, so a box reaching the end
                   of a row whose innermost extent (dims[0] * element size) is not a multiple of 16
                   bytes also overwrites the bytes after the row up to the next 16-byte boundary
                   (padding or another tensor's data) with the box's contents there. The driver
                   encodes such maps silently; with store set they are refused. Loads are fine. */
  gcl_tensormap_im2col im2col; /* im2col.pixels > 0: an im2col map (box[] is then ignored;
                                  element_strides apply) */
  uint32_t reserved[8];        /* must be zero: room for new fields (see gcl_launch_config) */
} gcl_tensormap_options;

/* The arguments cuTensorMapEncodeTiled is called with, in TMA order. */
typedef struct gcl_tensormap_desc {
  gcl_tensormap_type type;
  uint32_t rank;
  uint32_t element_bytes;
  uint64_t address;                                 /* data + byte_offset */
  uint64_t dims[GCL_TENSORMAP_MAX_RANK];
  uint64_t strides[GCL_TENSORMAP_MAX_RANK - 1];     /* bytes, of TMA dimensions 1 ... rank-1 */
  uint32_t box[GCL_TENSORMAP_MAX_RANK];
  uint32_t element_strides[GCL_TENSORMAP_MAX_RANK];
  uint32_t box_bytes;       /* bytes one box transfers (the mbarrier transaction count); im2col:
                               pixels * channels * element_bytes */
  int interleave, swizzle, l2_promotion, oob_fill;
  gcl_tensormap_im2col im2col; /* pixels 0: tiled (cuTensorMapEncodeTiled, box[] used); else
                                  cuTensorMapEncodeIm2col with these, unused corners zeroed */
} gcl_tensormap_desc;

/* Checks tensor t and options against every rule of cuTensorMapEncodeTiled (or Im2col) that
 * gclaunch knows, documented or not, in one pass without the driver (docs/tensormap-rules.md
 * lists them with their sources): device type CUDA or CUDA managed; rank 1-5; innermost
 * dimension contiguous; address after byte_offset (NULL data is address 0) 16-byte aligned, 32
 * with 32-byte interleave, and below 2^57 (the driver's bound, measured); strides 0 or
 * multiples of 16 (32) below 2^40; dims 1 ... 2^32; box 1-256 with inner box bytes a multiple
 * of 16 and within the swizzle span, and element size x the product of floor(box / element
 * stride) at most 228 KiB (the driver's limit, measured on the H200);
 * element strides 1-8; interleave, swizzle, L2 and fill values and their combinations; with
 * options->store, an innermost extent in bytes that is a multiple of 16. With
 * options->im2col.pixels > 0 the cuTensorMapEncodeIm2col ones instead of the box's: rank 3-5,
 * pixels 1-1024, channels 1-256 with channels * element size a multiple of 16 and within the
 * swizzle span, pixels x channels x element size at most 228 KiB, corners within their rank's
 * range leaving the bounding box at least one pixel per spatial dimension. A size-1 dimension's stride is
 * irrelevant and replaced by a valid one. On success fills *desc when desc is not NULL.
 * GCL_ERROR_TENSOR naming "tensor", the DLPack dimension or option, the value and the limit;
 * GCL_ERROR_INVALID_ARGUMENT for NULL t or options or a bad enum value. Thread-safe. */
GCL_API gcl_status gcl_tensormap_check(const DLTensor *t, const gcl_tensormap_options *options,
                                       gcl_tensormap_desc *desc);

#ifdef __cplusplus
}
#endif
#endif /* GCLAUNCH_CORE_H */
