#!/bin/sh
# Nothing of the build machine in the test kit: no file of KIT_DIR (binaries included) holds the
# absolute path of the build or the source tree (each as given and as realpath resolves it).
# KIT_DIR/src/ is left out: it holds the repository's committed files verbatim (the same in every
# clone), where a path is only data -- an old run's log, a PTX file's .file line.
# One PASS:/FAIL: line; the files and the lines that hold a path on failure.
#   check_paths.sh KIT_DIR BUILD_DIR SOURCE_DIR
kit=${1:?usage: check_paths.sh KIT_DIR BUILD_DIR SOURCE_DIR} build=${2:?} src=${3:?}
[ -d "$kit" ] || { echo "FAIL: kit paths: no folder $kit"; exit 1; }
set --
for p in "$build" "$src" "$(realpath "$build" 2>/dev/null)" "$(realpath "$src" 2>/dev/null)"; do
  p=${p%/}
  case $p in ''|/) continue ;; esac # "/" would match everything
  set -- "$@" -e "$p"
done
hits=$(grep -rlaF --exclude-dir=src "$@" "$kit" 2>/dev/null)
n=$(find "$kit" -path "$kit/src" -prune -o -type f -print | wc -l)
if [ -z "$hits" ]; then
  echo "PASS: kit paths: none of the $n files of $kit names $build or $src"
  exit 0
fi
echo "FAIL: kit paths: $(echo "$hits" | wc -l) of the $n files of $kit name the build or source tree:"
echo "$hits" | while IFS= read -r f; do
  echo "  $f:"
  grep -aoF "$@" "$f" | sort | uniq -c | head -3 | sed 's/^/      /'
  strings -a "$f" 2>/dev/null | grep -F "$@" | head -3 | sed 's/^/      /'
done
exit 1
