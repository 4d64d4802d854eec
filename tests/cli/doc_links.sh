#!/bin/sh
# Every relative link of README.md and docs/*.md resolves: [text](path), [text](path#anchor),
# [text](#anchor) and images; the file (or folder) must exist, and an anchor must be the GitHub
# slug of a heading of the target Markdown file (lower case, punctuation dropped, spaces to
# hyphens, "-1", "-2" ... for repeated headings). Links inside code blocks and code spans are
# not links; http(s) and mailto links are not checked.
#   doc_links.sh SOURCE_DIR      (the test kit passes its src/, which holds README.md and docs/)
src=${1:?usage: doc_links.sh SOURCE_DIR}
[ -f "$src/README.md" ] || { echo "FAIL: no README.md under $src"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gcl-links.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# links FILE: "target" per line (code blocks and code spans removed first).
links() {
  awk '/^[ \t]*```/ { code = !code; next }
       code { next }
       { line = $0; gsub(/`[^`]*`/, "", line)
         while (match(line, /\]\([^) ]+\)/)) {
           print substr(line, RSTART + 2, RLENGTH - 3); line = substr(line, RSTART + RLENGTH) } }' "$1"
}
# anchors FILE: the slug of every heading, repeats numbered as GitHub numbers them.
anchors() {
  awk '/^[ \t]*```/ { code = !code; next }
       code || !/^#+ / { next }
       { h = $0; sub(/^#+ +/, "", h); sub(/ +#* *$/, "", h); h = tolower(h)
         gsub(/[^a-z0-9 _-]/, "", h); gsub(/ /, "-", h)
         n = seen[h]++; print (n ? h "-" n : h) }' "$1"
}

checked=0 bad=0
for f in "$src/README.md" "$src"/docs/*.md; do
  [ -f "$f" ] || continue
  rel=${f#"$src"/}
  dir=$(dirname "$f")
  links "$f" > "$tmp/links"
  while IFS= read -r t; do
    case $t in http://*|https://*|mailto:*) continue ;; esac
    checked=$((checked + 1))
    path=${t%%#*}
    anchor=
    case $t in *'#'*) anchor=${t#*#} ;; esac
    target=$f
    [ -n "$path" ] && target=$dir/$path
    if [ ! -e "$target" ]; then
      echo "FAIL: $rel: link '$t': no file $path (from $(dirname "$rel")/)"; bad=$((bad + 1)); continue
    fi
    if [ -n "$anchor" ]; then
      case $target in
        *.md) anchors "$target" > "$tmp/anchors"
              if ! grep -qxF -- "$anchor" "$tmp/anchors"; then
                echo "FAIL: $rel: link '$t': no heading with anchor #$anchor in ${target#"$src"/}"
                bad=$((bad + 1))
              fi ;;
        *) echo "FAIL: $rel: link '$t': an anchor into a file that is not Markdown"; bad=$((bad + 1)) ;;
      esac
    fi
  done < "$tmp/links"
done
[ "$checked" -gt 0 ] || { echo "FAIL: no relative link found under $src (README.md, docs/*.md)"; exit 1; }
if [ "$bad" -gt 0 ]; then echo "$bad of $checked relative links are broken"; exit 1; fi
echo "ok: $checked relative links of README.md and docs/*.md resolve"
