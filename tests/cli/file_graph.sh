#!/bin/sh
# No file-level cycles among a program's or library's object files (issues 28 and 48): an edge
# A -> B when A.o has an undefined symbol that B.o defines (A calls a function of B, or reads its
# data). The graph must be a DAG: shared helpers live in leaf files that call no other file of
# the set, and no two files call each other, even through others. Prints the edges and the
# leaves; on a cycle, the files in it (tsort's words). Exits 77 (skipped) when nm or tsort is
# missing or the objects are not there (a copied build directory without them).
#   file_graph.sh BUILD_DIR OBJECT_DIR...     (ctest runs it in the build directory: ".")
#   tools/: file_graph.sh . tools/gclaunch.p
#   lib/:   file_graph.sh . lib/core/libgclaunch_core.a.p lib/cuda/libgclaunch_cuda.a.p
b=${1:-.}
shift
[ $# -gt 0 ] || set -- tools/gclaunch.p
what=$*
for t in nm tsort; do
  command -v $t >/dev/null 2>&1 || { echo "SKIP: $t not found"; exit 77; }
done
objs=
for d in "$@"; do
  for o in "$b/$d"/*.o; do [ -f "$o" ] && objs="$objs $o"; done
done
# shellcheck disable=SC2086
set -- $objs
[ $# -gt 0 ] || { echo "SKIP: no object files under $b/ $what"; exit 77; }
[ $# -ge 2 ] || { echo "FAIL: only $# object file under $b/ $what"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gcl-graph.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
for o in "$@"; do
  f=$(basename "$o" .o)
  nm -g --defined-only "$o" | awk -v f="$f" 'NF == 3 { print $3, f }' >>"$tmp/defs"
  nm -u "$o" | awk -v f="$f" '{ print $NF, f }' >>"$tmp/uses"
  echo "$f $f" >>"$tmp/edges" # every file is a node, leaves too
done
# uses: "symbol user", defs: "symbol definer" -> edges "user definer"
awk 'NR == FNR { def[$1] = $2; next } ($1 in def) && def[$1] != $2 { print $2, def[$1] }' \
  "$tmp/defs" "$tmp/uses" | sort -u >"$tmp/calls"
cat "$tmp/calls" >>"$tmp/edges"
echo "file graph of $what ($# files; A -> B: A calls B):"
awk '{ to[$1] = to[$1] " " $2 } END { for (f in to) print "  " f " ->" to[f] }' "$tmp/calls" | sort
awk '{ print $1 }' "$tmp/edges" | sort -u >"$tmp/files"
awk '{ print $1 }' "$tmp/calls" | sort -u >"$tmp/callers"
echo "leaves (call no other file): $(comm -23 "$tmp/files" "$tmp/callers" | tr '\n' ' ')"
if ! tsort "$tmp/edges" >/dev/null 2>"$tmp/loop"; then
  echo "FAIL: the files of $what call each other in a cycle:"
  cat "$tmp/loop"
  echo "(move what both sides use into a file that calls neither)"
  exit 1
fi
echo "ok: no cycle"
