#!/usr/bin/env bash
# Regenerates tests/fuzz/corpus/ from the build's kernels (nvcc outputs) plus a few handwritten
# signatures and DLPack headers. Usage: tests/fuzz/make_corpus.sh [BUILD_DIR]  (default build)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
kdir=${1:-$root/build}/kernels
out=$here/corpus
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
mkdir -p "$out"/{signature,cubin,fatbin,ptx,dlpack}
for k in smoke dlpack_fill; do
  cp "$kdir/$k.sm_90.cubin" "$out/cubin/$k.sm_90.cubin"
  cp "$kdir/$k.fatbin" "$out/fatbin/$k.fatbin"
  cp "$kdir/$k.compute_90.ptx" "$out/ptx/$k.compute_90.ptx"
done
cp "$kdir/params_limit.compute_90.ptx" "$kdir/params.compute_90.ptx" "$out/ptx/"
# Other architectures move the parameter base: one cubin each for sm_80 and sm_100, and a fatbin
# holding an sm_80 cubin next to compute_90 PTX.
"$nvcc" -cubin -arch=sm_80 -o "$out/cubin/smoke.sm_80.cubin" "$root/kernels/smoke.cu"
"$nvcc" -cubin -arch=sm_100 -o "$out/cubin/smoke.sm_100.cubin" "$root/kernels/smoke.cu"
"$nvcc" -fatbin -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=compute_90 \
  -o "$out/fatbin/smoke.multi.fatbin" "$root/kernels/smoke.cu"
i=0
while IFS= read -r line; do
  printf '%s' "$line" > "$out/signature/sig$i.txt"; i=$((i + 1))
done <<'SIGS'
grid_constant tensormap[64] maps, const f32* align(16) src, f32* dst, u64 n, struct{i32,i32,f32} tile
f32 a, const f32* x, f32* y, u64 n
tensormap align(64) m, i8 c, i32* out
bytes(5) align(4) blob, bool flag, f16 h, bf16 b, f64 d, i16 s, u16 us
struct{u8, struct{f64, i8}[3], tensormap}[2] nested
ptr p, void* q, const void* r, const bf16* align(128) s
grid_constant struct{i32,i32} align(16) dims[4], u32 count

grid_constant struct{tensormap[4] loads, struct{ptr p, u32 n}[8] segs, u32 n} g
grid_constant struct{struct{u8 a, struct{f64 d, i8 c}[3] deep} align(64) s, tensormap align(64) m, bytes(5) align(4) b}[2] nested, u32 n
grid_constant struct{tensormap[30] maps, u64[4] ptrs, u32 n, f32 scale, struct{i32, i32 y} tile} globals
struct{u8 a, u8 a} dup
SIGS
python3 - "$out/dlpack" <<'PY'
import struct, sys
out = sys.argv[1]
def header(sel, dev, ndim, code, bits, lanes, off, data, major=1, minor=3, restrict=-1):
    return struct.pack('<BBBBBBHQQHHb', sel, dev, 0, ndim, code, bits, lanes, off, data,
                       major, minor, restrict)
seeds = {
  # f32 64x64 contiguous at a 256-aligned address, byte_offset 16, into "const f32* align(16)"
  'f32_2d': header(0x00, 2, 2, 2, 32, 1, 16, 0x7f0000000000) + struct.pack('<4q', 64, 64, 64, 1),
  'f16_view': header(0x02, 2, 3, 2, 16, 1, 2 * 96, 0x7f0000001000) + struct.pack('<6q', 2, 3, 4, 12, 4, 1),
  'read_only_take': header(0x48, 2, 1, 1, 8, 1, 5, 0x7f0000002000) + struct.pack('<2q', 100, 1),
  'legacy_broadcast': header(0x81, 13, 2, 0, 64, 1, 0, 0x7f0000003000) + struct.pack('<4q', 8, 8, 0, 1),
  'tensormap_2d': header(0xc0, 2, 2, 2, 32, 1, 0, 0x7f0000004000) + struct.pack('<4q', 128, 256, 256, 1),
  'empty_null': header(0x10, 2, 1, 2, 32, 1, 0, 0) + struct.pack('<2q', 0, 1),
  'cpu_tensor': header(0x01, 1, 1, 2, 32, 1, 0, 0x1000) + struct.pack('<2q', 4, 1),
}
for name, blob in seeds.items():
    open(f'{out}/{name}.bin', 'wb').write(blob)
PY
echo "corpus: $(find "$out" -type f | wc -l) files, $(du -sh "$out" | cut -f1)"

# fuzz_file: [type, size, format] then a module (tests/fuzz/fuzz_file.c): regular files with and
# without a sparse zero tail (1 KiB, 1 MiB, 1 GiB), a FIFO, a directory, a symlink to a FIFO.
mkdir -p "$out/file"
seed() { { printf "$1"; cat "$2"; } >"$out/file/$3"; }
seed '\000\000\000' "$out/cubin/smoke.sm_80.cubin" cubin
seed '\000\012\000' "$out/cubin/smoke.sm_80.cubin" cubin_tail1k
seed '\006\024\000' "$out/fatbin/smoke.fatbin" fatbin_link_tail1m
seed '\001\036\000' "$out/fatbin/smoke.fatbin" fatbin_tail1g
seed '\002\012\000' "$out/ptx/dlpack_fill.compute_90.ptx" ptx_tail1k
seed '\003\000\001' "$out/ptx/generated_7.ptx" forced_elf
printf '\004\000\000' >"$out/file/fifo"
printf '\005\000\000' >"$out/file/directory"
printf '\007\000\000' >"$out/file/link_fifo"
