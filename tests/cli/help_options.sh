#!/bin/sh
# `gclaunch CMD --help` against CMD's parser, for every command `gclaunch help` lists (issue 28).
# The parsers read their options from the table --help prints (tools/cliopts.h); this checks the
# result from outside, both ways:
#   - every option the help lists is accepted: given alone it is never an "unknown option"; one
#     the help shows with a VALUE asks for the value, a flag does not;
#   - the parser accepts nothing the help does not list: a made-up option is refused, and every
#     string literal in CMD's sources (tools/CMD*.c) that starts with an option name -- a strcmp,
#     a table entry, a message -- names an option of the help.
# `gclaunch --help` the same way for the program's own options (tools/cli_main.c).
#   help_options.sh GCLAUNCH TOOLS_SOURCE_DIR
g=$1 src=$2
export GCL_LIBCUDA=/nonexistent/libcuda.so.1 GCL_LIBNVRTC=/nonexistent/libnvrtc.so
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gcl-help.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
failed=0
fail() { echo "FAIL: $*"; failed=1 bad=1; }

# The options a help text lists: "  --name" or "  -h, --help" at the start of a line.
listed() { sed -nE 's/^  (-h, )?(--[a-z0-9][a-z0-9-]*).*/\2/p' "$1" | sort -u; }
# The options named at the start of a string literal in the files given.
in_sources() { grep -ohE '"--[a-z0-9][a-z0-9-]*' "$@" | tr -d '"' | sort -u; }

commands=$("$g" help | sed -nE 's/^  ([a-z]+) .*/\1/p' | grep -vx help)
[ -n "$commands" ] || { echo "FAIL: 'gclaunch help' lists no command"; exit 1; }
for c in $commands; do
  bad=0
  "$g" "$c" --help >"$tmp/help" 2>&1 || { fail "$c --help exits $?"; continue; }
  listed "$tmp/help" >"$tmp/listed"
  grep -qx -- --help "$tmp/listed" || fail "$c --help does not list -h, --help"
  n=0
  for o in $(grep -vx -- --help "$tmp/listed"); do
    n=$((n + 1))
    "$g" "$c" "$o" >"$tmp/out" 2>&1
    if grep -q "unknown option '$o'" "$tmp/out"; then fail "$c: the help lists $o, the parser refuses it"
    elif grep -qE -- "^  $o [^ ]" "$tmp/help"; then # listed with a value
      grep -q "option '$o' needs a value" "$tmp/out" || fail "$c $o: the help shows a value, the parser asks none: $(head -2 "$tmp/out")"
    elif grep -q "option '$o' needs a value" "$tmp/out"; then fail "$c $o: a flag in the help, the parser wants a value"
    fi
  done
  "$g" "$c" --no-such-option >"$tmp/out" 2>&1
  grep -q "unknown option '--no-such-option'" "$tmp/out" || fail "$c accepts --no-such-option: $(head -2 "$tmp/out")"
  # shellcheck disable=SC2086
  in_sources "$src/$c".c $(ls "$src/$c"?*.c 2>/dev/null) >"$tmp/named"
  missing=$(comm -23 "$tmp/named" "$tmp/listed" | tr '\n' ' ')
  [ -z "$missing" ] || fail "$c: the sources name options its --help does not list: $missing"
  [ $bad = 1 ] || echo "ok: $c: $n options, help and parser agree"
done
"$g" --help >"$tmp/help" 2>&1 || fail "gclaunch --help exits $?"
missing=$(in_sources "$src/cli_main.c" | while read -r o; do grep -qF -- "$o" "$tmp/help" || echo "$o"; done | tr '\n' ' ')
[ -z "$missing" ] && echo "ok: gclaunch --help names the program's own options" ||
  fail "gclaunch --help does not name: $missing"
for h in "help --help" "help -h" "help run" "help"; do # `gclaunch help --help` is help too
  "$g" $h >"$tmp/help" 2>&1 || fail "gclaunch $h exits $?"
done
[ $failed = 1 ] || echo "ok: gclaunch help, help --help, help -h, help run exit 0"
"$g" help nosuch >/dev/null 2>&1 && fail "gclaunch help nosuch exits 0 (expected 2)"
exit $failed
