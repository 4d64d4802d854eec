"""Random nested structs through gclaunch against the C compiler: for each random by-value struct
parameter (scalars of every type, pointers, tensor maps, arrays, arrays of structs, nesting),
every leaf's offset and the struct's size from gclaunch.Layout must equal cc's offsetof/sizeof,
and the bytes gclaunch packs after setting every leaf from Python values must equal the bytes of
the C struct assigned the same values. Skipped when no C compiler is found."""
import os
import random
import shutil
import struct
import subprocess
import tempfile
import unittest

import gcltest as T
import gclaunch as g

# signature type, C type, struct format, a value generator
SCALARS = {
    "bool": ("_Bool", "?", lambda r: r.choice([True, False])),
    "i8": ("int8_t", "b", lambda r: r.randint(-128, 127)),
    "u8": ("uint8_t", "B", lambda r: r.randint(0, 255)),
    "i16": ("int16_t", "h", lambda r: r.randint(-2**15, 2**15 - 1)),
    "u16": ("uint16_t", "H", lambda r: r.randint(0, 2**16 - 1)),
    "i32": ("int32_t", "i", lambda r: r.randint(-2**31, 2**31 - 1)),
    "u32": ("uint32_t", "I", lambda r: r.randint(0, 2**32 - 1)),
    "i64": ("int64_t", "q", lambda r: r.randint(-2**63, 2**63 - 1)),
    "u64": ("uint64_t", "Q", lambda r: r.randint(0, 2**64 - 1)),
    "f16": ("uint16_t", None, lambda r: r.choice([0.5, 1.5, -2.0, 3.25, 65504.0])),
    "bf16": ("uint16_t", None, lambda r: r.choice([0.5, 1.5, -2.0, 3.25, 1e30])),
    "f32": ("float", "f", lambda r: r.choice([0.25, -1.5, 3.0e38, 1e-3])),
    "f64": ("double", "d", lambda r: r.uniform(-1e300, 1e300)),
}


def bits16(kind, v):
    if kind == "f16":
        return struct.unpack("<H", struct.pack("<e", v))[0]
    u = struct.unpack("<I", struct.pack("<f", v))[0]
    return (u + 0x7FFF + ((u >> 16) & 1)) >> 16


class Gen:
    """One random struct: its signature text, its C declaration, and (path, value, C assignment)."""

    def __init__(self, r):
        self.r, self.decls, self.n = r, [], 0

    def ctype(self, depth):
        r = self.r
        k = r.random()
        if depth >= 3 or k < 0.55:
            s = r.choice(list(SCALARS))
            return s, SCALARS[s][0], ("scalar", s)
        if k < 0.65:
            return "f32*", "uint64_t", ("ptr",)
        if k < 0.72:
            return "tensormap", "struct tm", ("tmap",)
        sig, c, members = self.struct(depth + 1)
        return sig, c, ("struct", members)

    def struct(self, depth):
        members = []
        for i in range(self.r.randint(1, 4)):
            sig, c, kind = self.ctype(depth)
            count = self.r.choice([0, 0, 0, 2, 3]) if kind[0] != "tmap" or depth < 2 else 0
            members.append((f"m{i}", sig, c, kind, count))
        self.n += 1
        name = f"s{self.n}"
        body = " ".join(f"{c} {m}{f'[{n}]' if n else ''};" for m, _, c, _, n in members)
        self.decls.append(f"struct {name} {{ {body} }};")
        sig = "struct{" + ", ".join(f"{s}{f'[{n}]' if n else ''} {m}" for m, s, _, _, n in members) + "}"
        return sig, f"struct {name}", members

    def leaves(self, members, path, cpath, out):
        for m, _, _, kind, count in members:
            for e in range(count) if count else [None]:
                p = f"{path}.{m}" + (f"[{e}]" if e is not None else "")
                cp = f"{cpath}.{m}" + (f"[{e}]" if e is not None else "")
                if kind[0] == "struct":
                    self.leaves(kind[1], p, cp, out)
                else:
                    out.append((p, cp, kind, self.value(kind)))

    def value(self, kind):
        r = self.r
        if kind[0] == "ptr":
            return r.randrange(0, 2**48, 16)
        if kind[0] == "tmap":
            return bytes([r.randint(0, 255)]) * 128
        return SCALARS[kind[1]][2](r)


def c_assign(cp, kind, v):
    if kind[0] == "tmap":
        return f"memset({cp}.b, {v[0]}, 128);"
    if kind[0] == "ptr":
        return f"{cp} = {v}ull;"
    s = kind[1]
    if s in ("f16", "bf16"):
        return f"{cp} = {bits16(s, v)};"
    if s in ("f32", "f64"):
        return f"{cp} = {float(v).hex()};"
    if s == "bool":
        return f"{cp} = {int(v)};"
    if s == "u64":
        return f"{cp} = {v}ull;"
    if s == "i64":
        return f"{cp} = {v}ll;" if v != -2**63 else f"{cp} = INT64_MIN;"
    return f"{cp} = {v};"


class StructsAgainstCcTest(unittest.TestCase):
    def test_random_structs(self):
        cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
        if not cc:
            self.skipTest("no C compiler")
        r = random.Random(int(os.environ.get("GCL_SEED", "26")))
        cases = []
        for i in range(40):
            gen = Gen(r)
            sig, ctyp, members = gen.struct(0)
            leaves = []
            gen.leaves(members, "p", "s", leaves)
            cases.append((gen.decls, sig, ctyp, leaves))
        prog = ["#include <stdint.h>", "#include <stdio.h>", "#include <string.h>", "#include <stddef.h>",
                "struct tm { _Alignas(128) unsigned char b[128]; };"]
        for i, (decls, sig, ctyp, leaves) in enumerate(cases):
            prog.append(f"/* case {i} */")
            prog += [d.replace("struct s", f"struct c{i}_s") for d in decls]
        prog.append("int main(void) {")
        for i, (decls, sig, ctyp, leaves) in enumerate(cases):
            ct = ctyp.replace("struct s", f"struct c{i}_s")
            prog.append(f"  {{ {ct} s; memset(&s, 0, sizeof s);")
            prog += ["    " + c_assign(cp, kind, v) for _, cp, kind, v in leaves]
            prog.append(f'    printf("case {i} %zu %zu ", sizeof s, _Alignof({ct}));')
            prog += [f'    printf("%zu ", (size_t)((char *)&{cp} - (char *)&s));' for _, cp, _, _ in leaves]
            prog.append('    for (size_t k = 0; k < sizeof s; k++) printf("%02x", ((unsigned char *)&s)[k]);')
            prog.append('    printf("\\n"); }')
        prog.append("  return 0; }")
        with tempfile.TemporaryDirectory() as d:
            src, exe = os.path.join(d, "structs.c"), os.path.join(d, "structs")
            with open(src, "w") as f:
                f.write("\n".join(prog) + "\n")
            subprocess.run([cc, "-std=c11", "-O0", "-w", src, "-o", exe], check=True)
            out = subprocess.run([exe], check=True, capture_output=True, text=True).stdout.splitlines()
        for i, (decls, sig, ctyp, leaves) in enumerate(cases):
            with self.subTest(case=i, signature=sig):
                words = out[i].split()
                size, align = int(words[2]), int(words[3])
                offsets = [int(w) for w in words[4:4 + len(leaves)]]
                cbytes = bytes.fromhex(words[4 + len(leaves)] if len(words) > 4 + len(leaves) else "")
                if size > 30000:
                    continue  # over the parameter limit: not a case for this test
                lay = g.Layout(f"grid_constant {sig} p", 90)
                p = lay.params[0]
                self.assertEqual((p.size, p.align), (size, align))
                self.assertEqual([lay.field(path).offset - p.offset for path, _, _, _ in leaves], offsets)
                self.assertEqual([f.path for f in lay.leaves()], [path for path, _, _, _ in leaves])
                a = g.Args(lay)
                for path, _, kind, v in leaves:
                    a[path] = v
                self.assertEqual(a.buffer()[p.offset:p.offset + p.size], cbytes)


if __name__ == "__main__":
    T.main()
