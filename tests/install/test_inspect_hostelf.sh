#!/bin/sh
# gclaunch inspect on the toolkit's own host libraries (libcurand, libcusparse): the kernels listed
# for the whole library must be exactly those of its fatbin containers, each cut out of .nv_fatbin
# here (by this script's own ELF and container walk, not gclaunch's) and read alone, in order,
# with the same parameter offsets and sizes. Exits 77 (skipped) when no library or python3 is there.
#   test_inspect_hostelf.sh GCLAUNCH CUDA_ROOT [kernels/smoke.cu]
gclaunch=$1 cuda=$2
command -v python3 >/dev/null || { echo "skip: python3 is needed"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gcl-hostelf.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
found=0 failed=0
# A relocatable object (also with -rdc=true) and a shared library built here by nvcc: format "elf", the kernel listed.
src=${3:-$(dirname "$0")/../../kernels/smoke.cu}
if [ -x "$cuda/bin/nvcc" ] && [ -f "$src" ] &&
   "$cuda/bin/nvcc" -c -arch=sm_90 -Xcompiler -fPIC "$src" -o "$tmp/smoke.o" &&
   "$cuda/bin/nvcc" -shared -arch=sm_90 "$tmp/smoke.o" -o "$tmp/libsmoke.so" &&
   "$cuda/bin/nvcc" -rdc=true -c -arch=sm_90 "$src" -o "$tmp/smoke_rdc.o"; then # __nv_relfatbin
  for f in smoke.o libsmoke.so smoke_rdc.o; do
    if "$gclaunch" inspect "$tmp/$f" --json | python3 -c '
import json, sys
o = json.load(sys.stdin)
assert o["format"] == "elf" and o["arch"] == "sm_90", o
assert [k["name"] for k in o["kernels"]] == ["saxpy"] and o["kernels"][0]["param_bytes"] == 32, o'
    then echo "PASS: nvcc-built $f: format elf, saxpy with 32 bytes of parameters"
    else echo "FAIL: nvcc-built $f"; failed=1; fi
  done
else echo "skip: could not build $src with $cuda/bin/nvcc"; fi
for lib in "$cuda"/lib64/libcurand.so.[0-9]* "$cuda"/lib64/libcusparse.so.[0-9]*; do
  case $lib in *'*'*) continue ;; esac
  case $lib in *.so.*.*) continue ;; esac # the versioned name once: libcurand.so.10, not .10.x.y
  found=1
  python3 - "$gclaunch" "$lib" "$tmp" <<'PY' || failed=1
import json, struct, subprocess, sys
gclaunch, lib, tmp = sys.argv[1:4]
f = open(lib, 'rb').read()
shoff, = struct.unpack_from('<Q', f, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from('<HHH', f, 0x3a)
def sh(i): return struct.unpack_from('<IIQQQQIIQQ', f, shoff + i * shentsize)
names = sh(shstrndx)[4]
body = None
for i in range(shnum):
    s = sh(i)
    if f[names + s[0]:f.index(b'\0', names + s[0])] == b'.nv_fatbin': body = f[s[4]:s[4] + s[5]]
assert body is not None, lib + ': no .nv_fatbin'
containers, at = [], 0
while at + 16 <= len(body):
    magic, _, hs, size = struct.unpack_from('<IHHQ', body, at)
    assert magic == 0xba55ed50, '%s: no container magic at byte %d' % (lib, at)
    containers.append(body[at:at + hs + size])
    at = (at + hs + size + 7) & ~7
def inspect(path):
    r = subprocess.run([gclaunch, 'inspect', path, '--arch', 'sm_90', '--json'], capture_output=True, text=True)
    if r.returncode == 1 and 'no entry usable on sm_90' in r.stderr: return []
    assert r.returncode == 0, '%s: exit %d: %s' % (path, r.returncode, r.stderr)
    return json.loads(r.stdout)['kernels']
alone = []
for n, c in enumerate(containers):
    p = '%s/container%d.fatbin' % (tmp, n)
    open(p, 'wb').write(c)
    alone += inspect(p)
whole = inspect(lib)
assert len(whole) == len(alone), '%s: %d kernels for the library, %d in its %d containers' % (lib, len(whole), len(alone), len(containers))
for a, b in zip(whole, alone):
    assert a == b, '%s: kernel %s differs from its container\'s: %s' % (lib, a['name'], b)
assert whole, lib + ': no kernels'
print('PASS: %s: %d kernels (%d distinct names) in %d containers, each as read alone' % (lib, len(whole), len({k['name'] for k in whole}), len(containers)))
PY
done
[ $found = 1 ] || { echo "skip: no libcurand.so.N or libcusparse.so.N under $cuda/lib64"; exit 77; }
exit $failed
