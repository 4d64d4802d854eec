#!/usr/bin/env bash
b=build-gpu; g=$b/tools/gclaunch
python3 - <<'PY'
import random
r=random.Random(7)
p0=bytes(r.randrange(256) for _ in range(32660)); p1=bytes(r.randrange(256) for _ in range(32))
p2=bytes([1,0,1]); p3=bytes([0x67,0xa9]); p4=bytes([1,2,3,4])
open('/tmp/args.sh','w').write(f"P0={p0.hex()}\nP1={p1.hex()}\nP2={p2.hex()}\nP3={p3.hex()}\nP4={p4.hex()}\n")
import struct
want=p0+p1+p2+b'\0'*0+p3+p4+struct.pack('<f',1.5)
open('/tmp/want.bin','wb').write(want)
PY
. /tmp/args.sh
sig="grid_constant bytes(32660) align(2) p0, bytes(31) align(4), bool[3], bf16 p3, grid_constant bytes(4) align(4), grid_constant f32, u8* out"
for k in gc_all p3_plain p3_direct; do
  $g run scripts/diag_echo55.cu $k --grid 1 --block 1 --signature "$sig" --arg hex:$P0 --arg hex:$P1 --arg hex:$P2 --arg hex:$P3 --arg hex:$P4 --arg f32:1.5 --arg out=buf:u8:32720 --out out=/tmp/o_$k.bin >/tmp/r_$k.txt 2>&1; echo "$k exit $?"; tail -1 /tmp/r_$k.txt
  python3 -c "
g=open('/tmp/o_$k.bin','rb').read(); w=open('/tmp/want.bin','rb').read()
if '$k'=='p3_direct': print('direct:', g[:6].hex(), 'want', w[32695:32697].hex(), w[32692:32693].hex(), w[32690:32691].hex(), w[32697:32698].hex(), w[32659:32660].hex())
else:
  bad=[i for i in range(len(w)) if g[i]!=w[i]]; print('$k mismatches', len(bad), 'first', bad[:8], [(g[i],w[i]) for i in bad[:4]])"
done
nvcc -cubin -arch=sm_90 -std=c++17 -o /tmp/e55.cubin scripts/diag_echo55.cu && cuobjdump -sass /tmp/e55.cubin | grep -E "Function|LDC|LD\.|LD |CVTA|c\[0x0\]\[0x8|-0x7" | head -40
