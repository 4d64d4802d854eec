#!/bin/sh
# No file-level cycles among a program's or library's object files (issues 28 and 48): an edge
# A -> B when A.o has an undefined symbol that B.o defines (A calls a function of B, or reads its
# data). The graph must be a DAG: shared helpers live in leaf files that call no other file of
# the set, and no two files call each other, even through others. Prints the edges and the
# leaves; on a cycle, the files in it (tsort's words). Exits 77 (skipped) when nm or tsort is
# missing or the objects are not there (a copied build directory without them).
# --never A:B pins a floor (issue 54): file A must not call file B, directly or through others
# (a lower floor never calls up); both must be files of the set, so a rename fails it too.
#   file_graph.sh BUILD_DIR [--never A:B]... OBJECT_DIR...   (ctest runs it in the build directory: ".")
#   tools/: file_graph.sh . tools/gclaunch.p
#   lib/:   file_graph.sh . --never pe.c:tmap_slots.c lib/core/libgclaunch_core.a.p lib/cuda/libgclaunch_cuda.a.p
b=${1:-.}
[ $# -gt 0 ] && shift
never=
dirs=
while [ $# -gt 0 ]; do
  case $1 in
  --never) never="$never ${2:?--never takes A:B}"; shift 2 ;;
  *) dirs="$dirs $1"; shift ;;
  esac
done
# shellcheck disable=SC2086
set -- $dirs
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
# The path from A to B when A reaches B (breadth first: a shortest one), else nothing.
path() {
  awk -v s="$1" -v t="$2" '{ to[$1] = to[$1] " " $2 }
    END {
      n = 1; q[1] = s; seen[s] = 1; via[s] = s
      for (i = 1; i <= n; i++) {
        k = split(to[q[i]], a, " ")
        for (j = 1; j <= k; j++)
          if (!(a[j] in seen)) { seen[a[j]] = 1; via[a[j]] = via[q[i]] " -> " a[j]; q[++n] = a[j] }
      }
      if (t in seen) print via[t]
    }' "$tmp/calls"
}
bad=0
for pair in $never; do
  from=${pair%%:*} to=${pair#*:}
  for f in "$from" "$to"; do
    grep -qx "$f" "$tmp/files" || { echo "FAIL: --never $pair: no file $f in $what"; bad=1; }
  done
  p=$(path "$from" "$to")
  [ -z "$p" ] || { echo "FAIL: $from must not call $to (a lower floor calls up): $p"; bad=1; }
done
[ $bad -eq 0 ] || exit 1
echo "ok: no cycle${never:+; no floor calls up:$never}"
