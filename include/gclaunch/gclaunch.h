/* gclaunch.h -- launch CUDA kernels from C with device-exact parameter buffers.
 *
 * Conventions, for every function below unless its comment says otherwise:
 * - Fallible functions return a gcl_status. On failure, gcl_last_error() holds a message that
 *   names the parameter and the expected and actual values, and nothing was changed: output
 *   pointers keep their old value, objects keep their old state.
 * - Objects are opaque. Each has one create/destroy pair; destroy accepts NULL.
 * - Ownership: a signature is independent; a layout copies what it needs from its signature;
 *   args borrow their layout (the layout must outlive them); a module borrows the context it was
 *   loaded in and a kernel the context it was looked up for (gcl_kernel_get_on): the context does
 *   not own them, so destroy modules before the contexts they use (gcl_context_destroy does not
 *   destroy them); a module owns its kernels (gcl_module_destroy destroys them). Strings returned
 *   by the library belong to the object they came from and live as long as it does. Host memory
 *   comes from the allocator of gcl_replace_allocator.
 * - Thread safety: functions that only read an object (marked "reads") may run concurrently on
 *   the same object; functions that change an object must not run concurrently with any other
 *   call on that object. Different objects are independent. gcl_last_error is per thread.
 *
 * No function aborts, exits or asserts on bad input or on a driver failure.
 */
#ifndef GCLAUNCH_H
#define GCLAUNCH_H

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
#define GCL_VERSION_MINOR 2
#define GCL_VERSION_PATCH 0
#define GCL_VERSION_STRING "0.2.0"
/* 10000 * major + 100 * minor + patch (zstd's ZSTD_VERSION_NUMBER): 0.2.0 is 200. Compare it
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
                               "only a new process recovers")

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
/* Index of the parameter called name. GCL_ERROR_NOT_FOUND if none. Reads. */
GCL_API gcl_status gcl_signature_find(const gcl_signature *sig, const char *name, size_t *index);
/* Canonical text of the signature (parses back to an equal signature). Writes at most cap bytes
 * including the terminating NUL into buf (buf may be NULL when cap is 0) and the full length
 * (without NUL) into *needed if needed is not NULL. GCL_ERROR_INVALID_ARGUMENT if the text did
 * not fit (buf then holds nothing useful). Reads. */
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
 * placement rule depends on the architecture's parameter base (FACTS.md, lib/core/layout.c):
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
/* Offset, size and alignment of parameter index; any output pointer may be NULL. Reads. */
GCL_API gcl_status gcl_layout_param(const gcl_layout *layout, size_t index, size_t *offset,
                                    size_t *size, size_t *align);
/* Describes parameter index as the signature did (raw layouts: kind BYTES, no name). Reads. */
GCL_API gcl_status gcl_layout_param_info(const gcl_layout *layout, size_t index,
                                         gcl_param_info *info);
/* Index of the parameter called name; GCL_ERROR_NOT_FOUND if none. Reads. */
GCL_API gcl_status gcl_layout_find(const gcl_layout *layout, const char *name, size_t *index);
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
/* Restricts tensors to those on device_id (CUDA device ordinal); -1 (the default) accepts any.
 * With several GPUs, pass the kernel's device: gcl_context_device(gcl_kernel_context(k)). */
GCL_API gcl_status gcl_args_set_device(gcl_args *args, int device_id);
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
/* The path of field ("g.loads[3]"; members without a name by index) into buf, as
 * gcl_signature_format sizes its text. Reads. */
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
struct _ffi_type; /* libffi's ffi_type; include <ffi.h> to build one */
/* Packs value described by a libffi type (struct, scalar or pointer) into field.
 * GCL_ERROR_TYPE_MISMATCH unless the type's size, alignment and member offsets equal the
 * field's. */
GCL_API gcl_status gcl_args_set_field_ffi(gcl_args *args, const gcl_field *field,
                                          const struct _ffi_type *type, const void *value);
/* True when every leaf byte of field was set. Reads. */
GCL_API bool gcl_args_field_is_set(const gcl_args *args, const gcl_field *field);

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

/* Parameter index of args' layout as a field (gcl_layout_param_field for args).
 * GCL_ERROR_INVALID_ARGUMENT "gcl_args_param_field: args is NULL", or "parameter index 9 out of
 * range: the args have 7 parameters". Reads. */
GCL_API gcl_status gcl_args_param_field(const gcl_args *args, size_t index, gcl_field *out);

/* --- Index-addressed conveniences: parameter `index` as a field (gcl_args_param_field), then the
 * field setter. Their failures are those two calls' (and name them). ------------------------- */

#define GCL_ARGS_PARAM_(index)                                                                     \
  gcl_field f_;                                                                                    \
  gcl_status s_ = gcl_args_param_field(args, (index), &f_);                                        \
  if (s_ != GCL_OK) return s_
/* Raw bytes into parameter index (size must equal its size). */
static inline gcl_status gcl_args_set(gcl_args *args, size_t index, const void *value,
                                      size_t size) {
  GCL_ARGS_PARAM_(index);
  return gcl_args_set_field(args, &f_, value, size);
}
/* Element `element` of a by-value array parameter T[N]; size must equal the element's size. */
static inline gcl_status gcl_args_set_element(gcl_args *args, size_t index, size_t element,
                                              const void *value, size_t size) {
  GCL_ARGS_PARAM_(index);
  gcl_field e_;
  s_ = gcl_layout_element_field(gcl_args_layout(args), &f_, element, &e_);
  return s_ != GCL_OK ? s_ : gcl_args_set_field(args, &e_, value, size);
}
/* Raw bytes into the parameter (or field: any path) called name. */
static inline gcl_status gcl_args_set_by_name(gcl_args *args, const char *name,
                                              const void *value, size_t size) {
  gcl_field f_;
  gcl_status s_ = gcl_layout_field(gcl_args_layout(args), name, &f_);
  return s_ != GCL_OK ? s_ : gcl_args_set_field(args, &f_, value, size);
}
#define GCL_ARGS_INDEX_SETTER_(suffix, ctype)                                                      \
  static inline gcl_status gcl_args_set_##suffix(gcl_args *args, size_t index, ctype value) {     \
    GCL_ARGS_PARAM_(index);                                                                        \
    return gcl_args_set_field_##suffix(args, &f_, value);                                          \
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
  return gcl_args_set_field_dltensor_flags(args, &f_, t, dlpack_flags);
}
/* The take forms own t from the call on, also when the index is out of range (the deleter runs
 * before the call returns, as for every failure). */
static inline gcl_status gcl_args_take_dlpack(gcl_args *args, size_t index,
                                              DLManagedTensorVersioned *t) {
  gcl_field f_;
  gcl_status s_ = gcl_args_param_field(args, index, &f_);
  if (s_ == GCL_OK || (t && t->version.major != DLPACK_MAJOR_VERSION)) /* the version first */
    return gcl_args_take_field_dlpack(args, s_ == GCL_OK ? &f_ : NULL, t);
  if (t && t->deleter) t->deleter(t);
  return s_;
}
static inline gcl_status gcl_args_take_dlpack_legacy(gcl_args *args, size_t index,
                                                     DLManagedTensor *t) {
  gcl_field f_;
  gcl_status s_ = gcl_args_param_field(args, index, &f_);
  if (s_ != GCL_OK && t && t->deleter) t->deleter(t);
  return s_ != GCL_OK ? s_ : gcl_args_take_field_dlpack_legacy(args, &f_, t);
}
static inline gcl_status gcl_args_set_ffi(gcl_args *args, size_t index,
                                          const struct _ffi_type *type, const void *value) {
  GCL_ARGS_PARAM_(index);
  return gcl_args_set_field_ffi(args, &f_, type, value);
}
/* True if parameter index was set (false for an index out of range). */
static inline bool gcl_args_is_set(const gcl_args *args, size_t index) {
  gcl_field f_;
  return args && index < gcl_layout_count(gcl_args_layout(args)) &&
         gcl_args_param_field(args, index, &f_) == GCL_OK && gcl_args_field_is_set(args, &f_);
}
#undef GCL_ARGS_PARAM_

/* ---------------------------------------------------------------------------------------------
 * Module images read on the CPU (no driver): cubin, fatbin, PTX.
 * ------------------------------------------------------------------------------------------- */

typedef struct gcl_image gcl_image;

typedef enum gcl_image_format {
  GCL_IMAGE_CUBIN = 1, GCL_IMAGE_FATBIN = 2, GCL_IMAGE_PTX = 3,
  GCL_IMAGE_ELF = 4 /* a host executable, library or object: every container of its fatbin sections */
} gcl_image_format;

typedef struct gcl_image_kernel {
  const char *name;
  size_t param_count;
  size_t param_bytes;      /* exact parameter buffer bytes */
  int max_threads;         /* 0 when the image does not say */
  int reqntid[3];          /* 0 when the image does not say */
  int registers;           /* -1 when the image does not say */
  long shared_bytes;       /* static shared memory, -1 when the image does not say */
} gcl_image_kernel;

/* Parses an image; the format is found from the content. sm picks the fatbin entry and the
 * architecture PTX offsets are computed for (0: the image's own; for PTX its `.target sm_NN`, 90
 * without one). A host ELF (executable, library, object) gives every kernel of every fatbin
 * container in its .nv_fatbin and __nv_relfatbin sections (GCL_IMAGE_ELF). The image keeps
 * a copy of what it needs. GCL_ERROR_BAD_IMAGE for truncated or malformed data. Thread-safe. */
GCL_API gcl_status gcl_image_parse(const void *data, size_t size, int sm, gcl_image **out);
GCL_API void gcl_image_destroy(gcl_image *img);
GCL_API gcl_image_format gcl_image_get_format(const gcl_image *img);
GCL_API const char *gcl_image_format_name(gcl_image_format f); /* "cubin", "fatbin", "ptx", "elf" */
/* The architecture the offsets are for (90 for sm_90). */
GCL_API int gcl_image_sm(const gcl_image *img);
GCL_API size_t gcl_image_kernel_count(const gcl_image *img);
GCL_API gcl_status gcl_image_get_kernel(const gcl_image *img, size_t k, gcl_image_kernel *info);
/* offset/size of kernel k's parameter p; align 0 when the image does not tell it. */
GCL_API gcl_status gcl_image_param(const gcl_image *img, size_t k, size_t p, size_t *offset,
                                   size_t *size, size_t *align);
/* What the image says kernel k's parameter p is: its PTX type mapped to signature text ("u32",
 * "ptr", "bytes(2048) align(128)"); "" for cubins (their records give no type) and for an index
 * out of range. Never NULL; lives as long as img. Reads. */
GCL_API const char *gcl_image_param_kind(const gcl_image *img, size_t k, size_t p);
/* Index of the kernel called name. GCL_ERROR_NOT_FOUND if none. Reads. */
GCL_API gcl_status gcl_image_find_kernel(const gcl_image *img, const char *name, size_t *index);

/* Reads the whole file at path (the reader gcl_module_load_file uses; the gclaunch tools use it
 * too): *data gets the bytes plus a terminating NUL (not counted in *size), to be freed with
 * gcl_file_free. GCL_ERROR_IO naming the path and the system's reason (missing, not a regular
 * file, short read); GCL_ERROR_OUT_OF_MEMORY; GCL_ERROR_INVALID_ARGUMENT for NULL arguments.
 * Outputs untouched on failure. Thread-safe. */
GCL_API gcl_status gcl_file_read(const char *path, void **data, size_t *size);
/* Frees what gcl_file_read or gcl_nvrtc_compile returned (through the allocator of
 * gcl_replace_allocator). NULL is fine. */
GCL_API void gcl_file_free(void *data);
/* Compiles CUDA source with NVRTC on the CPU -- no driver, no GPU -- as gcl_module_compile does
 * (options as given, -arch=sm_SM unless an -arch/--gpu-architecture option is given, the
 * toolkit's CCCL headers on the include path): *image gets the cubin (or the PTX, NUL-terminated,
 * for a virtual architecture), to be freed with gcl_file_free. GCL_ERROR_NO_NVRTC without NVRTC;
 * GCL_ERROR_COMPILE with the compiler log in the message. Outputs untouched on failure.
 * Thread-safe. */
GCL_API gcl_status gcl_nvrtc_compile(const char *source, const char *name,
                                     const char *const *options, size_t option_count, int sm,
                                     void **image, size_t *size);

/* ---------------------------------------------------------------------------------------------
 * Driver, devices, contexts (opens libcuda.so.1 at run time; never linked)
 * ------------------------------------------------------------------------------------------- */

/* Loads the driver once (thread-safe, cached). GCL_ERROR_NO_DRIVER (dlopen failed),
 * GCL_ERROR_STUB_DRIVER (CUDA_ERROR_STUB_LIBRARY, 34), GCL_ERROR_NO_DEVICE (100),
 * GCL_ERROR_DRIVER_TOO_OLD, GCL_ERROR_DRIVER. The environment variable GCL_LIBCUDA names another
 * library to open instead of libcuda.so.1. */
GCL_API gcl_status gcl_driver_init(void);
/* Driver version as 1000*major + 10*minor. */
GCL_API gcl_status gcl_driver_version(int *version);
/* The path (or name) the driver was looked for at. Never NULL. */
GCL_API const char *gcl_driver_path(void);
GCL_API gcl_status gcl_device_count(int *count);

typedef struct gcl_device_info {
  char name[256];
  int sm;               /* 90 for sm_90 */
  int multiprocessors;
  size_t total_memory;
  int max_threads_per_block;
  int max_shared_per_block_optin;
} gcl_device_info;
GCL_API gcl_status gcl_device_get_info(int device, gcl_device_info *info);

/* NVRTC, loaded lazily (GCL_LIBNVRTC overrides; else libnvrtc.so.13, then .12, also under
 * $CUDA_PATH/lib64 and /usr/local/cuda/lib64). */
GCL_API gcl_status gcl_nvrtc_init(void);
GCL_API gcl_status gcl_nvrtc_version(int *major, int *minor);
/* Fills archs with up to cap supported SM numbers; *count gets the total. */
GCL_API gcl_status gcl_nvrtc_archs(int *archs, size_t cap, size_t *count);
GCL_API const char *gcl_nvrtc_path(void);

typedef struct gcl_context gcl_context;
/* Retains the device's primary context. Thread-safe. */
GCL_API gcl_status gcl_context_create(int device, gcl_context **out);
/* Releases the primary context. A context does not own the modules loaded in it nor the kernels
 * looked up for it: destroy those first (they borrow ctx and use it until destroyed). */
GCL_API void gcl_context_destroy(gcl_context *ctx);
GCL_API int gcl_context_device(const gcl_context *ctx);
GCL_API int gcl_context_sm(const gcl_context *ctx);
/* Makes the context current on the calling thread. */
GCL_API gcl_status gcl_context_bind(gcl_context *ctx);

/* Device memory helpers for tests, tools and benchmarks (thin wrappers, context made current). */
GCL_API gcl_status gcl_mem_alloc(gcl_context *ctx, size_t bytes, uint64_t *address);
GCL_API gcl_status gcl_mem_free(gcl_context *ctx, uint64_t address);
GCL_API gcl_status gcl_mem_upload(gcl_context *ctx, uint64_t dst, const void *src, size_t bytes);
GCL_API gcl_status gcl_mem_download(gcl_context *ctx, void *dst, uint64_t src, size_t bytes);
GCL_API gcl_status gcl_mem_fill_u8(gcl_context *ctx, uint64_t dst, uint8_t value, size_t bytes);
/* Device-to-device copy (cuMemcpyDtoD; synchronous with respect to the host). */
GCL_API gcl_status gcl_mem_copy(gcl_context *ctx, uint64_t dst, uint64_t src, size_t bytes);
GCL_API gcl_status gcl_context_synchronize(gcl_context *ctx);

/* A timer: two gcl_events of ctx's device (a thin layer over gcl_event_*, for raw CUstreams), to
 * time work on a stream by the device's clock
 * (resolution about 0.5 us), without the host's launch overhead in it:
 *   gcl_timer_start(t, stream); gcl_launch(...); gcl_timer_stop(t, stream);
 *   gcl_timer_elapsed_us(t, &us);       // waits for the stop event
 * The timer borrows ctx (it must outlive the timer). Streams must be of ctx's device (NULL: the
 * default stream). A timer is not thread-safe; different timers are independent. */
typedef struct gcl_timer gcl_timer;
/* GCL_ERROR_INVALID_ARGUMENT (NULL ctx or out), a driver status (event creation failed; nothing
 * is left behind). */
GCL_API gcl_status gcl_timer_create(gcl_context *ctx, gcl_timer **out);
GCL_API void gcl_timer_destroy(gcl_timer *timer); /* NULL is fine */
/* Records the start event on stream; forgets an earlier stop. GCL_ERROR_DRIVER on a bad stream. */
GCL_API gcl_status gcl_timer_start(gcl_timer *timer, void *stream);
/* Records the stop event on stream. GCL_ERROR_INVALID_ARGUMENT if the timer was never started. */
GCL_API gcl_status gcl_timer_stop(gcl_timer *timer, void *stream);
/* Waits until the stop event completed and gives the time between start and stop in
 * microseconds. GCL_ERROR_INVALID_ARGUMENT without a start and a stop (the message says which
 * is missing); GCL_ERROR_DRIVER when the work failed (the driver's error, e.g. a kernel fault). */
GCL_API gcl_status gcl_timer_elapsed_us(gcl_timer *timer, double *us);

/* ---------------------------------------------------------------------------------------------
 * Modules and kernels
 * ------------------------------------------------------------------------------------------- */

typedef struct gcl_module gcl_module;
typedef struct gcl_kernel gcl_kernel;

/* Loads a cubin, fatbin or PTX image (format from the content) context-independently; PTX JIT
 * errors are in the message and in gcl_module_log. */
GCL_API gcl_status gcl_module_load_data(gcl_context *ctx, const void *data, size_t size,
                                        gcl_module **out);
GCL_API gcl_status gcl_module_load_file(gcl_context *ctx, const char *path, gcl_module **out);
/* Compiles CUDA source with NVRTC (options as given; -arch=sm_NN of the context's device unless
 * an -arch/--gpu-architecture option is given) and loads the cubin. On GCL_ERROR_COMPILE the
 * message carries the compiler log. */
GCL_API gcl_status gcl_module_compile(gcl_context *ctx, const char *source, const char *name,
                                      const char *const *options, size_t option_count,
                                      gcl_module **out);
/* JIT or compiler log of the last load or compile ("" if none). Reads. */
GCL_API const char *gcl_module_log(const gcl_module *mod);
/* Destroys the module and its kernels. */
GCL_API void gcl_module_destroy(gcl_module *mod);

/* Looks up kernel name. Its layout comes from the driver (cuFuncGetParamInfo) on the context's
 * device, for as many parameters as the module's own records list (read once when the module was
 * loaded: a cubin's EIATTR_KPARAM_INFO, a PTX's .entry list, the fatbin entry the driver picks
 * for the device's sm): the driver confirms each index below that count and is never asked past
 * it, so a lookup makes no failing driver call (compute-sanitizer reports each one as an API
 * error). If the driver refuses a listed index the image and the loaded kernel disagree:
 * GCL_ERROR_BAD_IMAGE naming the kernel, the count and the index (a kernel with more parameters
 * than its records list cannot be told apart; a signature declaring them is still refused).
 * Only when the records say nothing of the kernel (an LZ4-compressed fatbin entry, zstd without
 * libzstd.so.1) is the count found by asking until the driver refuses: one failing call. When
 * signature is not NULL each parameter's offset and size are checked against it
 * (GCL_ERROR_SIGNATURE_MISMATCH naming the device, its sm, the parameter and both offsets and
 * sizes). Without a signature the parameters are untyped bytes of the driver's sizes.
 * Same as gcl_kernel_get_on(mod, <the context mod was loaded in>, ...). */
GCL_API gcl_status gcl_kernel_get(gcl_module *mod, const char *name, const char *signature,
                                  gcl_kernel **out);
/* Several GPUs: the module's library (cuLibraryLoadData) is context-independent, so one module
 * serves every device. This looks up kernel name for the device of ctx (any context, not only
 * the module's): the function handle (cuKernelGetFunction with ctx current), the driver's layout
 * on that device, and the signature laid out for that device's architecture (gcl_context_sm)
 * and checked against it -- devices of different architectures place parameters differently
 * (a tensor map first sits at offset 112 on sm_90, 0 on sm_100), so a signature may be refused
 * on one device only; the message names that device and its sm. Args for the kernel must be
 * created from its own gcl_kernel_layout (layouts of two devices may differ); call
 * gcl_args_set_device(args, gcl_context_device(ctx)) to have tensors checked against the device.
 * Ownership: the module owns the kernel (gcl_module_destroy frees it, with the module's kernels
 * on every device); ctx is borrowed and must outlive the module's kernels on it.
 * Thread safety: calls on one module must not run concurrently (they add to its kernel list);
 * kernels of one module on different devices may then be launched from different threads.
 * GCL_ERROR_INVALID_ARGUMENT for NULL mod, ctx, name or out; errors of gcl_kernel_get. */
GCL_API gcl_status gcl_kernel_get_on(gcl_module *mod, gcl_context *ctx, const char *name,
                                     const char *signature, gcl_kernel **out);
/* The context the kernel runs in (borrowed; NULL for a NULL kernel). Reads. */
GCL_API gcl_context *gcl_kernel_context(const gcl_kernel *kernel);
/* The kernel's layout (owned by the kernel). Reads. */
GCL_API const gcl_layout *gcl_kernel_layout(const gcl_kernel *kernel);

/* How gcl_launch (and gcl_graph_kernel_node_set_args) hand the parameters to the driver: an array
 * of pointers into the packed buffer (kernelParams, the default) or the packed buffer itself
 * (CU_LAUNCH_PARAM_BUFFER_POINTER in `extra`). Both give the kernel the same bytes; the choice is
 * for benchmarks and for working around a driver that mishandles one of them. */
typedef enum gcl_launch_mode {
  GCL_LAUNCH_KERNEL_PARAMS = 0,
  GCL_LAUNCH_EXTRA_BUFFER = 1
} gcl_launch_mode;
/* Sets the kernel's launch mode. GCL_ERROR_INVALID_ARGUMENT for NULL kernel or another mode.
 * Changes the kernel: not concurrently with a launch of it. */
GCL_API gcl_status gcl_kernel_set_launch_mode(gcl_kernel *kernel, gcl_launch_mode mode);
/* The kernel's launch mode (GCL_LAUNCH_KERNEL_PARAMS for NULL). Reads. */
GCL_API gcl_launch_mode gcl_kernel_launch_mode(const gcl_kernel *kernel);

typedef enum gcl_kernel_attr {
  GCL_KERNEL_MAX_THREADS_PER_BLOCK, GCL_KERNEL_STATIC_SHARED_BYTES, GCL_KERNEL_REGISTERS,
  GCL_KERNEL_MAX_DYNAMIC_SHARED_BYTES, GCL_KERNEL_LOCAL_BYTES,
  /* appended (values 5 ...), settable with gcl_kernel_set_attribute: */
  GCL_KERNEL_PREFERRED_CARVEOUT,               /* percent of L1 as shared memory, -1: default */
  GCL_KERNEL_CLUSTER_SCHEDULING_POLICY,        /* 0 default, 1 spread, 2 load balancing */
  GCL_KERNEL_NONPORTABLE_CLUSTER_SIZE_ALLOWED  /* 0 or 1: clusters of more than 8 blocks */
} gcl_kernel_attr;
/* The kernel's attribute attr on its device (cuFuncGetAttribute). Reads. */
GCL_API gcl_status gcl_kernel_attribute(const gcl_kernel *kernel, gcl_kernel_attr attr, int *value);
/* Sets what persistent kernels set before their first launch (cuFuncSetAttribute):
 * GCL_KERNEL_MAX_DYNAMIC_SHARED_BYTES (0 ... the device's opt-in limit minus the kernel's static
 * shared memory; gcl_launch also raises it by itself when a launch asks for more),
 * GCL_KERNEL_PREFERRED_CARVEOUT (-1 ... 100), GCL_KERNEL_CLUSTER_SCHEDULING_POLICY (0 ... 2),
 * GCL_KERNEL_NONPORTABLE_CLUSTER_SIZE_ALLOWED (0 or 1; gcl_launch sets it by itself for clusters
 * of more than 8). GCL_ERROR_INVALID_ARGUMENT for a read-only attribute or a value out of range
 * (the message gives the range). Changes the kernel: not concurrently with its launches'
 * opt-ins of the same attribute (they are serialized by a lock inside; a launch racing a lower
 * limit may see either). */
GCL_API gcl_status gcl_kernel_set_attribute(gcl_kernel *kernel, gcl_kernel_attr attr, int value);

/* Interop with code that uses the driver API itself. Each returns the underlying handle as
 * void * (cast it to the CUDA type), owned by gclaunch and valid as long as the object; NULL for
 * NULL. Reads. */
GCL_API void *gcl_context_cu_context(const gcl_context *ctx);  /* CUcontext (the primary one) */
GCL_API void *gcl_module_cu_library(const gcl_module *mod);    /* CUlibrary */
GCL_API void *gcl_kernel_cu_function(const gcl_kernel *kernel);/* CUfunction in its context */

/* ---------------------------------------------------------------------------------------------
 * Launch
 * ------------------------------------------------------------------------------------------- */

/* How the structs the caller fills grow (gcl_launch_config, gcl_tensormap_options, and the ones
 * nested in them): zero-initialise them (`= {0}` or designated initialisers) -- zero is the
 * default of every field, today's and tomorrow's. Each ends in reserved members that must be
 * zero (GCL_ERROR_INVALID_CONFIG / GCL_ERROR_INVALID_ARGUMENT otherwise); a later minor version
 * gives a new field a reserved slot, so sizeof and the existing offsets never change and a
 * program built against an older header keeps working with a newer library. (libuv keeps
 * reserved members in its public structs the same way; zstd, whose parameter structs cannot
 * grow, keeps them out of its stable API and adds setters instead -- the fallback here too if
 * the reserved room runs out.) README "ABI and versioning". */
typedef struct gcl_launch_config {
  unsigned grid[3];          /* blocks; grid[0] >= 1. y, z left 0 after the last given dimension
                                are 1 ({.grid = {n}} is n x 1 x 1); a 0 in x, or before a given
                                dimension, is GCL_ERROR_INVALID_CONFIG naming config.grid[i] */
  unsigned block[3];         /* threads; the same rule as grid */
  unsigned cluster[3];       /* all 0: no cluster attribute */
  size_t shared_bytes;       /* dynamic shared memory; > 48 KiB opted in on first use */
  void *stream;              /* a CUstream: gcl_stream_handle(s), or your own; NULL is the
                                context's default stream */
  bool cooperative;
  bool programmatic_dependent_launch;
  int priority;              /* 0: none */
  uint64_t reserved[6];      /* must be zero: room for new fields (see above) */
} gcl_launch_config;

/* Launches kernel with args (whose layout must be the kernel's). Checks the config before the
 * driver where it can. Allocates nothing. Safe to call from several threads on one kernel with
 * different args. Launches on config->stream, which must be a stream of the kernel's context (or
 * NULL, its default stream): a stream of another context is the driver's error. The launch runs
 * in the kernel's context whatever context is current on the calling thread: on a stream of
 * that context the driver needs none, and the current one is left as it is (no driver call but
 * the launch); on the default stream, or when the driver refuses the launch for want of the
 * context, gcl_launch makes the kernel's context current (it stays current) and launches again.
 * So does the first launch that raises the kernel's dynamic shared memory or allows
 * non-portable clusters. When the launch fails again after that binding, the previous context
 * is made current again.
 * The driver copies the parameters when the launch is submitted: args may be changed, reused
 * for the next launch or destroyed as soon as gcl_launch returns, even before the kernel ran
 * (device memory the args point to must of course stay valid until it did).
 * GCL_ERROR_INVALID_CONFIG for a grid or block of 0 (naming the field) and the other config
 * checks; GCL_ERROR_KERNEL_FAULT after a kernel fault (see gcl_stream_synchronize). */
GCL_API gcl_status gcl_launch(gcl_kernel *kernel, const gcl_launch_config *config,
                              const gcl_args *args);

/* ---------------------------------------------------------------------------------------------
 * Streams, events, asynchronous copies, pinned host memory, occupancy
 *
 * Everything a persistent-kernel host program needs without cuda.h or libcuda. A stream or
 * event belongs to the context it was made in (borrowed: the context must outlive it); calls
 * that take a context and a stream refuse a stream of another context (GCL_ERROR_INVALID_ARGUMENT
 * naming "s"). Where a stream parameter may be NULL it means the context's default stream.
 * A handle passed after its destroy is detected while its memory was not reused ("not a live
 * stream"); do not rely on it. One stream or event must not be used from two threads at once;
 * different ones are independent.
 *
 * Kernel faults. A kernel that faults (CUDA_ERROR_ILLEGAL_ADDRESS, ILLEGAL_INSTRUCTION,
 * MISALIGNED_ADDRESS, INVALID_ADDRESS_SPACE, INVALID_PC, HARDWARE_STACK_ERROR, LAUNCH_FAILED,
 * LAUNCH_TIMEOUT, ASSERT, CONTAINED, EXTERNAL_DEVICE) leaves the whole process's CUDA state lost:
 * the driver fails every later call, even a new primary context. The first call that sees such
 * a CUresult (a launch, synchronize, event, copy ...) returns GCL_ERROR_KERNEL_FAULT with a
 * message naming the CUresult; gclaunch records the fault process-wide and every later call that
 * would reach the driver returns the same status and message at once, without calling it
 * (the destroy functions and gcl_host_free still give their handles back;
 * gcl_mem_free returns the fault, and releasing the context frees device memory). gcl_last_cuda_error() gives the
 * CUresult. Only a new process recovers. After ILLEGAL_INSTRUCTION in a process that uses tensor
 * maps (gclaunch encoded one, or looked up a kernel with a tensormap parameter) the message names
 * the likely cause: a TMA load/store whose innermost coordinate x element size is not a multiple
 * of 16 bytes.
 * ------------------------------------------------------------------------------------------- */

typedef struct gcl_stream gcl_stream;
typedef struct gcl_event gcl_event;

/* Creates a non-blocking stream (it does not synchronize with the legacy default stream) of
 * ctx's device. priority: 0 is the lowest (the default); lower numbers are higher priorities,
 * down to the device's greatest (cuCtxGetStreamPriorityRange). Out of range is refused, not
 * clamped: GCL_ERROR_INVALID_ARGUMENT "priority: expected -5 (highest) ... 0 (lowest) on
 * device 0, got 3" (the device's range in the message).
 * Thread-safe on ctx. */
GCL_API gcl_status gcl_stream_create(gcl_context *ctx, int priority, gcl_stream **out);
/* Destroys s (pending work still runs; an unfinished capture is discarded). NULL is fine. */
GCL_API void gcl_stream_destroy(gcl_stream *s);
/* Waits for the stream's work. GCL_ERROR_INVALID_ARGUMENT while the stream is capturing a
 * graph; GCL_ERROR_KERNEL_FAULT when a kernel on it faulted. */
GCL_API gcl_status gcl_stream_synchronize(gcl_stream *s);
/* The CUstream as void *: put it in gcl_launch_config.stream. NULL for NULL. Reads. */
GCL_API void *gcl_stream_handle(const gcl_stream *s);
/* The stream's context (borrowed), NULL for NULL. Reads. */
GCL_API gcl_context *gcl_stream_context(const gcl_stream *s);
/* The priority the stream was created with (0 for NULL). Reads. */
GCL_API int gcl_stream_priority(const gcl_stream *s);

/* --- runtime layer (issue 32, for streams made by others: torch, CuPy, cuda.core) --- */
/* A gcl_stream over a CUstream someone else created (handle; NULL, CU_STREAM_LEGACY (1) and
 * CU_STREAM_PER_THREAD (2) are the default streams) of ctx's device, so that events, copies and
 * graph captures can use it. The driver checks the handle (cuStreamGetPriority: GCL_ERROR_DRIVER
 * naming the handle when it is no stream); gcl_stream_priority gives the driver's priority of
 * it. gcl_stream_destroy frees the wrapper only: the CUstream stays its creator's, who must keep
 * it alive while the wrapper is used. Thread-safe on ctx. */
GCL_API gcl_status gcl_stream_wrap(gcl_context *ctx, void *handle, gcl_stream **out);

/* Creates an event of ctx's device with timing enabled. */
GCL_API gcl_status gcl_event_create(gcl_context *ctx, gcl_event **out);
GCL_API void gcl_event_destroy(gcl_event *e); /* NULL is fine */
/* Records e at the current end of s (NULL: the default stream of e's context). s must be of
 * e's context. */
GCL_API gcl_status gcl_event_record(gcl_event *e, gcl_stream *s);
/* Waits until the work before e's last record completed (at once if never recorded). */
GCL_API gcl_status gcl_event_synchronize(gcl_event *e);
/* *done = whether the work before e's last record completed (true if never recorded); does not
 * wait. A failed query leaves *done alone. */
GCL_API gcl_status gcl_event_query(gcl_event *e, bool *done);
/* Waits for stop, then *us = device time from start to stop in microseconds (resolution about
 * 0.5 us). Both must be recorded events of one context (GCL_ERROR_INVALID_ARGUMENT naming the
 * one that was not). */
GCL_API gcl_status gcl_event_elapsed_us(gcl_event *start, gcl_event *stop, double *us);
/* Makes work submitted to s after this call wait for e's last record (events of another device
 * are fine). Does not block the host. */
GCL_API gcl_status gcl_stream_wait_event(gcl_stream *s, gcl_event *e);

/* Asynchronous copies and fills on s (a stream of ctx; NULL: ctx's default stream), ordered with
 * the stream's launches. They return once queued; the host memory must stay valid and untouched
 * until the stream reached them (synchronize, or an event). Pageable host memory makes the driver
 * stage the copy (it may then return only after the data was read); memory from gcl_host_alloc
 * is copied truly asynchronously. A bad address is the driver's error (GCL_ERROR_DRIVER naming
 * the call). */
GCL_API gcl_status gcl_mem_upload_async(gcl_context *ctx, uint64_t dst, const void *src,
                                        size_t bytes, gcl_stream *s);
GCL_API gcl_status gcl_mem_download_async(gcl_context *ctx, void *dst, uint64_t src, size_t bytes,
                                          gcl_stream *s);
/* Device-to-device copy (cuMemcpyDtoDAsync). */
GCL_API gcl_status gcl_mem_copy_async(gcl_context *ctx, uint64_t dst, uint64_t src, size_t bytes,
                                      gcl_stream *s);
/* bytes bytes of value (cuMemsetD8Async). */
GCL_API gcl_status gcl_mem_fill_u8_async(gcl_context *ctx, uint64_t dst, uint8_t value,
                                         size_t bytes, gcl_stream *s);
/* count 32-bit words of value (cuMemsetD32Async); dst must be 4-byte aligned. */
GCL_API gcl_status gcl_mem_fill_u32_async(gcl_context *ctx, uint64_t dst, uint32_t value,
                                          size_t count, gcl_stream *s);
/* Pinned (page-locked) host memory of bytes (>= 1) bytes, portable to every context
 * (cuMemHostAlloc): the source or destination of truly asynchronous copies. Free it with
 * gcl_host_free before the context is destroyed. *out untouched on failure. */
GCL_API gcl_status gcl_host_alloc(gcl_context *ctx, size_t bytes, void **out);
/* Frees memory from gcl_host_alloc; NULL p is fine. */
GCL_API gcl_status gcl_host_free(gcl_context *ctx, void *p);

/* Occupancy. *blocks_per_sm = how many blocks of block_threads threads with dynamic_smem bytes
 * of dynamic shared memory can be resident on one SM at once
 * (cuOccupancyMaxActiveBlocksPerMultiprocessor); 0 when none fits. block_threads must be
 * 1 ... the kernel's maximum and dynamic_smem within its limit (GCL_ERROR_INVALID_CONFIG naming
 * them); a dynamic_smem over the kernel's current limit raises it as gcl_launch would. */
GCL_API gcl_status gcl_kernel_occupancy(const gcl_kernel *k, unsigned block_threads,
                                        size_t dynamic_smem, int *blocks_per_sm);
/* The largest cooperative (or persistent) grid: blocks per SM x the device's SM count.
 * GCL_ERROR_INVALID_CONFIG when not one block fits on an SM. */
GCL_API gcl_status gcl_kernel_max_cooperative_grid(const gcl_kernel *k, unsigned block_threads,
                                                   size_t dynamic_smem, unsigned *blocks);
/* *clusters = how many clusters of config->cluster (all dimensions given) with config->block
 * threads and config->shared_bytes can be active at once on the device
 * (cuOccupancyMaxActiveClusters; config->grid is ignored). Clusters of more than 8 blocks need
 * GCL_KERNEL_NONPORTABLE_CLUSTER_SIZE_ALLOWED set first. */
GCL_API gcl_status gcl_kernel_active_clusters(const gcl_kernel *k, const gcl_launch_config *config,
                                              int *clusters);
/* Fills config for a persistent launch: grid = {SMs x blocks per SM, 1, 1},
 * block = {block_threads, 1, 1}, shared_bytes = dynamic_smem; the other fields (stream,
 * cooperative, cluster, ...) stay as the caller set them. config untouched on failure. */
GCL_API gcl_status gcl_kernel_persistent_config(const gcl_kernel *k, unsigned block_threads,
                                                size_t dynamic_smem, gcl_launch_config *config);

/* ---------------------------------------------------------------------------------------------
 * CUDA graphs
 *
 * Capture launches on a gcl_stream into a graph, replace the arguments of one kernel node, replay:
 *   gcl_graph_capture_begin(s);
 *   gcl_launch(k, &cfg, args0); gcl_launch(k2, &cfg2, args1); ...   // cfg.stream = handle of s
 *   gcl_graph_capture_end(s, &g);               // instantiated; kernel nodes 0, 1, ... in order
 *   gcl_graph_set_args(g, 1, k2, new_args);     // node 1 now runs with new_args
 *   gcl_graph_launch(g, s);
 * Async copies and fills captured on the stream become graph nodes too (not counted as kernel
 * nodes). During a capture the stream must not be synchronized. A graph borrows its context; it
 * must not be used from two threads at once.
 * ------------------------------------------------------------------------------------------- */

typedef struct gcl_graph gcl_graph;

/* Starts capturing s (thread-local mode: only this thread's unsafe calls are refused).
 * GCL_ERROR_INVALID_ARGUMENT if s is already capturing. */
GCL_API gcl_status gcl_graph_capture_begin(gcl_stream *s);
/* Ends the capture and instantiates the graph. The capture has ended when this returns, also on
 * failure. GCL_ERROR_INVALID_ARGUMENT naming "s" when no capture was begun or the capture
 * launched no kernel (no graph is made); the driver's error when the capture was invalidated. */
GCL_API gcl_status gcl_graph_capture_end(gcl_stream *s, gcl_graph **out);
/* Number of kernel nodes (>= 1). Reads. */
GCL_API gcl_status gcl_graph_kernel_count(const gcl_graph *g, size_t *count);
/* Replaces the arguments of kernel node kernel_node (0 = the first kernel launched in the
 * capture) with args, which must be complete and of k's layout; k must be the kernel the node
 * was captured from (GCL_ERROR_INVALID_ARGUMENT "kernel_node 2: it runs another kernel than
 * 'k'"), of the graph's device. Any parameter size up to GCL_PARAM_LIMIT, grid-constant
 * aggregates included. The driver copies the values: args may change or go away afterwards.
 * Grid, block and attributes of the node are kept. Takes effect for later gcl_graph_launch
 * calls. Nothing changes on failure (index out of range, args of another layout, unset args). */
GCL_API gcl_status gcl_graph_set_args(gcl_graph *g, size_t kernel_node, gcl_kernel *k,
                                      const gcl_args *args);
/* Replays the graph on s (a stream of the graph's context; NULL: its default stream). */
GCL_API gcl_status gcl_graph_launch(gcl_graph *g, gcl_stream *s);
/* Destroys the graph (a replay in flight still completes). NULL is fine. */
GCL_API void gcl_graph_destroy(gcl_graph *g);


/* Replaces the parameters of kernel node `node` (a CUgraphNode captured from a gcl_launch of
 * kernel, or added for it) in the instantiated graph `graph_exec` (a CUgraphExec) with args,
 * whose layout must be the kernel's and which must be complete. The driver copies the values:
 * args may change or go away after the call. GCL_ERROR_INVALID_ARGUMENT when the node is not a
 * kernel node or runs another kernel. Grid, block and attributes of the node are kept. */
GCL_API gcl_status gcl_graph_kernel_node_set_args(void *graph_exec, void *node, gcl_kernel *kernel,
                                                  const gcl_args *args);

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
                         3, [-128, 127] for rank 4, [-16, 15] for rank 5 */
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

/* Checks tensor t and options against every documented cuTensorMapEncodeTiled constraint without
 * the driver (device type CUDA or CUDA managed; rank 1-5; innermost dimension contiguous; address
 * after byte_offset 16-byte aligned, 32 with 32-byte interleave; strides positive multiples of 16
 * below 2^40; dims 1 ... 2^32; box 1-256 with inner box bytes a multiple of 16 and within the
 * swizzle span; element strides 1-8; interleave, swizzle, L2 and fill values; with
 * options->store, an innermost extent in bytes that is a multiple of 16). With
 * options->im2col.pixels > 0 the cuTensorMapEncodeIm2col ones instead of the box's: rank 3-5,
 * pixels 1-1024, channels 1-256 with channels * element size within the swizzle span, corners
 * within their rank's range. A size-1 dimension's stride is irrelevant and replaced by a valid
 * one. On success fills *desc when desc is not NULL. GCL_ERROR_TENSOR naming "tensor", the
 * DLPack dimension and the value; GCL_ERROR_INVALID_ARGUMENT for NULL t or options or a bad enum
 * value. Thread-safe. */
GCL_API gcl_status gcl_tensormap_check(const DLTensor *t, const gcl_tensormap_options *options,
                                       gcl_tensormap_desc *desc);
/* Encodes a tiled (or im2col) descriptor for t into map (GCL_TENSORMAP_BYTES bytes, 64-byte
 * aligned), e.g. to upload descriptors to global memory. Checks as gcl_tensormap_check, then
 * that the context's device is sm_90 or later and that a kDLCUDA tensor lives on it; makes ctx
 * current. map is untouched on failure. */
GCL_API gcl_status gcl_tensormap_encode(gcl_context *ctx, const DLTensor *t,
                                        const gcl_tensormap_options *options, void *map);
/* --- Tensor maps in args, addressed like everything else ---------------------------------------
 *
 * `first` is a tensormap leaf: a tensormap parameter, a struct member, an element of an array of
 * maps (top level, in a struct, in an array of structs), any align(N), or a raw 128-byte
 * parameter; an array of maps as `first` means its element 0. n > 1 covers elements
 * first ... first + n - 1 of its array. Every tensormap leaf has a cache slot in the args (made
 * with them, no allocation later): every map gclaunch encodes there remembers the inputs it was
 * encoded from (the DLPack description but data and byte_offset, and the options) and its
 * address, so a refresh re-points instead of re-encoding and a re-point needs no tensor at all.
 * Raw setters over a map (gcl_args_set_field on it or on a field containing it) make the args
 * forget it. None of these calls allocates or formats text on success; on failure nothing
 * changes (batches are all or nothing) and the message names the parameter and the map's path
 * ("parameter 0 'g' field 'g.loads[7]'"). After a kernel fault they return
 * GCL_ERROR_KERNEL_FAULT without calling the driver. Not thread-safe on one args. */

#define GCL_TENSORMAP_REFRESH 1u /* flag: a map whose tensor and options equal those of its last
                                    encode but for data + byte_offset is re-pointed
                                    (cuTensorMapReplaceAddress: the bytes of a fresh encode), not
                                    re-encoded; nothing is called when the address is the same */

/* Encodes n maps, tensors[i] (borrowed; only their description is read) into map first + i, with
 * options[i] (options_count == n) or options[0] for every map (options_count == 1). Checks as
 * gcl_tensormap_encode. flags: 0 or GCL_TENSORMAP_REFRESH. n = 0 does nothing.
 * GCL_ERROR_INVALID_ARGUMENT for NULL args, ctx, first, tensors or options, an options_count
 * other than 1 or n, unknown flags, a field of another layout, or maps past the end of first's
 * array (n > 1 on a map that is no array element); GCL_ERROR_TYPE_MISMATCH when first is no
 * tensormap leaf (nor an array of them); the tensor and driver errors of gcl_tensormap_encode. */
GCL_API gcl_status gcl_args_set_tensormaps(gcl_args *args, gcl_context *ctx,
                                           const gcl_field *first, size_t n,
                                           const DLTensor *const *tensors,
                                           const gcl_tensormap_options *options,
                                           size_t options_count, unsigned flags);
/* Re-points maps first ... first + n - 1 to addresses[i] (the new data + byte_offset), keeping the
 * rest of their descriptions: the cheapest way to relaunch a megakernel on new buffers of the
 * same shapes (cuTensorMapReplaceAddress only; nothing for a map already at its address). Each
 * map must have been encoded by gclaunch into these args (GCL_ERROR_UNSET_ARGUMENT otherwise, or
 * after a raw setter wrote there); each address nonzero and 16-byte aligned (32 with 32-byte
 * interleave), GCL_ERROR_INVALID_ARGUMENT otherwise. The tensors' shapes, strides and devices
 * are not seen here: use gcl_args_set_tensormaps with GCL_TENSORMAP_REFRESH when they may have
 * changed. ctx is made current only if the driver asks for it. */
GCL_API gcl_status gcl_args_repoint_tensormaps(gcl_args *args, gcl_context *ctx,
                                               const gcl_field *first, size_t n,
                                               const uint64_t *addresses);

#ifdef __cplusplus
}
#endif
#endif /* GCLAUNCH_H */
