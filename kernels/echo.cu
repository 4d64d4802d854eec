// Layout echo kernels: each copies the bytes of every parameter but the last (the output
// pointer) into out, in parameter order and packed, so a test can compare them byte for byte
// with what the host packed. By-value aggregates are __grid_constant__, so the kernel reads the
// parameter space itself (padding bytes included) instead of a local copy.
struct alignas(128) TM { unsigned long long o[16]; };  // CUtensorMap as in CUDA 13 headers
struct alignas(64) TM64 { unsigned long long o[16]; }; // CUtensorMap as in CUDA 12 headers
struct Maps4 { TM m[4]; };                             // tensormap[4]: an array wrapped in a struct
struct S { int a; double b; char c; };                 // struct{i32,f64,i8}: 24 bytes, padded
struct Big { unsigned char v[5000]; };                 // bytes(5000): > 4352 B of parameters

__device__ unsigned char *put(unsigned char *o, const void *p, unsigned n) {
  const unsigned char *s = static_cast<const unsigned char *>(p);
  for (unsigned i = 0; i < n; i++) o[i] = s[i];
  return o + n;
}

// i8, i16, i32, i64, f32, f64, u8, ptr (never dereferenced), u8* out
extern "C" __global__ void echo_scalars(signed char a, short b, int c, long long d, float e,
                                        double f, unsigned char g, void *p, unsigned char *out) {
  unsigned char *o = out;
  o = put(o, &a, sizeof a);
  o = put(o, &b, sizeof b);
  o = put(o, &c, sizeof c);
  o = put(o, &d, sizeof d);
  o = put(o, &e, sizeof e);
  o = put(o, &f, sizeof f);
  o = put(o, &g, sizeof g);
  put(o, &p, sizeof p);
}

extern "C" __global__ void echo_tm_ptr(const __grid_constant__ TM m, char c, unsigned char *out) {
  put(put(out, &m, sizeof m), &c, 1);
}

extern "C" __global__ void echo_tm64_ptr(const __grid_constant__ TM64 m, char c,
                                         unsigned char *out) {
  put(put(out, &m, sizeof m), &c, 1);
}

extern "C" __global__ void echo_struct(const __grid_constant__ S s, short h, unsigned char *out) {
  put(put(out, &s, sizeof s), &h, sizeof h);
}

extern "C" __global__ void echo_maps4(const __grid_constant__ Maps4 m, float f,
                                      unsigned char *out) {
  put(put(out, &m, sizeof m), &f, sizeof f);
}

extern "C" __global__ void echo_big(const __grid_constant__ Big b, int x, unsigned char *out) {
  put(put(out, &b, sizeof b), &x, sizeof x);
}
