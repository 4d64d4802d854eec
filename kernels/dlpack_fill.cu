// Fills a DLPack view: out[i] = value_base + i for i < n. Used by tests/gpu/test_dlpack_gpu.c and
// tests/python/torch_interop.py to show that the pointer gclaunch packs (data + byte_offset) is
// exactly the view's first element: every element inside is written, nothing outside.
extern "C" __global__ void fill(float *out, unsigned long long n, float value_base) {
  unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = value_base + (float)i;
}
