#!/usr/bin/env python3
"""PyTorch tensors into gclaunch through DLPack capsules, legacy and versioned.

Views with a storage offset (element offsets 0, 4 and 1 of one float32 allocation) go through
gcl_args_take_field_dlpack(_legacy) into `f32* align(16) out, u64 n, f32 base` (and align(4) for the
offset-1 view, which align(16) must reject). Checks, for each capsule:
  - the address gclaunch packs equals torch's data_ptr() (whichever way torch encoded the offset:
    folded into data, or the storage base plus byte_offset);
  - the producer's deleter runs exactly once: after gcl_args_destroy on success, before the take
    returns on failure (the capsule is renamed "used_dltensor[_versioned]" as the protocol asks,
    and our wrapper around torch's deleter counts the calls);
  - when kernels/dlpack_fill is found, gclaunch launches it and every element inside the view is
    written and every element outside keeps its poison.

Usage: torch_interop.py [path/to/libgclaunch.so] [path/to/dlpack_fill.fatbin]
       (or env GCL_LIB / GCL_FILL_KERNEL; default $GCL_BUILD_DIR/libgclaunch.so, else build/).
       ctest runs it as python_torch: skipped without torch or a GPU, a failure then under
       GCL_REQUIRE_GPU=1. Prints "N passed, N failed"; exit 0, 1, or 77 (skipped).
"""
import ctypes as C
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


# The DLPack structs, written out once for the Python suites (tests/python/gcltest.py).
sys.path.insert(0, HERE)
from gcltest import (DELETER, DLManagedTensor, DLManagedTensorVersioned, DLTensor,  # noqa: E402
                     required)


class LaunchConfig(C.Structure):  # gcl_launch_config
    _fields_ = [("grid", C.c_uint * 3), ("block", C.c_uint * 3), ("cluster", C.c_uint * 3),
                ("shared_bytes", C.c_size_t), ("stream", C.c_void_p), ("cooperative", C.c_bool),
                ("programmatic_dependent_launch", C.c_bool), ("priority", C.c_int),
                ("reserved", C.c_uint64 * 6)]  # must stay zero (ctypes zeroes it)


class ParamInfo(C.Structure):  # gcl_param_info
    _fields_ = [("name", C.c_char_p), ("kind", C.c_int), ("elem_kind", C.c_int), ("scalar", C.c_int),
                ("is_const", C.c_bool), ("grid_constant", C.c_bool), ("size", C.c_size_t),
                ("align", C.c_size_t), ("count", C.c_size_t), ("elem_size", C.c_size_t),
                ("pointee_align", C.c_size_t)]


class Field(C.Structure):  # gcl_field (issue 28: every setter takes one)
    _fields_ = [("param", C.c_size_t), ("offset", C.c_size_t), ("size", C.c_size_t),
                ("align", C.c_size_t), ("info", ParamInfo), ("opaque", C.c_uint64 * 8)]


GCL_SCALAR_U64, GCL_SCALAR_F32 = 9, 12
assert C.sizeof(DLTensor) == 48 and C.sizeof(DLManagedTensor) == 64
assert C.sizeof(DLManagedTensorVersioned) == 80

# Capsule names must outlive the capsules: module-level constants.
NAMES = {False: (b"dltensor", b"used_dltensor"),
         True: (b"dltensor_versioned", b"used_dltensor_versioned")}

PY = C.pythonapi
PY.PyCapsule_GetPointer.restype = C.c_void_p
PY.PyCapsule_GetPointer.argtypes = [C.py_object, C.c_char_p]
PY.PyCapsule_SetName.restype = C.c_int
PY.PyCapsule_SetName.argtypes = [C.py_object, C.c_char_p]

N = 1027
POISON = -12345.5
SIG16 = b"f32* align(16) out, u64 n, f32 base"
SIG4 = b"f32* align(4) out, u64 n, f32 base"


def load_lib(path):
    lib = C.CDLL(path)
    vp, pvp, sz, psz = C.c_void_p, C.POINTER(C.c_void_p), C.c_size_t, C.POINTER(C.c_size_t)
    protos = {
        "gcl_status_name": (C.c_char_p, [C.c_int]),
        "gcl_last_error": (C.c_char_p, []),
        "gcl_signature_parse": (C.c_int, [C.c_char_p, pvp]),
        "gcl_signature_destroy": (None, [vp]),
        "gcl_layout_create": (C.c_int, [vp, C.c_int, pvp]),
        "gcl_layout_destroy": (None, [vp]),
        "gcl_layout_param": (C.c_int, [vp, sz, psz, psz, psz]),
        "gcl_args_create": (C.c_int, [vp, pvp]),
        "gcl_args_destroy": (None, [vp]),
        "gcl_args_layout": (vp, [vp]),
        "gcl_layout_param_field": (C.c_int, [vp, sz, C.POINTER(Field)]),
        "gcl_args_take_field_dlpack": (C.c_int, [vp, C.POINTER(Field), vp]),
        "gcl_args_take_field_dlpack_legacy": (C.c_int, [vp, C.POINTER(Field), vp]),
        "gcl_args_set_field_scalar": (C.c_int, [vp, C.POINTER(Field), C.c_int, vp]),
        "gcl_args_restrict_device": (C.c_int, [vp, C.c_int]),
        "gcl_args_buffer": (C.c_int, [vp, pvp, psz]),
        "gcl_context_create": (C.c_int, [C.c_int, pvp]),
        "gcl_context_destroy": (None, [vp]),
        "gcl_module_load_file": (C.c_int, [vp, C.c_char_p, pvp]),
        "gcl_module_destroy": (None, [vp]),
        "gcl_module_find_kernel": (C.c_int, [vp, C.c_char_p, C.c_char_p, pvp]),
        "gcl_launch": (C.c_int, [vp, C.POINTER(LaunchConfig), vp]),
    }
    for name, (res, args) in protos.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    return lib


class Run:
    def __init__(self, lib, torch, sm, kernel_path):
        self.lib, self.torch, self.sm = lib, torch, sm
        self.passed = self.failed = 0
        self.keep = []  # ctypes callbacks must outlive the tensors they wrap
        self.ctx = self.mod = None
        self.kernels = {}
        if kernel_path:
            self.open_kernel(kernel_path)

    def check(self, ok, what):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        print(("ok   " if ok else "FAIL ") + what, flush=True)
        return ok

    def status(self, s):
        return self.lib.gcl_status_name(s).decode()

    def error(self):
        return self.lib.gcl_last_error().decode(errors="replace")

    def open_kernel(self, path):
        ctx, mod = C.c_void_p(), C.c_void_p()
        dev = self.torch.cuda.current_device()
        if self.lib.gcl_context_create(dev, C.byref(ctx)) != 0:
            print("launch tests off: gcl_context_create: " + self.error())
            return
        self.ctx = ctx
        if self.lib.gcl_module_load_file(ctx, path.encode(), C.byref(mod)) != 0:
            print("launch tests off: gcl_module_load_file(%s): %s" % (path, self.error()))
            return
        self.mod = mod
        for sig in (SIG16, SIG4):
            k = C.c_void_p()
            s = self.lib.gcl_module_find_kernel(mod, b"fill", sig, C.byref(k))
            if self.check(s == 0, "gcl_module_find_kernel fill [%s]: %s" % (sig.decode(),
                          "" if s == 0 else self.error())):
                self.kernels[sig] = k

    def close(self):
        if self.mod:
            self.lib.gcl_module_destroy(self.mod)
        if self.ctx:
            self.lib.gcl_context_destroy(self.ctx)

    def layout_for(self, sig):
        """A typed layout for this sm (gcl_launch accepts args whose offsets and sizes equal the
        kernel's; the kernel was looked up with the same signature, which checked them)."""
        parsed, layout = C.c_void_p(), C.c_void_p()
        assert self.lib.gcl_signature_parse(sig, C.byref(parsed)) == 0, self.error()
        s = self.lib.gcl_layout_create(parsed, self.sm, C.byref(layout))
        self.lib.gcl_signature_destroy(parsed)
        assert s == 0, self.error()
        return layout, layout

    def capsule_tensor(self, x, versioned, calls):
        """Consumes x's capsule: returns (managed struct pointer, the DLTensor inside it). Our
        counting wrapper replaces torch's deleter and forwards to it."""
        cap = x.__dlpack__(max_version=(1, 0)) if versioned else x.__dlpack__()
        name, used = NAMES[versioned]
        ptr = PY.PyCapsule_GetPointer(cap, name)
        PY.PyCapsule_SetName(cap, used)  # ownership moves to us (then to gclaunch)
        struct = DLManagedTensorVersioned if versioned else DLManagedTensor
        m = struct.from_address(ptr)
        # The producer's deleter as an address: the field's object reads the struct's memory, so
        # after the assignment below it would call our wrapper, not torch's (endless recursion).
        original = C.cast(m.deleter, C.c_void_p).value

        def deleter(self_ptr):
            calls.append(self_ptr)
            if original:  # NULL: no deleter to forward to
                DELETER(original)(self_ptr)

        cb = DELETER(deleter)
        self.keep.append(cb)
        m.deleter = cb
        return ptr, m.dl_tensor

    def field(self, args, index):
        f = Field()
        return self.lib.gcl_layout_param_field(self.lib.gcl_args_layout(args), index, C.byref(f)), f

    def take(self, args, index, ptr, versioned):
        s, f = self.field(args, index)
        if s != 0:  # no such parameter: the take never ran, the tensor is still ours to delete
            m = (DLManagedTensorVersioned if versioned else DLManagedTensor).from_address(ptr)
            m.deleter(ptr)
            return s
        fn = (self.lib.gcl_args_take_field_dlpack if versioned
              else self.lib.gcl_args_take_field_dlpack_legacy)
        return fn(args, C.byref(f), ptr)

    def set_scalar(self, args, index, scalar, value):
        _, f = self.field(args, index)
        return self.lib.gcl_args_set_field_scalar(args, C.byref(f), scalar, C.byref(value))

    def view_case(self, base, offset, versioned, sig, expect_ok):
        torch = self.torch
        kind = "versioned" if versioned else "legacy"
        what = "offset %d %s [%s]" % (offset, kind, sig.decode())
        view = base[offset:offset + N]
        calls = []
        ptr, dl = self.capsule_tensor(view, versioned, calls)
        encoding = "byte_offset %d, data 0x%x" % (dl.byte_offset, dl.data or 0)
        layout, owned_layout = self.layout_for(sig)
        args = C.c_void_p()
        assert self.lib.gcl_args_create(layout, C.byref(args)) == 0, self.error()
        self.lib.gcl_args_restrict_device(args, torch.cuda.current_device())
        s = self.take(args, 0, ptr, versioned)
        if not expect_ok:
            msg = self.error()
            self.check(s != 0 and self.status(s) == "GCL_ERROR_TENSOR" and
                       "not 16-byte aligned" in msg and "parameter 0 'out'" in msg,
                       "%s rejected (%s): %s" % (what, encoding, msg))
            self.check(len(calls) == 1, "%s: deleter ran %d times before the failed take "
                       "returned" % (what, len(calls)))
        elif self.check(s == 0, "%s taken (%s) %s" % (what, encoding,
                                                      "" if s == 0 else self.error())):
            self.check(len(calls) == 0, "%s: deleter not run while held" % what)
            self.set_scalar(args, 1, GCL_SCALAR_U64, C.c_uint64(N))
            self.set_scalar(args, 2, GCL_SCALAR_F32, C.c_float(100.0))
            data, size = C.c_void_p(), C.c_size_t()
            s = self.lib.gcl_args_buffer(args, C.byref(data), C.byref(size))
            off = C.c_size_t()
            self.lib.gcl_layout_param(layout, 0, C.byref(off), None, None)
            packed = C.c_uint64.from_address(data.value + off.value).value if s == 0 else None
            self.check(packed == view.data_ptr(), "%s: packed 0x%x == data_ptr() 0x%x" % (
                what, packed or 0, view.data_ptr()))
            if sig in self.kernels:
                self.launch_and_compare(base, offset, args, sig, what)
        self.lib.gcl_args_destroy(args)
        if owned_layout:
            self.lib.gcl_layout_destroy(owned_layout)
        self.check(len(calls) == 1, "%s: deleter ran exactly once (%d)" % (what, len(calls)))

    def launch_and_compare(self, base, offset, args, sig, what):
        torch = self.torch
        base.fill_(POISON)
        torch.cuda.synchronize()
        cfg = LaunchConfig()
        cfg.grid[0], cfg.block[0] = (N + 127) // 128, 128
        cfg.stream = torch.cuda.current_stream().cuda_stream
        s = self.lib.gcl_launch(self.kernels[sig], C.byref(cfg), args)
        if not self.check(s == 0, "%s: gcl_launch %s" % (what, "" if s == 0 else self.error())):
            return
        torch.cuda.synchronize()
        want = torch.full_like(base, POISON)
        want[offset:offset + N] = 100.0 + torch.arange(N, dtype=torch.float32, device=base.device)
        bad = (base != want).nonzero()
        self.check(bad.numel() == 0, "%s: kernel wrote exactly the view (%d wrong elements%s)" % (
            what, bad.numel(), "" if bad.numel() == 0 else ", first at %d" % bad[0].item()))

    def rejected_case(self, x, versioned, needle, what):
        calls = []
        ptr, _ = self.capsule_tensor(x, versioned, calls)
        layout, owned_layout = self.layout_for(SIG4)
        args = C.c_void_p()
        assert self.lib.gcl_args_create(layout, C.byref(args)) == 0
        s = self.take(args, 0, ptr, versioned)
        msg = self.error()
        self.check(s != 0 and needle in msg, "%s rejected: %s" % (what, msg))
        self.check(len(calls) == 1, "%s: deleter ran once before the take returned" % what)
        self.lib.gcl_args_destroy(args)
        if owned_layout:
            self.lib.gcl_layout_destroy(owned_layout)
        self.check(len(calls) == 1, "%s: and never again" % what)

    def bad_index_case(self, x, versioned):
        calls = []
        ptr, _ = self.capsule_tensor(x, versioned, calls)
        layout, owned_layout = self.layout_for(SIG4)
        args = C.c_void_p()
        assert self.lib.gcl_args_create(layout, C.byref(args)) == 0
        s = self.take(args, 7, ptr, versioned)
        self.check(s != 0 and len(calls) == 1, "bad index 7: %s, deleter ran %d times" % (
            self.status(s), len(calls)))
        self.lib.gcl_args_destroy(args)
        if owned_layout:
            self.lib.gcl_layout_destroy(owned_layout)


def main():
    build = os.environ.get("GCL_BUILD_DIR") or os.path.join(ROOT, "build")
    lib_path = os.path.abspath((sys.argv[1] if len(sys.argv) > 1 else os.environ.get("GCL_LIB"))
                               or os.path.join(build, "libgclaunch.so"))
    kernel = (sys.argv[2] if len(sys.argv) > 2 else os.environ.get("GCL_FILL_KERNEL")) or \
        os.path.join(os.path.dirname(os.path.abspath(lib_path)), "kernels", "dlpack_fill.fatbin")
    try:
        import torch
        why = None if torch.cuda.is_available() else "torch sees no CUDA device"
    except ImportError:
        why = "no torch"
    if why:  # a skip, or on a GPU runner (GCL_REQUIRE_GPU=1, as python_gpu) a failure
        if required("GCL_REQUIRE_GPU"):
            print("FAIL GCL_REQUIRE_GPU=1, so this is a failure: %s\n0 passed, 1 failed" % why)
            return 1
        print("skipped: %s\n0 passed, 0 failed" % why)
        return 77
    lib = load_lib(lib_path)
    major, minor = torch.cuda.get_device_capability()
    print("torch %s, sm_%d%d, %s" % (torch.__version__, major, minor, lib_path))
    torch.cuda.init()
    run = Run(lib, torch, major * 10 + minor, kernel if os.path.exists(kernel) else None)
    if not os.path.exists(kernel):
        print("launch tests off: %s not found (address checks only)" % kernel)
    base = torch.full((N + 4,), POISON, dtype=torch.float32, device="cuda")
    versions = [False, True]
    try:
        base[:1].__dlpack__(max_version=(1, 0))
    except TypeError:
        print("this torch cannot export versioned capsules: legacy only")
        versions = [False]
    for versioned in versions:
        for offset in (0, 4):
            run.view_case(base, offset, versioned, SIG16, True)
        run.view_case(base, 1, versioned, SIG16, False)
        run.view_case(base, 1, versioned, SIG4, True)
        run.rejected_case(torch.zeros(8), versioned, "device type 1", "CPU tensor")
        run.rejected_case(torch.zeros(8, dtype=torch.float64, device="cuda"), versioned,
                          "bits 64", "float64 tensor")
        run.bad_index_case(base[4:8], versioned)
    run.close()
    del base
    torch.cuda.synchronize()
    print("%d passed, %d failed" % (run.passed, run.failed))
    return 0 if run.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
