// im2col TMA loads through a grid-constant tensor map encoded by gclaunch (gcl_tensormap_options.
// im2col): each block issues one cp.async.bulk.tensor.4d ... .im2col load of `pixels` pixels x
// `channels` channels at its job's tensor coordinates and im2col offsets, then copies the shared
// memory it received to out[block]. tests/gpu/test_tensormap.c compares with the host.
// sm_90 or later.

struct alignas(128) TM { unsigned long long o[16]; };

// One load: tensor coordinates in TMA order (channel, W, H, N), the im2col offsets (the filter
// tap, W and H), and the transaction bytes (gcl_tensormap_desc.box_bytes). 24 bytes.
struct Im2colJob {
  int c, w, h, n;
  unsigned short off_w, off_h;
  unsigned bytes;
};

#define GCL_IM2COL_SMEM 16384

extern "C" __global__ void __launch_bounds__(128)
    im2col_load_4d(const __grid_constant__ TM map, const Im2colJob *jobs, unsigned char *out) {
  __shared__ alignas(128) unsigned char tile[GCL_IM2COL_SMEM];
  __shared__ alignas(8) unsigned long long bar;
  const Im2colJob j = jobs[blockIdx.x];
  const unsigned t = (unsigned)__cvta_generic_to_shared(tile);
  const unsigned b = (unsigned)__cvta_generic_to_shared(&bar);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(j.bytes)
                 : "memory");
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3, %4, %5}], [%6], {%7, %8};" ::"r"(t),
        "l"(&map), "r"(j.c), "r"(j.w), "r"(j.h), "r"(j.n), "r"(b), "h"(j.off_w), "h"(j.off_h)
        : "memory");
  }
  __syncthreads();
  asm volatile(
      "{\n.reg .pred p;\nW_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n"
      "@!p bra W_%=;\n}\n" ::"r"(b)
      : "memory");
  unsigned char *dst = out + (size_t)blockIdx.x * GCL_IM2COL_SMEM;
  for (unsigned i = threadIdx.x; i < j.bytes; i += blockDim.x) dst[i] = tile[i];
}
