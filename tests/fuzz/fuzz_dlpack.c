/* libFuzzer target: DLPack validation. A DLTensor is built from the input -- a 29-byte header
 * then the shape and strides arrays (ndim int64 each) -- and passed to a pointer parameter with
 * gcl_args_set_dltensor_flags, gcl_args_take_dlpack(_legacy) or to gcl_tensormap_check.
 * Checked: a success stores exactly data + byte_offset; a failure changes no byte of the args;
 * a taken tensor's deleter runs exactly once; a failed check leaves the descriptor alone.
 *
 * Header: [0] selector (bits 0-2 signature, 3 read-only, 4 NULL strides, 5 ndim -1 with NULL
 * shape, 6-7 mode), [1] device type, [2] device id, [3] ndim (mod 9), [4] dtype code,
 * [5] bits, [6-7] lanes, [8-15] byte_offset, [16-23] data, [24-25] major, [26-27] minor,
 * [28] args device restriction (int8); in tensor-map mode bit 0 selects im2col, whose pixels,
 * channels and corners come from bytes 9-17 and 28. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gclaunch/gclaunch.h"

#define CHECK(cond)                                                                               \
  do {                                                                                            \
    if (!(cond)) __builtin_trap();                                                                \
  } while (0)

#define HEADER 29
#define PREVIOUS 0x1000ull /* what the slot holds before each call */

static const char *const signatures[8] = {
    "const f32* align(16) p", "void* p", "f16* p", "const u8* p",
    "i64* align(64) p", "bf16* p", "bool* p", "ptr p"};

typedef struct input {
  uint8_t sel;
  DLTensor t;
  int64_t shape[8], strides[8];
  uint32_t major, minor;
  int device_restriction;
} input;

static uint64_t read_u64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

static int decode(const uint8_t *d, size_t n, input *in) {
  if (n < HEADER) return -1;
  memset(in, 0, sizeof *in);
  in->sel = d[0];
  int ndim = d[3] % 9;
  const uint8_t *arrays = d + HEADER;
  size_t avail = n - HEADER;
  for (int i = 0; i < 2 * ndim; i++) {
    uint8_t v[8] = {0};
    size_t at = (size_t)i * 8;
    if (at < avail) memcpy(v, arrays + at, avail - at < 8 ? avail - at : 8);
    memcpy(i < ndim ? &in->shape[i] : &in->strides[i - ndim], v, 8);
  }
  in->t.data = (void *)(uintptr_t)read_u64(d + 16);
  in->t.device = (DLDevice){(DLDeviceType)d[1], (int8_t)d[2]};
  in->t.ndim = in->sel & 0x20 ? -1 : ndim;
  in->t.dtype = (DLDataType){d[4], d[5], (uint16_t)(d[6] | d[7] << 8)};
  in->t.shape = in->sel & 0x20 ? NULL : in->shape;
  in->t.strides = in->sel & 0x10 ? NULL : in->strides;
  in->t.byte_offset = read_u64(d + 8);
  in->major = (uint32_t)(d[24] | d[25] << 8) % 3;
  in->minor = (uint32_t)(d[26] | d[27] << 8);
  in->device_restriction = (int8_t)d[28];
  return 0;
}

static int deletions;
static void count_versioned(DLManagedTensorVersioned *t) { (void)t, deletions++; }
static void count_legacy(DLManagedTensor *t) { (void)t, deletions++; }

/* Stores the tensor by the mode in the selector; checks the deleter count where one applies. */
static gcl_status store(gcl_args *args, input *in, DLManagedTensorVersioned *mv, DLManagedTensor *ml) {
  uint64_t flags = in->sel & 0x08 ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
  int mode = in->sel >> 6;
  gcl_status s;
  deletions = 0;
  if (mode == 1) {
    *mv = (DLManagedTensorVersioned){.version = {in->major, in->minor}, .deleter = count_versioned,
                                     .flags = flags, .dl_tensor = in->t};
    s = gcl_args_take_dlpack(args, 0, mv);
    CHECK(deletions == (s == GCL_OK ? 0 : 1));
  } else if (mode == 2) {
    *ml = (DLManagedTensor){.dl_tensor = in->t, .deleter = count_legacy};
    s = gcl_args_take_dlpack_legacy(args, 0, ml);
    CHECK(deletions == (s == GCL_OK ? 0 : 1));
  } else {
    s = gcl_args_set_dltensor_flags(args, 0, &in->t, flags);
  }
  return s;
}

static void check_args(input *in) {
  gcl_signature *sig = NULL;
  gcl_layout *layout = NULL;
  gcl_args *args = NULL;
  CHECK(gcl_signature_parse(signatures[in->sel & 7], &sig) == GCL_OK);
  CHECK(gcl_layout_create(sig, 90, &layout) == GCL_OK);
  CHECK(gcl_args_create(layout, &args) == GCL_OK);
  CHECK(gcl_args_set_ptr(args, 0, PREVIOUS) == GCL_OK);
  if (in->device_restriction >= -1) (void)gcl_args_restrict_device(args, in->device_restriction);
  DLManagedTensorVersioned mv;
  DLManagedTensor ml;
  gcl_status s = store(args, in, &mv, &ml);
  const void *data;
  size_t size;
  CHECK(gcl_args_buffer(args, &data, &size) == GCL_OK && size == 8);
  uint64_t slot = read_u64(data);
  CHECK(gcl_args_is_set(args, 0));
  if (s == GCL_OK) CHECK(slot == (uint64_t)(uintptr_t)in->t.data + in->t.byte_offset);
  else CHECK(slot == PREVIOUS && gcl_last_error()[0] != 0);
  int before = deletions;
  gcl_args_destroy(args);
  if (s == GCL_OK && (in->sel >> 6) && (in->sel >> 6) < 3) CHECK(deletions == before + 1);
  gcl_layout_destroy(layout);
  gcl_signature_destroy(sig);
}

static void check_tensormap(const input *in, const uint8_t *d) {
  gcl_tensormap_options o;
  memset(&o, 0, sizeof o);
  for (int i = 0; i < GCL_TENSORMAP_MAX_RANK; i++) {
    o.box[i] = d[8 + i] + 1u;                 /* reuses header bytes: any value goes */
    o.element_strides[i] = d[16 + i] % 10;
  }
  o.interleave = d[24] % 4, o.swizzle = d[25] % 5, o.l2_promotion = d[26] % 5, o.oob_fill = d[27] % 3;
  if (d[28] & 1) { /* im2col: limits crossed on purpose (1024 pixels, 256 channels, corners) */
    o.im2col.pixels = (d[28] >> 1) * 9u;
    o.im2col.channels = d[9] + (d[10] & 1u);
    for (int i = 0; i < 3; i++) {
      o.im2col.lower[i] = (int8_t)d[11 + i] * ((d[17] & 1) ? 257 : 1);
      o.im2col.upper[i] = (int8_t)d[14 + i] * ((d[17] & 2) ? 257 : 1);
    }
  }
  gcl_tensormap_desc desc, poison;
  memset(&desc, 0xA5, sizeof desc);
  memcpy(&poison, &desc, sizeof desc);
  if (gcl_tensormap_check(&in->t, &o, &desc) == GCL_OK) {
    CHECK(desc.rank >= 1 && desc.rank <= GCL_TENSORMAP_MAX_RANK);
    CHECK(desc.address % 16 == 0);
    if (o.im2col.pixels) {
      static const int32_t limit[] = {32768, 128, 16};
      CHECK(desc.rank >= 3 && desc.im2col.pixels <= 1024 && desc.im2col.channels >= 1 &&
            desc.im2col.channels <= 256);
      CHECK(desc.box_bytes == desc.im2col.pixels * desc.im2col.channels * desc.element_bytes);
      for (uint32_t i = 0; i < 3; i++) {
        int32_t lim = i + 2 < desc.rank ? limit[desc.rank - 3] : 1;
        CHECK(desc.im2col.lower[i] >= -lim && desc.im2col.lower[i] < lim);
        CHECK(desc.im2col.upper[i] >= -lim && desc.im2col.upper[i] < lim);
      }
    }
  } else {
    CHECK(memcmp(&desc, &poison, sizeof desc) == 0);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  input in;
  if (decode(data, size, &in) != 0) return 0;
  if (in.sel >> 6 == 3) check_tensormap(&in, data);
  else check_args(&in);
  return 0;
}
