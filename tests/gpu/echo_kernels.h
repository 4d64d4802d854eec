/* The kernels of kernels/echo.cu and their signatures: each copies its parameters' bytes to out.
 * Shared by gpu_launch (echo through both parameter paths) and gpu_module (layouts). */
#ifndef GCL_TEST_ECHO_KERNELS_H
#define GCL_TEST_ECHO_KERNELS_H

static const struct { const char *name, *sig; } echo_kernels[] = {
    {"echo_scalars", "i8 a, i16 b, i32 c, i64 d, f32 e, f64 f, u8 g, ptr p, u8* out"},
    {"echo_tm_ptr", "grid_constant tensormap m, i8 c, u8* out"},
    {"echo_tm64_ptr", "grid_constant tensormap align(64) m, i8 c, u8* out"},
    {"echo_struct", "grid_constant struct{i32,f64,i8} s, i16 h, u8* out"},
    {"echo_maps4", "grid_constant tensormap[4] m, f32 f, u8* out"},
    {"echo_big", "grid_constant bytes(5000) b, i32 x, u8* out"},
};

#define ECHO_COUNT (sizeof echo_kernels / sizeof *echo_kernels)

#endif
