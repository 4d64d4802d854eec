#!/usr/bin/env bash
# The Python package as a user gets it: a wheel built from a clean copy of the checkout (its tracked
# files, no build outputs) with `python3 -m build --no-isolation --wheel`, installed into a fresh
# venv (no system site-packages), then the Python suites (tests/python) run against the INSTALLED
# package from a directory outside the checkout, each one asserting first that `import gclaunch`
# resolves inside the venv (no PYTHONPATH to a build tree; GCL_BUILD_DIR only names BUILD's
# kernels and fake driver for the tests). Also README's one command, `pip install
# --no-build-isolation .`, into a venv that sees Debian's python3-mesonpy.
#   tests/install/wheel.sh [BUILD_DIR]      (default: build; its kernels and tests/fakecuda)
# Prints one "ok ..."/"FAIL ..."/"SKIP ..." line per check and per suite, and
# "wheel: N passed, N failed, N skipped" at the end; exits 1 if any failed. No GPU needed: the GPU
# suite shows as skipped (exit 77) without one.
# Environment: GCL_PYTHON (default /usr/bin/python3, Debian's: python3-mesonpy, python3-build and
# python3-venv are its packages), GCL_KEEP=1 keeps the temporary directory, GCL_VENV_SYSTEM_SITE=1
# gives the test venv the system's site-packages (numpy, and torch for the GPU suite on a GPU
# machine; the import check still requires the venv's gclaunch).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$src/build}" && pwd) || { echo "FAIL no build directory ${1:-build}"; exit 1; }
py=${GCL_PYTHON:-$( [[ -x /usr/bin/python3 ]] && echo /usr/bin/python3 || echo python3)}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gcl-wheel.XXXXXX")
if [[ ${GCL_KEEP:-0} == 1 ]]; then echo "keeping $tmp"; else trap 'rm -rf "$tmp"' EXIT; fi
passed=0 failed=0 skipped=0
ok() { echo "ok   $*"; passed=$((passed + 1)); }
fail() { echo "FAIL $*"; failed=$((failed + 1)); }
skip() { echo "SKIP $*"; skipped=$((skipped + 1)); }
finish() { echo "wheel: $passed passed, $failed failed, $skipped skipped"; exit $((failed > 0)); }

# --- a clean copy: the tracked files as they are in the working tree -----------------------------
copy=$tmp/src
mkdir -p "$copy"
(cd "$src" && git ls-files -z | while IFS= read -r -d '' f; do [[ -e $f || -L $f ]] && printf '%s\0' "$f"; done |
  xargs -0 cp -P --parents -t "$copy") 2>"$tmp/copy.log" ||
  { cat "$tmp/copy.log"; fail "copy the checkout's tracked files"; finish; }
version=$(sed -nE "s/^ *version: '([^']+)'.*/\1/p" "$copy/meson.build" | head -1)

# --- the wheel -----------------------------------------------------------------------------------
start=$SECONDS
if (cd "$copy" && "$py" -m build --no-isolation --wheel --outdir "$tmp/dist" .) >"$tmp/build.log" 2>&1; then
  :
else tail -40 "$tmp/build.log"; fail "python3 -m build --no-isolation --wheel"; finish; fi
wheels=("$tmp"/dist/*.whl)
whl=${wheels[0]}
name=$(basename "$whl")
if [[ ${#wheels[@]} == 1 && $name == "gclaunch-$version-cp310-abi3-linux_$(uname -m).whl" ]]; then
  ok "wheel built from a clean copy in $((SECONDS - start)) s: $name ($(stat -c %s "$whl") bytes)"
else fail "expected one gclaunch-$version-cp310-abi3-linux_$(uname -m).whl, got: ${wheels[*]##*/}"; fi
# meson's summary of the wheel build's configuration, and no kernel, test or benchmark target built.
parts=$(sed -nE 's/^ +(kernels|tests|benchmarks|examples|python) *: (True|False)$/\1=\2/p' "$tmp/build.log" | tr '\n' ' ')
if [[ $parts == "kernels=False tests=False benchmarks=False examples=False python=True " ]] &&
   ! grep -qE '^\[[0-9]+/[0-9]+\] .*(kernels/|tests/|bench/|examples/)' "$tmp/build.log"; then
  ok "the wheel build compiled no kernel (nvcc), test, benchmark or example: $parts"
else fail "the wheel build's parts: $parts$(grep -m3 -E '^\[[0-9]+/[0-9]+\] .*(kernels/|tests/|bench/|examples/)' "$tmp/build.log")"; fi

# Contents: the package only, with the stub and py.typed.
listing=$(cd "$tmp" && "$py" -c 'import sys, zipfile; print("\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))' "$whl")
want="gclaunch/_gclaunch.abi3.so gclaunch/__init__.py gclaunch/__init__.pyi gclaunch/py.typed"
missing="" extra=""
for f in $want; do grep -qx "$f" <<<"$listing" || missing+=" $f"; done
extra=$(grep -vE '^(gclaunch/|gclaunch-[^/]+\.dist-info/)' <<<"$listing" | tr '\n' ' ')
if [[ -z $missing && -z $extra ]]; then ok "wheel holds $want and its .dist-info, nothing else"
else fail "wheel contents: missing:${missing:- none}; not the package's: ${extra:-none}"; fi
if unzip -p "$whl" '*.dist-info/WHEEL' | grep -qx "Tag: cp310-abi3-linux_$(uname -m)"; then
  ok "WHEEL says Tag: cp310-abi3-linux_$(uname -m)"
else fail "WHEEL's tag: $(unzip -p "$whl" '*.dist-info/WHEEL' | grep Tag)"; fi
# RECORD lists every file with its sha256 and size (the backend rewrote WHEEL and RECORD).
if out=$("$py" - "$whl" <<'PY' 2>&1
import base64, csv, hashlib, io, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
rec = next(n for n in z.namelist() if n.endswith(".dist-info/RECORD"))
rows = {r[0]: r[1:] for r in csv.reader(io.StringIO(z.read(rec).decode())) if r}
bad = [n for n in z.namelist() if n not in rows]
for n, (h, size) in rows.items():
    if n == rec:
        continue
    data = z.read(n)
    d = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    if h != d or int(size) != len(data):
        bad.append(n)
print(f"{len(rows)} entries" if not bad else f"wrong: {bad}")
sys.exit(1 if bad else 0)
PY
); then ok "RECORD matches the wheel's files ($out)"
else fail "RECORD: $out"; fi
# The module: only libc's libraries, no RPATH/RUNPATH, no path of the build machine.
mkdir -p "$tmp/unz" && unzip -q "$whl" -d "$tmp/unz"
so=$tmp/unz/gclaunch/_gclaunch.abi3.so
needed=$(readelf -d "$so" | sed -nE 's/.*\(NEEDED\).*\[(.*)\]/\1/p' | tr '\n' ' ')
if [[ -n $needed && -z $(tr ' ' '\n' <<<"$needed" | grep -vE '^(libc\.so\.6|ld-linux[^ ]*\.so\.[0-9]+|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|)$') ]]; then
  ok "the wheel's module needs only libc (NEEDED: $needed): libgclaunch and libffi are linked in"
else fail "the wheel's module needs: $needed"; fi
if readelf -d "$so" | grep -qE 'R(UN)?PATH'; then fail "the wheel's module has $(readelf -d "$so" | grep -E 'R(UN)?PATH')"
else ok "the wheel's module has no RPATH/RUNPATH"; fi
if grep -qaF -e "$copy" -e "$src" "$so"; then fail "the wheel's module holds a build path ($copy or $src)"
else ok "the wheel's module holds no absolute build path"; fi

# --- a fresh venv, the wheel installed, imported from / -----------------------------------------
venv=$tmp/venv
venv_opts=() venv_what="no system site-packages"
[[ ${GCL_VENV_SYSTEM_SITE:-0} == 1 ]] && venv_opts=(--system-site-packages) venv_what="--system-site-packages"
if "$py" -m venv "${venv_opts[@]}" "$venv" >"$tmp/venv.log" 2>&1 &&
   "$venv/bin/python" -m pip install --no-index --no-deps "$whl" >>"$tmp/venv.log" 2>&1; then
  ok "pip install $name into a fresh venv ($venv_what, no index)"
else cat "$tmp/venv.log"; fail "venv + pip install of the wheel"; finish; fi
vpy=$venv/bin/python
site=$("$vpy" -c 'import sysconfig; print(sysconfig.get_path("platlib"))')
if out=$(cd / && env -u PYTHONPATH -u LD_LIBRARY_PATH "$vpy" -c \
    'import gclaunch; print(gclaunch.__version__, gclaunch.__file__, gclaunch.Layout("const f32* a, u64 n", 90).size)' 2>&1) &&
   [[ $out == "$version $site/gclaunch/__init__.py 16" ]]; then
  ok "import gclaunch from / (no PYTHONPATH, no LD_LIBRARY_PATH): $out"
else fail "import gclaunch from /: '$out' (expected '$version $site/gclaunch/__init__.py 16')"; fi

# --- the Python suites against the installed package ---------------------------------------------
# Run from a directory outside the checkout; each suite is run by a wrapper that imports gclaunch,
# checks it is the venv's, then runs the suite file as __main__ (its folder first on sys.path for
# gcltest, as `python FILE` does). Exit 77: every test skipped.
runner=$src/tests/python/run_installed.py
mkdir -p "$tmp/run"
fake=$build/tests/fakecuda/libfakecuda.so
for t in test_cpu test_structs_cc test_fakecuda test_runtime_fakecuda test_dlpack_c_api \
         test_pe_fakenvshmem test_gpu; do
  env_=(GCL_BUILD_DIR="$build")
  [[ $t == test_*fakecuda || $t == test_dlpack_c_api || $t == test_pe_fakenvshmem ]] && env_+=(GCL_LIBCUDA="$fake")
  [[ $t == test_pe_fakenvshmem ]] &&
    env_+=(GCL_NVSHMEM_PATH="$build/tests/fakenvshmem/libfakenvshmem.so" NVSHMEM_DISABLE_NVLS=1)
  (cd "$tmp/run" && env -u PYTHONPATH -u LD_LIBRARY_PATH "${env_[@]}" \
     timeout 600 "$vpy" "$runner" "$venv" "$src/tests/python/$t.py") >"$tmp/$t.txt" 2>&1
  t_rc=$?
  summary=$(grep -E "^$t\.py: " "$tmp/$t.txt" | tail -1)
  if [[ $t_rc == 0 ]]; then ok "installed-package python $t: $summary"
  elif [[ $t_rc == 77 ]]; then skip "installed-package python $t: $summary (every test skipped)"
  else fail "installed-package python $t (exit $t_rc): $summary"; tail -30 "$tmp/$t.txt"; fi
done

# --- README's one command: pip install --no-build-isolation . ------------------------------------
# Into a venv that sees the system's site-packages (meson-python comes from Debian's
# python3-mesonpy; no PyPI), from the clean copy; imported from /.
venv2=$tmp/venv-user
start=$SECONDS
if "$py" -m venv --system-site-packages "$venv2" >"$tmp/venv2.log" 2>&1 &&
   (cd "$copy" && "$venv2/bin/python" -m pip install --no-index --no-build-isolation .) >>"$tmp/venv2.log" 2>&1 &&
   out=$(cd / && env -u PYTHONPATH "$venv2/bin/python" -c 'import gclaunch, sys; print(gclaunch.__file__.startswith(sys.prefix + "/"), gclaunch.__version__)' 2>&1) &&
   [[ $out == "True $version" ]]; then
  ok "pip install --no-build-isolation . into a venv ($((SECONDS - start)) s); import gclaunch from / finds the venv's"
else tail -30 "$tmp/venv2.log"; fail "pip install --no-build-isolation .: ${out:-no import}"; fi

finish
