"""The DLPack 1.3 C exchange API path (on by default; GCL_DLPACK_C_API=0 turns it off), against
a producer written with ctypes: __dlpack_c_exchange_api__ on the type, a PyCapsule "dlpack_exchange_api"
holding a DLPackExchangeAPI table. Pointers take an owned DLManagedTensorVersioned
(managed_tensor_from_py_object_no_sync: its deleter runs once, by the library), tensor maps and
addresses a borrowed view (dltensor_from_py_object_no_sync: nothing to delete); __dlpack__ is
never called. Runs against the fake driver for the maps."""
import ctypes as C
import gc
import os
import struct
import unittest

import gcltest as T

os.environ["GCL_DLPACK_C_API"] = "1"
FAKE = T.fake_driver()
import gclaunch as g  # noqa: E402

MANAGED_FN = C.CFUNCTYPE(C.c_int, C.py_object, C.POINTER(C.c_void_p))
VIEW_FN = C.CFUNCTYPE(C.c_int, C.py_object, C.POINTER(T.DLTensor))


class XHeader(C.Structure):
    _fields_ = [("version", T.DLPackVersion), ("prev_api", C.c_void_p)]


class XApi(C.Structure):
    _fields_ = [("header", XHeader), ("allocator", C.c_void_p), ("managed_from_py", MANAGED_FN),
                ("managed_to_py", C.c_void_p), ("view_from_py", VIEW_FN), ("work_stream", C.c_void_p)]


# A capsule keeps a pointer to its name, not a reference: each name lives in a buffer of this
# module for as long as the process (a bytes literal in the class body below belongs to the
# module's code object, which is freed once the module is imported -- run by `unittest discover`,
# the capsule's name then pointed at freed memory and the table was not recognised).
_API_NAME = C.create_string_buffer(b"dlpack_exchange_api")
_USED_NAME = C.create_string_buffer(b"used_dltensor_versioned")


class Counts:
    managed = views = 0


def _managed(obj, out):
    Counts.managed += 1
    cap = T.FakeTensor.__dlpack__(obj, max_version=(1, 3))  # build the struct only
    name = b"dltensor_versioned"
    ptr = T._capsule_ptr(C.c_void_p(id(cap)), name)
    T._capsule_set_name(cap, C.cast(_USED_NAME, C.c_char_p))  # the struct now belongs to the caller
    out[0] = ptr
    return 0


def _view(obj, out):
    Counts.views += 1
    keep = []
    obj._fill(out.contents, keep)
    obj._view_keep = keep  # valid while obj lives
    return 0


_MANAGED, _VIEW = MANAGED_FN(_managed), VIEW_FN(_view)
API = XApi(XHeader(T.DLPackVersion(1, 3), None), 1, _MANAGED, 1, _VIEW, 1)
T._capsule_set_name = C.pythonapi.PyCapsule_SetName
T._capsule_set_name.argtypes = [C.py_object, C.c_char_p]


class ApiTensor(T.FakeTensor):
    __dlpack_c_exchange_api__ = T._capsule_new(C.addressof(API), C.cast(_API_NAME, C.c_char_p),
                                               None)

    def __dlpack__(self, **kw):
        raise AssertionError("__dlpack__ must not be called when the C exchange API is used")


MAPS16 = "grid_constant tensormap[16] maps, const void* work, u32 n_work"


class CApiTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        k = next(k for k in g.inspect(T.kernel("megakernel.sm_90.cubin")) if k["name"] == "megakernel_copy_16")
        T.declare(FAKE, "megakernel_copy_16", [(p["offset"], p["size"]) for p in k["params"]])
        cls.ctx = g.Context(0)
        cls.mod = cls.ctx.load(T.kernel("megakernel.sm_90.cubin"))

    def setUp(self):
        self.p = T.Producer()
        self.mem = (C.c_float * 65536)()
        self.base = (C.addressof(self.mem) + 255) & ~255

    def t(self, off, **kw):
        kw.setdefault("shape", (8, 16))
        kw.setdefault("strides", (64, 1))
        return ApiTensor(self.p, self.base, byte_offset=off, **kw)

    def test_flag(self):
        self.assertEqual(g.dlpack_c_api, 1)

    def test_pointers_take_owned_tensors(self):
        a = g.Args(g.Layout("const f32* align(16) src, f32* dst", 90))
        n = Counts.managed
        a["src"], a["dst"] = self.t(64), self.t(128)
        self.assertEqual(struct.unpack("<QQ", a.buffer()), (self.base + 64, self.base + 128))
        self.assertEqual(Counts.managed, n + 2)
        self.assertEqual(self.p.deleted, 0)
        before = a.buffer()
        with self.assertRaises(g.Error) as cm:
            a["src"] = self.t(4)
        self.assertEqual(cm.exception.status, "GCL_ERROR_TENSOR")
        self.assertEqual(self.p.deleted, 1)  # the refused one, once
        self.assertEqual(a.buffer(), before)
        a["src"] = 0x1000
        self.assertEqual(self.p.deleted, 2)  # overwritten
        del a
        gc.collect()
        self.assertEqual(self.p.deleted, 3)

    def test_maps_and_addresses_borrow_views(self):
        k = self.mod.kernel("megakernel_copy_16", MAPS16)
        a = k.args()
        v = Counts.views
        a["maps"] = [g.TensorMap(self.t(256 * i), (8, 16)) for i in range(16)]
        a["work"], a["n_work"] = self.base, 1
        self.assertEqual(Counts.views, v + 16)
        buf = a.buffer()
        at = k.layout.field("maps").offset
        self.assertEqual([struct.unpack_from("<Q", buf, at + 128 * i)[0] for i in range(16)],
                         [self.base + 256 * i for i in range(16)])
        a.repoint("maps[2]", [self.t(4096)])
        self.assertEqual(struct.unpack_from("<Q", a.buffer(), at + 256)[0], self.base + 4096)
        d = g.TensorMap(self.t(512), (8, 16)).describe()
        self.assertEqual(d["address"], self.base + 512)
        gc.collect()
        self.assertEqual(self.p.deleted, 0)  # views: nothing was owned, nothing deleted

    def test_every_producer_type_is_remembered(self):
        # no bound on the producer types seen: the 40th type still goes through the exchange API
        # (its __dlpack__ raises when called)
        a = g.Args(g.Layout("const f32* align(16) src", 90))
        n = Counts.managed
        for i in range(40):
            cls = type(f"ApiTensor{i}", (ApiTensor,), {})
            a["src"] = cls(self.p, self.base, byte_offset=16 * i, shape=(8, 16), strides=(64, 1))
            a["src"] = cls(self.p, self.base, byte_offset=16 * i, shape=(8, 16), strides=(64, 1))
        self.assertEqual(Counts.managed, n + 80)
        del a
        gc.collect()
        self.assertEqual(self.p.deleted, 80)


if __name__ == "__main__":
    T.main()
