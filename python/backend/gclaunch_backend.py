"""The PEP 517 build backend of pyproject.toml: meson-python, with two changes.

1. The wheel's Python tag is the limited API's floor, not the building interpreter: the extension
   is compiled with Py_LIMITED_API 0x030a0000 (python/gclaunch/meson.build), so the wheel is
   tagged cp310-abi3 and installs on every CPython >= 3.10. meson-python 0.12 (Debian 12) tags an
   abi3 wheel with the interpreter that built it (cp311-abi3 on Debian 12's python3); the tag,
   WHEEL and RECORD are rewritten here after it built the wheel. The value is read from
   python/gclaunch/meson.build, the one place that sets it.
   The wheel keeps only the package: meson-python 0.12 maps every file of meson's install plan
   into it, whatever `meson install --tags` installed (see _finish).
2. get_requires_for_build_wheel does not configure and build the whole project to decide whether
   patchelf is needed (meson-python 0.12 does that when patchelf is absent): the wheel holds no
   internal shared library to re-point (the extension carries the library and libffi), so the only
   requirement is ninja, when it is missing.

Everything else is meson-python's own hook.
"""
import base64
import hashlib
import os
import pathlib
import re
import shutil
import zipfile

import mesonpy
from mesonpy import build_sdist, get_requires_for_build_sdist  # noqa: F401

_SOURCE = pathlib.Path(__file__).resolve().parents[2]


def _limited_api_tag():
    """'cp310' from -DPy_LIMITED_API=0x030a0000 in python/gclaunch/meson.build."""
    text = (_SOURCE / "python" / "gclaunch" / "meson.build").read_text()
    m = re.search(r"-DPy_LIMITED_API=0x03([0-9a-fA-F]{2})0000", text)
    if not m:
        raise RuntimeError("python/gclaunch/meson.build sets no -DPy_LIMITED_API=0x03XX0000")
    return f"cp3{int(m.group(1), 16)}"


def get_requires_for_build_wheel(config_settings=None):
    return [] if shutil.which("ninja") or shutil.which("ninja-build") else ["ninja"]


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _finish(directory, name, python_tag):
    """Rewrites wheel `name` in `directory`: tagged python_tag-abi3-<platform>, holding only the
    package (gclaunch/) and its .dist-info. meson-python 0.12 maps every file of meson's install
    plan into the wheel whatever --tags installed (headers into .data, gclaunch.pc into
    .gclaunch.mesonpy.libs); a Python user gets the package only. Returns the new file name."""
    stem = name[:-len(".whl")]
    parts = stem.split("-")
    interp, abi, plat = parts[-3:]
    if abi != "abi3":
        raise RuntimeError(f"{name}: expected an abi3 wheel (the extension is named *.abi3.so)")
    new_tag = f"{python_tag}-{abi}-{plat}"
    new_name = "-".join(parts[:-3] + [python_tag, abi, plat]) + ".whl"
    src, dst = os.path.join(directory, name), os.path.join(directory, new_name)
    with zipfile.ZipFile(src) as zin:
        infos = zin.infolist()
        files = {i.filename: zin.read(i) for i in infos}
    wheel_file = next(f for f in files if f.endswith(".dist-info/WHEEL"))
    info_dir = wheel_file[:-len("WHEEL")]
    record_file = info_dir + "RECORD"
    keep = [i for i in infos if i.filename.startswith(("gclaunch/", info_dir))]
    text = files[wheel_file].decode()
    files[wheel_file] = re.sub(r"^Tag: .*$", f"Tag: {new_tag}", text, flags=re.M).encode()
    record = []
    for ln in files[record_file].decode().splitlines():
        path = ln.split(",")[0]
        if path == wheel_file:
            ln = _record_line(wheel_file, files[wheel_file])
        if ln and any(i.filename == path for i in keep):
            record.append(ln)
    files[record_file] = ("\n".join(record) + "\n").encode()
    tmp = dst + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zout:
        for i in keep:
            zout.writestr(i, files[i.filename], compress_type=zipfile.ZIP_DEFLATED)
    os.unlink(src)
    os.replace(tmp, dst)
    return new_name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name = mesonpy.build_wheel(wheel_directory, config_settings, metadata_directory)
    return _finish(wheel_directory, name, _limited_api_tag())
