// Small scalars placed past 32 KiB of constant bank 0 (sm_90: param base 0x210 + offset >= 0x7df0).
// gpu_echo_random saw 2-byte scalars read back as 0 there; these kernels isolate the case:
// hi_direct reads the parameters as values, hi_addr takes their addresses (a local copy), as the
// echo kernels do. Offsets on sm_90: big 0, h 32592, c 32594, w 32596, h2 32600, out 32608.
struct alignas(4) Big { unsigned char b[32592]; };

extern "C" __global__ void hi_direct(const __grid_constant__ Big big, unsigned short h,
                                     unsigned char c, unsigned int w, unsigned short h2,
                                     unsigned char *out) {
  out[0] = h & 0xff; out[1] = h >> 8; out[2] = c;
  out[3] = w & 0xff; out[4] = (w >> 8) & 0xff; out[5] = (w >> 16) & 0xff; out[6] = w >> 24;
  out[7] = h2 & 0xff; out[8] = h2 >> 8; out[9] = big.b[32591];
}

__device__ __noinline__ void copy_bytes(unsigned char *d, const void *s, int n) {
  for (int i = 0; i < n; i++) d[i] = ((const unsigned char *)s)[i];
}

extern "C" __global__ void hi_addr(const __grid_constant__ Big big, unsigned short h,
                                   unsigned char c, unsigned int w, unsigned short h2,
                                   unsigned char *out) {
  copy_bytes(out + 0, &h, 2);
  copy_bytes(out + 2, &c, 1);
  copy_bytes(out + 3, &w, 4);
  copy_bytes(out + 7, &h2, 2);
  out[9] = big.b[32591];
}
