#!/bin/sh
# `gclaunch inspect` tells a module device-linked with NVSHMEM (it defines nvshmemi_device_state_d)
# from a plain one, in text and --json, with the device library's version; `gclaunch info` names
# the NVSHMEM host library it found (the CPU stand-in here) and its version, or why not.
#   nvshmem_inspect.sh GCLAUNCH KERNEL_DIR FAKENVSHMEM_SO
g=$1 k=$2 fake=$3
export GCL_LIBCUDA=/nonexistent/libcuda.so.1
failed=0
fail() { echo "FAIL: $*"; failed=1; }
py() { python3 -c "import json, sys; d = json.load(sys.stdin); $1"; }

out=$("$g" inspect "$k/nvshmem_state.sm_90.cubin") || fail "inspect of the NVSHMEM cubin exits $?"
echo "$out" | grep -q '^nvshmem: device-linked with NVSHMEM (device library 3.4.5)' ||
  fail "inspect does not say the NVSHMEM cubin is device-linked: $out"
out=$("$g" inspect "$k/smoke.sm_90.cubin") || fail "inspect of the plain cubin exits $?"
echo "$out" | grep -q "^nvshmem:\|NVSHMEM" && fail "inspect mentions NVSHMEM for a plain cubin: $out"
v=$("$g" inspect --json "$k/nvshmem_state_v390.sm_90.cubin" | py 'print(d["nvshmem"], d["nvshmem_version"], len(d["kernels"]))')
[ "$v" = "True 3.9.0 1" ] || fail "--json of the NVSHMEM cubin: nvshmem, version, kernels = '$v'"
v=$("$g" inspect --json "$k/smoke.sm_90.cubin" | py 'print(d["nvshmem"], d["nvshmem_version"])')
[ "$v" = "False None" ] || fail "--json of the plain cubin: nvshmem, version = '$v'"

out=$(GCL_NVSHMEM_PATH="$fake" "$g" info) || fail "info exits $?"
echo "$out" | grep -qx "nvshmem:  $fake, version 3.4.5" || fail "info with the library: $out"
out=$(GCL_NVSHMEM_PATH="$fake" FAKENVSHMEM_VERSION=3.2.0 "$g" info)
echo "$out" | grep -q "^nvshmem:  unusable (.*version 3.2.0; gclaunch needs 3.3.9 or later" ||
  fail "info with a library too old: $out"
out=$(GCL_NVSHMEM_PATH=/nonexistent/x.so "$g" info)
echo "$out" | grep -q "^nvshmem:  not found (.*'/nonexistent/x.so'" || fail "info without: $out"
v=$(GCL_NVSHMEM_PATH="$fake" "$g" info --json | py 'n = d["nvshmem"]; print(n["found"], n["version"])')
[ "$v" = "True 3.4.5" ] || fail "info --json: '$v'"
v=$(GCL_NVSHMEM_PATH=/nonexistent/x.so "$g" info --json | py 'n = d["nvshmem"]; print(n["found"], n["status"])')
[ "$v" = "False GCL_ERROR_NO_NVSHMEM" ] || fail "info --json without: '$v'"
[ $failed = 0 ] && echo "PASS: inspect and info tell NVSHMEM modules and libraries"
exit $failed
