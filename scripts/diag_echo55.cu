struct alignas(128) TM { unsigned long long o[16]; };
struct alignas(64) TM64 { unsigned long long o[16]; };
__device__ __forceinline__ void dg_echo(unsigned char *d, const void *s, unsigned long long n) {
  const unsigned char *b = (const unsigned char *)s;
#pragma unroll 1
  for (unsigned long long i = 0; i < n; i++) d[i] = b[i];
}

struct alignas(4) T_echo55_0 { unsigned char b[31]; };
struct T_echo55_1 { bool e[3]; };
struct alignas(4) T_echo55_2 { unsigned char b[4]; };
struct alignas(2) T_echo55_3 { unsigned char b[32660]; };
#define ARGS(Q3) (const __grid_constant__ T_echo55_3 p0, const __grid_constant__ T_echo55_0 p1, const __grid_constant__ T_echo55_1 p2, Q3 unsigned short p3, const __grid_constant__ T_echo55_2 p4, const __grid_constant__ float p5, unsigned char *out)
#define BODY { unsigned char *o = out; dg_echo(o, &p0, sizeof p0); o += sizeof p0; dg_echo(o, &p1, sizeof p1); o += sizeof p1; dg_echo(o, &p2, sizeof p2); o += sizeof p2; dg_echo(o, &p3, sizeof p3); o += sizeof p3; dg_echo(o, &p4, sizeof p4); o += sizeof p4; dg_echo(o, &p5, sizeof p5); }
extern "C" __global__ void gc_all ARGS(const __grid_constant__) BODY
extern "C" __global__ void p3_plain ARGS() BODY
extern "C" __global__ void p3_direct ARGS(const __grid_constant__) { out[0] = p3 & 0xff; out[1] = p3 >> 8; out[2] = p2.e[0]; out[3] = p1.b[30]; out[4] = p4.b[0]; out[5] = p0.b[32659]; }
