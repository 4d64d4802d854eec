#!/bin/sh
# Function lengths of C files: prints "LINES FILE:LINE NAME" for every function definition, longest
# first, and fails when one is longer than the limit (STYLE: no function over 60 lines in lib/ or
# python/ext). A function's lines run from the first line of its definition (return type) to its
# closing brace, both counted. Definitions start in column 0 and end with a "}" in column 0, as
# every file here is formatted; braces in strings, character literals and comments are skipped.
#   func_lengths.sh [--max N] [--top K] [--skip FILE:NAME]... FILE_OR_DIR...
max=60 top=0 skips=
while [ $# -gt 0 ]; do
  case $1 in
    --max) max=$2; shift 2 ;;
    --top) top=$2; shift 2 ;;
    --skip) skips="$skips $2"; shift 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { echo "usage: func_lengths.sh [--max N] [--top K] [--skip FILE:NAME]... FILE_OR_DIR..."; exit 2; }
for p in "$@"; do [ -e "$p" ] || { echo "FAIL: no $p"; exit 1; }; done
files=$(for p in "$@"; do if [ -d "$p" ]; then find "$p" -name '*.c' | sort; else echo "$p"; fi; done)
[ -n "$files" ] || { echo "FAIL: no C file under $*"; exit 1; }
# shellcheck disable=SC2086
all=$(awk '
  FNR == 1 { depth = 0; start = 0; incomment = 0 }
  {
    line = $0
    if (incomment) { if (sub(/.*\*\//, "", line)) incomment = 0; else next }
    gsub(/"([^"\\]|\\.)*"/, "\"\"", line); gsub(/'"'"'([^'"'"'\\]|\\.)*'"'"'/, "0", line)
    gsub(/\/\*.*\*\//, "", line); sub(/\/\/.*/, "", line)
    if (sub(/\/\*.*/, "", line)) incomment = 1
    if (depth == 0 && !start && line ~ /^[A-Za-z_]/ && line ~ /\(/ && line !~ /;[ \t]*$/ && line !~ /=/ && line !~ /^#/) {
      start = FNR; name = line; gsub(/__attribute__\(\([^)]*\)\) */, "", name)
      if (name !~ /\(/) { start = 0; next }  # the attribute alone on the line: name on the next
      sub(/\(.*/, "", name); sub(/.*[ *]/, "", name)
    }
    opens = gsub(/\{/, "{", line); closes = gsub(/\}/, "}", line)
    depth += opens - closes
    if (start && depth == 0 && closes > 0 && $0 ~ /^}/) { print FNR - start + 1, FILENAME ":" start, name; start = 0 }
    else if (start && depth == 0 && line ~ /;[ \t]*$/ && opens == 0) start = 0
  }' $files | sort -k1,1nr -k2)
if [ "$top" -gt 0 ]; then echo "$all" | head -n "$top"; fi
over=$(echo "$all" | awk -v max="$max" -v skips="$skips" '
  BEGIN { n = split(skips, s, " "); for (i = 1; i <= n; i++) skip[s[i]] = 1 }
  $1 > max { f = $2; sub(/:[0-9]+$/, "", f); sub(/.*\//, "", f); if (!((f ":" $3) in skip)) print }')
if [ -n "$over" ]; then
  echo "FAIL: functions over $max lines:"; echo "$over"; exit 1
fi
echo "ok: $(echo "$all" | grep -c .) functions, none over $max lines (longest: $(echo "$all" | head -1))"
