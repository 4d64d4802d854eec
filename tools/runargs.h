/* runargs: the `--arg` specs of `gclaunch run`, parsed and checked on the CPU (no GPU needed), and
 * the host side of its buffers (fill patterns, element codecs, checksums).
 *
 *   spec   = [ NAME "=" | PATH "=" ] body
 *   PATH   = a field path into a by-value aggregate ("g.loads[3]", "g.n", "g.2"): the spec sets
 *            that field (gcl_layout_field), not a whole parameter; see run.h
 *   body   = SCALAR ":" VALUE                               f32:1.5  u64:42  i32:-3  bool:true
 *          | "buf:" SCALAR ":" SHAPE [ "@" OFFSET ] [ "=" FILL ]     buf:f32:1024@4=iota
 *          | "tmap:" BUF { "," BUF } { ":" OPTION }         tmap:a,b:box=64x64:swizzle=128
 *          | "hex:" HEXBYTES                                hex:0011aa
 *   SHAPE  = N { "x" N }        (outermost first, as DLPack; the element count is the product)
 *   FILL   = "zeros" | "iota" | "rand" | "@" PATH          (default zeros)
 *   OPTION = "box=" N { "x" N } (in SHAPE order) | "swizzle=" ("none"|"32"|"64"|"128")
 *          | "oob=" ("zero"|"nan") | "store=" ("0"|"1")   (store=1: the maps are TMA store
 *            destinations; rows must be multiples of 16 bytes, see gcl_tensormap_options.store)
 *          | "im2col=" PIXELS "x" CHANNELS | "lower=" W [ "," H [ "," D ] ] | "upper=" ...
 *            (im2col maps over a channels-last buffer, e.g. NHWC; corners innermost first as in
 *            gcl_tensormap_im2col; im2col= replaces box=)
 * A buffer at OFFSET elements is allocated with OFFSET + count elements and passed as a tensor whose
 * byte_offset is OFFSET * element size: the fill, checksums and --out cover the count elements of
 * the view; the elements before it are zero. */
#ifndef TOOLS_RUNARGS_H
#define TOOLS_RUNARGS_H

#include <gclaunch/gclaunch.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RUNARG_NAME_MAX 32
#define RUNARG_PATH_MAX 256
#define RUNARG_MAX_RANK 5

typedef enum runarg_kind {
  RUNARG_SCALAR, RUNARG_BUFFER, RUNARG_TMAP, RUNARG_HEX,
  RUNARG_FIELDS /* not parsed: the place of a parameter that PATH= specs set (run.c) */
} runarg_kind;

typedef enum runarg_fill {
  RUNARG_ZEROS, RUNARG_IOTA, RUNARG_RAND, RUNARG_FILE
} runarg_fill;

typedef struct runarg {
  int position;                        /* 1-based, as on the command line */
  const char *option;                  /* "--arg" (parsed default) or "--buffer" (set by run.c) */
  const char *spec;                    /* the text (borrowed) */
  char name[RUNARG_NAME_MAX];      /* "" when unnamed */
  char path[RUNARG_PATH_MAX];      /* a field path ("g.loads[3]"), "" for whole parameters */
  runarg_kind kind;
  gcl_scalar type;                     /* scalar type, or a buffer's element type */
  size_t size;                         /* bytes: of the scalar, the hex blob, a buffer element */
  unsigned char value[8];              /* scalar: its bytes, little-endian */
  /* buffer */
  size_t rank;
  uint64_t shape[RUNARG_MAX_RANK];
  uint64_t count;                      /* elements in the view: the product of shape */
  uint64_t offset;                     /* elements before the view */
  runarg_fill fill;
  const char *file;                    /* RUNARG_FILE: the path (points into spec) */
  /* tensor map */
  size_t tmap_count;                   /* buffers listed */
  const char *tmap_list;               /* "a,b,c" (points into spec), tmap_list_len bytes */
  size_t tmap_list_len;
  size_t box_rank;
  uint32_t box[RUNARG_MAX_RANK];   /* in SHAPE order (outermost first) */
  int swizzle;                         /* GCL_TENSORMAP_SWIZZLE_* */
  int oob_fill;                        /* GCL_TENSORMAP_OOB_* */
  int store;                           /* 1: maps are TMA store destinations */
  uint32_t im2col_pixels;              /* > 0: im2col maps (box= not needed) */
  uint32_t im2col_channels;
  int32_t im2col_lower[3], im2col_upper[3]; /* W, H, D (gcl_tensormap_im2col's order) */
  /* hex */
  unsigned char *bytes;                /* owned; size bytes */
} runarg;

/* Parses spec (the position-th --arg) into *out. On failure writes
 * "--arg POSITION 'SPEC': what is wrong" into err (cap bytes) and returns false; *out then owns
 * nothing. */
bool runarg_parse(const char *spec, int position, runarg *out, char *err, size_t cap);
/* Releases what *a owns. */
void runarg_free(runarg *a);
/* i-th buffer name of a tmap list into name (RUNARG_NAME_MAX bytes). */
void runarg_tmap_buffer(const runarg *a, size_t i, char *name);

/* "f32", ... for a scalar type; "?" otherwise. */
const char *runarg_type_name(gcl_scalar t);
/* Parses "X[,Y[,Z]]" (each 1 ... 2^31-1; missing ones are 1). False on malformed text. */
bool runarg_parse_dim3(const char *text, unsigned out[3]);

/* --devices of `gclaunch run` and `gclaunch demo`: "all" or a list "D[,D...]" of device ordinals
 * 0 ... 1023, each at most once, at most RUNARG_MAX_DEVICES. */
#define RUNARG_MAX_DEVICES 64
typedef struct runarg_devices {
  bool all;
  size_t count;                        /* listed devices (0 with all) */
  int list[RUNARG_MAX_DEVICES];
} runarg_devices;
/* Parses text into *out. On failure writes "--devices 'TEXT': what is wrong" into err and returns
 * false; *out is then untouched. */
bool runarg_parse_devices(const char *text, runarg_devices *out, char *err, size_t cap);
/* The devices to run on when present devices exist: all of them for "all" (at most
 * RUNARG_MAX_DEVICES), else the list, whose entries must be below present. Writes them into
 * list (RUNARG_MAX_DEVICES entries) and returns how many; 0 with a message in err when a
 * listed device does not exist or none is present. */
size_t runarg_resolve_devices(const runarg_devices *d, int present, int *list, char *err,
                                  size_t cap);

/* --- host side of buffers (runbuf.c) --- */
/* Writes a's fill pattern into the count elements at view (rand: a fixed generator from seed;
 * iota: 0, 1, 2, ... converted to the element type). RUNARG_FILE is not handled here. */
void runarg_fill_view(const runarg *a, void *view, uint64_t seed);
/* Element i of a view of type t, as a double. */
double runarg_element(gcl_scalar t, const void *view, uint64_t i);
/* Stores value converted to type t (round to nearest even for f16/bf16; integers wrap). */
void runarg_store(gcl_scalar t, void *dst, double value);
/* 64-bit FNV-1a of size bytes. */
uint64_t runarg_fnv1a(const void *data, size_t size);
/* Sum of the count elements of a view, as doubles. */
double runarg_sum(gcl_scalar t, const void *view, uint64_t count);
/* Bytes of one element of type t (0 for VOID). */
size_t runarg_type_size(gcl_scalar t);

#endif
