#!/bin/sh
# The hot paths of libgclaunch.so make no PLT call (issues 16, 28): their only calls out of the
# library are the driver's function pointers. Checks the bodies of the listed functions with
# objdump; exits 77 (skipped) when objdump is missing.
lib=${1:?usage: test_hotpath.sh libgclaunch.so}
command -v objdump >/dev/null 2>&1 || { echo "objdump not found: skipped"; exit 77; }
# Sanitizer and coverage builds call their runtimes through the PLT everywhere: nothing to check.
if objdump -T "$lib" 2>/dev/null | grep -qE '__(asan|ubsan|tsan|gcov|sanitizer)_'; then
  echo "instrumented build (sanitizer or coverage runtime): skipped"; exit 77
fi
dis=$(objdump -d --no-show-raw-insn "$lib") || exit 1
status=0
for f in gcl_launch gcl_args_set_field_scalar gcl_args_set_field_ptr gcl_args_set_tensormaps \
         gcl_args_repoint_tensormaps; do
  body=$(printf '%s\n' "$dis" | awk -v f="<$f>:" '$2 == f {on = 1; next} on && /^$/ {exit} on')
  [ -n "$body" ] || { echo "FAIL: $f not found in $lib"; status=1; continue; }
  plt=$(printf '%s\n' "$body" | grep '@plt' || true)
  if [ -n "$plt" ]; then echo "FAIL: $f calls through the PLT:"; echo "$plt"; status=1
  else echo "ok: $f has no PLT call"; fi
done
exit $status
