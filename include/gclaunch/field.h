/* gclaunch/field.h -- fields: paths into by-value aggregates, and every setter and reader of args
 * by field (CPU only). Included by gclaunch/core.h; the conventions are written in gclaunch.h. */
#ifndef GCLAUNCH_FIELD_H
#define GCLAUNCH_FIELD_H

#include "gclaunch/args.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif
#endif /* GCLAUNCH_FIELD_H */
