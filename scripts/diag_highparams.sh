#!/usr/bin/env bash
# Diagnostic: small scalars past 32 KiB of constant bank 0 on sm_90.
b=build-gpu; g=$b/tools/gclaunch; k=$b/kernels/highparams.sm_90.cubin
big=$(python3 -c "
import random
random.seed(5)
print(bytes(random.randrange(256) for _ in range(32592)).hex())")
for kern in hi_direct hi_addr; do
  echo "== $kern  (expect h=0x1234 -> 34 12, c=0xab, w=0xdeadbeef -> ef be ad de, h2=0xbeef -> ef be, big[last]=0x48)"
  $g run $k $kern --grid 1 --block 1 --json \
    --signature "grid_constant bytes(32592) align(4) big, u16 h, u8 c, u32 w, u16 h2, u8* out" \
    --arg hex:$big --arg u16:4660 --arg u8:171 --arg u32:3735928559 --arg u16:48879 \
    --arg out=buf:u8:16 --out out=/tmp/out_$kern.bin > /tmp/$kern.json 2>&1; echo "exit $?"
  python3 -c "print(' '.join('%02x' % b for b in open('/tmp/out_$kern.bin','rb').read()[:10]))"
done
cuobjdump -sass $k | grep -E "Function|LDC|ULDC|LDL|STL|c\[0x0\]\[0x8" | head -60
