#!/usr/bin/env bash
# gclaunch's one entry point for a fresh machine.
#   ./run.sh          install what is missing, build, run the main job (gclaunch info + the demo)
#   ./run.sh test     install what is missing, build, run the whole test suite with ctest
#   ./run.sh deps     only install the build dependencies
#   ./run.sh build    only build
# Environment: BUILD_DIR (default build), GCL_WERROR=1 (warnings are errors, as in CI).
set -euo pipefail
cd "$(dirname "$0")"
build=${BUILD_DIR:-build}
packages=(meson ninja-build pkg-config gcc libffi-dev libcriterion-dev libdlpack-dev cmake
          clang libclang-rt-14-dev valgrind python3 python3-dev python3-numpy libiberty-dev
          python3-mesonpy python3-build python3-venv python3-pip patchelf)

deps() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    echo "run.sh: installing ${missing[*]}"
    local sudo=""; [[ $(id -u) == 0 ]] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
  if ! command -v nvcc >/dev/null && [[ ! -x ${CUDA_PATH:-/usr/local/cuda}/bin/nvcc ]]; then
    echo "run.sh: the CUDA toolkit (>= 12.4, with nvcc and NVRTC) is required: install it under" \
         "/usr/local/cuda or set CUDA_PATH" >&2
    exit 1
  fi
}

build() {
  local werror=false; [[ ${GCL_WERROR:-0} == 1 ]] && werror=true
  local out
  # meson prints its errors on stdout: keep it quiet when it works, show all of it when it fails.
  if [[ ! -f $build/build.ninja ]]; then
    out=$(meson setup "$build" -Dwerror=$werror 2>&1) || { echo "$out" >&2; return 1; }
  else
    out=$(meson configure "$build" -Dwerror=$werror 2>&1) || { echo "$out" >&2; return 1; }
  fi
  out=$(ninja -C "$build" 2>&1) || { echo "$out" | tail -60 >&2; return 1; }
  echo "run.sh: built $build"
}

main_job() {
  "$build/tools/gclaunch" info
  echo
  if "$build/tools/gclaunch" --help | grep -q '^  demo'; then
    "$build/tools/gclaunch" demo
  else
    ctest --test-dir "$build" -R gpu_smoke --output-on-failure
  fi
}

case ${1:-main} in
  deps) deps ;;
  build) deps; build ;;
  test) deps; build; ctest --test-dir "$build" --output-on-failure ;;
  main) deps; build; main_job ;;
  *) echo "usage: ./run.sh [test|deps|build]" >&2; exit 2 ;;
esac
