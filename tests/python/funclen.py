#!/usr/bin/env python3
"""The longest C functions of the files given (python/ext keeps every function within 60 lines:
test_cpu.py's ExtensionTest checks it with this file): a definition starts at a column-0 line holding
`name(` whose signature ends in `{`, and ends at the next `}` in column 0; its length counts the
lines from the signature's first to the closing brace (as an editor shows them).
Usage: tests/python/funclen.py [--max N] FILE...  (prints the longest; with --max, exits 1 when one is
longer than N lines)."""
import re
import sys


def functions(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    out, start, name = [], None, None
    for i, line in enumerate(lines):
        if start is None:
            if not line.rstrip().endswith("{") or line.startswith(("#", "}", "/", " *")):
                continue
            j = i
            while j > 0 and lines[j][:1] in (" ", "\t") and i - j < 6:
                j -= 1
            head = " ".join(lines[j:i + 1])
            if lines[j][:1] in ("", " ", "\t", "#", "/") or "=" in head.split("(")[0]:
                continue
            if head.startswith(("typedef", "struct ", "enum", "union")) and "(" not in head:
                continue
            m = re.search(r"(\w+)\s*\(", head)
            if m:
                start, name = j, m.group(1)
        elif line.startswith("}"):
            out.append((i - start + 1, name, path))
            start = None
    return out


def main(argv):
    limit = None
    if argv[:1] == ["--max"]:
        limit, argv = int(argv[1]), argv[2:]
    res = sorted((f for p in argv for f in functions(p)), reverse=True)
    for n, name, path in res[:10]:
        print(f"{n:4d} {name} ({path})")
    over = [r for r in res if limit is not None and r[0] > limit]
    for n, name, path in over:
        print(f"over {limit}: {name} ({path}) has {n} lines", file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
