// Persistent kernels for the launch edge (tests/gpu/test_persistent.c, examples/persistent.c):
// grids sized by occupancy (SMs x resident blocks per SM), each block looping over the work
// with a grid stride, so every block stays resident for the whole launch.
//
// persistent_axpy:  y[i] = a * x[i] + y[i]
//   signature "f32 a, const f32* x, f32* y, u64 n"
// persistent_table: out[i] = x[i] * t.w[i % 2048] + t.bias, with the 8 KiB table passed by value
//   as ONE grid-constant aggregate read by run-time index (kept first: reads past 32 KiB of the
//   constant bank go wrong, docs/facts.md "Parameter limit"); signature
//   "grid_constant bytes(8208) align(16) t, const f32* x, f32* out, u64 n"
//   (8192 bytes of weights, then f32 bias and 12 bytes of padding to the 16-byte alignment).

#define TABLE_WEIGHTS 2048

struct __align__(16) Table {
  float w[TABLE_WEIGHTS];
  float bias;
  float pad[3];
};

extern "C" __global__ void persistent_axpy(float a, const float *x, float *y,
                                           unsigned long long n) {
  unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride)
    y[i] = a * x[i] + y[i];
}

extern "C" __global__ void persistent_table(const __grid_constant__ Table t, const float *x,
                                            float *out, unsigned long long n) {
  unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride)
    out[i] = x[i] * t.w[i % TABLE_WEIGHTS] + t.bias;
}
