#!/bin/sh
# The ABI check: the dynamic symbols libgclaunch.so defines (nm -D --defined-only) are exactly the
# functions the public headers declare GCL_API -- nothing internal leaks (gcl__*, libffi glue),
# nothing declared is missing. One PASS:/FAIL: line per check; exit 1 on any FAIL.
# usage: check_symbols.sh [BUILD_DIR]   (default build)
lib=$(cd "${1:-build}" 2>/dev/null && pwd)/libgclaunch.so
cd "$(dirname "$0")/../.." || exit 1
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
[ -f "$lib" ] || { echo "FAIL: symbols: no $lib (build first)"; exit 1; }
tests/abi/public_api.sh include/gclaunch/*.h >"$tmp/api" || { echo "FAIL: symbols: cannot read the headers"; exit 1; }
nm -D --defined-only "$lib" | awk '{print $NF}' | sort -u >"$tmp/exported"
rc=0
extra=$(comm -13 "$tmp/api" "$tmp/exported")
missing=$(comm -23 "$tmp/api" "$tmp/exported")
if [ -z "$extra" ]; then
  echo "PASS: symbols: $lib exports nothing the headers do not declare ($(wc -l <"$tmp/exported") symbols)"
else
  echo "FAIL: symbols: $lib exports symbols no header declares GCL_API:"; echo "$extra" | sed 's/^/  /'; rc=1
fi
if [ -z "$missing" ]; then
  echo "PASS: symbols: every GCL_API function of include/gclaunch/*.h is exported ($(wc -l <"$tmp/api") functions)"
else
  echo "FAIL: symbols: declared GCL_API but not exported by $lib:"; echo "$missing" | sed 's/^/  /'; rc=1
fi
# The areas: each function is declared in exactly one header (an area header such as layout.h
# or stream.h, core.h's or runtime.h's tensor maps, ffi.h); the umbrella gclaunch.h declares none
# itself. The count per header is printed.
counts= dup=
for h in include/gclaunch/*.h; do
  n=$(tests/abi/public_api.sh "$h" 2>/dev/null | tee "$tmp/h.$(basename "$h")" | wc -l)
  [ "$n" -gt 0 ] && counts="$counts $(basename "$h") $n,"
done
dup=$(cat "$tmp"/h.* | sort | uniq -d)
if [ -n "$dup" ]; then
  echo "FAIL: symbols: declared GCL_API in more than one header:"; echo "$dup" | sed 's/^/  /'; rc=1
elif [ -s "$tmp/h.gclaunch.h" ]; then
  echo "FAIL: symbols: gclaunch.h declares functions itself; they belong in the layer headers"; rc=1
else
  echo "PASS: symbols: each function in one layer header (${counts%,} )"
fi
exit $rc
