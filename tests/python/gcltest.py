"""Helpers for the Python suites: a DLPack producer built with ctypes (counting deleter), the fake
driver's controls, GPU skips that GCL_REQUIRE_GPU=1 turns into failures, and the runner.

Every suite file ends with `gcltest.main()`: it runs the file's unittest cases and exits 0 (some
ran and passed), 1 (a failure) or 77 (every test skipped: a skip is never a pass; ctest's
SKIP_RETURN_CODE shows the file as skipped).
"""
import ctypes as C
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))


def build_dir():
    """The meson build directory: $GCL_BUILD_DIR, else the folder on PYTHONPATH holding gclaunch."""
    if os.environ.get("GCL_BUILD_DIR"):
        return os.path.abspath(os.environ["GCL_BUILD_DIR"])
    import gclaunch
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(gclaunch.__file__))))


def kernel(name):
    """Path of a kernel image of the build (build/kernels/NAME)."""
    return os.path.join(build_dir(), "kernels", name)


# --- DLPack, written out with ctypes (as dlpack.h declares it) -------------------------------------
class DLDevice(C.Structure):
    _fields_ = [("device_type", C.c_int), ("device_id", C.c_int32)]


class DLDataType(C.Structure):
    _fields_ = [("code", C.c_uint8), ("bits", C.c_uint8), ("lanes", C.c_uint16)]


class DLTensor(C.Structure):
    _fields_ = [("data", C.c_void_p), ("device", DLDevice), ("ndim", C.c_int32),
                ("dtype", DLDataType), ("shape", C.POINTER(C.c_int64)),
                ("strides", C.POINTER(C.c_int64)), ("byte_offset", C.c_uint64)]


class DLManagedTensor(C.Structure):
    pass


DELETER = C.CFUNCTYPE(None, C.c_void_p)
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", C.c_void_p),
                            ("deleter", DELETER)]


class DLPackVersion(C.Structure):
    _fields_ = [("major", C.c_uint32), ("minor", C.c_uint32)]


class DLManagedTensorVersioned(C.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", C.c_void_p), ("deleter", DELETER),
                ("flags", C.c_uint64), ("dl_tensor", DLTensor)]


KDLCPU, KDLCUDA = 1, 2
KDLINT, KDLUINT, KDLFLOAT, KDLBFLOAT = 0, 1, 2, 4

_capsule_new = C.pythonapi.PyCapsule_New
_capsule_new.restype = C.py_object
_capsule_new.argtypes = [C.c_void_p, C.c_char_p, C.c_void_p]
# Raw PyObject* (the destructor runs while the capsule is being freed: no new references to it).
_capsule_name = C.pythonapi.PyCapsule_GetName
_capsule_name.restype = C.c_char_p
_capsule_name.argtypes = [C.c_void_p]
_capsule_ptr = C.pythonapi.PyCapsule_GetPointer
_capsule_ptr.restype = C.c_void_p
_capsule_ptr.argtypes = [C.c_void_p, C.c_char_p]

# The producer's capsule destructor: deletes the tensor unless a consumer renamed the capsule.
CAPSULE_DESTRUCTOR = C.CFUNCTYPE(None, C.c_void_p)


class Producer:
    """Shared state of FakeTensors: counts deleter calls and keeps the live managed structs."""

    def __init__(self):
        self.deleted = 0
        self.exported = 0
        self.live = {}
        self._deleter = DELETER(self._delete)
        self._destructor = CAPSULE_DESTRUCTOR(self._capsule_gone)

    def _delete(self, ptr):
        self.deleted += 1
        self.live.pop(ptr, None)

    def _capsule_gone(self, cap):
        name = _capsule_name(cap)
        if name in (b"dltensor", b"dltensor_versioned"):  # never consumed: the producer deletes
            m = self.live.get(_capsule_ptr(cap, name))
            if m is not None:
                m.deleter(C.addressof(m))


class FakeTensor:
    """A __dlpack__ producer over any address (the fake driver's device memory is host memory).

    versioned: offer DLPack 1.x capsules when asked with max_version (else only legacy ones, and
    max_version is a TypeError as for old producers). read_only sets the versioned flag."""

    def __init__(self, producer, data, shape, dtype=(KDLFLOAT, 32), strides=None, byte_offset=0,
                 device=(KDLCUDA, 0), versioned=True, read_only=False, major=1):
        self.p, self.data, self.shape, self.dtype = producer, data, tuple(shape), dtype
        self.strides, self.byte_offset, self.device = strides, byte_offset, device
        self.versioned, self.read_only, self.major = versioned, read_only, major
        self.calls = []  # the last call's keywords (bounded: the leak test calls 100k times)

    def _fill(self, t, keep):
        n = len(self.shape)
        shape = (C.c_int64 * n)(*self.shape)
        keep.append(shape)
        t.data = self.data
        t.device = DLDevice(*self.device)
        t.ndim = n
        t.dtype = DLDataType(self.dtype[0], self.dtype[1], 1)
        t.shape = C.cast(shape, C.POINTER(C.c_int64))
        if self.strides is not None:
            st = (C.c_int64 * n)(*self.strides)
            keep.append(st)
            t.strides = C.cast(st, C.POINTER(C.c_int64))
        t.byte_offset = self.byte_offset

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        self.calls[:] = [{"stream": stream, "max_version": max_version}]
        if max_version is not None and not self.versioned:
            raise TypeError("max_version is not supported")
        keep = []
        if max_version is not None and max_version[0] >= 1:
            m = DLManagedTensorVersioned()
            m.version = DLPackVersion(self.major, 0)
            m.flags = 1 if self.read_only else 0
            name = b"dltensor_versioned"
        else:
            m = DLManagedTensor()
            name = b"dltensor"
        self._fill(m.dl_tensor, keep)
        m.deleter = self.p._deleter
        m._keep = keep
        self.p.live[C.addressof(m)] = m
        self.p.exported += 1
        return _capsule_new(C.addressof(m), name, C.cast(self.p._destructor, C.c_void_p))

    def __dlpack_device__(self):
        return self.device


class LegacyTensor(FakeTensor):
    """A producer of DLPack 0.x only (its own type: gclaunch remembers per type what was accepted)."""

    def __init__(self, *a, **kw):
        kw["versioned"] = False
        super().__init__(*a, **kw)


# --- the fake driver (tests/fakecuda) ----------------------------------------------------------
class FakeLaunch(C.Structure):
    _fields_ = [("kernel", C.c_char * 128), ("device", C.c_int), ("grid", C.c_uint * 3),
                ("block", C.c_uint * 3), ("cluster", C.c_uint * 3), ("shared_bytes", C.c_uint),
                ("stream", C.c_void_p), ("cooperative", C.c_int), ("programmatic", C.c_int),
                ("priority", C.c_int), ("via_extra", C.c_int), ("param_bytes", C.c_size_t),
                ("params", C.c_ubyte * 32764)]


def fake_driver():
    """libfakecuda.so opened with ctypes (the same instance gclaunch opens through GCL_LIBCUDA)."""
    path = os.environ.get("GCL_LIBCUDA") or os.path.join(build_dir(), "tests", "fakecuda",
                                                         "libfakecuda.so")
    os.environ["GCL_LIBCUDA"] = path
    lib = C.CDLL(path)
    lib.fakecuda_set_params.argtypes = [C.c_char_p, C.c_size_t, C.POINTER(C.c_size_t),
                                        C.POINTER(C.c_size_t)]
    lib.fakecuda_last_launch.argtypes = [C.POINTER(FakeLaunch)]
    lib.fakecuda_launch_count.restype = C.c_long
    lib.fakecuda_fail.argtypes = [C.c_char_p, C.c_int, C.c_int]
    lib.fakecuda_live.argtypes = [C.c_char_p]
    lib.fakecuda_live.restype = C.c_long
    return lib


def declare(lib, name, params):
    """Declares kernel name to the fake with params [(offset, size), ...]."""
    n = len(params)
    off = (C.c_size_t * max(n, 1))(*[p[0] for p in params])
    size = (C.c_size_t * max(n, 1))(*[p[1] for p in params])
    assert lib.fakecuda_set_params(name.encode(), n, off, size) == 0


def last_launch(lib):
    rec = FakeLaunch()
    assert lib.fakecuda_last_launch(C.byref(rec)) == 0
    return rec


# --- skips ---------------------------------------------------------------------------------------
def required(var):
    return os.environ.get(var) == "1"


def skip_unless_required(case, var, why):
    """Skips case (printing why) unless var=1, then fails it."""
    if required(var):
        case.fail(f"{var}=1, so this is a failure: {why}")
    print(f"SKIP: {why} (set {var}=1 to make this a failure)", file=sys.stderr)
    raise unittest.SkipTest(why)


def main():
    """Runs the calling file's tests; exit 0, 1, or 77 when every test skipped."""
    mod = sys.modules["__main__"]
    suite = unittest.defaultTestLoader.loadTestsFromModule(mod)
    if len(sys.argv) > 1:
        suite = unittest.defaultTestLoader.loadTestsFromNames(sys.argv[1:], mod)
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    ran, skipped = result.testsRun, len(result.skipped)
    bad = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    print(f"{os.path.basename(mod.__file__)}: {ran - skipped - bad} passed, {bad} failed, "
          f"{skipped} skipped")
    if bad:
        sys.exit(1)
    if ran and skipped == ran:
        print("every test skipped: exit 77, not a pass", file=sys.stderr)
        sys.exit(77)
    sys.exit(0)
