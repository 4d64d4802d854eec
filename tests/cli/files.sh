#!/bin/sh
# Files that are no module, or much more than one (issue 50): nothing waits, nothing is read
# whole before it is judged.
#   - a FIFO given as MODULE (inspect, run), as a run @FILE fill or as inspect --signature @FILE
#     is refused at once, by name ("a FIFO, not a regular file"): without the fix open() waits
#     for a writer forever, so every command runs under `timeout`, and a timeout is a failure;
#   - a sparse 2 GiB .cubin (all zeros) is refused by its first bytes; a real cubin or fatbin
#     followed by 2 GiB of zeros is read up to the end its headers give, and inspected; a run
#     @FILE fill of 3 GiB is refused by its size. Each runs with its peak memory measured (the
#     resident set, which a whole read fills) and, where the binary runs under one (not under
#     ASan), a 1 GiB address-space limit (ulimit -v), so a whole read fails the test;
#   - an ELF header whose section table lies past the end is refused naming both sizes;
#   - inspect --signature @FILE prints the same as the text inline (whitespace around it dropped).
#   files.sh GCLAUNCH KERNEL_DIR
g=$1 k=$2
export GCL_LIBCUDA=/nonexistent/libcuda.so.1 GCL_LIBNVRTC=/nonexistent/libnvrtc.so
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gcl-files.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
failed=0
fail() { echo "FAIL: $*"; failed=1; }
[ -f "$k/echo.sm_90.cubin" ] || { echo "FAIL: no $k/echo.sm_90.cubin"; exit 1; }

# run_check NAME RC_WANTED PATTERN -- CMD...: CMD under timeout 20, its exit status and output.
run_check() {
  name=$1 want=$2 pat=$3
  shift 4
  timeout 20 "$@" >"$tmp/out" 2>&1
  rc=$?
  if [ $rc -eq 124 ]; then fail "$name: still running after 20 s (it waits on the file)"
  elif [ $rc -ne "$want" ]; then fail "$name: exit $rc, expected $want: $(head -3 "$tmp/out")"
  elif ! grep -q -- "$pat" "$tmp/out"; then fail "$name: no '$pat' in: $(head -3 "$tmp/out")"
  else echo "ok: $name"
  fi
}

# peak_check NAME RC_WANTED PATTERN -- CMD...: as run_check, and the command's peak resident
# set must stay under 256 MiB (a 2 GiB read fills 2 GiB); under a 1 GiB ulimit -v when the
# binary starts under one.
limit=""
if (ulimit -v 1048576 && "$g" --help >/dev/null 2>&1); then limit="ulimit -v 1048576;"
else echo "note: $g does not start under ulimit -v (an ASan build): resident set only"
fi
peak_check() {
  name=$1 want=$2 pat=$3
  shift 4
  python3 - "$tmp/out" "$limit" "$@" <<'EOF' >"$tmp/peak"
import resource, subprocess, sys
out, limit, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
with open(out, "w") as f:
    try:
        rc = subprocess.run(["sh", "-c", limit + ' exec "$0" "$@"'] + cmd, stdout=f,
                            stderr=subprocess.STDOUT, timeout=20).returncode
    except subprocess.TimeoutExpired:
        rc = 124
print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
EOF
  read rc kb <"$tmp/peak"
  if [ "$rc" -eq 124 ]; then fail "$name: still running after 20 s"
  elif [ "$rc" -ne "$want" ]; then fail "$name: exit $rc, expected $want: $(head -3 "$tmp/out")"
  elif ! grep -q -- "$pat" "$tmp/out"; then fail "$name: no '$pat' in: $(head -3 "$tmp/out")"
  elif [ "$kb" -gt 262144 ]; then fail "$name: peak resident set $kb KiB (the file was read whole)"
  else echo "ok: $name (peak $kb KiB)"
  fi
}

mkfifo "$tmp/f.cubin" || { echo "FAIL: mkfifo"; exit 1; }
scalars="--grid 1 --block 1 --arch sm_90 --arg i8:1 --arg i16:1 --arg i32:1 --arg i64:1 --arg f32:1 --arg f64:1 --arg u8:1 --arg u64:0"
run_check "inspect FIFO" 1 "'$tmp/f.cubin': a FIFO, not a regular file" -- "$g" inspect "$tmp/f.cubin"
run_check "run FIFO module" 1 "'$tmp/f.cubin': a FIFO, not a regular file" -- "$g" run "$tmp/f.cubin" k --grid 1 --block 1
# shellcheck disable=SC2086
run_check "run @FIFO fill" 2 "a FIFO, not a regular file" -- "$g" run "$k/echo.sm_90.cubin" echo_scalars $scalars --arg "buf:u8:64=@$tmp/f.cubin"
run_check "inspect directory" 1 "a directory, not a regular file" -- "$g" inspect "$tmp"
run_check "inspect --signature @FIFO" 2 "a FIFO, not a regular file" -- "$g" inspect "$k/echo.sm_90.cubin" --kernel echo_scalars --signature "@$tmp/f.cubin"

truncate -s 2G "$tmp/zero.cubin" || { echo "FAIL: truncate"; exit 1; }
peak_check "2 GiB of zeros" 1 "is 2147483648 bytes: not a cubin or fatbin" -- "$g" inspect "$tmp/zero.cubin"
cp "$k/echo.sm_90.cubin" "$tmp/tail.cubin" && truncate -s 2G "$tmp/tail.cubin"
peak_check "cubin + 2 GiB" 0 "tail.cubin: cubin, offsets for sm_90" -- "$g" inspect "$tmp/tail.cubin"
cp "$k/echo.fatbin" "$tmp/tail.fatbin" && truncate -s 2G "$tmp/tail.fatbin"
peak_check "fatbin + 2 GiB" 0 "tail.fatbin: fatbin, offsets for sm_90" -- "$g" inspect "$tmp/tail.fatbin"
truncate -s 3G "$tmp/fill.bin"
# shellcheck disable=SC2086
peak_check "run 3 GiB @FILE fill" 2 "has 3221225472 bytes, the view has 64" -- "$g" run "$k/echo.sm_90.cubin" echo_scalars $scalars --arg "buf:u8:64=@$tmp/fill.bin"

# The ELF header of a real cubin, the rest cut: its tables lie past the end of 100 bytes.
head -c 100 "$k/echo.sm_90.cubin" >"$tmp/cut.cubin"
run_check "cut cubin" 1 "cut.cubin' is truncated: its .* ends at byte [0-9]*, the file has 100 bytes" -- "$g" inspect "$tmp/cut.cubin"

# inspect --signature @FILE: a signature longer than one argument may be (128 KiB), from a file;
# one past 16 MiB is refused by its size, before it is read.
python3 -c "print(', '.join('u8 p%d' % i for i in range(20000)))" >"$tmp/long.sig"
run_check "--signature @FILE (200 KiB)" 0 "sm_90, 20000 parameter bytes" -- "$g" inspect --signature "@$tmp/long.sig"
echo "i8, i16, i32, i64, f32, f64, u8, ptr, ptr" >"$tmp/echo.sig"
run_check "--signature @FILE matches" 0 "signature matches 1 kernel" -- "$g" inspect "$k/echo.sm_90.cubin" --kernel echo_scalars --signature "@$tmp/echo.sig"
echo "i8, i16" >"$tmp/short.sig"
run_check "--signature @FILE differs" 1 "declares 2 parameters, kernel 'echo_scalars' has 9" -- "$g" inspect "$k/echo.sm_90.cubin" --kernel echo_scalars --signature "@$tmp/short.sig"
truncate -s 20M "$tmp/huge.sig"
peak_check "--signature @20 MiB" 2 "20971520 bytes, more than the 16777216 read" -- "$g" inspect --signature "@$tmp/huge.sig"
run_check "--signature @missing" 2 "cannot read '$tmp/missing': No such file" -- "$g" inspect --signature "@$tmp/missing"
# @FILE prints exactly what the same text inline does (issue 55: the file's last newline was
# echoed after "signature:" and inside the JSON string), with and without --json; CRLF too.
sig="i32 a, f32* p, grid_constant bytes(64) align(16) s"
printf '%s\n' "$sig" >"$tmp/lf.sig"
printf '  %s\r\n\n' "$sig" >"$tmp/crlf.sig"
for json in "" --json; do
  timeout 20 "$g" inspect --signature "$sig" $json >"$tmp/inline" 2>&1 || fail "inline $json: exit $?"
  for f in lf crlf; do
    timeout 20 "$g" inspect --signature "@$tmp/$f.sig" $json >"$tmp/fromfile" 2>&1 ||
      fail "@$f.sig $json: exit $?"
    cmp -s "$tmp/inline" "$tmp/fromfile" ||
      fail "@$f.sig $json prints other text than inline: $(diff "$tmp/inline" "$tmp/fromfile" | head -5)"
  done
done

[ $failed -eq 0 ] && echo "files.sh: all passed"
exit $failed
